//! Jump targets in instructions: which operand is a jump's target, and the
//! conversion between the compiler's absolute targets and the relative ones
//! the dispatch loop takes.

use super::op::Op;

impl Op {
    /// The target of any jump (absolute while compiling).
    pub fn target_mut(&mut self) -> Option<&mut u32> {
        match self {
            Op::JmpIfArg { target, .. }
            | Op::ForPrep { target, .. }
            | Op::IterNext { target, .. }
            | Op::TryBegin { target, .. } => Some(target),
            other => other.relative_target(),
        }
    }

    /// The target of a jump the dispatch loop takes relative to the next
    /// instruction (`ip + offset`), so that it need not keep the code's start
    /// in a register. `Proto`s store these as the signed distance from the next
    /// instruction, wrapped into the u32 (`to_relative`); the others, whose
    /// targets are also read out of the loop (`IterNext`, `TryBegin`, `ForPrep`,
    /// `JmpIfArg`), stay absolute.
    pub fn relative_target(&mut self) -> Option<&mut u32> {
        match self {
            Op::Jmp { target }
            | Op::JmpIf { target, .. }
            | Op::JmpIfNot { target, .. }
            | Op::JmpUnless { target, .. }
            | Op::JmpUnlessI { target, .. }
            | Op::JmpUnlessK { target, .. }
            | Op::JmpUnlessNil { target, .. }
            | Op::LoopIf { target, .. }
            | Op::LoopWhen { target, .. }
            | Op::LoopWhenI { target, .. }
            | Op::LoopWhenK { target, .. }
            | Op::ForLoop { target, .. } => Some(target),
            _ => None,
        }
    }
}

/// Makes the targets of `relative_target`'s jumps relative (as a `Proto` holds them).
pub fn to_relative(code: &mut [Op]) {
    for (pc, op) in code.iter_mut().enumerate() {
        if let Some(t) = op.relative_target() {
            *t = t.wrapping_sub(pc as u32 + 1);
        }
    }
}

/// The instruction at `pc` of a `Proto` with its target absolute again (to show it).
pub fn with_absolute_target(mut op: Op, pc: usize) -> Op {
    if let Some(t) = op.relative_target() {
        *t = t.wrapping_add(pc as u32 + 1);
    }
    op
}
