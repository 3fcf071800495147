//! More list methods: `extend clear sum enumerate unique flat chunks take skip
//! shuffle choice sample` (the random ones in `random.rs`), `min`/`max`, and `any`/`all` without a callback. The ones that
//! take a callback call csp code in the prelude (`PRELUDE`), as in `list.rs`.

use super::args::{arity, int_arg};
use super::no_method;
use crate::limits::MAX_LIST;
use crate::vm::arith::{compare, equal, to_key};
use crate::vm::object::Obj;
use crate::vm::List;
use crate::vm::{err, ErrorKind, Fiber, Handle, Heap, Res, Ret, Value, Vm};
use std::cmp::Ordering;

/// Methods taking a callback, and the prelude function each calls.
const PRELUDE: &[(&str, &str)] = &[
    ("any", "__list_any"),
    ("all", "__list_all"),
    ("find", "__list_find"),
    ("find_index", "__list_find_index"),
    ("flat_map", "__list_flat_map"),
    ("sort_by", "__list_sort_key"),
    ("min", "__list_min_by"),
    ("max", "__list_max_by"),
    ("group_by", "__list_group_by"),
];

fn items(heap: &Heap, h: Handle) -> &List {
    heap.as_list(Value::Obj(h)).expect("receiver is a list")
}

fn items_mut(heap: &mut Heap, h: Handle) -> &mut List {
    match heap.get_mut(h) {
        Obj::List(l) => l,
        _ => unreachable!("receiver is a list"),
    }
}

fn count_arg(heap: &Heap, name: &str, v: Value) -> Res<usize> {
    let n = int_arg(heap, name, v)?;
    usize::try_from(n).or_else(|_| err(ErrorKind::Value, format!("{name}() count must not be negative, got {n}")))
}

// The methods of this file, in lists' table (`list::CLASS`).

pub(super) fn extend(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let heap = &mut vm.heap;
    let Some(more) = heap.as_list(args[0]).map(|l| l.to_vec()) else {
        return err(ErrorKind::Type, format!("extend() expects a list, got {}", heap.type_name(args[0])));
    };
    let len = items_mut(heap, h).len() + more.len();
    if len > MAX_LIST {
        return err(ErrorKind::Limit, "list too long");
    }
    heap.reserve(len * 16)?;
    items_mut(heap, h).vec_mut().extend_from_slice(&more);
    heap.note_growth(more.len() * 16);
    Ok(Value::Nil)
}

pub(super) fn clear(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    *items_mut(&mut vm.heap, h) = List::default();
    Ok(Value::Nil)
}

pub(super) fn sum_method(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    sum(&vm.heap, items(&vm.heap, h), Value::Int(0))
}

/// `any()` and `all()` here; with a callback, in the prelude.
pub(super) fn any_all(vm: &mut Vm, fiber: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    if !args.is_empty() {
        return with_callback(vm, fiber, h, name, args);
    }
    let l = items(&vm.heap, h);
    let v = if name == "any" { l.iter().any(|v| v.truthy()) } else { l.iter().all(|v| v.truthy()) };
    Ok(Ret::Value(Value::Bool(v)))
}

/// `min()` and `max()` here; with a key function, in the prelude.
pub(super) fn min_max(vm: &mut Vm, fiber: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    if !args.is_empty() {
        return with_callback(vm, fiber, h, name, args);
    }
    let want = if name == "min" { Ordering::Less } else { Ordering::Greater };
    best(&vm.heap, name, items(&vm.heap, h), want).map(Ret::Value)
}

/// The first of `items` that no later one beats in the order `want`
/// (`min`: Less); an empty list is a `value` error.
pub(super) fn best(heap: &Heap, name: &str, items: &[Value], want: Ordering) -> Res<Value> {
    let Some((&first, rest)) = items.split_first() else {
        return err(ErrorKind::Value, format!("{name}() of an empty list"));
    };
    let mut best = first;
    for &v in rest {
        if super::args::named(name, compare(heap, v, best))? == want {
            best = v;
        }
    }
    Ok(best)
}

pub(super) fn enumerate(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 1)?;
    let heap = &mut vm.heap;
    let start = match args.first() {
        Some(v) => int_arg(heap, name, *v)?,
        None => 0,
    };
    let l = items(heap, h).to_vec();
    let pairs = l.iter().zip(start..).map(|(v, i)| heap.list_of(&[Value::Int(i), *v])).collect();
    Ok(heap.list(pairs))
}

pub(super) fn unique_method(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let l = items(&vm.heap, h).to_vec();
    Ok(unique(&mut vm.heap, &l))
}

pub(super) fn flat(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let heap = &mut vm.heap;
    let mut out = Vec::new();
    for v in items(heap, h) {
        match heap.as_list(*v) {
            Some(inner) => out.extend_from_slice(inner),
            None => out.push(*v),
        }
        if out.len() > MAX_LIST {
            return err(ErrorKind::Limit, "list too long");
        }
    }
    heap.note_growth(out.len() * 16);
    Ok(heap.list(out))
}

pub(super) fn chunks(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let heap = &mut vm.heap;
    let n = int_arg(heap, name, args[0])?;
    if n <= 0 {
        return err(ErrorKind::Value, format!("chunks() size must be positive, got {n}"));
    }
    let l = items(heap, h).to_vec();
    let parts = l.chunks(n as usize).map(|c| heap.list_of(c)).collect();
    Ok(heap.list(parts))
}

/// `take` and `skip`.
pub(super) fn take_skip(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let heap = &mut vm.heap;
    let l = items(heap, h);
    let n = count_arg(heap, name, args[0])?.min(l.len());
    let part = if name == "take" { l[..n].to_vec() } else { l[n..].to_vec() };
    Ok(heap.list(part))
}

pub(super) fn shuffle(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    super::random::list_shuffle(vm, h);
    Ok(Value::Nil)
}

pub(super) fn choice(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    super::random::list_choice(vm, h)
}

pub(super) fn sample(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    super::random::list_sample(vm, h, args[0])
}

/// The callback-taking methods (`PRELUDE`), as a method.
pub(super) fn with_callback(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    callback(vm, h, name, args)
}

/// The callback-taking methods: the count is checked here so that a wrong one names
/// the method, not the prelude's function.
pub(crate) fn callback(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    let Some((_, f)) = PRELUDE.iter().find(|(m, _)| *m == name) else {
        return no_method("list", name);
    };
    arity(name, args, 1, 1)?;
    super::args::fn_arg(&vm.heap, name, args[0])?;
    if matches!(name, "min" | "max") && items(&vm.heap, h).is_empty() {
        return err(ErrorKind::Value, format!("{name}() of an empty list"));
    }
    match vm.loader.prelude(f) {
        Some(f) => Ok(Ret::Call(f, vec![Value::Obj(h), args[0]])),
        None => err(ErrorKind::Internal, format!("list.{name}() is unavailable: the prelude is not loaded")),
    }
}

/// `sum()`: ints add as ints (overflow is an error), a float makes the sum a
/// float; `start` (0 for the method) is added first.
pub(crate) fn sum(heap: &Heap, l: &[Value], start: Value) -> Res<Value> {
    let mut acc = start;
    for v in l {
        acc = match (acc, *v) {
            (Value::Int(a), Value::Int(b)) => match a.checked_add(b) {
                Some(s) => Value::Int(s),
                None => return err(ErrorKind::Overflow, "integer overflow in sum()"),
            },
            (Value::Int(a), Value::Float(b)) => Value::Float(a as f64 + b),
            (Value::Float(a), Value::Int(b)) => Value::Float(a + b as f64),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => return err(ErrorKind::Type, format!("sum() needs numbers, got {}", heap.type_name(*v))),
        };
    }
    Ok(acc)
}

/// `unique()`: the first of each group of `==` items, in order. Items that can be
/// map keys are found by hash; others (floats, lists, maps) by comparing with those kept.
fn unique(heap: &mut Heap, l: &[Value]) -> Value {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<Value> = Vec::new();
    let mut unkeyed = false;
    for &v in l {
        let dup = match to_key(heap, v) {
            Ok(k) => !seen.insert(k) || (unkeyed && kept.iter().any(|w| equal(heap, v, *w))),
            Err(_) => {
                unkeyed = true;
                kept.iter().any(|w| equal(heap, v, *w))
            }
        };
        if !dup {
            kept.push(v);
        }
    }
    heap.list(kept)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::vm::Rng;
    use Value::Int as I;

    fn shuffled(seed: u64) -> String {
        let mut vm = crate::natives::vm();
        vm.rng = Rng::new(seed);
        let l = vm.heap.list((0..20).map(I).collect());
        method(&mut vm, l, "shuffle", &[]).unwrap();
        let c = method(&mut vm, l, "choice", &[]).unwrap();
        format!("{} {}", show(&vm, l), show(&vm, c))
    }

    /// `shuffle` and `choice` draw from the VM's generator, so `--seed` repeats them.
    #[test]
    fn shuffle_follows_the_seed() {
        assert_eq!(shuffled(1), shuffled(1));
        assert_ne!(shuffled(1), shuffled(2));
        let mut vm = crate::natives::vm();
        let l = vm.heap.list((0..20).map(I).collect());
        method(&mut vm, l, "shuffle", &[]).unwrap();
        method(&mut vm, l, "sort", &[]).unwrap();
        let want = vm.heap.list((0..20).map(I).collect());
        assert_eq!(show(&vm, l), show(&vm, want));
    }

    #[test]
    fn callback_methods_call_the_prelude() {
        let mut vm = crate::natives::vm();
        let l = vm.heap.list(vec![I(1)]);
        vm.loader.set_prelude([("__list_find".into(), I(3))].into());
        let f = vm.globals[*vm.global_names.get("len").unwrap() as usize];
        assert!(matches!(call_method(&mut vm, &Default::default(), l, "find", &[f]), Ok(Ret::Call(I(3), _))));
        // Without a callback these finish natively.
        assert_eq!(method_s(&mut vm, l, "any", &[]), "true");
        assert_eq!(method_s(&mut vm, l, "min", &[]), "1");
    }

    use super::super::call_method;
}
