//! Diagnostics: syntax, compile and runtime errors rendered with miette, with a
//! stable code per kind and the source line marked.

use crate::source::SourceFile;
use crate::source::Span;
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};
use std::fmt;

/// One reportable problem.
#[derive(Debug, Clone)]
pub struct Diag {
    pub code: &'static str,
    pub message: String,
    pub span: Span,
    pub label: String,
    pub help: Option<String>,
    /// The file it is in, when not the one being reported on (an imported module).
    pub file: Option<std::rc::Rc<SourceFile>>,
}

impl Diag {
    /// A lint warning (`csp::lint::...`): reported, but the file still runs.
    pub fn is_warning(&self) -> bool {
        self.code.starts_with(crate::lint::CODE_PREFIX)
    }
}

struct WithSource<'a> {
    diag: &'a Diag,
    /// None when the marked lines are too long to show (`LONG_LINE`).
    src: Option<NamedSource<String>>,
}

impl fmt::Debug for WithSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.diag.message)
    }
}

impl fmt::Display for WithSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.diag.message)
    }
}

impl std::error::Error for WithSource<'_> {}

impl Diagnostic for WithSource<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diag.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(if self.diag.is_warning() { miette::Severity::Warning } else { miette::Severity::Error })
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.diag.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.src.as_ref().map(|s| s as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.src.as_ref()?;
        let s = self.diag.span;
        let len = (s.end.saturating_sub(s.start)) as usize;
        let span = SourceSpan::new((s.start as usize).into(), len);
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(Some(self.diag.label.clone()), span))))
    }
}

/// Whether reports use colour: only on a terminal, and never with NO_COLOR set.
pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// Most diagnostics rendered for one file. Rendering one costs time linear in the
/// file's size, so thousands of errors in a big file would take minutes.
pub const MAX_RENDERED: usize = 100;

/// Renders the first `MAX_RENDERED` diagnostics and counts the rest.
pub fn render_all(diags: &[Diag], file: &SourceFile, color: bool) -> String {
    let mut out: String = diags.iter().take(MAX_RENDERED).map(|d| render(d, file, color)).collect();
    if diags.len() > MAX_RENDERED {
        let rest = &diags[MAX_RENDERED..];
        let more = rest.len();
        let kind = if rest.iter().all(|d| !d.is_warning()) { "error" } else { "diagnostic" };
        out.push_str(&format!("error: {more} more {kind}{} not shown\n", if more == 1 { "" } else { "s" }));
    }
    out
}

/// Renders a diagnostic against its file (colourless unless `color`).
pub fn render(diag: &Diag, file: &SourceFile, color: bool) -> String {
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(100).with_wrap_lines(false);
    let file = diag.file.as_deref().unwrap_or(file);
    let longest = longest_line(&file.src, diag.span);
    let shown = longest <= LONG_LINE;
    let src = shown.then(|| NamedSource::new(file.name.clone(), file.src.clone()));
    let ws = WithSource { diag, src };
    let mut out = String::new();
    if handler.render_report(&mut out, &ws).is_err() {
        out = format!("error: {}\n", diag.message);
    }
    if !shown {
        let at = file.location(diag.span);
        out.push_str(&format!("  at {at}: {} (a line of {longest} bytes, not shown)\n", diag.label));
    }
    out
}

/// Lines longer than this are not shown, only their position: miette lays a
/// line out in one format call whose widths stop at 65,535 (a longer line
/// panicked), and a line of thousands of characters is no help to read.
const LONG_LINE: usize = 4096;

/// The length in bytes of the longest line that `span` touches.
fn longest_line(src: &str, span: Span) -> usize {
    let b = src.as_bytes();
    let start = (span.start as usize).min(b.len());
    let end = (span.end as usize).clamp(start, b.len());
    let from = b[..start].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let to = b[end..].iter().position(|&c| c == b'\n').map_or(b.len(), |i| end + i);
    b[from..to].split(|&c| c == b'\n').map(<[u8]>::len).max().unwrap_or(0)
}
