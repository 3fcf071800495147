//! Lint warnings (docs/lint.md): code that compiles and runs but is probably
//! a mistake. `csp check` and the language server report them; `csp run`
//! never does. The passes read the AST and the editor's name resolution
//! (`lsp::resolve`), so a name means here what it means to go-to-definition.

mod flow;
mod unused;

use crate::diag::Diag;
use crate::lsp::resolve::Index;
use crate::source::Span;
use crate::syntax::ast::Program;

/// The prefix of every lint code; a diagnostic with it is a warning.
pub const CODE_PREFIX: &str = "csp::lint::";

/// Every warning for a parsed file, in source order.
pub fn lint(program: &Program, src: &str) -> Vec<Diag> {
    let ix = Index::of(program);
    let mut out = Vec::new();
    unused::check(program, &ix, src, &mut out);
    flow::check(program, &ix, &mut out);
    out.sort_by_key(|d| (d.span.start, d.span.end));
    out
}

/// A warning with its code (`csp::lint::NAME`), message and help.
fn warning(code: &'static str, span: Span, message: String, help: impl Into<String>) -> Diag {
    Diag { code, message, span, label: "here".into(), help: Some(help.into()), file: None }
}

/// A name that says it is meant to go unused: `_`, `_x`.
fn silenced(name: &str) -> bool {
    name.starts_with('_')
}

/// The 1-based line of a byte offset.
fn line_of(src: &str, at: u32) -> usize {
    src.as_bytes()[..(at as usize).min(src.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

#[cfg(test)]
mod tests;
