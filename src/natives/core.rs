//! Core builtins: `print str int float type len range error assert args`, and
//! `__timeout_error` for `std/async`.

use super::args::{arity, int_arg};
use crate::display::{display, repr};
use crate::limits::MAX_LIST;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Fiber, Heap, NativeFn, Res, Ret, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_native("print", print);
    vm.define_native("str", str);
    vm.define_native("int", int);
    vm.define_native("float", float);
    vm.define_native("type", type_of);
    vm.define_quick("len", len, quick_len);
    vm.define_native("range", range);
    vm.define_builtin("error", NativeFn::Full(error));
    vm.define_builtin("__timeout_error", NativeFn::Full(timeout_error));
    vm.define_builtin("__limit_error", NativeFn::Full(limit_error));
    vm.define_builtin("__io_error", NativeFn::Full(io_error));
    vm.define_builtin("__value_error", NativeFn::Full(value_error));
    vm.define_builtin("__closed_error", NativeFn::Full(closed_error));
    vm.define_builtin("__type_error", NativeFn::Full(type_error));
    vm.define_builtin("__protocol_error", NativeFn::Full(protocol_error));
    vm.define_native("__program_name", program_name);
    vm.define_native("__rename_error", rename_error);
    vm.define_native("assert", assert);
    vm.define_native("args", args);
}

/// `print(a, b, ...)`: `str` of each, separated by one space, then a newline.
fn print(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    let line = print_line(&vm.heap, args);
    vm.out.write(line.as_bytes());
    Ok(Value::Nil)
}

/// What `print(args...)` writes (also `eprint`): `str` of each, spaces, a newline.
pub(crate) fn print_line(heap: &crate::vm::Heap, args: &[Value]) -> String {
    let mut line = String::new();
    for (i, v) in args.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        match heap.as_str(*v) {
            Some(s) => line.push_str(&s.s),
            None => crate::display::write_repr(heap, *v, &mut line),
        }
    }
    line.push('\n');
    line
}

fn str(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("str", args, 1, 1)?;
    if vm.heap.as_str(args[0]).is_some() {
        return Ok(args[0]);
    }
    let s = display(&vm.heap, args[0]);
    Ok(vm.heap.string(s))
}

/// `int(v)`: floats truncate toward zero; strings parse as decimal with an optional
/// sign (surrounding whitespace is ignored, `_` between digits too);
/// `int(s, base)` is in `convert`.
fn int(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("int", args, 1, 2)?;
    if args.len() == 2 {
        return super::convert::int_base(&vm.heap, args);
    }
    match args[0] {
        Value::Int(i) => Ok(Value::Int(i)),
        Value::Float(f) => {
            let t = f.trunc();
            // i64::MAX as f64 rounds up to 2^63, which does not fit.
            if f.is_finite() && t >= i64::MIN as f64 && t < i64::MAX as f64 {
                Ok(Value::Int(t as i64))
            } else {
                err(ErrorKind::Value, format!("cannot convert {} to int", crate::display::fmt_float(f)))
            }
        }
        v => match vm.heap.as_str(v) {
            Some(s) => match super::convert::without_underscores(s.s.trim(), |b| b.is_ascii_digit())
                .and_then(|t| t.parse::<i64>().ok())
            {
                Some(i) => Ok(Value::Int(i)),
                None => err(ErrorKind::Value, format!("cannot convert {} to int", repr(&vm.heap, v))),
            },
            None => err(ErrorKind::Type, format!("int() needs a number or a string, not {}", vm.heap.type_name(v))),
        },
    }
}

/// `float(v)`: ints widen; strings parse (surrounding whitespace is ignored).
fn float(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("float", args, 1, 1)?;
    match args[0] {
        Value::Int(i) => Ok(Value::Float(i as f64)),
        Value::Float(f) => Ok(Value::Float(f)),
        v => match vm.heap.as_str(v) {
            Some(s) => match super::convert::without_underscores(s.s.trim(), |b| b.is_ascii_digit())
                .and_then(|t| t.parse::<f64>().ok())
            {
                Some(f) => Ok(Value::Float(f)),
                None => err(ErrorKind::Value, format!("cannot convert {} to float", repr(&vm.heap, v))),
            },
            None => err(ErrorKind::Type, format!("float() needs a number or a string, not {}", vm.heap.type_name(v))),
        },
    }
}

fn type_of(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("type", args, 1, 1)?;
    let name = vm.heap.type_name(args[0]);
    Ok(vm.heap.str(name))
}

/// `len(v)` of a string (in characters), bytes, list, map or range. Channels add an arm here.
fn len(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("len", args, 1, 1)?;
    match len_of(&vm.heap, args[0]) {
        Some(n) => Ok(n),
        None => err(ErrorKind::Type, format!("len() of {} is not defined", vm.heap.type_name(args[0]))),
    }
}

/// `len`'s fast path in the dispatch loop (`QuickFn`).
fn quick_len(heap: &Heap, v: &Value, out: &mut Value) -> bool {
    crate::vm::object::quick_out(out, len_of(heap, *v))
}

/// `len(v)` of whatever has a length.
#[inline(always)]
fn len_of(heap: &Heap, v: Value) -> Option<Value> {
    let n = match v {
        Value::Obj(h) => match heap.get(h) {
            Obj::Str(s) => s.chars() as i64,
            Obj::Bytes(b) => b.len() as i64,
            Obj::List(l) => l.len() as i64,
            Obj::Map(m) => m.len() as i64,
            Obj::Range(lo, hi) => hi.saturating_sub(*lo).max(0),
            Obj::Chan(c) => c.len() as i64,
            _ => return None,
        },
        _ => return None,
    };
    Some(Value::Int(n))
}

/// `range(n)`, `range(a, b)`, `range(a, b, step)`: a list of ints from `a` up to
/// (or, with a negative step, down to) `b` exclusive.
fn range(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("range", args, 1, 3)?;
    let ints: Vec<i64> = args.iter().map(|v| int_arg(&vm.heap, "range", *v)).collect::<Res<_>>()?;
    let (a, b, step) = match ints[..] {
        [n] => (0, n, 1),
        [a, b] => (a, b, 1),
        [a, b, s] => (a, b, s),
        _ => unreachable!(),
    };
    if step == 0 {
        return err(ErrorKind::Value, "range() step must not be zero");
    }
    let span = b as i128 - a as i128;
    let count = if (span > 0) == (step > 0) && span != 0 {
        (span.abs() + step.unsigned_abs() as i128 - 1) / step.unsigned_abs() as i128
    } else {
        0
    };
    if count > MAX_LIST as i128 {
        return err(ErrorKind::Limit, format!("range() too long ({count} items)"));
    }
    vm.heap.reserve(count as usize * 16)?;
    let items = (0..count as i64).map(|i| Value::Int(a + i * step)).collect();
    vm.heap.note_growth(count as usize * 16);
    Ok(vm.heap.list(items))
}

/// `error(msg)`: an error value of kind `user`, recording where it was made.
fn error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::User))
}

/// `__timeout_error(msg)`: `error(msg)` of kind `timeout`, for `async.timeout` (not
/// meant for programs: the name is hidden from REPL completion).
fn timeout_error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("__timeout_error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::Timeout))
}

/// `__limit_error(msg)`: `error(msg)` of kind `limit`, for `std/http`.
fn limit_error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("__limit_error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::Limit))
}

/// `__io_error(msg)`: `error(msg)` of kind `io`, for `std/proc`.
fn io_error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("__io_error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::Io))
}

/// `__value_error(msg)`: `error(msg)` of kind `value`, for a bad argument a
/// std module written in csp checks itself (`std/flag`, `std/compress`).
fn value_error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("__value_error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::Value))
}

/// `__closed_error(msg)`: `error(msg)` of kind `closed`, for `std/ws` (a
/// send on a closed connection).
fn closed_error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("__closed_error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::Closed))
}

/// `__type_error(msg)`: `error(msg)` of kind `type`, for an argument of the
/// wrong type that a std module written in csp checks itself (`std/ws`).
fn type_error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("__type_error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::Type))
}

/// `__protocol_error(msg)`: `error(msg)` of kind `protocol`, for `std/ws` (a
/// peer that broke RFC 6455).
fn protocol_error(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("__protocol_error", args, 1, 1)?;
    Ok(error_of_kind(vm, fiber, args[0], ErrorKind::Protocol))
}

/// `__program_name()`: the running program's name for usage messages (see
/// `Vm::program`), for `std/flag`.
fn program_name(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("__program_name", args, 0, 0)?;
    let name = vm.program.clone();
    Ok(vm.heap.string(name))
}

/// `__rename_error(name, e, part)`: for the prelude's callback methods, a `type`
/// or `key` error whose message contains `part` (`cannot compare int with
/// string`, met comparing keys) is renamed to the method the user called
/// (`sort_by(): ...`). Any other value is returned as is.
fn rename_error(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("__rename_error", args, 3, 3)?;
    let name = display(&vm.heap, args[0]);
    let part = display(&vm.heap, args[2]);
    if let Value::Obj(h) = args[1] {
        if let Obj::Error(e) = vm.heap.get_mut(h) {
            if matches!(e.kind, ErrorKind::Type | ErrorKind::Key) && e.message.contains(part.as_str()) {
                // Drop a name an inner builtin put first ("sort(): ").
                let msg = match e.message.split_once("(): ") {
                    Some((inner, rest)) if inner.chars().all(|c| c.is_alphanumeric() || c == '_') => rest,
                    _ => &e.message,
                };
                e.message = format!("{name}(): {msg}").into();
            }
        }
    }
    Ok(args[1])
}

fn error_of_kind(vm: &mut Vm, fiber: &Fiber, message: Value, kind: ErrorKind) -> Ret {
    let message = display(&vm.heap, message).into();
    Ret::Value(crate::vm::error::new_error(vm, fiber, kind, message))
}

fn assert(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("assert", args, 1, 2)?;
    if args[0].truthy() {
        return Ok(Value::Nil);
    }
    match args.get(1) {
        Some(m) => err(ErrorKind::Assert, format!("assertion failed: {}", display(&vm.heap, *m))),
        None => err(ErrorKind::Assert, "assertion failed"),
    }
}

fn args(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("args", args, 0, 0)?;
    let items = vm.args.clone().into_iter().map(|a| vm.heap.string(a)).collect();
    Ok(vm.heap.list(items))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    #[test]
    fn print_and_str() {
        let mut vm = crate::natives::vm();
        vm.out.capture();
        let s = vm.heap.str("hi");
        let l = vm.heap.list(vec![s, Value::Float(1.0)]);
        call(&mut vm, "print", &[s, Value::Int(1), l, Value::Nil]).unwrap();
        call(&mut vm, "print", &[]).unwrap();
        assert_eq!(String::from_utf8(vm.out.take()).unwrap(), "hi 1 [\"hi\", 1.0] nil\n\n");
        let r = call(&mut vm, "str", &[l]).unwrap();
        assert_eq!(vm.heap.as_str(r).unwrap().s.as_ref(), "[\"hi\", 1.0]");
        let r = call(&mut vm, "str", &[Value::Float(0.5)]).unwrap();
        assert_eq!(display(&vm.heap, r), "0.5");
    }

    #[test]
    fn conversions() {
        let mut vm = crate::natives::vm();
        let cases: &[(&str, Value, &str)] = &[
            ("int", Value::Float(2.9), "2"),
            ("int", Value::Float(-2.9), "-2"),
            ("int", Value::Int(5), "5"),
            ("float", Value::Int(5), "5.0"),
            ("float", Value::Float(0.25), "0.25"),
        ];
        for (f, v, want) in cases {
            let r = call(&mut vm, f, &[*v]).unwrap();
            assert_eq!(show(&vm, r), *want);
        }
        for (text, want) in [("-42", "-42"), ("+7", "7"), (" 12\n", "12")] {
            let s = vm.heap.str(text);
            let r = call(&mut vm, "int", &[s]).unwrap();
            assert_eq!(show(&vm, r), want);
        }
        let s = vm.heap.str("2.5e1");
        let r = call(&mut vm, "float", &[s]).unwrap();
        assert_eq!(show(&vm, r), "25.0");
        let s = vm.heap.str("abc");
        assert_eq!(err_msg(call(&mut vm, "int", &[s])), "cannot convert \"abc\" to int");
        assert_eq!(err_msg(call(&mut vm, "float", &[s])), "cannot convert \"abc\" to float");
        let big = vm.heap.str("9223372036854775808");
        assert!(call(&mut vm, "int", &[big]).is_err());
        assert_eq!(err_msg(call(&mut vm, "int", &[Value::Float(f64::NAN)])), "cannot convert nan to int");
        assert!(call(&mut vm, "int", &[Value::Float(9.3e18)]).is_err());
        assert!(call(&mut vm, "int", &[Value::Float(i64::MIN as f64)]).is_ok());
        assert_eq!(err_msg(call(&mut vm, "int", &[Value::Nil])), "int() needs a number or a string, not nil");
    }

    #[test]
    fn type_and_len() {
        let mut vm = crate::natives::vm();
        let s = vm.heap.str("héllo");
        let l = vm.heap.list(vec![Value::Nil; 3]);
        let r = Value::Obj(vm.heap.alloc(Obj::Range(3, 1)));
        let pr = vm.globals[vm.global_names["print"] as usize];
        for (v, t) in [
            (Value::Nil, "nil"),
            (Value::Bool(true), "bool"),
            (Value::Int(1), "int"),
            (Value::Float(1.0), "float"),
            (s, "string"),
            (l, "list"),
            (r, "range"),
            (pr, "function"),
        ] {
            let got = call(&mut vm, "type", &[v]).unwrap();
            assert_eq!(display(&vm.heap, got), t);
        }
        assert_eq!(call_s(&mut vm, "len", &[s]), "5");
        assert_eq!(call_s(&mut vm, "len", &[l]), "3");
        assert_eq!(call_s(&mut vm, "len", &[r]), "0");
        assert_eq!(err_msg(call(&mut vm, "len", &[Value::Int(3)])), "len() of int is not defined");
    }

    #[test]
    fn ranges() {
        let mut vm = crate::natives::vm();
        let mut run = |args: &[i64]| {
            let args: Vec<Value> = args.iter().map(|i| Value::Int(*i)).collect();
            call(&mut vm, "range", &args).map(|v| show(&vm, v))
        };
        assert_eq!(run(&[4]).unwrap(), "[0, 1, 2, 3]");
        assert_eq!(run(&[-2]).unwrap(), "[]");
        assert_eq!(run(&[2, 5]).unwrap(), "[2, 3, 4]");
        assert_eq!(run(&[0, 10, 3]).unwrap(), "[0, 3, 6, 9]");
        assert_eq!(run(&[5, 0, -2]).unwrap(), "[5, 3, 1]");
        assert_eq!(run(&[0, 5, -1]).unwrap(), "[]");
        assert_eq!(run(&[i64::MAX - 2, i64::MAX]).unwrap(), "[9223372036854775805, 9223372036854775806]");
        let msg = |r: Res<String>| err_msg(r.map(|_| Value::Nil));
        assert!(msg(run(&[0, 5, 0])).contains("step"));
        assert!(msg(run(&[i64::MIN, i64::MAX])).contains("too long"));
    }

    #[test]
    fn errors_and_asserts() {
        let mut vm = crate::natives::vm();
        let m = vm.heap.str("bad thing");
        let e = call(&mut vm, "error", &[m]).unwrap();
        assert_eq!(show(&vm, e), "<error: bad thing>");
        let e = call(&mut vm, "error", &[Value::Int(3)]).unwrap();
        assert_eq!(show(&vm, e), "<error: 3>");
        assert!(call(&mut vm, "assert", &[Value::Int(0)]).is_ok());
        assert_eq!(err_msg(call(&mut vm, "assert", &[Value::Nil])), "assertion failed");
        assert_eq!(err_msg(call(&mut vm, "assert", &[Value::Bool(false), m])), "assertion failed: bad thing");
        vm.args = vec!["a".into(), "b c".into()];
        assert_eq!(call_s(&mut vm, "args", &[]), "[\"a\", \"b c\"]");
    }
}
