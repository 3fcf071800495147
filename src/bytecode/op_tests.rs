//! Tests of the instruction set's helpers (apart, so op.rs stays the instruction set).

use super::op::Cmp;

/// Relative targets reach the same instruction as the absolute ones did,
/// forwards and backwards, and disassembly shows them absolute again.
#[test]
fn relative_targets_round_trip() {
    use super::op::{to_relative, with_absolute_target, Op};
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

#[test]
fn ints_agrees_with_the_operators() {
    type Operator = fn(&i64, &i64) -> bool;
    let cases: [(Cmp, Operator); 6] = [
        (Cmp::Eq, i64::eq),
        (Cmp::Ne, i64::ne),
        (Cmp::Lt, i64::lt),
        (Cmp::Le, i64::le),
        (Cmp::Gt, i64::gt),
        (Cmp::Ge, i64::ge),
    ];
    let values = [i64::MIN, -2, -1, 0, 1, 2, i64::MAX];
    for (cmp, op) in cases {
        for x in values {
            for y in values {
                assert_eq!(cmp.ints(x, y), op(&x, &y), "{x} {cmp:?} {y}");
            }
        }
    }
}
