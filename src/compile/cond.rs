//! Conditions: the jumps an `if`, `while` or `?:` test compiles to. A
//! comparison jumps on its operands directly (against a register, a small
//! int or a literal constant); `&&`, `||` and `!` become jumps, not values.

use super::Compiler;
use crate::bytecode::{Cmp, Op};
use crate::syntax::ast::*;

impl Compiler<'_> {
    /// The operands of a comparison `a op b` for a conditional jump: a register
    /// and a small integer literal, a register and a literal's constant (`==`
    /// and `!=`), or two registers (`>` and `>=` swapped to `<` and `<=`). None
    /// if `cond` is not a comparison.
    fn comparison(&mut self, cond: &Expr) -> Option<Compared> {
        let ExprKind::Binary(op, a, b) = &cond.kind else { return None };
        if let Some((cmp, x, lit)) = eq_literal(*op, a, b) {
            if !matches!(lit.kind, ExprKind::Int(i) if i8::try_from(i).is_ok()) {
                let r = self.expr_any(x);
                // A constant among the first 256, or the general form.
                match self.literal_const(lit).and_then(|k| u8::try_from(k).ok()) {
                    Some(k) => return Some(Compared::K(cmp, r, k)),
                    None => return Some(Compared::Regs(cmp, r, self.expr_any(lit))),
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
        let save = self.span;
        self.span = cond.span;
        let mark = self.mark();
        let compared = self.comparison(cond);
        self.span = cond.span;
        let jumps = match (compared, &cond.kind) {
            (Some(Compared::Imm(cmp, a, imm)), _) => vec![self.emit(Op::JmpUnlessI { cmp, a, imm, target: 0 })],
            (Some(Compared::Regs(cmp, a, b)), _) => vec![self.emit(Op::JmpUnless { cmp, a, b, target: 0 })],
            (Some(Compared::K(cmp, a, k)), _) => vec![self.emit(Op::JmpUnlessK { cmp, a, k, target: 0 })],
            (None, ExprKind::And(a, b)) => {
                let mut js = self.jump_if_false(a);
                js.extend(self.jump_if_false(b));
                js
            }
            (None, ExprKind::Unary(UnOp::Not, x)) => self.jump_if_true(x),
            // `a || b`: when a holds, on to the body; else b decides.
            (None, ExprKind::Or(a, b)) => {
                let to_body = self.jump_if_true(a);
                let js = self.jump_if_false(b);
                to_body.into_iter().for_each(|j| self.patch(j));
                js
            }
            (None, ExprKind::Bool(true)) => vec![],
            (None, _) => {
                let r = self.expr_any(cond);
                vec![self.emit(Op::JmpIfNot { src: r, target: 0 })]
            }
        };
        self.free_to(mark);
        self.span = save;
        jumps
    }

    /// Emits jumps taken when `cond` is true (the left side of `||` in a
    /// condition); returns them for patching.
    fn jump_if_true(&mut self, cond: &Expr) -> Vec<usize> {
        let save = self.span;
        self.span = cond.span;
        let mark = self.mark();
        let compared = self.comparison(cond);
        self.span = cond.span;
        let jumps = match (compared, &cond.kind) {
            // `==` and `!=` negate exactly; an ordering does not (NaN), so it
            // jumps over the jump out instead.
            (Some(Compared::Imm(cmp, a, imm)), _) if cmp.is_equality() => {
                vec![self.emit(Op::JmpUnlessI { cmp: cmp.negated(), a, imm, target: 0 })]
            }
            (Some(Compared::Regs(cmp, a, b)), _) if cmp.is_equality() => {
                vec![self.emit(Op::JmpUnless { cmp: cmp.negated(), a, b, target: 0 })]
            }
            (Some(Compared::K(cmp, a, k)), _) => {
                vec![self.emit(Op::JmpUnlessK { cmp: cmp.negated(), a, k, target: 0 })]
            }
            (Some(c), _) => {
                let skip = match c {
                    Compared::Imm(cmp, a, imm) => self.emit(Op::JmpUnlessI { cmp, a, imm, target: 0 }),
                    Compared::Regs(cmp, a, b) => self.emit(Op::JmpUnless { cmp, a, b, target: 0 }),
                    Compared::K(..) => unreachable!("handled above"),
                };
                let out = self.emit(Op::Jmp { target: 0 });
                self.patch(skip);
                vec![out]
            }
            (None, ExprKind::Or(a, b)) => {
                let mut js = self.jump_if_true(a);
                js.extend(self.jump_if_true(b));
                js
            }
            (None, ExprKind::Unary(UnOp::Not, x)) => self.jump_if_false(x),
            (None, ExprKind::And(a, b)) => {
                let skip = self.jump_if_false(a);
                let js = self.jump_if_true(b);
                skip.into_iter().for_each(|j| self.patch(j));
                js
            }
            (None, _) => {
                let r = self.expr_any(cond);
                vec![self.emit(Op::JmpIf { src: r, target: 0 })]
            }
        };
        self.free_to(mark);
        self.span = save;
        jumps
    }
}

/// A comparison's operands, for a conditional jump (`Compiler::comparison`).
enum Compared {
    Imm(Cmp, u8, i8),
    Regs(Cmp, u8, u8),
    /// `==` or `!=` against constant k.
    K(Cmp, u8, u8),
}

/// `x == literal` or `x != literal` (either way round): the comparison, `x`
/// and the literal, for the constant-operand instructions.
pub(super) fn eq_literal<'e>(op: BinOp, a: &'e Expr, b: &'e Expr) -> Option<(Cmp, &'e Expr, &'e Expr)> {
    let cmp = match op {
        BinOp::Eq => Cmp::Eq,
        BinOp::Ne => Cmp::Ne,
        _ => return None,
    };
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
