//! The right operand of an arithmetic instruction: a register, or a number
//! literal carried in the instruction itself (`x + 1`, `x * 0.5`, `n += 1`).

use super::Compiler;
use crate::bytecode::Op;
use crate::syntax::ast::{BinOp, Expr, ExprKind};

/// The right operand of an arithmetic instruction: a register, or a literal
/// the instruction carries (`AddI`, `MulI`, `ModI` for small ints; `AddK`,
/// `SubK`, `MulK`, `DivK` for floats, `rev` when the literal came first).
#[derive(Clone, Copy)]
pub(super) enum Rhs {
    Reg(u8),
    Imm(i16),
    K(u8, bool),
}

impl Rhs {
    /// `dst = a <op> rhs` (a literal operand only as `literal_operand` made it).
    pub(super) fn op(self, op: BinOp, dst: u8, a: u8) -> Op {
        match (self, op) {
            (Rhs::Imm(imm), BinOp::Add | BinOp::Sub) => Op::AddI { dst, a, imm },
            (Rhs::Imm(imm), BinOp::Mul) => Op::MulI { dst, a, imm },
            (Rhs::Imm(imm), _) => Op::ModI { dst, a, imm },
            (Rhs::K(k, rev), BinOp::Add) => Op::AddK { dst, a, k, rev },
            (Rhs::K(k, rev), BinOp::Sub) => Op::SubK { dst, a, k, rev },
            (Rhs::K(k, rev), BinOp::Mul) => Op::MulK { dst, a, k, rev },
            (Rhs::K(k, rev), _) => Op::DivK { dst, a, k, rev },
            (Rhs::Reg(b), BinOp::Add) => Op::Add { dst, a, b },
            (Rhs::Reg(b), BinOp::Sub) => Op::Sub { dst, a, b },
            (Rhs::Reg(b), BinOp::Mul) => Op::Mul { dst, a, b },
            (Rhs::Reg(b), BinOp::Div) => Op::Div { dst, a, b },
            (Rhs::Reg(b), BinOp::Pow) => Op::Pow { dst, a, b },
            (Rhs::Reg(b), _) => Op::Mod { dst, a, b },
        }
    }
}

impl Compiler<'_> {
    /// `lit` as the literal operand of `x <op> lit` (`lit <op> x` when `rev`),
    /// if an instruction can carry it: a small int for `+`, `-`, `*` and `%`
    /// (on the right; `x - n` is an `AddI` of -n), a float for `+ - * /`.
    pub(super) fn literal_operand(&mut self, op: BinOp, lit: &Expr, rev: bool) -> Option<Rhs> {
        match lit.kind {
            ExprKind::Int(i) if !rev => {
                let imm = match op {
                    // A negative AddI is a subtraction (for its error's operator).
                    BinOp::Sub => i.checked_neg().filter(|n| *n < 0),
                    BinOp::Add | BinOp::Mul => Some(i),
                    BinOp::Mod if i != 0 => Some(i),
                    _ => None,
                };
                imm.and_then(|v| i16::try_from(v).ok()).map(Rhs::Imm)
            }
            ExprKind::Float(_) if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) => {
                let k = self.literal_const(lit).and_then(|k| u8::try_from(k).ok())?;
                Some(Rhs::K(k, rev))
            }
            _ => None,
        }
    }
}
