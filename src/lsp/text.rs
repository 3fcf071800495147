//! Positions: byte offsets (what spans hold) to and from LSP line/character
//! pairs, counted in UTF-16 code units (the protocol's default) or in bytes
//! when the client agreed to `utf-8`; `file://` URIs to and from paths.

use lsp_types::{Position, Range, Uri};
use std::path::{Path, PathBuf};

/// How a position's `character` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// The start of each line of a text, for conversions both ways.
pub struct Lines<'a> {
    src: &'a str,
    starts: Vec<usize>,
    enc: Encoding,
}

impl<'a> Lines<'a> {
    pub fn new(src: &'a str, enc: Encoding) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        Lines { src, starts, enc }
    }

    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.src.len());
        while !self.src.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let text = &self.src[self.starts[line]..offset];
        let character = match self.enc {
            Encoding::Utf8 => text.len(),
            Encoding::Utf16 => text.encode_utf16().count(),
        };
        Position { line: line as u32, character: character as u32 }
    }

    pub fn range(&self, span: crate::source::Span) -> Range {
        Range { start: self.position(span.start as usize), end: self.position(span.end as usize) }
    }

    /// The byte offset of a position; past the end of a line is its end.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else { return self.src.len() };
        let end = self.starts.get(pos.line as usize + 1).map_or(self.src.len(), |&e| e - 1);
        let line = &self.src[start..end.max(start)];
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += match self.enc {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
        }
        start + line.len()
    }
}

/// Applies an edit: the whole text (what the server asks for), or a range
/// replaced (which a client may send all the same).
pub fn apply(text: &mut String, change: lsp_types::TextDocumentContentChangeEvent, enc: Encoding) {
    match change.range {
        None => *text = change.text,
        Some(r) => {
            let lines = Lines::new(text, enc);
            let (start, end) = (lines.offset(r.start), lines.offset(r.end));
            text.replace_range(start..end.max(start), &change.text);
        }
    }
}

/// The path of a `file://` URI, percent-decoded.
pub fn uri_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let path = rest.find('/').map(|i| &rest[i..])?;
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// The `file://` URI of a path, with bytes outside the unreserved set escaped.
pub fn path_uri(path: &Path) -> Option<Uri> {
    use std::os::unix::ffi::OsStrExt;
    let mut s = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_positions_count_surrogate_pairs() {
        let src = "let a = \"é😀\"\nx";
        let l = Lines::new(src, Encoding::Utf16);
        let x = src.find('x').unwrap();
        assert_eq!(l.position(x), Position { line: 1, character: 0 });
        let q = src.rfind('"').unwrap();
        assert_eq!(l.position(q), Position { line: 0, character: 12 });
        assert_eq!(l.offset(Position { line: 0, character: 12 }), q);
        let l8 = Lines::new(src, Encoding::Utf8);
        assert_eq!(l8.position(q), Position { line: 0, character: q as u32 });
        assert_eq!(l8.offset(l8.position(q)), q);
    }

    #[test]
    fn edits_replace_a_range_or_everything() {
        let mut text = String::from("let a = 1\nlet é = 2\n");
        let range = Range { start: Position { line: 1, character: 4 }, end: Position { line: 1, character: 5 } };
        let edit = |range, text: &str| lsp_types::TextDocumentContentChangeEvent {
            range,
            range_length: None,
            text: text.to_string(),
        };
        apply(&mut text, edit(Some(range), "bb"), Encoding::Utf16);
        assert_eq!(text, "let a = 1\nlet bb = 2\n");
        apply(&mut text, edit(None, "x"), Encoding::Utf16);
        assert_eq!(text, "x");
    }

    #[test]
    fn uris_round_trip_escaped_paths() {
        let p = Path::new("/tmp/a b/é.csp");
        let uri = path_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%A9.csp");
        assert_eq!(uri_path(&uri).unwrap(), p);
    }
}
