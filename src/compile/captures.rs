//! Which locals nested functions capture, and which of those must live in
//! cells. A name is captured in a function when a function nested in it
//! refers to that name and does not declare it as a parameter. A captured
//! name needs a cell only if something may change it after it is bound: an
//! assignment anywhere in the function (nested functions included), or a
//! `fn` statement, whose function sees its own name before it is stored.
//! Every other capture copies the value, which cannot change: no cell to
//! allocate, and no indirection to read it. Over-approximating only costs a
//! cell; it never changes meaning.

use crate::syntax::ast::*;
use crate::syntax::visit::{walk_expr, walk_func, walk_stmt, Visitor};
use std::collections::HashSet;

/// The names of a function (its parameters' defaults and its body) that
/// nested functions may capture, and those of them that need cells.
pub struct Captures {
    pub captured: HashSet<String>,
    pub cells: HashSet<String>,
}

pub fn of(params: &[Param], body: &[Stmt]) -> Captures {
    let mut captured = HashSet::new();
    walk_own(&mut FindFuncs { out: &mut captured }, params, body);
    let mut changed = HashSet::new();
    walk_own(&mut Changed { out: &mut changed }, params, body);
    let cells = captured.intersection(&changed).cloned().collect();
    Captures { captured, cells }
}

/// Walks what runs in a function's own frame: its defaults, then its body.
fn walk_own(v: &mut impl Visitor, params: &[Param], body: &[Stmt]) {
    for d in params.iter().filter_map(|p| p.default.as_ref()) {
        v.expr(d);
    }
    crate::syntax::visit::walk_block(v, body);
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

/// Names assigned (`x = ...`, `x += ...`) or declared by `fn x`, at any depth.
struct Changed<'a> {
    out: &'a mut HashSet<String>,
}

impl Visitor for Changed<'_> {
    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign { target: Expr { kind: ExprKind::Name(n), .. }, .. } => {
                self.out.insert(n.clone());
            }
            StmtKind::Fn(d) => {
                if let Some(n) = &d.name {
                    self.out.insert(n.name.clone());
                }
            }
            _ => {}
        }
        walk_stmt(self, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells_and_captured(src: &str) -> (Vec<String>, Vec<String>) {
        let prog = crate::syntax::parse(src).expect("parses");
        let c = of(&[], &prog.stmts);
        let mut cells: Vec<String> = c.cells.into_iter().collect();
        let mut captured: Vec<String> = c.captured.into_iter().collect();
        cells.sort();
        captured.sort();
        (cells, captured)
    }

    /// Only captured names something changes get cells: assigned in the
    /// function, in a nested one, or declared by `fn` (which sees itself).
    #[test]
    fn only_changed_captures_get_cells() {
        let src = "let a = 1\nlet b = 2\nlet c = 3\nlet d = 4\nb = 5\n\
                   let f = fn() { c += 1\n return a + b + c }\n\
                   fn g() { return g }\nprint(d)";
        let (cells, captured) = cells_and_captured(src);
        assert_eq!(captured, ["a", "b", "c", "g"]);
        assert_eq!(cells, ["b", "c", "g"]);
    }
}
