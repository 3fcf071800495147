//! Math as global functions: `sqrt sin cos tan log exp atan2 abs floor ceil round
//! pow min max random` (`round` as Python's, halves to even), and the float globals `PI` and `E`.

use super::{arity, int_arg, num_arg};
use crate::vm::arith::compare;
use crate::vm::{err, ErrorKind, Res, Value, Vm};
use std::cmp::Ordering;

pub fn register(vm: &mut Vm) {
    vm.define_native("sqrt", sqrt);
    vm.define_native("sin", sin);
    vm.define_native("cos", cos);
    vm.define_native("tan", tan);
    vm.define_native("log", log);
    vm.define_native("exp", exp);
    vm.define_native("atan2", atan2);
    vm.define_native("abs", abs);
    vm.define_native("floor", floor);
    vm.define_native("ceil", ceil);
    vm.define_native("round", round);
    vm.define_native("pow", pow);
    vm.define_native("min", min);
    vm.define_native("max", max);
    vm.define_native("random", random);
    vm.define_native("seed", seed);
    let pi = vm.global_slot("PI") as usize;
    vm.globals[pi] = Value::Float(std::f64::consts::PI);
    let e = vm.global_slot("E") as usize;
    vm.globals[e] = Value::Float(std::f64::consts::E);
}

macro_rules! float_fn {
    ($name:ident, $f:expr) => {
        fn $name(vm: &mut Vm, args: &[Value]) -> Res<Value> {
            arity(stringify!($name), args, 1, 1)?;
            let x = num_arg(&vm.heap, stringify!($name), args[0])?;
            let f: fn(f64) -> f64 = $f;
            Ok(Value::Float(f(x)))
        }
    };
}

float_fn!(sqrt, f64::sqrt);
float_fn!(sin, f64::sin);
float_fn!(cos, f64::cos);
float_fn!(tan, f64::tan);
float_fn!(log, f64::ln);
float_fn!(exp, f64::exp);

fn atan2(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("atan2", args, 2, 2)?;
    let y = num_arg(&vm.heap, "atan2", args[0])?;
    let x = num_arg(&vm.heap, "atan2", args[1])?;
    Ok(Value::Float(y.atan2(x)))
}

fn abs(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("abs", args, 1, 1)?;
    match args[0] {
        Value::Int(i) => {
            i.checked_abs().map(Value::Int).ok_or(()).or_else(|_| err(ErrorKind::Overflow, "integer overflow"))
        }
        v => Ok(Value::Float(num_arg(&vm.heap, "abs", v)?.abs())),
    }
}

/// `floor` and `ceil` keep the type: ints unchanged, floats stay floats.
macro_rules! rounding_fn {
    ($name:ident, $f:expr) => {
        fn $name(vm: &mut Vm, args: &[Value]) -> Res<Value> {
            arity(stringify!($name), args, 1, 1)?;
            match args[0] {
                Value::Int(i) => Ok(Value::Int(i)),
                v => {
                    let f: fn(f64) -> f64 = $f;
                    Ok(Value::Float(f(num_arg(&vm.heap, stringify!($name), v)?)))
                }
            }
        }
    };
}

rounding_fn!(floor, f64::floor);
rounding_fn!(ceil, f64::ceil);
/// `round(x)` is an int, halves to even as Python rounds (`round(2.5) == 2`);
/// `round(x, n)` rounds to `n` decimals (negative `n`: tens, hundreds) keeping the
/// type, deciding halves on the exact binary value (`round(2.675, 2) == 2.67`).
fn round(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("round", args, 1, 2)?;
    let digits = match args.get(1) {
        None | Some(Value::Nil) => None,
        Some(&Value::Int(d)) => Some(d),
        Some(&d) => {
            return err(ErrorKind::Type, format!("round() digits must be an int, got {}", vm.heap.type_name(d)))
        }
    };
    let x = match args[0] {
        Value::Int(i) => return round_int(i, digits.unwrap_or(0)),
        v => num_arg(&vm.heap, "round", v)?,
    };
    let Some(d) = digits else {
        let r = x.round_ties_even();
        // i64::MAX as f64 rounds up to 2^63, which does not fit.
        if r.is_finite() && r >= i64::MIN as f64 && r < i64::MAX as f64 {
            return Ok(Value::Int(r as i64));
        }
        return err(ErrorKind::Value, format!("round() cannot convert {} to int", crate::format::fmt_float(x)));
    };
    if !x.is_finite() || x == 0.0 || d > 400 {
        return Ok(Value::Float(x));
    }
    if d >= 0 {
        // `{:.N}` rounds the exact binary value, ties to even.
        let d = d as usize;
        return Ok(Value::Float(format!("{x:.d$}").parse().expect("a formatted float parses")));
    }
    let k = d.unsigned_abs().min(400) as usize;
    let int = format!("{:.0}", x.abs().trunc());
    let r: f64 = round_digits(&int, k, x.fract() != 0.0).parse().expect("digits parse");
    if r.is_infinite() {
        return err(ErrorKind::Overflow, "round(): rounded value too large for a float");
    }
    Ok(Value::Float(r.copysign(x)))
}

fn round_int(i: i64, d: i64) -> Res<Value> {
    if d >= 0 {
        return Ok(Value::Int(i));
    }
    let k = d.unsigned_abs().min(21) as usize;
    let r: i128 = round_digits(&i.unsigned_abs().to_string(), k, false).parse().expect("digits parse");
    let r = if i < 0 { -r } else { r };
    i64::try_from(r).map(Value::Int).or_else(|_| err(ErrorKind::Overflow, "integer overflow"))
}

/// Decimal `digits` (an integer, plus a nonzero fraction if `frac`) rounded to a
/// multiple of 10^k, halves to even.
fn round_digits(digits: &str, k: usize, frac: bool) -> String {
    let mut d: Vec<u8> = digits.bytes().collect();
    if d.len() <= k {
        d.splice(0..0, std::iter::repeat_n(b'0', k + 1 - d.len()));
    }
    let cut = d.len() - k;
    let dropped = &d[cut..];
    let rest_nonzero = frac || dropped[1..].iter().any(|&c| c != b'0');
    let up = match dropped[0].cmp(&b'5') {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => rest_nonzero || (d[cut - 1] - b'0') % 2 == 1,
    };
    d[cut..].fill(b'0');
    if up {
        let mut i = cut;
        loop {
            if i == 0 {
                d.insert(0, b'1');
                break;
            }
            i -= 1;
            if d[i] == b'9' {
                d[i] = b'0';
            } else {
                d[i] += 1;
                break;
            }
        }
    }
    String::from_utf8(d).expect("ASCII digits")
}

/// `pow(int, int >= 0)` is an exact int (overflow is an error); otherwise a float.
fn pow(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("pow", args, 2, 2)?;
    match (args[0], args[1]) {
        (Value::Int(b), Value::Int(e)) if e >= 0 => {
            let r = match u32::try_from(e) {
                Ok(e) => b.checked_pow(e),
                Err(_) => match b {
                    0 | 1 => Some(b),
                    -1 => Some(if e % 2 == 0 { 1 } else { -1 }),
                    _ => None,
                },
            };
            r.map(Value::Int).ok_or(()).or_else(|_| err(ErrorKind::Overflow, "integer overflow"))
        }
        (b, e) => {
            let b = num_arg(&vm.heap, "pow", b)?;
            let e = num_arg(&vm.heap, "pow", e)?;
            Ok(Value::Float(b.powf(e)))
        }
    }
}

fn min(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    extreme(vm, "min", args, Ordering::Less)
}

fn max(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    extreme(vm, "max", args, Ordering::Greater)
}

/// `min`/`max` of one or more arguments or of a single list; returns the first of
/// the extreme values as it was (an int stays an int).
fn extreme(vm: &mut Vm, name: &str, args: &[Value], want: Ordering) -> Res<Value> {
    arity(name, args, 1, usize::MAX)?;
    let heap = &vm.heap;
    let items: &[Value] = match (args, heap.as_list(args[0])) {
        ([_], Some(list)) => list,
        _ => args,
    };
    let Some((&first, rest)) = items.split_first() else {
        return err(ErrorKind::Value, format!("{name}() of an empty list"));
    };
    let mut best = first;
    for &v in rest {
        if super::named(name, compare(heap, v, best))? == want {
            best = v;
        }
    }
    Ok(best)
}

/// `seed(n)`: `random` and the other random helpers repeat from here on, as
/// with `--seed n` (`select`'s choices keep their own generator).
fn seed(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("seed", args, 1, 1)?;
    let n = int_arg(&vm.heap, "seed", args[0])?;
    vm.rng = crate::vm::Rng::new(n as u64);
    Ok(Value::Nil)
}

/// `random()` is a float in [0, 1); `random(n)` an int in [0, n); `random(a, b)` an
/// int in [a, b]. All draw from the VM's seeded generator.
fn random(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("random", args, 0, 2)?;
    let (lo, span) = match args {
        [] => return Ok(Value::Float(vm.rng.next_f64())),
        [n] => {
            let n = int_arg(&vm.heap, "random", *n)?;
            if n <= 0 {
                return err(ErrorKind::Value, format!("random(n) needs n > 0, got {n}"));
            }
            (0i64, n as u128)
        }
        [a, b] => {
            let a = int_arg(&vm.heap, "random", *a)?;
            let b = int_arg(&vm.heap, "random", *b)?;
            if a > b {
                return err(ErrorKind::Value, format!("random(a, b) needs a <= b, got {a} > {b}"));
            }
            (a, (b as i128 - a as i128 + 1) as u128)
        }
        _ => unreachable!(),
    };
    // Multiply-shift maps 64 random bits onto [0, span) with negligible bias.
    let off = (vm.rng.next_u64() as u128 * span) >> 64;
    Ok(Value::Int((lo as i128 + off as i128) as i64))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn run(vm: &mut Vm, name: &str, args: &[Value]) -> String {
        let r = call(vm, name, args).unwrap();
        show(vm, r)
    }

    #[test]
    fn basics() {
        let mut vm = Vm::new();
        let vm = &mut vm;
        use Value::{Float as F, Int as I};
        assert_eq!(run(vm, "sqrt", &[I(16)]), "4.0");
        assert_eq!(run(vm, "sqrt", &[F(2.0)]), "1.4142135623730951");
        assert_eq!(run(vm, "sin", &[I(0)]), "0.0");
        assert_eq!(run(vm, "cos", &[I(0)]), "1.0");
        assert_eq!(run(vm, "log", &[I(1)]), "0.0");
        assert_eq!(run(vm, "exp", &[I(0)]), "1.0");
        assert_eq!(run(vm, "atan2", &[I(1), I(1)]), "0.7853981633974483");
        assert_eq!(run(vm, "abs", &[I(-3)]), "3");
        assert_eq!(run(vm, "abs", &[F(-3.5)]), "3.5");
        assert_eq!(err_msg(call(vm, "abs", &[I(i64::MIN)])), "integer overflow");
        assert_eq!(run(vm, "floor", &[F(2.7)]), "2.0");
        assert_eq!(run(vm, "floor", &[F(-2.5)]), "-3.0");
        assert_eq!(run(vm, "floor", &[I(7)]), "7");
        assert_eq!(run(vm, "ceil", &[F(2.1)]), "3.0");
        assert_eq!(run(vm, "round", &[F(2.5)]), "2");
        assert_eq!(run(vm, "round", &[F(-2.5)]), "-2");
        assert_eq!(run(vm, "round", &[F(3.5)]), "4");
        assert_eq!(run(vm, "round", &[F(2.4)]), "2");
        assert_eq!(err_msg(call(vm, "sqrt", &[Value::Nil])), "sqrt() expects a number, got nil");
        let pi = vm.globals[vm.global_names["PI"] as usize];
        assert_eq!(show(vm, pi), "3.141592653589793");
    }

    #[test]
    fn pow_types() {
        let mut vm = Vm::new();
        let vm = &mut vm;
        use Value::{Float as F, Int as I};
        assert_eq!(run(vm, "pow", &[I(2), I(10)]), "1024");
        assert_eq!(run(vm, "pow", &[I(2), I(0)]), "1");
        assert_eq!(run(vm, "pow", &[I(2), I(-1)]), "0.5");
        assert_eq!(run(vm, "pow", &[F(2.0), I(3)]), "8.0");
        assert_eq!(run(vm, "pow", &[I(-1), I(i64::MAX)]), "-1");
        assert_eq!(err_msg(call(vm, "pow", &[I(2), I(63)])), "integer overflow");
        assert_eq!(err_msg(call(vm, "pow", &[I(2), I(1 << 40)])), "integer overflow");
    }

    #[test]
    fn min_max() {
        let mut vm = Vm::new();
        let vm = &mut vm;
        use Value::{Float as F, Int as I};
        assert_eq!(run(vm, "min", &[I(3), F(1.5), I(2)]), "1.5");
        assert_eq!(run(vm, "max", &[I(3), F(3.0), I(2)]), "3");
        assert_eq!(run(vm, "max", &[I(9)]), "9");
        let l = vm.heap.list(vec![I(4), I(8), I(-1)]);
        assert_eq!(run(vm, "max", &[l]), "8");
        assert_eq!(run(vm, "min", &[l]), "-1");
        let a = vm.heap.str("a");
        let b = vm.heap.str("b");
        assert_eq!(run(vm, "max", &[a, b]), "\"b\"");
        let e = vm.heap.list(vec![]);
        assert_eq!(err_msg(call(vm, "min", &[e])), "min() of an empty list");
        assert_eq!(err_msg(call(vm, "min", &[])), "min() takes at least 1 argument (0 given)");
        assert_eq!(err_msg(call(vm, "min", &[I(1), a])), "min(): cannot compare string with int");
    }

    #[test]
    fn random_ranges() {
        let mut vm = Vm::new();
        let vm = &mut vm;
        use Value::Int as I;
        for _ in 0..1000 {
            let Value::Float(f) = call(vm, "random", &[]).unwrap() else { panic!() };
            assert!((0.0..1.0).contains(&f));
            let Value::Int(i) = call(vm, "random", &[I(3)]).unwrap() else { panic!() };
            assert!((0..3).contains(&i));
            let Value::Int(i) = call(vm, "random", &[I(-2), I(2)]).unwrap() else { panic!() };
            assert!((-2..=2).contains(&i));
            let Value::Int(_) = call(vm, "random", &[I(i64::MIN), I(i64::MAX)]).unwrap() else { panic!() };
        }
        assert!(call(vm, "random", &[I(0)]).is_err());
        assert!(call(vm, "random", &[I(2), I(1)]).is_err());
        let draw = |seed: i64| {
            let mut vm = Vm::new();
            call(&mut vm, "seed", &[I(seed)]).unwrap();
            (0..8).map(|_| call(&mut vm, "random", &[I(1000)]).unwrap()).map(|v| format!("{v:?}")).collect::<String>()
        };
        assert_eq!(draw(3), draw(3), "same seed, same numbers");
        assert_ne!(draw(3), draw(4), "another seed, other numbers");
    }
}

#[cfg(test)]
mod round_tests {
    use super::round_digits;

    #[test]
    fn halves_to_even_on_digits() {
        assert_eq!(round_digits("1250", 2, false), "1200");
        assert_eq!(round_digits("1250", 2, true), "1300");
        assert_eq!(round_digits("1350", 2, false), "1400");
        assert_eq!(round_digits("9950", 2, false), "10000");
        assert_eq!(round_digits("49", 2, false), "000");
        assert_eq!(round_digits("50", 2, false), "000");
        assert_eq!(round_digits("51", 2, false), "100");
    }
}
