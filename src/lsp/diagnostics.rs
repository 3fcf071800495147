//! Diagnostics as you type: what `csp check` reports (syntax errors, compile
//! errors, calls that must fail), with the same messages and spans.

use super::text::{Encoding, Lines};
use crate::diag::Diag;
use crate::source::SourceFile;
use lsp_types::{Diagnostic, DiagnosticSeverity, DiagnosticTag, NumberOrString, Position, Range};
use std::rc::Rc;

/// `csp check` of a document's text, named `name` (its path, so relative
/// imports are found next to it).
pub fn check(name: &str, text: &str) -> Vec<Diag> {
    let file = Rc::new(SourceFile::new(name, text));
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // The editor never fetches packages (docs/packages.md): one missing
        // from the cache is reported with the `csp fetch` that gets it.
        let options = crate::embed::Options { caps: crate::embed::Caps::all(), offline: true, ..Default::default() };
        crate::runner::check(crate::embed::Runtime::new(options).vm(), &file)
    }));
    match run {
        Ok(diags) => diags,
        Err(_) => vec![Diag {
            code: "csp::internal",
            message: "internal error while checking this file".into(),
            span: Default::default(),
            label: String::new(),
            help: None,
            file: None,
        }],
    }
}

/// The protocol's form of `check`'s reports on a document.
pub fn to_lsp(name: &str, text: &str, diags: &[Diag], enc: Encoding) -> Vec<Diagnostic> {
    diags.iter().map(|d| one(name, text, d, enc)).collect()
}

/// One diagnostic in the protocol's form: errors and warnings (the lint's),
/// unused and unreachable code tagged so editors fade it.
pub fn one(name: &str, text: &str, d: &Diag, enc: Encoding) -> Diagnostic {
    let lines = Lines::new(text, enc);
    let mut message = d.message.clone();
    let mut range = lines.range(d.span);
    // An error inside an imported module: reported at the top, with its place.
    if let Some(f) = d.file.as_ref().filter(|f| f.name != name) {
        message = format!("{}: {message}", f.location(d.span));
        range = Range { start: Position::default(), end: Position::default() };
    }
    if let Some(help) = &d.help {
        message = format!("{message}\nhelp: {help}");
    }
    let faded = ["unused_variable", "unused_parameter", "unused_import", "unreachable"]
        .iter()
        .any(|c| d.code.strip_prefix(crate::lint::CODE_PREFIX) == Some(c));
    Diagnostic {
        range,
        severity: Some(if d.is_warning() { DiagnosticSeverity::WARNING } else { DiagnosticSeverity::ERROR }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("csp".into()),
        message,
        tags: faded.then(|| vec![DiagnosticTag::UNNECESSARY]),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reports_the_checks_messages() {
        let text = "let x = 1\nprint(y)\n";
        let diags = super::check("t.csp", text);
        assert_eq!(diags.len(), 1);
        let lsp = super::to_lsp("t.csp", text, &diags, super::Encoding::Utf16);
        assert_eq!(lsp[0].range.start.line, 1);
        assert!(lsp[0].message.contains("'y'"), "{}", lsp[0].message);
        assert!(super::check("t.csp", "let x = 1\nprint(x)\n").is_empty());
    }
}
