//! What `csp check` reports beyond compile errors: calls that must fail when
//! they run. (At run time these stay catchable runtime errors, as the language
//! defines them; `check` reports them before anything runs.)

use crate::compile::CompileError;
use crate::syntax::ast::*;
use crate::syntax::visit::{walk_block, walk_expr, Visitor};
use std::collections::HashMap;

/// Calls of a known top-level function with a number of arguments it does
/// not accept. A function is known when a top-level `fn` declares it and
/// nothing else in the file binds its name (no parameter, local, loop
/// variable or assignment could make a call refer to something else).
pub fn arity(program: &Program) -> Vec<CompileError> {
    let mut binds = Binds::default();
    walk_block(&mut binds, &program.stmts);
    let known: HashMap<&str, &FuncDecl> = program
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Fn(d) => d.name.as_ref().map(|n| (n.name.as_str(), &**d)),
            _ => None,
        })
        .filter(|(name, _)| binds.0.get(*name) == Some(&1))
        .collect();
    let mut calls = Calls { known, errors: Vec::new() };
    walk_block(&mut calls, &program.stmts);
    calls.errors
}

/// How many times each name is bound anywhere in the file.
#[derive(Default)]
struct Binds(HashMap<String, usize>);

impl Visitor for Binds {
    fn bind(&mut self, name: &str) {
        *self.0.entry(name.to_string()).or_default() += 1;
    }
}

struct Calls<'a> {
    known: HashMap<&'a str, &'a FuncDecl>,
    errors: Vec<CompileError>,
}

impl Visitor for Calls<'_> {
    fn expr(&mut self, e: &Expr) {
        if let ExprKind::Call(f, args) = &e.kind {
            if let ExprKind::Name(name) = &f.kind {
                if let Some(d) = self.known.get(name.as_str()) {
                    if let Some(message) = mismatch(name, d, args.len()) {
                        self.errors.push(CompileError {
                            span: e.span,
                            message,
                            help: Some(format!("`{name}` is declared as {}", signature(name, d))),
                            code: "csp::check",
                            file: None,
                        });
                    }
                }
            }
        }
        walk_expr(self, e)
    }
}

/// The runtime's message for `argc` arguments, if `d` does not accept them.
fn mismatch(name: &str, d: &FuncDecl, argc: usize) -> Option<String> {
    let np = d.params.len();
    let nr = d.params.iter().filter(|p| p.default.is_none()).count();
    if argc >= nr && (argc <= np || d.rest.is_some()) {
        return None;
    }
    Some(crate::vm::call::arity_text(name, nr, np, d.rest.is_some(), argc))
}

/// `f(a, b = ..., ...rest)` (also the language server's hover text).
pub(crate) fn signature(name: &str, d: &FuncDecl) -> String {
    let mut params: Vec<String> = d
        .params
        .iter()
        .map(|p| if p.default.is_some() { format!("{} = ...", p.name.name) } else { p.name.name.clone() })
        .collect();
    if let Some(r) = &d.rest {
        params.push(format!("...{}", r.name));
    }
    format!("{name}({})", params.join(", "))
}
