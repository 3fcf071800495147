//! What every builtin does with its arguments: the arity check, typed
//! arguments with errors that name the function, `slice` bounds, and an OS
//! operation's step as the builtin's answer.

use crate::vm::builtin::Ret;
use crate::vm::heap::Heap;
use crate::vm::kind::{err, ErrorKind, Res};
use crate::vm::object::Obj;
use crate::vm::value::Value;
use crate::vm::Vm;

/// Checks that a builtin got between `min` and `max` arguments.
#[inline]
pub(crate) fn arity(name: &str, args: &[Value], min: usize, max: usize) -> Res<()> {
    let n = args.len();
    if n >= min && n <= max {
        return Ok(());
    }
    arity_error(name, n, min, max)
}

#[cold]
#[inline(never)]
fn arity_error(name: &str, n: usize, min: usize, max: usize) -> Res<()> {
    let plural = |k: usize| if k == 1 { "argument" } else { "arguments" };
    let want = if min == max {
        format!("{min} {}", plural(min))
    } else if max == usize::MAX {
        format!("at least {min} {}", plural(min))
    } else {
        format!("{min} to {max} arguments")
    };
    err(ErrorKind::Type, format!("{name}() takes {want} ({n} given)"))
}

/// An int argument, or an error naming the function.
pub(crate) fn int_arg(heap: &Heap, name: &str, v: Value) -> Res<i64> {
    match v {
        Value::Int(i) => Ok(i),
        _ => err(ErrorKind::Type, format!("{name}() expects an int, got {}", heap.type_name(v))),
    }
}

/// A function argument (a closure or a builtin), or an error naming the method
/// that takes it, rather than the prelude's "cannot call" deep inside.
pub(crate) fn fn_arg(heap: &Heap, name: &str, v: Value) -> Res<()> {
    match v {
        Value::Obj(h) if matches!(heap.get(h), Obj::Closure(_) | Obj::Native(_)) => Ok(()),
        _ => err(ErrorKind::Type, format!("{name}() expects a function, got {}", heap.type_name(v))),
    }
}

/// `r` with its `type` error's message prefixed by the function's name, for
/// errors met deep in a shared helper (`cannot compare string with int`).
pub(crate) fn named<T>(name: &str, r: Res<T>) -> Res<T> {
    match r {
        Err(crate::vm::Fault::Error(e)) if e.0 == ErrorKind::Type => err(ErrorKind::Type, format!("{name}(): {}", e.1)),
        r => r,
    }
}

/// A map key argument, or a `key` error naming the function.
pub(crate) fn key_arg(heap: &Heap, name: &str, v: Value) -> Res<crate::vm::Key> {
    crate::vm::arith::to_key(heap, v).or_else(|_| match v {
        Value::Float(_) => err(ErrorKind::Key, format!("{name}(): float map keys are not allowed")),
        _ => err(ErrorKind::Key, format!("{name}(): a {} cannot be a map key", heap.type_name(v))),
    })
}

/// A number argument (int or float) as a float.
#[inline]
pub(crate) fn num_arg(heap: &Heap, name: &str, v: Value) -> Res<f64> {
    match v {
        Value::Int(i) => Ok(i as f64),
        Value::Float(f) => Ok(f),
        _ => not_a_number(heap, name, v),
    }
}

#[cold]
#[inline(never)]
fn not_a_number(heap: &Heap, name: &str, v: Value) -> Res<f64> {
    err(ErrorKind::Type, format!("{name}() expects a number, got {}", heap.type_name(v)))
}

/// A string argument, shared so the heap can be mutated while it is held.
pub(crate) fn str_arg(heap: &Heap, name: &str, v: Value) -> Res<crate::vm::Str> {
    match heap.as_str(v) {
        Some(s) => Ok(s.s.clone()),
        None => err(ErrorKind::Type, format!("{name}() expects a string, got {}", heap.type_name(v))),
    }
}

/// A string argument of a std module function (`name` is the public name,
/// `fs.read`; `what` says what the argument is: "a string path").
pub(crate) fn text_arg(heap: &Heap, name: &str, what: &str, v: Value) -> Res<String> {
    match heap.as_str(v) {
        Some(s) => Ok(s.s.to_string()),
        None => err(ErrorKind::Type, format!("{name}() needs {what}, not {}", heap.type_name(v))),
    }
}

/// Resolves `slice` bounds the way JavaScript's `slice` does: negative counts from
/// the end, everything clamped to `0..=len`, `start > end` gives an empty slice.
/// The arguments are `(a)`, `(a, b)` or a single range `(a..b)`.
pub(crate) fn slice_bounds(heap: &Heap, name: &str, args: &[Value], len: usize) -> Res<(usize, usize)> {
    arity(name, args, 1, 2)?;
    let (a, b) = match (args[0], args.get(1)) {
        (Value::Obj(h), None) if matches!(heap.get(h), Obj::Range(..)) => {
            let Obj::Range(lo, hi) = heap.get(h) else { unreachable!() };
            (*lo, Some(*hi))
        }
        (a, b) => (
            int_arg(heap, name, a)?,
            match b {
                None | Some(Value::Nil) => None,
                Some(b) => Some(int_arg(heap, name, *b)?),
            },
        ),
    };
    let clamp = |i: i64| -> usize {
        let len = len as i64;
        if i < 0 {
            (len + i).max(0) as usize
        } else {
            i.min(len) as usize
        }
    };
    let start = clamp(a);
    let end = b.map_or(len, clamp);
    Ok((start, end.max(start)))
}

/// An OS operation (`os::stream::Step`) as a builtin's answer: its value, a
/// wait (the builtin runs again after it), or an `io` error with the message.
pub(crate) fn step<T>(
    vm: &mut Vm,
    r: Result<crate::os::stream::Step<T>, String>,
    value: impl FnOnce(&mut Vm, T) -> Res<Value>,
) -> Res<Ret> {
    match r {
        Ok(crate::os::stream::Step::Done(t)) => value(vm, t).map(Ret::Value),
        Ok(crate::os::stream::Step::Block(b)) => Ok(Ret::Block(b)),
        Err(msg) => err(ErrorKind::Io, msg),
    }
}
