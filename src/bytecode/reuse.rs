//! Loops that let no item out: `for line in f` whose body only tests the
//! loop variable (`word in line`, `line == ""`, `if line`) never copies its
//! value anywhere, so a stream may write each line over the string of the
//! last one (`Proto::reuses`; `Heap::reread_str`): no string to make and
//! none for the collector to free per line, as Go's `bufio.Scanner` reuses
//! its buffer. Found on the finished bytecode, where registers are resolved.

use super::jumps::with_absolute_target;
use super::op::Op;
use super::proto::Proto;
use super::verify::names_register;

/// The pcs of the `IterNext`s of `p`'s one-variable `for` loops whose bodies
/// use the variable only as a tested operand and never write it.
pub fn loops(p: &Proto) -> Box<[u32]> {
    let heads = p.code.iter().enumerate().filter_map(|(pc, op)| match with_absolute_target(*op, pc) {
        Op::IterNext { dst, target, .. } => Some((pc, dst, target as usize)),
        _ => None,
    });
    heads
        .filter(|&(pc, dst, exit)| {
            // Entered with the variable nil, the only thing it held before the first item.
            pc.checked_sub(1).is_some_and(|i| p.code[i] == Op::LoadNil { dst })
                && body(p, pc, exit)
                    .is_some_and(|mut body| body.all(|i| only_tests(p, with_absolute_target(p.code[i], i), dst)))
        })
        .map(|(pc, ..)| pc as u32)
        .collect()
}

/// The pcs of the body of the loop whose `IterNext` is at `head`: up to the
/// jump back to it just before the exit (the two-variable form starts with
/// `IterPair`, which names the variable's register as written, so never counts).
fn body(p: &Proto, head: usize, exit: usize) -> Option<std::ops::Range<usize>> {
    let back = exit.checked_sub(1).filter(|&b| b > head && b < p.code.len())?;
    match with_absolute_target(p.code[back], back) {
        Op::Jmp { target } if target as usize == head => Some(head + 1..back),
        _ => None,
    }
}

/// Does `op` leave register `r` alone, or only read it for a result that
/// cannot be its value (a bool, or a jump)? Every other use counts as an
/// escape, so a new instruction is safe until listed here.
fn only_tests(p: &Proto, op: Op, r: u8) -> bool {
    use Op::*;
    match op {
        In { dst, .. } | Is { dst, .. } | Compare { dst, .. } | CompareK { dst, .. } | Not { dst, .. } => dst != r,
        JmpIf { .. }
        | JmpIfNot { .. }
        | LoopIf { .. }
        | JmpUnless { .. }
        | LoopWhen { .. }
        | JmpUnlessI { .. }
        | LoopWhenI { .. }
        | JmpUnlessK { .. }
        | LoopWhenK { .. }
        | JmpUnlessNil { .. } => true,
        _ => !names_register(p, op, r),
    }
}

#[cfg(test)]
#[path = "reuse_tests.rs"]
mod tests;
