//! `Cmp`'s fast paths agree with Rust's operators.

use super::Cmp;

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

#[test]
fn floats_agrees_with_the_operators() {
    type Operator = fn(&f64, &f64) -> bool;
    let cases: [(Cmp, Operator); 6] = [
        (Cmp::Eq, f64::eq),
        (Cmp::Ne, f64::ne),
        (Cmp::Lt, f64::lt),
        (Cmp::Le, f64::le),
        (Cmp::Gt, f64::gt),
        (Cmp::Ge, f64::ge),
    ];
    let values = [f64::NEG_INFINITY, -1.5, -0.0, 0.0, 1e-300, 2.0, f64::INFINITY, f64::NAN];
    for (cmp, op) in cases {
        for x in values {
            for y in values {
                assert_eq!(cmp.floats(x, y), op(&x, &y), "{x} {cmp:?} {y}");
            }
        }
    }
}
