//! Which locals must live in cells: a name is a candidate in a function when a
//! function nested in it refers to that name and does not declare it as a parameter.
//! Over-approximating only costs a cell; it never changes meaning.

use crate::syntax::ast::*;
use std::collections::HashSet;

/// Names that functions nested directly or indirectly in `body` may capture.
pub fn candidates(body: &[Stmt]) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut w = Walker { mode: Mode::FindFuncs, out: &mut out };
    w.block(body);
    out
}

enum Mode {
    /// Looking for nested functions; their free names go to `out`.
    FindFuncs,
    /// Inside a nested function: every referenced name goes to `out`.
    Collect,
}

struct Walker<'a> {
    mode: Mode,
    out: &'a mut HashSet<String>,
}

impl Walker<'_> {
    fn func(&mut self, params: &[Param], rest: &Option<Ident>, body: &[Stmt]) {
        match self.mode {
            Mode::FindFuncs => {
                let mut names = HashSet::new();
                let mut inner = Walker { mode: Mode::Collect, out: &mut names };
                for p in params {
                    if let Some(d) = &p.default {
                        inner.expr(d);
                    }
                }
                inner.block(body);
                for p in params {
                    names.remove(&p.name.name);
                }
                if let Some(r) = rest {
                    names.remove(&r.name);
                }
                self.out.extend(names);
            }
            Mode::Collect => {
                for p in params {
                    if let Some(d) = &p.default {
                        self.expr(d);
                    }
                }
                self.block(body);
            }
        }
    }

    fn block(&mut self, b: &[Stmt]) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        crate::limits::with_stack(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { value, .. } => self.expr(value),
            StmtKind::Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::Expr(e) | StmtKind::Throw(e) => self.expr(e),
            StmtKind::Fn(d) => self.func(&d.params, &d.rest, &d.body),
            StmtKind::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                if let Some(b) = els {
                    self.block(b);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::For { iter, body, .. } => {
                self.expr(iter);
                self.block(body);
            }
            StmtKind::Return(e) => {
                if let Some(e) = e {
                    self.expr(e);
                }
            }
            StmtKind::Try { body, catch, finally } => {
                self.block(body);
                if let Some((_, b)) = catch {
                    self.block(b);
                }
                if let Some(b) = finally {
                    self.block(b);
                }
            }
            StmtKind::Block(b) | StmtKind::WaitBlock(b) => self.block(b),
            StmtKind::Send { chan, value } => {
                self.expr(chan);
                self.expr(value);
            }
            StmtKind::Select(cases) => {
                for c in cases {
                    match &c.kind {
                        CaseKind::Recv { chan, .. } => self.expr(chan),
                        CaseKind::Send { chan, value } => {
                            self.expr(chan);
                            self.expr(value);
                        }
                        CaseKind::Default => {}
                    }
                    self.block(&c.body);
                }
            }
            StmtKind::Lock { mutex, body } => {
                self.expr(mutex);
                self.block(body);
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Import { .. } => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        crate::limits::with_stack(|| self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => {
                if let Mode::Collect = self.mode {
                    self.out.insert(n.clone());
                }
            }
            ExprKind::Nil | ExprKind::Bool(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) => {}
            ExprKind::Interp(parts) => {
                for p in parts {
                    if let InterpPart::Expr(e) = p {
                        self.expr(e);
                    }
                }
            }
            ExprKind::List(xs) => xs.iter().for_each(|x| self.expr(x)),
            ExprKind::ListComp { expr, iter, cond, .. } => {
                self.expr(expr);
                self.expr(iter);
                if let Some(c) = cond {
                    self.expr(c);
                }
            }
            ExprKind::Map(kvs) => {
                for (k, v) in kvs {
                    self.expr(k);
                    self.expr(v);
                }
            }
            ExprKind::Unary(_, a) | ExprKind::Recv(a) | ExprKind::Go(a) | ExprKind::Wait(a) | ExprKind::Field(a, _) => {
                self.expr(a)
            }
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) | ExprKind::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Cond(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Range { lo, hi, .. } => {
                self.expr(lo);
                self.expr(hi);
            }
            ExprKind::Call(f, args) => {
                self.expr(f);
                args.iter().for_each(|x| self.expr(x));
            }
            ExprKind::Method(r, _, args) => {
                self.expr(r);
                args.iter().for_each(|x| self.expr(x));
            }
            ExprKind::Func(d) => self.func(&d.params, &d.rest, &d.body),
            ExprKind::GoBlock(b) => self.func(&[], &None, b),
            ExprKind::Yield(v) => {
                if let Some(v) = v {
                    self.expr(v);
                }
            }
        }
    }
}
