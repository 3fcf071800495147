//! `Cmp`'s fast paths agree with Rust's operators.

use super::Cmp;

/// `fast(cmp, x, y)` against the operator `cmp` names, on every pair of `values`.
fn agrees<T: PartialOrd + Copy + std::fmt::Debug>(values: &[T], fast: fn(Cmp, T, T) -> bool) {
    type Operator<T> = fn(&T, &T) -> bool;
    let cases: [(Cmp, Operator<T>); 6] =
        [(Cmp::Eq, T::eq), (Cmp::Ne, T::ne), (Cmp::Lt, T::lt), (Cmp::Le, T::le), (Cmp::Gt, T::gt), (Cmp::Ge, T::ge)];
    for (cmp, op) in cases {
        for &x in values {
            for &y in values {
                assert_eq!(fast(cmp, x, y), op(&x, &y), "{x:?} {cmp:?} {y:?}");
            }
        }
    }
}

#[test]
fn ints_agrees_with_the_operators() {
    agrees(&[i64::MIN, -2, -1, 0, 1, 2, i64::MAX], Cmp::ints);
}

#[test]
fn floats_agrees_with_the_operators() {
    agrees(&[f64::NEG_INFINITY, -1.5, -0.0, 0.0, 1e-300, 2.0, f64::INFINITY, f64::NAN], Cmp::floats);
}
