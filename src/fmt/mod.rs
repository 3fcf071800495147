//! `csp fmt`: the canonical layout of csp source (rules in `docs/fmt.md`).
//!
//! The formatter re-spaces and re-indents the file's tokens, keeping the
//! author's line breaks and every comment; it never adds or removes a token
//! except an explicit `;` that the layout makes redundant. Its output is
//! checked before it is returned: it must lex to the same tokens (up to those
//! `;`) with the same comments, so a formatter bug is an error, never a
//! changed program.

pub mod cli;
pub(crate) mod comments;

#[doc(hidden)]
pub use comments::scramble;
mod printer;

#[cfg(test)]
mod tests;

use crate::diag::Diag;
use crate::syntax::ast::{Expr, ExprKind};
use crate::syntax::lexer;
use crate::syntax::token::{Raw, Tok};
use crate::syntax::visit::{walk_block, walk_expr, Visitor};
use std::collections::HashSet;

/// A line holding only this comment leaves its file as written (for files
/// that must keep an unusual layout, or that do not parse on purpose).
pub const IGNORE_FILE: &str = "// fmt: ignore-file";

/// Whether `src` asks to be left as written (see [`IGNORE_FILE`]).
pub fn ignored(src: &str) -> bool {
    src.lines().any(|l| l.trim() == IGNORE_FILE)
}

/// `src` in the canonical layout. A file that does not parse gets the
/// syntax errors `csp check` reports; a file marked with [`IGNORE_FILE`]
/// comes back unchanged.
pub fn format_source(src: &str) -> Result<String, Vec<Diag>> {
    if ignored(src) {
        return Ok(src.to_string());
    }
    let program = crate::syntax::parse(src)
        .map_err(|errs| errs.into_iter().map(crate::runner::syntax_diag).collect::<Vec<_>>())?;
    let mut maps = MapStarts(HashSet::new());
    walk_block(&mut maps, &program.stmts);
    let bom = if src.starts_with('\u{feff}') { "\u{feff}" } else { "" };
    let header = &src[bom.len()..comments::header_len(src)];
    let items = comments::items(src);
    if items.is_empty() && header.is_empty() {
        return Ok(bom.to_string());
    }
    let out = format!("{bom}{}", printer::print(header, &items, &maps.0));
    match same_program(src, &out) {
        Ok(()) => Ok(out),
        Err(why) => Err(vec![Diag {
            code: "csp::fmt",
            message: format!("internal formatter error: the formatted file would differ ({why}); left as it is"),
            span: crate::source::Span::new(0, 0),
            label: "here".into(),
            help: Some("please report this file".into()),
            file: None,
        }]),
    }
}

/// Collects the offsets of map literals' `{`.
struct MapStarts(HashSet<usize>);

impl Visitor for MapStarts {
    fn expr(&mut self, e: &Expr) {
        if let ExprKind::Map(_) = e.kind {
            self.0.insert(e.span.start as usize);
        }
        walk_expr(self, e)
    }
}

/// Checks that `out` has the tokens and comments of `src`. An explicit or
/// inserted `;` right before `}` or at the end changes nothing and is ignored.
fn same_program(src: &str, out: &str) -> Result<(), String> {
    let tokens = |s: &str| -> Vec<Tok> {
        let toks: Vec<Tok> = lexer::lex(s).tokens.into_iter().map(|t| t.1).collect();
        let semi = Tok::P(Raw::Semi);
        (0..toks.len())
            .filter(|&i| toks[i] != semi || toks.get(i + 1).is_some_and(|t| *t != Tok::P(Raw::RBrace)))
            .map(|i| toks[i].clone())
            .collect()
    };
    let comments = |s: &str| -> Vec<String> {
        comments::items(s).into_iter().filter(|i| i.is_comment()).map(|i| i.text.to_string()).collect()
    };
    if tokens(src) != tokens(out) {
        return Err("tokens".into());
    }
    if comments(src) != comments(out) {
        return Err("comments".into());
    }
    if crate::syntax::parse(out).is_err() {
        return Err("it does not parse".into());
    }
    Ok(())
}
