//! Control and concurrency: code after `return`/`throw`/`break`/`continue`,
//! an `if` whose condition is a constant, a dropped `go` in a loop of a
//! function that never waits, and a `lock` of a mutex its own `lock` holds.

use super::warning;
use crate::diag::Diag;
use crate::lsp::resolve::{Index, Ty};
use crate::source::Span;
use crate::syntax::ast::*;
use crate::syntax::visit::{walk_expr, walk_func, walk_stmt, Visitor};
use std::collections::HashMap;

pub fn check(program: &Program, ix: &Index, out: &mut Vec<Diag>) {
    let def_at = ix.refs.iter().map(|(s, d)| (s.start, *d)).collect();
    let bodies = function_bodies(&program.stmts);
    let ctx = Ctx { waits: waits(ix, &program.stmts), ..Ctx::default() };
    let mut f = Flow { ix, bodies, def_at, out: Vec::new(), ctx };
    f.unreachable(&program.stmts);
    for s in &program.stmts {
        f.stmt(s);
    }
    out.append(&mut f.out);
}

struct Flow<'a> {
    ix: &'a Index,
    /// Named functions' bodies, by the start of the name.
    bodies: HashMap<u32, &'a [Stmt]>,
    def_at: HashMap<u32, Option<usize>>,
    out: Vec<Diag>,
    ctx: Ctx,
}

/// Where the walk is within the current function.
#[derive(Default, Clone)]
struct Ctx {
    /// Inside a loop whose body never blocks (it only starts fibers).
    idle_loop: bool,
    wait_blocks: usize,
    /// The mutexes of the enclosing `lock` statements, as paths (`m`, `self.mu`).
    locks: Vec<String>,
    /// Whether the function waits for anything: `wait`, a receive, `select`,
    /// or a `for` over a channel.
    waits: bool,
}

impl Visitor for Flow<'_> {
    fn stmt(&mut self, s: &Stmt) {
        crate::limits::with_stack(|| self.stmt_inner(s))
    }

    fn expr(&mut self, e: &Expr) {
        crate::limits::with_stack(|| self.expr_inner(e))
    }

    fn func(&mut self, params: &[Param], rest: &Option<Ident>, body: &[Stmt]) {
        let inner = Ctx { waits: waits(self.ix, body), ..Ctx::default() };
        let outer = std::mem::replace(&mut self.ctx, inner);
        self.unreachable(body);
        walk_func(self, params, rest, body);
        self.ctx = outer;
    }
}

impl Flow<'_> {
    fn stmt_inner(&mut self, s: &Stmt) {
        for b in child_blocks(s) {
            self.unreachable(b);
        }
        match &s.kind {
            StmtKind::While { body, .. } | StmtKind::For { body, .. } => {
                // A loop that may block (a call, a channel operation, ...)
                // paces itself; one that only starts fibers does not.
                let outer = std::mem::replace(&mut self.ctx.idle_loop, !may_block(body));
                walk_stmt(self, s);
                self.ctx.idle_loop = outer;
            }
            StmtKind::WaitBlock(_) => {
                self.ctx.wait_blocks += 1;
                walk_stmt(self, s);
                self.ctx.wait_blocks -= 1;
            }
            StmtKind::Lock { mutex, body } => {
                self.expr(mutex);
                let key = self.path(mutex);
                if let Some((k, shown)) = &key {
                    if self.ctx.locks.contains(k) {
                        self.out.push(warning(
                            "csp::lint::relock",
                            mutex.span,
                            format!("`{shown}` is already locked by an enclosing `lock`"),
                            "locking a mutex this fiber holds throws an error: leave out the inner `lock`",
                        ));
                    }
                }
                self.ctx.locks.extend(key.clone().map(|k| k.0));
                for s in body {
                    self.stmt(s);
                }
                if key.is_some() {
                    self.ctx.locks.pop();
                }
            }
            StmtKind::If { cond, .. } => {
                if let Some(truth) = constant(cond) {
                    let what = if truth { "true: the `else` never runs" } else { "false: the block never runs" };
                    self.out.push(warning(
                        "csp::lint::constant_condition",
                        cond.span,
                        format!("this condition is always {what}"),
                        "test something that can change, or remove the `if`",
                    ));
                }
                walk_stmt(self, s);
            }
            StmtKind::Expr(e @ Expr { kind: ExprKind::Go(_) | ExprKind::GoBlock(_), .. })
                if self.ctx.idle_loop && self.ctx.wait_blocks == 0 && !self.ctx.waits && !self.serves(e) =>
            {
                self.out.push(warning(
                    "csp::lint::go_in_loop",
                    Span::new(e.span.start as usize, e.span.start as usize + 2),
                    "fibers started in a loop, and nothing waits for them".into(),
                    "start them inside `wait { ... }`, or keep the tasks and `wait` them",
                ));
                walk_stmt(self, s);
            }
            _ => walk_stmt(self, s),
        }
    }

    fn expr_inner(&mut self, e: &Expr) {
        match &e.kind {
            // A `go { }` block's fibers belong to the `wait { }` block around it too.
            ExprKind::GoBlock(body) => {
                let inner = Ctx { waits: waits(self.ix, body), wait_blocks: self.ctx.wait_blocks, ..Ctx::default() };
                let outer = std::mem::replace(&mut self.ctx, inner);
                self.unreachable(body);
                body.iter().for_each(|s| self.stmt(s));
                self.ctx = outer;
            }
            _ => walk_expr(self, e),
        }
    }
}

impl Flow<'_> {
    /// Whether a `go` starts a server: a function of this file (or a `go { }`
    /// block) whose body is a `while true` loop runs until something stops
    /// it, so nothing is expected to wait for it.
    fn serves(&self, e: &Expr) -> bool {
        let forever = |body: &[Stmt]| {
            body.iter()
                .any(|s| matches!(&s.kind, StmtKind::While { cond: Expr { kind: ExprKind::Bool(true), .. }, .. }))
        };
        match &e.kind {
            ExprKind::GoBlock(body) => forever(body),
            ExprKind::Go(call) => {
                let ExprKind::Call(f, _) = &call.kind else { return false };
                let Some(Some(d)) = self.def_at.get(&f.span.start) else { return false };
                self.bodies.get(&self.ix.defs[*d].span.start).is_some_and(|b| forever(b))
            }
            _ => false,
        }
    }

    /// Warns at the first statement of `b` that follows one that always leaves the block.
    fn unreachable(&mut self, b: &[Stmt]) {
        for (i, s) in b.iter().enumerate() {
            let Some(how) = leaves(s) else { continue };
            if let (Some(first), Some(last)) = (b.get(i + 1), b.last()) {
                self.out.push(warning(
                    "csp::lint::unreachable",
                    Span::new(first.span.start as usize, last.span.end as usize),
                    "unreachable code".into(),
                    format!("{how} before it always leaves the block"),
                ));
            }
            return;
        }
    }

    /// A mutex expression as a path that names the same mutex wherever it is
    /// written: a variable (by its definition) and fields of it; the key
    /// compared and the text shown.
    fn path(&self, e: &Expr) -> Option<(String, String)> {
        crate::limits::with_stack(|| self.path_inner(e))
    }

    fn path_inner(&self, e: &Expr) -> Option<(String, String)> {
        match &e.kind {
            ExprKind::Name(n) => {
                let def = self.def_at.get(&e.span.start).copied().flatten();
                Some((def.map_or_else(|| n.clone(), |d| format!("#{d}")), n.clone()))
            }
            ExprKind::Field(r, name) => {
                let (key, shown) = self.path(r)?;
                Some((format!("{key}.{}", name.name), format!("{shown}.{}", name.name)))
            }
            _ => None,
        }
    }
}

/// Every `fn NAME` declaration's body, by the start of its name.
fn function_bodies(stmts: &[Stmt]) -> HashMap<u32, &[Stmt]> {
    let mut out = HashMap::new();
    for s in stmts {
        if let StmtKind::Fn(d) = &s.kind {
            if let Some(n) = &d.name {
                out.insert(n.span.start, &d.body[..]);
            }
            out.extend(crate::limits::with_stack(|| function_bodies(&d.body)));
        }
    }
    out
}

/// Whether a loop body may block: anything but starting fibers (a call, a
/// channel operation, `wait`, `select`, `lock`, `yield`).
fn may_block(body: &[Stmt]) -> bool {
    struct Finds(bool);
    impl Visitor for Finds {
        fn stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::Send { .. } | StmtKind::Select(_) | StmtKind::Lock { .. } | StmtKind::WaitBlock(_) => {
                    self.0 = true
                }
                _ => walk_stmt(self, s),
            }
        }
        fn expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Call(..) | ExprKind::Method(..) | ExprKind::Recv(_) | ExprKind::Wait(_) => self.0 = true,
                ExprKind::Yield(_) => self.0 = true,
                // What the new fiber does is not the loop's pace; its arguments are.
                ExprKind::Go(call) => {
                    if let ExprKind::Call(_, args) = &call.kind {
                        args.iter().for_each(|a| self.expr(a))
                    }
                }
                ExprKind::GoBlock(_) | ExprKind::Func(_) => {}
                _ => walk_expr(self, e),
            }
        }
    }
    let mut f = Finds(false);
    body.iter().for_each(|s| f.stmt(s));
    f.0
}

/// The blocks directly inside a statement (a function's body is the function's).
fn child_blocks(s: &Stmt) -> Vec<&[Stmt]> {
    match &s.kind {
        StmtKind::If { then, els, .. } => [Some(then), els.as_ref()].into_iter().flatten().map(|b| &b[..]).collect(),
        StmtKind::While { body, .. } | StmtKind::For { body, .. } | StmtKind::Lock { body, .. } => vec![body],
        StmtKind::Block(b) | StmtKind::WaitBlock(b) => vec![b],
        StmtKind::Try { body, catch, finally } => {
            [Some(body), catch.as_ref().map(|c| &c.1), finally.as_ref()].into_iter().flatten().map(|b| &b[..]).collect()
        }
        StmtKind::Select(cases) => cases.iter().map(|c| &c.body[..]).collect(),
        _ => Vec::new(),
    }
}

/// How a statement always leaves its block, if it does.
fn leaves(s: &Stmt) -> Option<&'static str> {
    crate::limits::with_stack(|| leaves_inner(s))
}

fn leaves_inner(s: &Stmt) -> Option<&'static str> {
    match &s.kind {
        StmtKind::Return(_) => Some("the `return`"),
        StmtKind::Throw(_) => Some("the `throw`"),
        StmtKind::Break => Some("the `break`"),
        StmtKind::Continue => Some("the `continue`"),
        StmtKind::If { then, els: Some(els), .. } => (then.iter().any(|s| leaves(s).is_some())
            && els.iter().any(|s| leaves(s).is_some()))
        .then_some("the `if` whose every branch leaves"),
        StmtKind::Block(b) => b.iter().find_map(leaves),
        _ => None,
    }
}

/// The truth of a condition that cannot change: literals, and `!`, `&&`,
/// `||` and comparisons of them.
fn constant(e: &Expr) -> Option<bool> {
    crate::limits::with_stack(|| constant_inner(e))
}

fn constant_inner(e: &Expr) -> Option<bool> {
    Some(match &e.kind {
        ExprKind::Bool(b) => *b,
        ExprKind::Nil => false,
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::List(_) | ExprKind::Map(_) => true,
        ExprKind::Func(_) => true,
        ExprKind::Unary(UnOp::Not, a) => !constant(a)?,
        ExprKind::And(a, b) => constant(a)? && constant(b)?,
        ExprKind::Or(a, b) => constant(a)? || constant(b)?,
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (number(a)?, number(b)?);
            match op {
                BinOp::Eq => x == y,
                BinOp::Ne => x != y,
                BinOp::Lt => x < y,
                BinOp::Le => x <= y,
                BinOp::Gt => x > y,
                BinOp::Ge => x >= y,
                _ => return None,
            }
        }
        _ => return None,
    })
}

fn number(e: &Expr) -> Option<f64> {
    match e.kind {
        ExprKind::Int(i) => Some(i as f64),
        ExprKind::Float(f) => Some(f),
        _ => None,
    }
}

/// Whether a function body (not the functions inside it) waits for anything.
fn waits(ix: &Index, body: &[Stmt]) -> bool {
    struct Finds<'a>(&'a Index, bool);
    impl Visitor for Finds<'_> {
        fn stmt(&mut self, s: &Stmt) {
            match &s.kind {
                StmtKind::WaitBlock(_) | StmtKind::Select(_) => self.1 = true,
                StmtKind::For { iter, .. } if self.is_chan(iter) => self.1 = true,
                _ => walk_stmt(self, s),
            }
        }
        fn expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Wait(_) | ExprKind::Recv(_) => self.1 = true,
                ExprKind::Func(_) | ExprKind::GoBlock(_) => {}
                _ => walk_expr(self, e),
            }
        }
        fn func(&mut self, _: &[Param], _: &Option<Ident>, _: &[Stmt]) {}
    }
    impl Finds<'_> {
        fn is_chan(&self, e: &Expr) -> bool {
            let ExprKind::Name(_) = e.kind else { return false };
            let def = self.0.refs.iter().find(|(s, _)| *s == e.span).and_then(|(_, d)| *d);
            def.is_some_and(|d| self.0.defs[d].ty == Some(Ty::Kind("chan")))
        }
    }
    let mut f = Finds(ix, false);
    for s in body {
        f.stmt(s);
    }
    f.1
}
