//! Conditions: the jumps an `if`, `while` or `?:` test compiles to. A
//! comparison jumps on its operands directly (against a register, a small
//! int or a literal constant); `&&`, `||` and `!` become jumps, not values.

use super::Compiler;
use crate::bytecode::{Cmp, Op};
use crate::syntax::ast::*;
use crate::vm::value::Value;

impl Compiler<'_> {
    /// The operands of a comparison `a op b` for a conditional jump: a register
    /// and a small integer literal, a register and a literal's constant (`==`
    /// and `!=`; an ordering against a float), or two registers (`>` and `>=`
    /// swapped to `<` and `<=`). None if `cond` is not a comparison.
    fn comparison(&mut self, cond: &Expr) -> Option<Compared> {
        let ExprKind::Binary(op, a, b) = &cond.kind else { return None };
        if let Some((cmp, x, lit)) = literal_compare(*op, a, b) {
            if !matches!(lit.kind, ExprKind::Int(i) if i8::try_from(i).is_ok()) {
                // A constant among the first 256, or the general form below.
                if let Some(k) = self.literal_const(lit).and_then(|k| u8::try_from(k).ok()) {
                    return Some(Compared::K(cmp, self.expr_any(x), k));
                }
            }
        }
        let cmp = match op {
            BinOp::Eq => Cmp::Eq,
            BinOp::Ne => Cmp::Ne,
            BinOp::Lt => Cmp::Lt,
            BinOp::Le => Cmp::Le,
            BinOp::Gt => Cmp::Gt,
            BinOp::Ge => Cmp::Ge,
            _ => return None,
        };
        if let ExprKind::Int(i) = b.kind {
            if let Ok(imm) = i8::try_from(i) {
                return Some(Compared::Imm(cmp, self.expr_any(a), imm));
            }
        }
        if let (ExprKind::Int(i), Cmp::Eq | Cmp::Ne) = (&a.kind, cmp) {
            if let Ok(imm) = i8::try_from(*i) {
                return Some(Compared::Imm(cmp, self.expr_any(b), imm));
            }
        }
        let (ra, rb) = (self.expr_any(a), self.expr_any(b));
        Some(match cmp {
            Cmp::Gt => Compared::Regs(Cmp::Lt, rb, ra),
            Cmp::Ge => Compared::Regs(Cmp::Le, rb, ra),
            _ => Compared::Regs(cmp, ra, rb),
        })
    }

    /// Emits a `while` loop's test: jumps back to `top` while `cond` holds.
    pub(crate) fn loop_while(&mut self, cond: &Expr, top: u32) {
        let save = self.span;
        self.span = cond.span;
        let mark = self.mark();
        let compared = self.comparison(cond);
        self.span = cond.span;
        match (compared, &cond.kind) {
            (Some(Compared::Imm(cmp, a, imm)), _) => _ = self.emit(Op::LoopWhenI { cmp, a, imm, target: top }),
            (Some(Compared::Regs(cmp, a, b)), _) => _ = self.emit(Op::LoopWhen { cmp, a, b, target: top }),
            (Some(Compared::K(cmp, a, k)), _) => _ = self.emit(Op::LoopWhenK { cmp, a, k, target: top }),
            (None, ExprKind::And(a, b)) => {
                let out = self.jump_if_false(a);
                self.loop_while(b, top);
                out.into_iter().for_each(|j| self.patch(j));
            }
            (None, ExprKind::Or(a, b)) => {
                self.loop_while(a, top);
                self.loop_while(b, top);
            }
            (None, ExprKind::Bool(true)) => _ = self.emit(Op::Jmp { target: top }),
            (None, _) => {
                let r = self.expr_any(cond);
                self.emit(Op::LoopIf { src: r, target: top });
            }
        }
        self.free_to(mark);
        self.span = save;
    }

    /// Emits jumps taken when `cond` is false; returns them for patching.
    pub(crate) fn jump_if_false(&mut self, cond: &Expr) -> Vec<usize> {
        self.jump_when(cond, false)
    }

    /// Emits jumps taken when `cond`'s truth is `when`; returns them for
    /// patching.
    fn jump_when(&mut self, cond: &Expr, when: bool) -> Vec<usize> {
        let save = self.span;
        self.span = cond.span;
        let mark = self.mark();
        let compared = self.comparison(cond);
        self.span = cond.span;
        let jumps = match (compared, &cond.kind) {
            (Some(c), _) => self.compare_jump(c, when),
            (None, ExprKind::And(a, b) | ExprKind::Or(a, b)) => {
                if matches!(cond.kind, ExprKind::And(..)) != when {
                    // `&&` is false, `||` true, as soon as either side is.
                    let mut js = self.jump_when(a, when);
                    js.extend(self.jump_when(b, when));
                    js
                } else {
                    // Otherwise `a` going the other way decides at once (past
                    // `b`, into an `||`'s body), and else `b` decides.
                    let past = self.jump_when(a, !when);
                    let js = self.jump_when(b, when);
                    past.into_iter().for_each(|j| self.patch(j));
                    js
                }
            }
            (None, ExprKind::Unary(UnOp::Not, x)) => self.jump_when(x, !when),
            (None, ExprKind::Bool(b)) if *b != when => vec![],
            (None, _) => {
                let src = self.expr_any(cond);
                vec![self.emit(if when { Op::JmpIf { src, target: 0 } } else { Op::JmpIfNot { src, target: 0 } })]
            }
        };
        self.free_to(mark);
        self.span = save;
        jumps
    }

    /// The jump of a comparison whose truth is `when`. `==` and `!=` negate
    /// exactly; an ordering does not (NaN), so when it holds it jumps over
    /// the jump out instead.
    fn compare_jump(&mut self, c: Compared, when: bool) -> Vec<usize> {
        if !when {
            return vec![self.jump_unless(c)];
        }
        if c.cmp().is_equality() {
            return vec![self.jump_unless(c.negated())];
        }
        let skip = self.jump_unless(c);
        let out = self.emit(Op::Jmp { target: 0 });
        self.patch(skip);
        vec![out]
    }

    /// Emits "unless the comparison holds, jump".
    fn jump_unless(&mut self, c: Compared) -> usize {
        let op = match c {
            // `x == nil` tests the tag alone: cheaper than `compare!`'s cases.
            Compared::K(cmp, a, k) if matches!(self.fs().consts[k as usize], Value::Nil) => {
                Op::JmpUnlessNil { a, nil: cmp == Cmp::Eq, target: 0 }
            }
            c => c.jump_unless(),
        };
        self.emit(op)
    }
}

/// A comparison's operands, for a conditional jump (`Compiler::comparison`).
enum Compared {
    Imm(Cmp, u8, i8),
    Regs(Cmp, u8, u8),
    /// Against constant k: `==` or `!=`, or an ordering against a float.
    K(Cmp, u8, u8),
}

impl Compared {
    /// "Unless the comparison holds, jump", its target to be patched.
    fn jump_unless(self) -> Op {
        match self {
            Compared::Imm(cmp, a, imm) => Op::JmpUnlessI { cmp, a, imm, target: 0 },
            Compared::Regs(cmp, a, b) => Op::JmpUnless { cmp, a, b, target: 0 },
            Compared::K(cmp, a, k) => Op::JmpUnlessK { cmp, a, k, target: 0 },
        }
    }

    fn cmp(&self) -> Cmp {
        match *self {
            Compared::Imm(cmp, ..) | Compared::Regs(cmp, ..) | Compared::K(cmp, ..) => cmp,
        }
    }

    /// The comparison's opposite (`==` and `!=` only).
    fn negated(self) -> Compared {
        match self {
            Compared::Imm(cmp, a, imm) => Compared::Imm(cmp.negated(), a, imm),
            Compared::Regs(cmp, a, b) => Compared::Regs(cmp.negated(), a, b),
            Compared::K(cmp, a, k) => Compared::K(cmp.negated(), a, k),
        }
    }
}

/// `x == literal` or `x != literal`, or an ordering of `x` and a float literal
/// (either way round): the comparison as `x <cmp> literal`, `x` and the
/// literal, for the constant-operand instructions.
pub(super) fn literal_compare<'e>(op: BinOp, a: &'e Expr, b: &'e Expr) -> Option<(Cmp, &'e Expr, &'e Expr)> {
    let (cmp, flipped) = match op {
        BinOp::Eq => return equality_literal(Cmp::Eq, a, b),
        BinOp::Ne => return equality_literal(Cmp::Ne, a, b),
        BinOp::Lt => (Cmp::Lt, Cmp::Gt),
        BinOp::Le => (Cmp::Le, Cmp::Ge),
        BinOp::Gt => (Cmp::Gt, Cmp::Lt),
        BinOp::Ge => (Cmp::Ge, Cmp::Le),
        _ => return None,
    };
    match (&a.kind, &b.kind) {
        (_, ExprKind::Float(_)) => Some((cmp, a, b)),
        (ExprKind::Float(_), _) => Some((flipped, b, a)),
        _ => None,
    }
}

/// `literal_compare` for `==` and `!=`: any literal.
fn equality_literal<'e>(cmp: Cmp, a: &'e Expr, b: &'e Expr) -> Option<(Cmp, &'e Expr, &'e Expr)> {
    let literal = |e: &Expr| {
        matches!(e.kind, ExprKind::Nil | ExprKind::Bool(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_))
    };
    if literal(b) {
        Some((cmp, a, b))
    } else if literal(a) {
        Some((cmp, b, a))
    } else {
        None
    }
}
