//! List methods and indexing. `map filter reduce each` and `sort(cmp)` call
//! csp code in the prelude so their callbacks run as ordinary frames.

use super::args::{arity, slice_bounds, str_arg};
use super::list_ext as ext;
use super::{resolve_index, value_method as v};
use crate::limits::MAX_LIST;
use crate::vm::arith::{compare, equal};
use crate::vm::host::Class;
use crate::vm::object::Obj;
use crate::vm::ErrorKind;
use crate::vm::List;
use crate::vm::{err, Fiber, Handle, Heap, Res, Ret, Value, Vm};
use std::cmp::Ordering;

pub use crate::vm::seq_ops::{items_mut, list_index, list_set, list_too_long as too_long, push};

fn items(heap: &Heap, h: Handle) -> &List {
    match heap.get(h) {
        Obj::List(l) => l,
        _ => unreachable!("receiver is a list"),
    }
}

/// Lists' methods (`Vm::kinds`); more of them are in `list_ext.rs`. `push`
/// and `len` are the VM's too, without a call (`vm/object_ops.rs`).
pub static CLASS: Class = Class {
    name: "list",
    methods: &[
        ("all", ext::any_all),
        ("any", ext::any_all),
        ("choice", v!(ext::choice)),
        ("chunks", v!(ext::chunks)),
        ("clear", v!(ext::clear)),
        ("contains", v!(contains)),
        ("copy", v!(copy)),
        ("each", with_prelude),
        ("enumerate", v!(ext::enumerate)),
        ("extend", v!(ext::extend)),
        ("filter", with_prelude),
        ("find", ext::with_callback),
        ("find_index", ext::with_callback),
        ("flat", v!(ext::flat)),
        ("flat_map", ext::with_callback),
        ("group_by", ext::with_callback),
        ("index_of", v!(contains)),
        ("insert", v!(insert)),
        ("join", v!(join)),
        ("len", v!(len)),
        ("map", with_prelude),
        ("max", ext::min_max),
        ("min", ext::min_max),
        ("pop", v!(pop)),
        ("push", v!(push_method)),
        ("reduce", with_prelude),
        ("remove", v!(remove)),
        ("reverse", v!(reverse)),
        ("sample", v!(ext::sample)),
        ("shuffle", v!(ext::shuffle)),
        ("skip", v!(ext::take_skip)),
        ("slice", v!(slice)),
        ("sort", sort),
        ("sort_by", ext::with_callback),
        ("sum", v!(ext::sum_method)),
        ("take", v!(ext::take_skip)),
        ("unique", v!(ext::unique_method)),
    ],
    next: None,
    field: None,
};

fn len(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    Ok(Value::Int(items(&vm.heap, h).len() as i64))
}

fn push_method(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    push(&mut vm.heap, h, args[0])?;
    Ok(Value::Nil)
}

fn pop(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    match crate::vm::seq_ops::items_adding(&mut vm.heap, h).pop() {
        Some(v) => {
            vm.heap.overwritten(v);
            Ok(v)
        }
        None => err(ErrorKind::Index, "pop() from an empty list"),
    }
}

fn insert(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 2, 2)?;
    let heap = &mut vm.heap;
    let i = index_arg(heap, name, args[0])?;
    let l = items_mut(heap, h);
    let len = l.len();
    // Inserting at len appends; a negative index counts from the end, so
    // insert(-1, v) puts v before the last item (as Python and JS splice do).
    let j = if i < 0 { len as i64 + i } else { i };
    if j < 0 || j > len as i64 {
        return err(ErrorKind::Index, format!("insert() index {i} out of range for length {len}"));
    }
    let j = j as usize;
    if len >= MAX_LIST {
        return too_long();
    }
    l.vec_mut().insert(j, args[1]);
    heap.note_growth(16);
    Ok(Value::Nil)
}

fn remove(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let heap = &mut vm.heap;
    let i = index_arg(heap, name, args[0])?;
    let l = items_mut(heap, h);
    match resolve_index(i, l.len()) {
        Some(j) => Ok(l.vec_mut().remove(j)),
        None => err(ErrorKind::Index, format!("remove() index {i} out of range for length {}", l.len())),
    }
}

/// `contains` and `index_of`.
fn contains(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let heap = &vm.heap;
    let pos = items(heap, h).iter().position(|v| equal(heap, *v, args[0]));
    if name == "contains" {
        Ok(Value::Bool(pos.is_some()))
    } else {
        Ok(Value::Int(pos.map_or(-1, |p| p as i64)))
    }
}

fn slice(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    let heap = &mut vm.heap;
    let (a, b) = slice_bounds(heap, name, args, items(heap, h).len())?;
    let part = items(heap, h)[a..b].to_vec();
    Ok(heap.list(part))
}

fn reverse(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    items_mut(&mut vm.heap, h).reverse();
    Ok(Value::Nil)
}

/// `sort()` here; `sort(cmp)` in the prelude.
fn sort(vm: &mut Vm, fiber: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    if !args.is_empty() {
        return with_prelude(vm, fiber, h, name, args);
    }
    let heap = &mut vm.heap;
    let mut v = items(heap, h).to_vec();
    super::args::named(name, merge_sort(&mut v, |a, b| compare(heap, a, b)))?;
    *items_mut(heap, h) = v.into();
    Ok(Ret::Value(Value::Nil))
}

fn join(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 1)?;
    let heap = &mut vm.heap;
    let sep = match args.first() {
        Some(s) => str_arg(heap, name, *s)?,
        None => "".into(),
    };
    let mut out = String::new();
    for (i, v) in items(heap, h).iter().enumerate() {
        if i > 0 {
            out.push_str(&sep);
        }
        match heap.as_str(*v) {
            Some(s) => out.push_str(&s.s),
            None => crate::display::write_repr(heap, *v, &mut out),
        }
        if out.len() > crate::limits::MAX_STRING {
            return err(ErrorKind::Limit, format!("string too long ({} bytes)", out.len()));
        }
    }
    Ok(heap.string(out))
}

fn copy(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let v = items(&vm.heap, h).to_vec();
    Ok(vm.heap.list(v))
}

/// `map filter reduce each` and `sort(cmp)`: a call of the prelude's function.
fn with_prelude(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    // Checked here, so a wrong count names the method, not the prelude's function.
    match name {
        "reduce" => arity(name, args, 1, 2)?,
        "sort" => arity(name, args, 0, 1)?,
        _ => arity(name, args, 1, 1)?,
    }
    if let Some(&f) = args.first() {
        super::args::fn_arg(&vm.heap, name, f)?;
    }
    let f = match name {
        "map" => "__list_map",
        "filter" => "__list_filter",
        "reduce" => "__list_reduce",
        "each" => "__list_each",
        _ => "__list_sort_by",
    };
    match vm.loader.prelude(f) {
        Some(f) => Ok(Ret::Call(f, std::iter::once(Value::Obj(h)).chain(args.iter().copied()).collect())),
        None => err(ErrorKind::Internal, format!("list.{name}() is unavailable: the prelude is not loaded")),
    }
}

fn index_arg(heap: &Heap, name: &str, v: Value) -> Res<i64> {
    match v {
        Value::Int(i) => Ok(i),
        _ => err(ErrorKind::Type, format!("{name}() index must be an int, got {}", heap.type_name(v))),
    }
}

/// A stable merge sort whose comparison can fail; unlike `slice::sort_by` it cannot
/// panic on an inconsistent order (NaN) and stops at the first error.
pub(crate) fn merge_sort(v: &mut [Value], mut cmp: impl FnMut(Value, Value) -> Res<Ordering>) -> Res<()> {
    let n = v.len();
    let mut buf = v.to_vec();
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                if cmp(v[j], v[i])? == Ordering::Less {
                    buf[k] = v[j];
                    j += 1;
                } else {
                    buf[k] = v[i];
                    i += 1;
                }
                k += 1;
            }
            buf[k..k + mid - i].copy_from_slice(&v[i..mid]);
            k += mid - i;
            buf[k..k + hi - j].copy_from_slice(&v[j..hi]);
            lo = hi;
        }
        v.copy_from_slice(&buf);
        width *= 2;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use Value::Int as I;

    fn list(vm: &mut Vm, xs: &[i64]) -> Value {
        let v = xs.iter().map(|i| I(*i)).collect();
        vm.heap.list(v)
    }

    #[test]
    fn mutation() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let l = list(vm, &[1, 2]);
        assert_eq!(method_s(vm, l, "push", &[I(3)]), "nil");
        assert_eq!(show(vm, l), "[1, 2, 3]");
        assert_eq!(method_s(vm, l, "pop", &[]), "3");
        method(vm, l, "insert", &[I(0), I(0)]).unwrap();
        method(vm, l, "insert", &[I(3), I(9)]).unwrap();
        method(vm, l, "insert", &[I(-1), I(8)]).unwrap();
        assert_eq!(show(vm, l), "[0, 1, 2, 8, 9]");
        assert_eq!(err_msg(method(vm, l, "insert", &[I(6), I(0)])), "insert() index 6 out of range for length 5");
        assert_eq!(err_msg(method(vm, l, "insert", &[I(-6), I(0)])), "insert() index -6 out of range for length 5");
        assert_eq!(method_s(vm, l, "remove", &[I(-2)]), "8");
        assert_eq!(err_msg(method(vm, l, "remove", &[I(4)])), "remove() index 4 out of range for length 4");
        method(vm, l, "reverse", &[]).unwrap();
        assert_eq!(show(vm, l), "[9, 2, 1, 0]");
        let e = list(vm, &[]);
        assert_eq!(err_msg(method(vm, e, "pop", &[])), "pop() from an empty list");
        assert_eq!(method_s(vm, l, "len", &[]), "4");
    }

    #[test]
    fn queries() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let l = list(vm, &[5, 6, 7, 6]);
        assert_eq!(method_s(vm, l, "contains", &[Value::Float(7.0)]), "true");
        assert_eq!(method_s(vm, l, "index_of", &[I(6)]), "1");
        assert_eq!(method_s(vm, l, "index_of", &[I(0)]), "-1");
        assert_eq!(method_s(vm, l, "slice", &[I(1), I(-1)]), "[6, 7]");
        assert_eq!(method_s(vm, l, "slice", &[I(2)]), "[7, 6]");
        let c = method(vm, l, "copy", &[]).unwrap();
        method(vm, c, "push", &[I(1)]).unwrap();
        assert_eq!(show(vm, l), "[5, 6, 7, 6]");
        let sep = vm.heap.str(", ");
        let s = vm.heap.str("x");
        let inner = vm.heap.list(vec![s]);
        let mixed = vm.heap.list(vec![I(1), s, Value::Nil, inner]);
        assert_eq!(method_s(vm, mixed, "join", &[sep]), r#""1, x, nil, [\"x\"]""#);
        assert_eq!(method_s(vm, l, "join", &[]), "\"5676\"");
        let nested = vm.heap.list(vec![inner]);
        assert_eq!(method_s(vm, nested, "contains", &[inner]), "true");
    }

    #[test]
    fn sorting() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let l = list(vm, &[5, 3, 9, 1, 3, 0, -2, 8, 7]);
        method(vm, l, "sort", &[]).unwrap();
        assert_eq!(show(vm, l), "[-2, 0, 1, 3, 3, 5, 7, 8, 9]");
        let strs: Vec<Value> = ["pear", "apple", "fig"].iter().map(|s| vm.heap.str(s)).collect();
        let sl = vm.heap.list(strs);
        method(vm, sl, "sort", &[]).unwrap();
        assert_eq!(show(vm, sl), r#"["apple", "fig", "pear"]"#);
        let s = vm.heap.str("a");
        let bad = vm.heap.list(vec![I(1), s]);
        assert_eq!(err_msg(method(vm, bad, "sort", &[])), "sort(): cannot compare string with int");
        assert_eq!(show(vm, bad), "[1, \"a\"]");
        let nan = vm.heap.list(vec![Value::Float(f64::NAN), I(2), I(1), Value::Float(f64::NAN), I(0)]);
        method(vm, nan, "sort", &[]).unwrap();
        // Pseudo-random input, checked against the std sort.
        let mut x = 12345u64;
        let xs: Vec<i64> = (0..1000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 40) as i64 % 100
            })
            .collect();
        let big = list(vm, &xs);
        method(vm, big, "sort", &[]).unwrap();
        let mut want = xs.clone();
        want.sort();
        let want = list(vm, &want);
        assert_eq!(show(vm, big), show(vm, want));
    }

    #[test]
    fn callback_methods_call_the_prelude() {
        let mut vm = crate::natives::vm();
        let l = list(&mut vm, &[1]);
        // Any function will do as the callback: the prelude's is what gets called.
        let f = vm.globals[*vm.global_names.get("len").unwrap() as usize];
        assert_eq!(err_msg(method(&mut vm, l, "map", &[I(0)])), "map() expects a function, got int");
        assert!(err_msg(method(&mut vm, l, "map", &[f])).contains("prelude"));
        let marker = vm.heap.str("map-impl");
        vm.loader.set_prelude([("__list_map".into(), marker), ("__list_sort_by".into(), I(7))].into());
        let Ok(Ret::Call(called, args)) = call_method(&mut vm, &Default::default(), l, "map", &[f]) else {
            panic!("map did not call")
        };
        assert_eq!((show(&vm, called), args.len()), ("\"map-impl\"".to_string(), 2));
        assert!(matches!(call_method(&mut vm, &Default::default(), l, "sort", &[f]), Ok(Ret::Call(I(7), _))));
    }

    #[test]
    fn indexing() {
        let mut vm = crate::natives::vm();
        let l = list(&mut vm, &[1, 2, 3]);
        assert_eq!(show(&vm, list_index(&vm.heap, l, -1).unwrap()), "3");
        assert_eq!(err_msg(list_index(&vm.heap, l, 5)), "list index 5 out of range for length 3");
        assert_eq!(err_msg(list_index(&vm.heap, l, -4)), "list index -4 out of range for length 3");
        list_set(&mut vm.heap, l, -3, I(0)).unwrap();
        assert_eq!(show(&vm, l), "[0, 2, 3]");
        assert!(list_set(&mut vm.heap, l, 3, I(0)).is_err());
        assert!(list_index(&vm.heap, l, i64::MIN).is_err());
    }

    use super::super::call_method;
}
