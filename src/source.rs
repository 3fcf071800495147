//! Source files, spans (byte ranges into them) and span → line/column lookup.

/// The name of the csp-written prelude's source (frames in it are left out
/// of stack traces).
pub const PRELUDE_NAME: &str = "<prelude>";

/// A byte range into the source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub src: String,
    /// A module of the standard library (embedded in the binary): an error
    /// raised in it is reported at the user's call into it.
    pub std: bool,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, src: impl Into<String>) -> SourceFile {
        let src = src.into();
        let mut line_starts = vec![0];
        line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile { name: name.into(), src, line_starts, std: false }
    }

    /// A standard module's source (see `std`).
    pub fn std(name: impl Into<String>, src: impl Into<String>) -> SourceFile {
        SourceFile { std: true, ..SourceFile::new(name, src) }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = (offset as usize).min(self.src.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.src.get(start..offset).map_or(offset - start, |s| s.chars().count()) + 1;
        (line + 1, col)
    }

    /// `file:line:col` of a span's start.
    pub fn location(&self, span: Span) -> String {
        let (l, c) = self.line_col(span.start);
        format!("{}:{}:{}", self.name, l, c)
    }
}
