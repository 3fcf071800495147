//! A read-only walk over the AST: passes override the hooks they care about
//! (`expr`, `func`, `bind`) and call the `walk_*` functions to go on.

use super::ast::*;

pub trait Visitor {
    fn stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s)
    }

    fn expr(&mut self, e: &Expr) {
        walk_expr(self, e)
    }

    /// A function (declared, a literal, or the body of `go { }` with no
    /// parameters); its name, if any, is bound by the enclosing scope.
    fn func(&mut self, params: &[Param], rest: &Option<Ident>, body: &[Stmt]) {
        walk_func(self, params, rest, body)
    }

    /// A name bound by a declaration, assignment or pattern: `let`, `fn`, a
    /// parameter, a loop, `catch`, a select case, a comprehension, `import`,
    /// the target of `name = ...`.
    fn bind(&mut self, _name: &str) {}
}

pub fn walk_block<V: Visitor + ?Sized>(v: &mut V, b: &[Stmt]) {
    for s in b {
        v.stmt(s);
    }
}

pub fn walk_func<V: Visitor + ?Sized>(v: &mut V, params: &[Param], rest: &Option<Ident>, body: &[Stmt]) {
    for p in params {
        v.bind(&p.name.name);
        if let Some(d) = &p.default {
            v.expr(d);
        }
    }
    if let Some(r) = rest {
        v.bind(&r.name);
    }
    walk_block(v, body);
}

pub fn walk_stmt<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    crate::limits::with_stack(|| walk_stmt_inner(v, s))
}

fn walk_stmt_inner<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    match &s.kind {
        StmtKind::Let { names, value } => {
            v.expr(value);
            names.iter().for_each(|n| v.bind(&n.name));
        }
        StmtKind::Assign { target, value, .. } => {
            if let ExprKind::Name(n) = &target.kind {
                v.bind(n);
            }
            v.expr(target);
            v.expr(value);
        }
        StmtKind::Expr(e) | StmtKind::Throw(e) => v.expr(e),
        StmtKind::Fn(d) => {
            if let Some(n) = &d.name {
                v.bind(&n.name);
            }
            v.func(&d.params, &d.rest, &d.body)
        }
        StmtKind::If { cond, then, els } => {
            v.expr(cond);
            walk_block(v, then);
            if let Some(b) = els {
                walk_block(v, b);
            }
        }
        StmtKind::While { cond, body } => {
            v.expr(cond);
            walk_block(v, body);
        }
        StmtKind::For { key, var, iter, body } => {
            v.expr(iter);
            key.iter().chain([var]).for_each(|n| v.bind(&n.name));
            walk_block(v, body);
        }
        StmtKind::Return(e) => {
            if let Some(e) = e {
                v.expr(e);
            }
        }
        StmtKind::Try { body, catch, finally } => {
            walk_block(v, body);
            if let Some((name, b)) = catch {
                if let Some(n) = name {
                    v.bind(&n.name);
                }
                walk_block(v, b);
            }
            if let Some(b) = finally {
                walk_block(v, b);
            }
        }
        StmtKind::Block(b) | StmtKind::WaitBlock(b) => walk_block(v, b),
        StmtKind::Send { chan, value } => {
            v.expr(chan);
            v.expr(value);
        }
        StmtKind::Select(cases) => {
            for c in cases {
                match &c.kind {
                    CaseKind::Recv { names, chan } => {
                        v.expr(chan);
                        names.iter().for_each(|n| v.bind(&n.name));
                    }
                    CaseKind::Send { chan, value } => {
                        v.expr(chan);
                        v.expr(value);
                    }
                    CaseKind::Default => {}
                }
                walk_block(v, &c.body);
            }
        }
        StmtKind::Lock { mutex, body } => {
            v.expr(mutex);
            walk_block(v, body);
        }
        StmtKind::Import { path, alias } => match alias {
            Some(a) => v.bind(&a.name),
            None => v.bind(path.rsplit('/').next().unwrap_or(path).trim_end_matches(".csp")),
        },
        StmtKind::Break | StmtKind::Continue => {}
    }
}

pub fn walk_expr<V: Visitor + ?Sized>(v: &mut V, e: &Expr) {
    crate::limits::with_stack(|| walk_expr_inner(v, e))
}

fn walk_expr_inner<V: Visitor + ?Sized>(v: &mut V, e: &Expr) {
    match &e.kind {
        ExprKind::Name(_)
        | ExprKind::Nil
        | ExprKind::Bool(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_) => {}
        ExprKind::Interp(parts) => {
            for p in parts {
                if let InterpPart::Expr(e) = p {
                    v.expr(e);
                }
            }
        }
        ExprKind::List(xs) => xs.iter().for_each(|x| v.expr(x)),
        ExprKind::ListComp { expr, key, var, iter, cond } => {
            v.expr(iter);
            if let Some(k) = key {
                v.bind(&k.name);
            }
            v.bind(&var.name);
            v.expr(expr);
            if let Some(c) = cond {
                v.expr(c);
            }
        }
        ExprKind::Map(kvs) => {
            for (k, x) in kvs {
                v.expr(k);
                v.expr(x);
            }
        }
        ExprKind::Unary(_, a) | ExprKind::Recv(a) | ExprKind::Go(a) | ExprKind::Wait(a) | ExprKind::Field(a, _) => {
            v.expr(a)
        }
        ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) | ExprKind::Index(a, b) => {
            v.expr(a);
            v.expr(b);
        }
        ExprKind::Cond(c, a, b) => {
            v.expr(c);
            v.expr(a);
            v.expr(b);
        }
        ExprKind::Range { lo, hi, .. } => {
            v.expr(lo);
            v.expr(hi);
        }
        ExprKind::Call(f, args) => {
            v.expr(f);
            args.iter().for_each(|x| v.expr(x));
        }
        ExprKind::Method(r, _, args) => {
            v.expr(r);
            args.iter().for_each(|x| v.expr(x));
        }
        ExprKind::Func(d) => v.func(&d.params, &d.rest, &d.body),
        ExprKind::GoBlock(b) => v.func(&[], &None, b),
        ExprKind::Yield(x) => {
            if let Some(x) = x {
                v.expr(x);
            }
        }
    }
}
