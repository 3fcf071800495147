//! Imported modules as the editor sees them: their source (embedded for
//! `std/`, read from disk for relative paths) and their top-level members.

use super::resolve::signature;
use crate::source::Span;
use crate::syntax::ast::StmtKind;
use std::path::{Path, PathBuf};

pub struct Member {
    pub name: String,
    pub span: Span,
    pub function: bool,
    /// `fn f(a, b)` for functions.
    pub signature: Option<String>,
    /// The `//` comment lines just above it.
    pub doc: String,
}

pub struct ModuleSource {
    /// The file on disk; None for a standard module.
    pub path: Option<PathBuf>,
    pub src: String,
}

/// The module `import PATH` names in the file at `from`.
pub fn load(path: &str, from: Option<&Path>) -> Option<ModuleSource> {
    if let Some(name) = path.strip_prefix("std/") {
        return crate::compile::std_source(name).map(|src| ModuleSource { path: None, src: src.to_string() });
    }
    if !(path.starts_with("./") || path.starts_with("../") || path.starts_with('/')) {
        return None;
    }
    let dir = from.and_then(Path::parent).unwrap_or(Path::new(""));
    let full = dir.join(path);
    let src = std::fs::read_to_string(&full).ok()?;
    Some(ModuleSource { path: Some(std::fs::canonicalize(&full).unwrap_or(full)), src })
}

/// A module's exports: its top-level `let` and `fn` names (private `_` names left out).
pub fn members(src: &str) -> Vec<Member> {
    // A module being edited may not parse: its other members still count.
    let Some(program) = super::complete::parse_lenient(src.to_string(), None).0 else { return Vec::new() };
    let mut out: Vec<Member> = Vec::new();
    for s in &program.stmts {
        let doc = comment_above(src, s.span.start as usize);
        let found: Vec<Member> = match &s.kind {
            StmtKind::Fn(d) => d
                .name
                .iter()
                .map(|n| Member {
                    name: n.name.clone(),
                    span: n.span,
                    function: true,
                    signature: Some(signature(&n.name, d)),
                    doc: doc.clone(),
                })
                .collect(),
            StmtKind::Let { names, value } => names
                .iter()
                .map(|n| {
                    let function = matches!(value.kind, crate::syntax::ast::ExprKind::Func(_));
                    Member { name: n.name.clone(), span: n.span, function, signature: None, doc: doc.clone() }
                })
                .collect(),
            _ => continue,
        };
        for m in found {
            if !m.name.starts_with('_') && !out.iter().any(|o| o.name == m.name) {
                out.push(m);
            }
        }
    }
    out
}

/// The `//` lines right above a byte offset, without their slashes.
fn comment_above(src: &str, at: usize) -> String {
    let before = &src[..at.min(src.len())];
    // The lines before the one `at` is on (a statement's span may start at
    // the line's first character or after a separator on it).
    let above = &before[..before.rfind('\n').map_or(0, |n| n + 1)];
    let mut lines: Vec<&str> = Vec::new();
    for line in above.lines().rev() {
        match line.trim_start().strip_prefix("//") {
            Some(text) => lines.push(text.strip_prefix(' ').unwrap_or(text)),
            None => break,
        }
    }
    lines.reverse();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn std_modules_have_members_with_signatures() {
        let m = super::load("std/sync", None).expect("std/sync");
        let members = super::members(&m.src);
        let once = members.iter().find(|m| m.name == "once").expect("once");
        assert!(once.signature.as_deref().is_some_and(|s| s.starts_with("fn once(")), "{:?}", once.signature);
    }
}
