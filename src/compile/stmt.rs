//! Statements, loops, and the exits (`break`, `continue`, `return`) that must run
//! pending `finally` blocks on their way out.

use super::operand::Rhs;
use super::{Compiler, Ctx, Var};
use crate::bytecode::Op;
use crate::syntax::ast::*;

impl Compiler<'_> {
    pub(crate) fn block(&mut self, b: &Block) {
        self.begin_scope();
        for s in b {
            self.stmt(s);
        }
        self.end_scope();
    }

    pub(crate) fn stmt(&mut self, s: &Stmt) {
        crate::limits::with_stack(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &Stmt) {
        self.span = s.span;
        self.count(s.span, crate::coverage::Probe::Line);
        let mark = self.mark();
        match &s.kind {
            StmtKind::Let { names, value } => {
                self.let_stmt(names, value);
                return;
            }
            StmtKind::Assign { target, op, value } => self.assign(target, *op, value),
            StmtKind::Expr(e) => {
                let t = self.alloc();
                match &e.kind {
                    // A `go` statement drops its task: failures propagate at once.
                    ExprKind::Go(call) => self.go(call, t, true),
                    ExprKind::GoBlock(b) => self.go_block(b, e.span, t, true),
                    // `isolate.run(...)` as a statement drops its task too.
                    ExprKind::Method(m, name, args)
                        if name.name == "run" && self.module_key(m) == Some("std/isolate") =>
                    {
                        self.isolate_run_dropped(m, args, e.span, t)
                    }
                    _ => self.expr_to(e, t),
                }
            }
            StmtKind::Fn(d) => {
                let name = d.name.as_ref().map(|n| n.name.clone()).unwrap_or_default();
                let reg = self.alloc();
                if self.fs().cells.contains(&name) {
                    self.emit(Op::LoadNil { dst: reg });
                    self.declare(&name, reg);
                    let idx = self.function(d);
                    let t = self.alloc();
                    self.emit(Op::Closure { dst: t, proto: idx });
                    self.emit(Op::SetCell { cell: reg, src: t });
                    self.free_to(reg + 1);
                } else {
                    let idx = self.function(d);
                    self.emit(Op::Closure { dst: reg, proto: idx });
                    self.declare(&name, reg);
                }
                return;
            }
            StmtKind::If { cond, then, els } => {
                let jf = self.jump_if_false(cond);
                let counters = self.branch_counters(s.span);
                self.count_branch(counters, 0);
                self.block(then);
                if els.is_some() || counters.is_some() {
                    let jend = self.emit(Op::Jmp { target: 0 });
                    jf.into_iter().for_each(|j| self.patch(j));
                    self.count_branch(counters, 1);
                    els.iter().for_each(|els| self.block(els));
                    self.patch(jend);
                } else {
                    jf.into_iter().for_each(|j| self.patch(j));
                }
            }
            StmtKind::While { cond, body } => {
                // The test is at the bottom, entered by a jump: an iteration
                // runs one instruction fewer than a test at the top would.
                let enter = (!matches!(cond.kind, ExprKind::Bool(true))).then(|| self.emit(Op::Jmp { target: 0 }));
                let top = self.here() as u32;
                let counters = self.branch_counters(s.span);
                self.count_branch(counters, 0);
                self.fs().ctx.push(Ctx::Loop { breaks: vec![], continues: vec![] });
                self.block(body);
                let test = self.here() as u32;
                enter.into_iter().for_each(|j| self.patch(j));
                self.end_loop(test);
                self.loop_while(cond, top);
                self.patch_breaks();
                self.count_branch(counters, 1);
            }
            StmtKind::For { key, var, iter, body } => {
                let counters = self.branch_counters(s.span);
                self.for_loop(key.as_ref(), var, iter, &mut |c: &mut Compiler| {
                    c.count_branch(counters, 0);
                    for s in body {
                        c.stmt(s);
                    }
                });
                self.count_branch(counters, 1);
            }
            StmtKind::Break | StmtKind::Continue => self.jump_out(s),
            StmtKind::Return(e) => {
                // With a finally pending, the value must survive it in a temporary.
                let pending =
                    self.fs().ctx.iter().any(|c| matches!(c, Ctx::Try { finally: Some(_), .. } | Ctx::Guard { .. }));
                let r = match e {
                    Some(e) if pending => {
                        let t = self.alloc();
                        self.expr_to(e, t);
                        Some(t)
                    }
                    Some(e) => Some(self.expr_any(e)),
                    None => None,
                };
                self.exit_tries(None);
                self.span = s.span;
                match r {
                    Some(src) => self.emit(Op::Return { src }),
                    None => self.emit(Op::ReturnNil),
                };
            }
            StmtKind::Throw(e) => {
                let r = self.expr_any(e);
                self.span = s.span;
                self.emit(Op::Throw { src: r });
            }
            StmtKind::Try { body, catch, finally } => self.try_stmt(body, catch.as_ref(), finally.as_ref()),
            StmtKind::Block(b) => self.block(b),
            StmtKind::Send { chan, value } => {
                let c = self.expr_any(chan);
                let v = self.expr_any(value);
                self.span = s.span;
                self.emit(Op::Send { ch: c, src: v });
            }
            StmtKind::Select(cases) => self.select(cases),
            StmtKind::Lock { mutex, body } => self.lock_block(mutex, body),
            StmtKind::WaitBlock(body) => self.wait_block(body),
            StmtKind::Import { path, alias } => self.import_stmt(path, alias.as_ref(), s.span),
        }
        self.free_to(mark);
    }

    fn let_stmt(&mut self, names: &[Ident], value: &Expr) {
        let top = self.at_top_level() && self.needs_global(names);
        if names.len() == 1 {
            let name = &names[0].name;
            if top {
                let t = self.alloc();
                self.expr_to(value, t);
                let g = self.top_global(name);
                self.emit(Op::SetGlobal { src: t, idx: g });
                self.free_to(t);
            } else {
                let reg = self.alloc();
                self.expr_to(value, reg);
                self.declare(name, reg);
            }
            return;
        }
        if names.len() > 200 {
            self.error(value.span, "`let` destructures at most 200 names");
            return;
        }
        let mark = self.mark();
        let regs: Vec<u8> = names.iter().map(|_| self.alloc()).collect();
        let first = regs[0];
        let last = regs[regs.len() - 1];
        match &value.kind {
            ExprKind::Recv(ch) if names.len() == 2 => {
                let c = self.expr_any(ch);
                self.span = value.span;
                self.emit(Op::Recv2 { dst: first, ch: c });
            }
            _ => {
                let src = self.expr_any(value);
                self.span = value.span;
                self.emit(Op::Unpack { dst: first, src, count: names.len() as u8 });
            }
        }
        if top {
            for (n, &r) in names.iter().zip(&regs) {
                let g = self.top_global(&n.name);
                self.emit(Op::SetGlobal { src: r, idx: g });
            }
            self.free_to(mark);
        } else {
            self.free_to(last + 1);
            for (n, &r) in names.iter().zip(&regs) {
                self.declare(&n.name, r);
            }
        }
    }

    /// `target = value` or `target op= value`. A compound assignment evaluates
    /// the target's parts, then `value`, then reads, combines and writes with no
    /// suspension between (docs/language.md): a run recorded in `rereads`.
    fn assign(&mut self, target: &Expr, op: Option<BinOp>, value: &Expr) {
        match &target.kind {
            ExprKind::Name(n) => {
                let Some(var) = self.resolve(n, target.span) else {
                    return;
                };
                let Some(op) = op else { return self.store(var, value) };
                let rhs = Expr {
                    span: target.span.to(value.span),
                    kind: ExprKind::Binary(op, Box::new(target.clone()), Box::new(value.clone())),
                };
                if let Var::Local(r) = var {
                    // Only this frame writes a plain local: combine in place.
                    return self.expr_to(&rhs, r);
                }
                if is_literal(value) {
                    // Nothing to suspend in: `n += 1` keeps its immediate form.
                    let read = self.here();
                    let t = self.expr_any(&rhs);
                    self.store_temp(var, t);
                    let write = self.here() - 1;
                    self.fs().rereads.push((read as u32, write as u32));
                    return;
                }
                let rb = self.compound_rhs(op, value);
                let t = self.alloc();
                self.span = target.span;
                let read = self.emit(match var {
                    Var::Cell(cell) => Op::GetCell { dst: t, cell },
                    Var::Upval(idx) => Op::GetUpval { dst: t, idx },
                    Var::Global(idx) => Op::GetGlobal { dst: t, idx },
                    Var::Local(_) => unreachable!("handled above"),
                });
                self.span = target.span.to(value.span);
                self.emit(rb.op(op, t, t));
                self.span = target.span;
                let write = self.store_temp(var, t);
                self.fs().rereads.push((read as u32, write as u32));
            }
            ExprKind::Index(obj, key) => {
                if let (None, Some(src)) = (op, self.local_reg(value)) {
                    if let Some((obj, name, key, off)) = self.field_index_operands(obj, key) {
                        self.span = target.span;
                        self.emit(Op::FieldSetIndex { obj, name, key, off, src });
                        return;
                    }
                }
                let ro = self.expr_any(obj);
                // `a[i - 1] = v` in one instruction when `v` is a literal or a
                // local: nothing runs between reading `i` and the store.
                let offset = super::expr::offset_key(key).filter(|_| op.is_none());
                if let Some((base, off)) = offset {
                    if let Some(k) = self.literal_const(value) {
                        let rk = self.expr_any(base);
                        self.span = target.span;
                        self.emit(Op::SetIndexKAdd { obj: ro, key: rk, off, k });
                        return;
                    }
                    if let Some(rv) = self.local_reg(value) {
                        let rk = self.expr_any(base);
                        self.span = target.span;
                        self.emit(Op::SetIndexAdd { obj: ro, key: rk, off, src: rv });
                        return;
                    }
                }
                let rk = self.expr_any(key);
                let Some(op) = op else {
                    // A plain value stays where it is (a local needs no move).
                    let rv = match self.literal_const(value) {
                        Some(k) => {
                            self.span = target.span;
                            self.emit(Op::SetIndexK { obj: ro, key: rk, k });
                            return;
                        }
                        None => self.expr_any(value),
                    };
                    self.span = target.span;
                    self.emit(Op::SetIndex { obj: ro, key: rk, src: rv });
                    return;
                };
                let rb = self.compound_rhs(op, value);
                let rv = self.alloc();
                self.span = target.span;
                let read = self.emit(Op::Index { dst: rv, obj: ro, key: rk });
                self.span = target.span.to(value.span);
                self.emit(rb.op(op, rv, rv));
                self.span = target.span;
                let write = self.emit(Op::SetIndex { obj: ro, key: rk, src: rv });
                self.fs().rereads.push((read as u32, write as u32));
            }
            ExprKind::Field(obj, name) if self.is_module(obj) => {
                let help = "a module's names can be changed only by its own code";
                self.error_help(target.span, format!("cannot assign to the module member '{}'", name.name), help);
            }
            ExprKind::Field(obj, name) => {
                let ro = self.expr_any(obj);
                let k = self.name_const(&name.name);
                let Some(op) = op else {
                    let rv = self.expr_any(value);
                    self.span = target.span;
                    self.emit(Op::SetField { obj: ro, name: k, src: rv });
                    return;
                };
                let rb = self.compound_rhs(op, value);
                let rv = self.alloc();
                self.span = target.span;
                let read = self.emit(Op::Field { dst: rv, obj: ro, name: k });
                self.span = target.span.to(value.span);
                self.emit(rb.op(op, rv, rv));
                self.span = target.span;
                let write = self.emit(Op::SetField { obj: ro, name: k, src: rv });
                self.fs().rereads.push((read as u32, write as u32));
            }
            _ => self.error(target.span, "cannot assign to this expression"),
        }
    }

    /// `name = value` for a resolved variable.
    fn store(&mut self, var: Var, value: &Expr) {
        match var {
            Var::Local(r) => {
                // Short-circuit forms write their destination early: go via a temporary.
                if matches!(value.kind, ExprKind::And(..) | ExprKind::Or(..) | ExprKind::Cond(..)) {
                    let t = self.alloc();
                    self.expr_to(value, t);
                    self.emit(Op::Move { dst: r, src: t });
                } else {
                    self.expr_to(value, r);
                }
            }
            _ => {
                let t = self.expr_any(value);
                self.store_temp(var, t);
            }
        }
    }

    /// Writes register `t` to a variable that is not a plain local; returns the pc.
    fn store_temp(&mut self, var: Var, t: u8) -> usize {
        self.emit(match var {
            Var::Cell(cell) => Op::SetCell { cell, src: t },
            Var::Upval(idx) => Op::SetUpval { src: t, idx },
            Var::Global(idx) => Op::SetGlobal { src: t, idx },
            Var::Local(dst) => Op::Move { dst, src: t },
        })
    }

    /// A compound assignment's value: a literal its instruction carries
    /// (`n += 1`, `x *= 0.5`), else evaluated into a register.
    fn compound_rhs(&mut self, op: BinOp, value: &Expr) -> Rhs {
        match self.literal_operand(op, value, false) {
            Some(rhs) => rhs,
            None => Rhs::Reg(self.expr_any(value)),
        }
    }

    /// `for var in iter { body }`; a syntactic range becomes a counting loop.
    /// `for key, var in iter` keeps a counter in a third state register.
    pub(crate) fn for_loop(
        &mut self,
        key: Option<&Ident>,
        var: &Ident,
        iter: &Expr,
        body: &mut dyn FnMut(&mut Compiler),
    ) {
        let span = self.span;
        self.begin_scope();
        let state = self.alloc();
        let _end = self.alloc();
        let head;
        let exit;
        let counting = matches!(iter.kind, ExprKind::Range { .. }) && key.is_none();
        if let Some(key) = key {
            let counter = self.alloc();
            self.expr_to(iter, state);
            self.span = iter.span;
            self.emit(Op::IterInit { base: state });
            self.emit(Op::LoadInt { dst: counter, val: 0 });
            head = self.here();
            let k = self.alloc();
            let v = self.alloc();
            exit = self.emit(Op::IterNext { base: state, dst: v, target: 0 });
            self.emit(Op::IterPair { base: state, dst: k });
            self.declare(&key.name, k);
            self.declare(&var.name, v);
        } else if let ExprKind::Range { lo, hi, inclusive } = &iter.kind {
            self.expr_to(lo, state);
            self.expr_to(hi, state + 1);
            self.span = iter.span;
            exit = self.emit(Op::ForPrep { base: state, inclusive: *inclusive, target: 0 });
            head = self.here();
            let v = self.alloc();
            self.declare(&var.name, v);
        } else {
            self.expr_to(iter, state);
            self.span = iter.span;
            self.emit(Op::IterInit { base: state });
            let v = self.alloc();
            // Nil before the first item: a loop that lets no item out may
            // have each made over the last one in `v` (bytecode/reuse.rs).
            self.emit(Op::LoadNil { dst: v });
            head = self.here();
            exit = self.emit(Op::IterNext { base: state, dst: v, target: 0 });
            self.declare(&var.name, v);
        }
        self.fs().ctx.push(Ctx::Loop { breaks: vec![], continues: vec![] });
        self.begin_scope();
        body(self);
        self.end_scope();
        let cont = self.here() as u32;
        self.span = span;
        if counting {
            self.emit(Op::ForLoop { base: state, target: head as u32 });
        } else {
            self.emit(Op::Jmp { target: head as u32 });
        }
        self.end_loop(cont);
        self.patch(exit);
        self.patch_breaks();
        self.end_scope();
    }

    /// Pops the innermost loop context, sending its `continue`s to `cont` and keeping
    /// its `break`s for `patch_breaks`.
    fn end_loop(&mut self, cont: u32) {
        let Some(Ctx::Loop { breaks, continues }) = self.fs().ctx.pop() else { unreachable!("loop context") };
        for c in continues {
            self.patch_to(c, cont);
        }
        self.pending_breaks = breaks;
    }

    fn patch_breaks(&mut self) {
        for b in std::mem::take(&mut self.pending_breaks) {
            self.patch(b);
        }
    }

    fn jump_out(&mut self, s: &Stmt) {
        let is_break = matches!(s.kind, StmtKind::Break);
        let Some(loop_at) = self.fs().ctx.iter().rposition(|c| matches!(c, Ctx::Loop { .. })) else {
            let what = if is_break { "break" } else { "continue" };
            self.error(s.span, format!("'{what}' outside a loop"));
            return;
        };
        self.exit_tries(Some(loop_at));
        self.span = s.span;
        let j = self.emit(Op::Jmp { target: 0 });
        if let Some(Ctx::Loop { breaks, continues }) = self.fs().ctx.get_mut(loop_at) {
            if is_break {
                breaks.push(j)
            } else {
                continues.push(j)
            }
        }
    }

    /// Leaves every `try` above context index `floor` (all of them for `None`):
    /// pops their handlers and runs their `finally` blocks, innermost first.
    fn exit_tries(&mut self, floor: Option<usize>) {
        let start = floor.map_or(0, |f| f + 1);
        let mut i = self.fs().ctx.len();
        while i > start {
            i -= 1;
            let (handler, finally) = match &self.fs().ctx[i] {
                Ctx::Try { handler, finally } => (*handler, finally.clone()),
                Ctx::Guard { release } => {
                    let release = *release;
                    self.emit(Op::TryEnd);
                    self.emit(release);
                    continue;
                }
                Ctx::Shield => {
                    self.emit(Op::Unshield);
                    continue;
                }
                Ctx::Loop { .. } => continue,
            };
            if handler {
                self.emit(Op::TryEnd);
            }
            if let Some(f) = finally {
                // The finally block runs outside its own try: hide the inner contexts.
                let hidden = self.fs().ctx.split_off(i);
                self.finally_block(&f);
                self.fs().ctx.extend(hidden);
            }
        }
    }

    /// One copy of a `finally` body (each way out of the `try` has its own),
    /// shielded from cancellation while it runs (docs/concurrency.md).
    fn finally_block(&mut self, f: &Block) {
        self.emit(Op::Shield);
        self.fs().ctx.push(Ctx::Shield);
        self.block(f);
        self.fs().ctx.pop();
        self.emit(Op::Unshield);
    }

    fn set_handler(&mut self, active: bool) {
        if let Some(Ctx::Try { handler, .. }) = self.fs().ctx.last_mut() {
            *handler = active;
        }
    }

    fn try_stmt(&mut self, body: &Block, catch: Option<&(Option<Ident>, Block)>, finally: Option<&Block>) {
        let span = self.span;
        let err = self.alloc();
        let begin = self.emit(Op::TryBegin { reg: err, target: 0 });
        self.fs().ctx.push(Ctx::Try { handler: true, finally: finally.cloned() });
        self.block(body);
        self.span = span;
        self.emit(Op::TryEnd);
        self.set_handler(false);
        let to_finally = self.emit(Op::Jmp { target: 0 });
        let mut rethrow = None;
        match catch {
            Some((name, cbody)) => {
                self.patch(begin);
                let guard = finally.map(|_| {
                    let e2 = self.alloc();
                    let at = self.emit(Op::TryBegin { reg: e2, target: 0 });
                    (e2, at)
                });
                self.set_handler(guard.is_some());
                self.begin_scope();
                if let Some(n) = name {
                    self.declare(&n.name, err);
                }
                for s in cbody {
                    self.stmt(s);
                }
                self.end_scope();
                self.span = span;
                if let Some((e2, at)) = guard {
                    self.emit(Op::TryEnd);
                    self.set_handler(false);
                    rethrow = Some((e2, at));
                }
            }
            None => rethrow = Some((err, begin)),
        }
        self.patch(to_finally);
        self.fs().ctx.pop();
        if let Some(f) = finally {
            self.finally_block(f);
        }
        if let Some((reg, at)) = rethrow {
            let jend = self.emit(Op::Jmp { target: 0 });
            self.patch(at);
            // Keep the pending error's register out of the finally block's temporaries.
            let f = self.fs();
            f.next_reg = f.next_reg.max(reg as usize + 1);
            f.max_reg = f.max_reg.max(reg as usize + 1);
            if let Some(f) = finally {
                self.finally_block(f);
            }
            self.span = span;
            self.emit(Op::Throw { src: reg });
            self.patch(jend);
        }
    }
}

/// A literal: evaluating it cannot suspend or have an effect.
fn is_literal(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) | ExprKind::Bool(_) | ExprKind::Nil)
}
