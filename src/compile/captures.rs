//! Which locals must live in cells: a name is a candidate in a function when a
//! function nested in it refers to that name and does not declare it as a parameter.
//! Over-approximating only costs a cell; it never changes meaning.

use crate::syntax::ast::*;
use crate::syntax::visit::{walk_expr, walk_func, Visitor};
use std::collections::HashSet;

/// Names that functions nested directly or indirectly in `body` may capture.
pub fn candidates(body: &[Stmt]) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut w = FindFuncs { out: &mut out };
    crate::syntax::visit::walk_block(&mut w, body);
    out
}

/// Looks for nested functions; their free names go to `out`.
struct FindFuncs<'a> {
    out: &'a mut HashSet<String>,
}

impl Visitor for FindFuncs<'_> {
    fn func(&mut self, params: &[Param], rest: &Option<Ident>, body: &[Stmt]) {
        let mut names = HashSet::new();
        walk_func(&mut Collect { out: &mut names }, params, rest, body);
        for p in params {
            names.remove(&p.name.name);
        }
        if let Some(r) = rest {
            names.remove(&r.name);
        }
        self.out.extend(names);
    }
}

/// Inside a nested function: every referenced name goes to `out`.
struct Collect<'a> {
    out: &'a mut HashSet<String>,
}

impl Visitor for Collect<'_> {
    fn expr(&mut self, e: &Expr) {
        if let ExprKind::Name(n) = &e.kind {
            self.out.insert(n.clone());
        }
        walk_expr(self, e)
    }
}
