//! Math as global functions: `sqrt sin cos tan asin acos atan log log10 log2
//! exp atan2 hypot abs floor ceil round pow div mod divmod min max is_nan
//! is_inf is_finite` (`round` as Python's, halves to even; `div`/`mod` floor
//! as Python's `//` and `%`), and the float globals `PI` and `E`. The random
//! helpers are in `random.rs`.

use super::args::{arity, num_arg};
use crate::vm::{err, ErrorKind, Fiber, NativeFn, Obj, Res, Ret, Value, Vm};
use std::cmp::Ordering;

pub fn register(vm: &mut Vm) {
    vm.define_quick("sqrt", sqrt, quick::sqrt);
    vm.define_quick("sin", sin, quick::sin);
    vm.define_quick("cos", cos, quick::cos);
    vm.define_quick("tan", tan, quick::tan);
    vm.define_quick("asin", asin, quick::asin);
    vm.define_quick("acos", acos, quick::acos);
    vm.define_quick("atan", atan, quick::atan);
    vm.define_native("log", log);
    vm.define_quick("log10", log10, quick::log10);
    vm.define_quick("log2", log2, quick::log2);
    vm.define_quick("exp", exp, quick::exp);
    vm.define_native("atan2", atan2);
    vm.define_native("hypot", hypot);
    vm.define_native("is_nan", is_nan);
    vm.define_native("is_inf", is_inf);
    vm.define_native("is_finite", is_finite);
    vm.define_native("div", div);
    vm.define_native("mod", modulo);
    vm.define_native("divmod", divmod);
    vm.define_quick("abs", abs, quick::abs);
    vm.define_quick("floor", floor, quick::floor);
    vm.define_quick("ceil", ceil, quick::ceil);
    vm.define_native("round", round);
    vm.define_native("pow", pow);
    vm.define_builtin("min", NativeFn::Full(min));
    vm.define_builtin("max", NativeFn::Full(max));
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

/// The dispatch loop's fast paths (`QuickFn`) of the one-argument functions:
/// the same answers for numbers, `None` (the full function, and its error)
/// for anything else.
mod quick {
    use crate::vm::object::quick_out;
    use crate::vm::{Heap, Value};

    macro_rules! quick_fn {
        ($name:ident, $int:expr, $f:expr) => {
            pub fn $name(_: &Heap, v: &Value, out: &mut Value) -> bool {
                let int: fn(i64) -> Option<Value> = $int;
                let f: fn(f64) -> f64 = $f;
                let r = match *v {
                    Value::Int(i) => int(i),
                    Value::Float(x) => Some(Value::Float(f(x))),
                    _ => None,
                };
                quick_out(out, r)
            }
        };
        ($name:ident, $f:expr) => {
            quick_fn!($name, |i| Some(Value::Float(($f)(i as f64))), $f);
        };
    }

    quick_fn!(sqrt, f64::sqrt);
    quick_fn!(sin, f64::sin);
    quick_fn!(cos, f64::cos);
    quick_fn!(tan, f64::tan);
    quick_fn!(asin, f64::asin);
    quick_fn!(acos, f64::acos);
    quick_fn!(atan, f64::atan);
    quick_fn!(log10, f64::log10);
    quick_fn!(log2, f64::log2);
    quick_fn!(exp, f64::exp);
    // `abs` of i64::MIN overflows: the full function reports it.
    quick_fn!(abs, |i| i.checked_abs().map(Value::Int), f64::abs);
    quick_fn!(floor, |i| Some(Value::Int(i)), f64::floor);
    quick_fn!(ceil, |i| Some(Value::Int(i)), f64::ceil);
}

float_fn!(sqrt, f64::sqrt);
float_fn!(sin, f64::sin);
float_fn!(cos, f64::cos);
float_fn!(tan, f64::tan);
float_fn!(asin, f64::asin);
float_fn!(acos, f64::acos);
float_fn!(atan, f64::atan);
float_fn!(log10, f64::log10);
float_fn!(log2, f64::log2);
float_fn!(exp, f64::exp);

/// `log(x)` is the natural logarithm; `log(x, base)` the logarithm in `base`.
fn log(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("log", args, 1, 2)?;
    let x = num_arg(&vm.heap, "log", args[0])?;
    match args.get(1) {
        None => Ok(Value::Float(x.ln())),
        Some(&b) => Ok(Value::Float(x.ln() / num_arg(&vm.heap, "log", b)?.ln())),
    }
}

/// `hypot(x, y, ...)`: the length of the vector, sqrt(x² + y² + ...), without
/// overflow or underflow on the way.
fn hypot(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("hypot", args, 1, usize::MAX)?;
    let mut r = 0.0f64;
    for &v in args {
        r = r.hypot(num_arg(&vm.heap, "hypot", v)?);
    }
    Ok(Value::Float(r))
}

/// `is_nan`, `is_inf` and `is_finite` of a number (an int is finite).
macro_rules! float_test {
    ($name:ident, $f:expr) => {
        fn $name(vm: &mut Vm, args: &[Value]) -> Res<Value> {
            arity(stringify!($name), args, 1, 1)?;
            let f: fn(f64) -> bool = $f;
            Ok(Value::Bool(f(num_arg(&vm.heap, stringify!($name), args[0])?)))
        }
    };
}

float_test!(is_nan, f64::is_nan);
float_test!(is_inf, f64::is_infinite);
float_test!(is_finite, f64::is_finite);

/// The floored quotient and remainder of Python's `//` and `%`: the quotient
/// rounded toward negative infinity, the remainder with the divisor's sign.
/// Ints give ints (dividing by zero is an error, as for `/`); a float gives
/// floats, computed as CPython does (`float_divmod`), with IEEE results for a
/// zero divisor as `/` has (`div(1.0, 0)` is `inf`, `mod(1.0, 0)` is `nan`).
fn floored(vm: &Vm, name: &str, a: Value, b: Value) -> Res<(Value, Value)> {
    match (a, b) {
        (Value::Int(_), Value::Int(0)) => err(ErrorKind::ZeroDivision, "integer division by zero"),
        (Value::Int(x), Value::Int(y)) => {
            // Only i64::MIN / -1 overflows; its remainder is 0.
            let (q, r) = (x.checked_div(y), x.checked_rem(y).unwrap_or(0));
            let Some(q) = q else { return Ok((Value::Nil, Value::Int(0))) };
            if r != 0 && (r < 0) != (y < 0) {
                return Ok((Value::Int(q - 1), Value::Int(r + y)));
            }
            Ok((Value::Int(q), Value::Int(r)))
        }
        _ => {
            let x = num_arg(&vm.heap, name, a)?;
            let y = num_arg(&vm.heap, name, b)?;
            let (q, r) = float_divmod(x, y);
            Ok((Value::Float(q), Value::Float(r)))
        }
    }
}

fn float_divmod(x: f64, y: f64) -> (f64, f64) {
    if y == 0.0 {
        return ((x / y).floor(), x % y);
    }
    let mut m = x % y;
    let d = (x - m) / y;
    let q;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            q = d - 1.0;
        } else {
            q = d;
        }
    } else {
        m = 0.0f64.copysign(y);
        q = d;
    }
    if q == 0.0 {
        return (0.0f64.copysign(x / y), m);
    }
    let f = q.floor();
    (if q - f > 0.5 { f + 1.0 } else { f }, m)
}

/// `div(a, b)`: the floored quotient (Python's `a // b`).
fn div(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("div", args, 2, 2)?;
    match floored(vm, "div", args[0], args[1])? {
        (Value::Nil, _) => err(ErrorKind::Overflow, "integer overflow"),
        (q, _) => Ok(q),
    }
}

/// `mod(a, b)`: the remainder with the divisor's sign (Python's `a % b`).
fn modulo(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("mod", args, 2, 2)?;
    Ok(floored(vm, "mod", args[0], args[1])?.1)
}

/// `divmod(a, b)`: `[div(a, b), mod(a, b)]`.
fn divmod(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("divmod", args, 2, 2)?;
    match floored(vm, "divmod", args[0], args[1])? {
        (Value::Nil, _) => err(ErrorKind::Overflow, "integer overflow"),
        (q, r) => Ok(vm.heap.list_of(&[q, r])),
    }
}

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
        return err(ErrorKind::Value, format!("round() cannot convert {} to int", crate::display::fmt_float(x)));
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

/// `pow(a, b)` is `a ** b`: an exact int for ints with `b >= 0` (overflow is
/// an error); otherwise a float.
fn pow(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("pow", args, 2, 2)?;
    num_arg(&vm.heap, "pow", args[0])?;
    num_arg(&vm.heap, "pow", args[1])?;
    crate::vm::arith::pow(&vm.heap, args[0], args[1])
}

fn min(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    extreme(vm, "min", args, Ordering::Less)
}

fn max(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    extreme(vm, "max", args, Ordering::Greater)
}

/// `min`/`max` of one or more arguments or of a single list; returns the first
/// of the extreme values as it was (an int stays an int). `min(xs, key)` with
/// a list and a function compares `key(x)`, as the list method `xs.min(key)`.
fn extreme(vm: &mut Vm, name: &str, args: &[Value], want: Ordering) -> Res<Ret> {
    arity(name, args, 1, usize::MAX)?;
    let heap = &vm.heap;
    if let ([Value::Obj(list), key], Some(_)) = (args, heap.as_list(args[0])) {
        if matches!(key, Value::Obj(f) if matches!(heap.get(*f), Obj::Closure(_) | Obj::Native(_))) {
            return super::list_ext::callback(vm, *list, name, &args[1..]);
        }
    }
    let items: &[Value] = match (args, heap.as_list(args[0])) {
        ([_], Some(list)) => list,
        _ => args,
    };
    super::list_ext::best(heap, name, items, want).map(Ret::Value)
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
        let mut vm = crate::natives::vm();
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
        let mut vm = crate::natives::vm();
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
        let mut vm = crate::natives::vm();
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
