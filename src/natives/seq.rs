//! Global functions over a whole sequence: `sum(xs, start = 0)` and
//! `sorted(xs, key = nil, reverse = false)`, as Python's. `min`/`max` (with
//! a key too) are in `math.rs`.

use super::args::{arity, fn_arg};
use crate::vm::arith::compare;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Fault, Fiber, NativeFn, Res, Ret, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_native("sum", sum);
    vm.define_builtin("sorted", NativeFn::Full(sorted));
}

/// `sum(xs, start = 0)`: `start` plus the numbers of a list or range (ints stay
/// ints, overflow is an error; a float makes a float).
fn sum(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("sum", args, 1, 2)?;
    let start = args.get(1).copied().unwrap_or(Value::Int(0));
    if !matches!(start, Value::Int(_) | Value::Float(_)) {
        return err(ErrorKind::Type, format!("sum() start must be a number, got {}", vm.heap.type_name(start)));
    }
    if let Value::Obj(h) = args[0] {
        match vm.heap.get(h) {
            Obj::List(l) => return super::list_ext::sum(&vm.heap, l, start),
            &Obj::Range(lo, hi) => return range_sum(lo, hi, start),
            _ => {}
        }
    }
    err(ErrorKind::Type, format!("sum() needs a list or range, got {}", vm.heap.type_name(args[0])))
}

/// The sum of `lo..hi` in closed form (a range of a billion ints is summed at once).
fn range_sum(lo: i64, hi: i64, start: Value) -> Res<Value> {
    let n = (hi as i128 - lo as i128).max(0);
    let total = n * (lo as i128 + hi as i128 - 1) / 2;
    match start {
        Value::Float(f) => Ok(Value::Float(f + total as f64)),
        Value::Int(s) => match i64::try_from(total + s as i128) {
            Ok(v) => Ok(Value::Int(v)),
            Err(_) => err(ErrorKind::Overflow, "integer overflow in sum()"),
        },
        _ => unreachable!("checked by sum"),
    }
}

/// `sorted(xs, key = nil, reverse = false)`: a new sorted list of the items
/// of a list, the characters of a string, the keys of a map or the ints of a
/// range. Stable; by `key(x)` (computed once per item) when a key is given;
/// `reverse` sorts in descending order, equal items keeping their order.
fn sorted(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("sorted", args, 1, 3)?;
    let key = args.get(1).copied().filter(|k| !matches!(k, Value::Nil));
    if let Some(k) = key {
        fn_arg(&vm.heap, "sorted", k)?;
    }
    let reverse = match args.get(2) {
        None | Some(Value::Nil) => false,
        Some(Value::Bool(b)) => *b,
        Some(&v) => {
            return err(ErrorKind::Type, format!("sorted() reverse must be a bool, got {}", vm.heap.type_name(v)))
        }
    };
    let mut items = items(vm, args[0])?;
    if reverse {
        items.reverse();
    }
    let Some(key) = key else {
        let heap = &vm.heap;
        rename(super::list::merge_sort(&mut items, |a, b| compare(heap, a, b)))?;
        if reverse {
            items.reverse();
        }
        return Ok(Ret::Value(vm.heap.list(items)));
    };
    let list = vm.heap.list(items);
    match vm.loader.prelude("__sorted_by") {
        Some(f) => Ok(Ret::Call(f, vec![list, key, Value::Bool(reverse)])),
        None => err(ErrorKind::Internal, "sorted() is unavailable: the prelude is not loaded"),
    }
}

/// The items `sorted` sorts, copied.
fn items(vm: &mut Vm, v: Value) -> Res<Vec<Value>> {
    let what = vm.heap.type_name(v);
    let Value::Obj(h) = v else {
        return err(ErrorKind::Type, format!("sorted() needs a list, string, map or range, got {what}"));
    };
    let items = match vm.heap.get(h) {
        Obj::List(l) => l.to_vec(),
        Obj::Map(m) => {
            let keys: Vec<crate::vm::Key> = m.keys().cloned().collect();
            keys.iter().map(|k| crate::vm::arith::key_value(&mut vm.heap, k)).collect()
        }
        Obj::Str(s) => {
            let chars: Vec<char> = s.s.chars().collect();
            chars.into_iter().map(|c| vm.heap.string(c.to_string())).collect()
        }
        &Obj::Range(lo, hi) => {
            let n = (hi as i128 - lo as i128).max(0) as usize;
            if n > crate::limits::MAX_LIST {
                return super::list::too_long();
            }
            vm.heap.reserve(n * 16)?;
            (lo..hi).map(Value::Int).collect()
        }
        _ => return err(ErrorKind::Type, format!("sorted() needs a list, string, map or range, got {what}")),
    };
    Ok(items)
}

/// A comparison's error named for `sorted`, not the `sort` inside.
fn rename<T>(r: Res<T>) -> Res<T> {
    r.map_err(|f| match f {
        Fault::Error(e) if e.0 == ErrorKind::Type => {
            let msg = e.1.strip_prefix("sort(): ").unwrap_or(&e.1);
            Fault::Error(Box::new((e.0, format!("sorted(): {msg}"))))
        }
        other => other,
    })
}
