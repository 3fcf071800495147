//! The formatter's view of a file: its tokens and comments in order, each
//! with its exact source text and the number of line breaks before it.
//!
//! The lexer skips comments; they are recovered from the gaps between its
//! tokens (a gap holds only blanks, newlines and comments). A string literal,
//! interpolations included, becomes one item with its text as written.

use crate::syntax::lexer;
use crate::syntax::token::{Raw, Tok};

/// What an item is, as far as layout cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A keyword or punctuation (an explicit `;` included).
    P(Raw),
    Ident,
    /// A number literal, as written.
    Num,
    /// A string literal, interpolations included, as written.
    Str,
    LineComment,
    BlockComment,
}

#[derive(Clone, Debug)]
pub struct Item<'a> {
    pub kind: Kind,
    pub text: &'a str,
    /// Byte offset of the item in the source.
    pub start: usize,
    /// Line breaks between the previous item (or the start) and this one.
    pub breaks: usize,
}

impl Item<'_> {
    pub fn is_comment(&self) -> bool {
        matches!(self.kind, Kind::LineComment | Kind::BlockComment)
    }
}

/// The part of a file kept verbatim before its first token: a byte-order mark
/// and a `#!` line. Returns its length.
pub fn header_len(src: &str) -> usize {
    let mut n = if src.starts_with('\u{feff}') { 3 } else { 0 };
    if src[n..].starts_with("#!") {
        n += src[n..].find('\n').unwrap_or(src.len() - n);
    }
    n
}

/// The items of `src`, a file that lexes without errors, after its header.
pub fn items(src: &str) -> Vec<Item<'_>> {
    let tokens = lexer::lex(src).tokens;
    let mut out = Vec::new();
    let mut pos = header_len(src);
    let mut i = 0;
    while i < tokens.len() {
        let (l, ref tok, r) = tokens[i];
        let (kind, end) = match tok {
            // A `;` the lexer put in for a newline is not in the text.
            Tok::P(Raw::Semi) if &src[l..r] != ";" => {
                i += 1;
                continue;
            }
            Tok::P(raw) => (Kind::P(*raw), r),
            Tok::Ident(_) => (Kind::Ident, r),
            Tok::Int(_) | Tok::Float(_) => (Kind::Num, r),
            Tok::Str(_) => (Kind::Str, r),
            Tok::InterpStart => {
                let mut depth = 0;
                loop {
                    match tokens[i].1 {
                        Tok::InterpStart => depth += 1,
                        Tok::InterpEnd => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    i += 1;
                }
                (Kind::Str, tokens[i].2)
            }
            Tok::StrPart(_) | Tok::InterpOpen | Tok::InterpClose | Tok::InterpEnd => {
                unreachable!("string pieces are taken with their string")
            }
        };
        let breaks = gap(src, pos, l, &mut out);
        out.push(Item { kind, text: &src[l..end], start: l, breaks });
        pos = end;
        i += 1;
    }
    gap(src, pos, src.len(), &mut out);
    out
}

/// Pushes the comments in `src[from..to]` (blanks, newlines and comments
/// only) and returns the line breaks after the last of them.
fn gap<'a>(src: &'a str, from: usize, to: usize, out: &mut Vec<Item<'a>>) -> usize {
    let bytes = src.as_bytes();
    let mut breaks = 0;
    let mut i = from;
    while i < to {
        match bytes[i] {
            b'\n' => {
                breaks += 1;
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = src[i..to].find('\n').map_or(to, |n| i + n);
                out.push(Item {
                    kind: Kind::LineComment,
                    text: src[i..end].strip_suffix('\r').unwrap_or(&src[i..end]),
                    start: i,
                    breaks,
                });
                breaks = 0;
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..to].find("*/").map_or(to, |n| i + 2 + n + 2);
                out.push(Item { kind: Kind::BlockComment, text: &src[i..end], start: i, breaks });
                breaks = 0;
                i = end;
            }
            _ => i += 1,
        }
    }
    breaks
}

/// `src` with the same tokens, comments and line breaks but other blanks:
/// lines indented at random depths, tokens spaced out, blank lines doubled.
/// For tests: formatting it must give what formatting `src` gives.
#[doc(hidden)]
pub fn scramble(src: &str) -> String {
    let header = header_len(src);
    let mut out = src[..header].to_string();
    for (n, it) in items(src).iter().enumerate() {
        if it.breaks > 0 {
            out.push_str(&"\n".repeat(it.breaks + usize::from(it.breaks > 1)));
            out.push_str(&" ".repeat(n % 7));
        } else if n > 0 || header > 0 {
            out.push_str(if n % 2 == 0 { " " } else { "   " });
        }
        out.push_str(it.text);
    }
    out.push('\n');
    out
}
