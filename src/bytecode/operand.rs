//! The operand kinds of instructions: which comparison a compare-and-jump
//! makes (`Cmp`, with its fast paths on ints and floats) and which operation a
//! `Bitwise` instruction does.

/// Comparison selector of the fused compare-and-jump instructions.
/// Each discriminant is the set of orderings it holds for: bit 0 less, bit 1
/// equal, bit 2 greater, so `ints` is a shift instead of a second jump table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Cmp {
    Eq = 0b010,
    Ne = 0b101,
    Lt = 0b001,
    Le = 0b011,
    /// Only in the immediate and constant forms; register forms swap their
    /// operands instead.
    Gt = 0b100,
    Ge = 0b110,
}

impl Cmp {
    pub fn is_equality(self) -> bool {
        matches!(self, Cmp::Eq | Cmp::Ne)
    }

    /// `!=` for `==` and back; the orderings are not negated (NaN).
    pub fn negated(self) -> Cmp {
        match self {
            Cmp::Eq => Cmp::Ne,
            Cmp::Ne => Cmp::Eq,
            other => unreachable!("negating {other:?}"),
        }
    }

    /// The comparison on two ints (the fast path of every compare instruction).
    #[inline(always)]
    pub fn ints(self, x: i64, y: i64) -> bool {
        // 0 when x < y, 1 when equal, 2 when greater.
        let ordering = 1 + (x > y) as u8 - (x < y) as u8;
        (self as u8 >> ordering) & 1 != 0
    }

    /// The comparison on two floats (IEEE: with a NaN only `!=` holds).
    #[inline(always)]
    pub fn floats(self, x: f64, y: f64) -> bool {
        let holds = (x < y) as u8 | ((x == y) as u8) << 1 | ((x > y) as u8) << 2;
        self as u8 & holds != 0 || (holds == 0 && self == Cmp::Ne)
    }
}

/// The operation of a `Bitwise` instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    /// Bits shifted out are dropped; a shift by a negative amount or 64 or more is an error.
    Shl,
    /// Arithmetic (sign-extending) shift.
    Shr,
}

#[cfg(test)]
#[path = "operand_tests.rs"]
mod tests;
