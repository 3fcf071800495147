//! The instruction set's helpers: relative jump targets.

use super::Cmp;

/// Relative targets reach the same instruction as the absolute ones did,
/// forwards and backwards, and disassembly shows them absolute again.
#[test]
fn relative_targets_round_trip() {
    use super::Op;
    use crate::bytecode::jumps::{to_relative, with_absolute_target};
    let absolute = vec![
        Op::LoadNil { dst: 0 },
        Op::JmpUnlessI { cmp: Cmp::Lt, a: 0, imm: 2, target: 4 },
        Op::ForLoop { base: 1, target: 0 },
        Op::Jmp { target: 2 },
        Op::IterNext { base: 0, dst: 1, target: 3 },
    ];
    let mut code = absolute.clone();
    to_relative(&mut code);
    assert_eq!(code[1], Op::JmpUnlessI { cmp: Cmp::Lt, a: 0, imm: 2, target: 2 });
    assert_eq!(code[2], Op::ForLoop { base: 1, target: (-3i32) as u32 });
    assert_eq!(code[4], absolute[4], "IterNext stays absolute");
    for (pc, op) in code.iter().enumerate() {
        assert_eq!(with_absolute_target(*op, pc), absolute[pc]);
    }
}
