//! Concurrency constructs: `go`, `select`, `lock` and `wait { }` blocks.

use super::{Compiler, Ctx};
use crate::bytecode::{Cmp, Op};
use crate::source::Span;
use crate::syntax::ast::*;
use std::rc::Rc;

impl Compiler<'_> {
    /// `isolate.run(f, args)` as a statement calls std/isolate's private
    /// `_run_dropped`, whose `go` drops the task: a failure propagates at
    /// once, as a dropped `go`'s does (docs/isolates.md).
    pub(crate) fn isolate_run_dropped(&mut self, module: &Expr, args: &[Expr], span: Span, dst: u8) {
        let ExprKind::Name(alias) = &module.kind else { return };
        let prefix = self.imports[alias].prefix.clone();
        let base = self.alloc();
        let idx = self.global(&format!("{prefix}_run_dropped"));
        self.emit(Op::GetGlobal { dst: base, idx });
        for a in args {
            let r = self.alloc();
            self.expr_to(a, r);
        }
        self.span = span;
        self.emit(Op::Call { base, argc: args.len().min(255) as u8 });
        if base != dst {
            self.emit(Op::Move { dst, src: base });
        }
    }

    /// `go f(args)` / `go recv.m(args)`: the callee (or receiver) and arguments
    /// are evaluated here, in this fiber; the new fiber makes the same call the
    /// expression would (a method call stays a method call).
    pub(crate) fn go(&mut self, call: &Expr, dst: u8, dropped: bool) {
        let (recv, name, args) = match &call.kind {
            ExprKind::Method(recv, name, args) if self.is_module(recv) => {
                // `go mod.f(x)` calls the export, as `mod.f(x)` does.
                let f = Expr { span: call.span, kind: ExprKind::Field(recv.clone(), name.clone()) };
                return self.go(
                    &Expr { span: call.span, kind: ExprKind::Call(Box::new(f), args.clone()) },
                    dst,
                    dropped,
                );
            }
            ExprKind::Call(f, args) => (f, None, args),
            ExprKind::Method(recv, name, args) => (recv, Some(name), args),
            _ => {
                self.error(call.span, "`go` needs a function call, like `go f(x)`, or a block");
                return;
            }
        };
        let base = self.alloc();
        if let Some(name) = name {
            // A method call: its name (a string constant), then the receiver.
            let k = self.str_const(&name.name);
            self.emit(Op::LoadK { dst: base, k });
            let r = self.alloc();
            self.expr_to(recv, r);
        } else {
            self.expr_to(recv, base);
        }
        for a in args {
            let r = self.alloc();
            self.expr_to(a, r);
        }
        self.span = call.span;
        let (argc, method) = (args.len().min(255) as u8, name.is_some());
        self.emit(Op::Go { base, argc, method, dropped });
        if base != dst {
            self.emit(Op::Move { dst, src: base });
        }
    }

    /// `go { block }` is `go (fn() { block })()`.
    pub(crate) fn go_block(&mut self, body: &Block, span: Span, dst: u8, dropped: bool) {
        let decl = Rc::new(FuncDecl { name: None, params: Vec::new(), rest: None, body: body.clone(), span });
        let base = self.alloc();
        let idx = self.function(&decl);
        self.span = span;
        self.emit(Op::Closure { dst: base, proto: idx });
        self.emit(Op::Go { base, argc: 0, method: false, dropped });
        if base != dst {
            self.emit(Op::Move { dst, src: base });
        }
    }

    /// A body protected by a handler that runs `release` on every way out.
    fn guarded(&mut self, body: &Block, release: Op, on_throw: impl FnOnce(&mut Self, u8)) {
        let span = self.span;
        let err = self.alloc();
        let begin = self.emit(Op::TryBegin { reg: err, target: 0 });
        self.fs().ctx.push(Ctx::Guard { release });
        self.block(body);
        self.fs().ctx.pop();
        self.span = span;
        self.emit(Op::TryEnd);
        self.emit(release);
        let jend = self.emit(Op::Jmp { target: 0 });
        self.patch(begin);
        on_throw(self, err);
        self.patch(jend);
    }

    /// `lock m { body }`: the mutex stays in a register for the whole block.
    pub(crate) fn lock_block(&mut self, mutex: &Expr, body: &Block) {
        let m = self.alloc();
        self.expr_to(mutex, m);
        self.emit(Op::Lock { m });
        self.guarded(body, Op::Unlock { m }, |c, err| {
            c.emit(Op::Unlock { m });
            c.emit(Op::Throw { src: err });
        });
    }

    /// `wait { body }`: fibers started inside belong to the block, which ends when
    /// they all have; a failure cancels the rest and is rethrown.
    pub(crate) fn wait_block(&mut self, body: &Block) {
        self.emit(Op::ScopeBegin);
        self.guarded(body, Op::ScopeEnd, |c, err| {
            c.emit(Op::ScopeAbort { err });
        });
    }

    /// `select { case ... }`: channel and value expressions are evaluated once, in
    /// source order, into a register window; the Select instruction picks a case
    /// and the code after it dispatches on the case index.
    pub(crate) fn select(&mut self, cases: &[SelectCase]) {
        let span = self.span;
        let comm: Vec<&SelectCase> = cases.iter().filter(|c| !matches!(c.kind, CaseKind::Default)).collect();
        let defaults = cases.len() - comm.len();
        if defaults > 1 {
            self.error(span, "a select has at most one default case");
        }
        if comm.len() > 120 {
            self.error(span, "too many select cases (at most 120)");
            return;
        }
        let base = self.mark();
        for _ in 0..(2 * comm.len()).max(3) {
            self.alloc();
        }
        let mut kinds = Vec::new();
        for (i, c) in comm.iter().enumerate() {
            let r = base + 2 * i as u8;
            match &c.kind {
                CaseKind::Recv { chan, .. } => {
                    self.expr_to(chan, r);
                    kinds.push(false);
                }
                CaseKind::Send { chan, value } => {
                    self.expr_to(chan, r);
                    self.expr_to(value, r + 1);
                    kinds.push(true);
                }
                CaseKind::Default => unreachable!(),
            }
        }
        let desc = {
            let f = self.fs();
            f.selects.push((kinds, defaults > 0));
            (f.selects.len() - 1) as u16
        };
        self.span = span;
        self.emit(Op::Select { base, desc });
        let mut ends = Vec::new();
        let mut index = 0i8;
        for c in cases {
            self.span = c.span;
            let idx = if matches!(c.kind, CaseKind::Default) {
                -1
            } else {
                index += 1;
                index - 1
            };
            let skip = self.emit(Op::JmpUnlessI { cmp: Cmp::Eq, a: base, imm: idx, target: 0 });
            self.begin_scope();
            if let CaseKind::Recv { names, .. } = &c.kind {
                for (k, n) in names.iter().take(2).enumerate() {
                    let r = self.alloc();
                    self.emit(Op::Move { dst: r, src: base + 1 + k as u8 });
                    self.declare(&n.name, r);
                }
            }
            for s in &c.body {
                self.stmt(s);
            }
            self.end_scope();
            ends.push(self.emit(Op::Jmp { target: 0 }));
            self.patch(skip);
        }
        for j in ends {
            self.patch(j);
        }
        self.free_to(base);
    }
}
