//! Builtin map methods. Maps keep insertion order; removal keeps the order of the rest.

use super::args::arity;
use super::value_method as v;
use crate::vm::arith::{key_value, to_key};
use crate::vm::host::Class;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Handle, Heap, Key, Res, Value, Vm};

fn entries(heap: &Heap, h: Handle) -> &crate::vm::value::Map {
    match heap.get(h) {
        Obj::Map(m) => m,
        _ => unreachable!("receiver is a map"),
    }
}

fn entries_mut(heap: &mut Heap, h: Handle) -> &mut crate::vm::value::Map {
    match heap.get_mut(h) {
        Obj::Map(m) => m,
        _ => unreachable!("receiver is a map"),
    }
}

/// Maps' methods (`Vm::kinds`). A map's field holding a function is called
/// instead of its method of that name (`vm/object_ops.rs`).
pub static CLASS: Class = Class {
    name: "map",
    methods: &[
        ("contains", v!(contains)),
        ("copy", v!(copy)),
        ("delete", v!(remove)),
        ("entries", v!(items)),
        ("get", v!(get)),
        ("has", v!(contains)),
        ("items", v!(items)),
        ("keys", v!(keys)),
        ("len", v!(len)),
        ("merge", v!(merge)),
        ("remove", v!(remove)),
        ("update", v!(merge)),
        ("values", v!(values)),
    ],
    next: None,
    field: None,
};

fn len(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    Ok(Value::Int(entries(&vm.heap, h).len() as i64))
}

fn keys(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let heap = &mut vm.heap;
    let keys: Vec<Key> = entries(heap, h).keys().cloned().collect();
    let items = keys.iter().map(|k| key_value(heap, k)).collect();
    Ok(heap.list(items))
}

fn values(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let items = entries(&vm.heap, h).values().copied().collect();
    Ok(vm.heap.list(items))
}

/// `items` and `entries`.
fn items(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let heap = &mut vm.heap;
    let pairs: Vec<(Key, Value)> = entries(heap, h).iter().map(|(k, v)| (k.clone(), *v)).collect();
    let items = pairs
        .iter()
        .map(|(k, v)| {
            let k = key_value(heap, k);
            heap.list(vec![k, *v])
        })
        .collect();
    Ok(heap.list(items))
}

/// `contains` and `has`.
fn contains(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let heap = &vm.heap;
    // Like `k in m`: a value that cannot be a key is in no map.
    let Ok(k) = to_key(heap, args[0]) else { return Ok(Value::Bool(false)) };
    Ok(Value::Bool(entries(heap, h).contains_key(&k)))
}

/// `remove` and `delete`.
fn remove(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let k = super::args::key_arg(&vm.heap, name, args[0])?;
    Ok(entries_mut(&mut vm.heap, h).shift_remove(&k).unwrap_or(Value::Nil))
}

fn get(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 2)?;
    let k = super::args::key_arg(&vm.heap, name, args[0])?;
    let default = args.get(1).copied().unwrap_or(Value::Nil);
    Ok(entries(&vm.heap, h).get(&k).copied().unwrap_or(default))
}

fn copy(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let m = entries(&vm.heap, h).clone();
    Ok(Value::Obj(vm.heap.alloc(Obj::Map(m))))
}

/// `merge` and `update`.
fn merge(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let heap = &mut vm.heap;
    let other = match args[0] {
        Value::Obj(o) if matches!(heap.get(o), Obj::Map(_)) => entries(heap, o).clone(),
        v => return err(ErrorKind::Type, format!("{name}() expects a map, got {}", heap.type_name(v))),
    };
    // merge makes a new map (the receiver's keys first); update changes the receiver.
    let target = if name == "merge" {
        let m = entries(heap, h).clone();
        heap.alloc(Obj::Map(m))
    } else {
        h
    };
    heap.note_growth(other.len() * 32);
    entries_mut(heap, target).extend(other);
    Ok(if name == "merge" { Value::Obj(target) } else { Value::Nil })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use Value::Int as I;

    #[test]
    fn methods() {
        let mut vm = crate::natives::vm();
        let vm = &mut vm;
        let mut m = crate::vm::value::new_map(0);
        m.insert(Key::Str("a".into()), I(1));
        m.insert(Key::Int(2), I(20));
        m.insert(Key::Nil, I(0));
        m.insert(Key::Bool(true), I(5));
        let m = Value::Obj(vm.heap.alloc(Obj::Map(m)));
        assert_eq!(method_s(vm, m, "len", &[]), "4");
        assert_eq!(method_s(vm, m, "keys", &[]), r#"["a", 2, nil, true]"#);
        assert_eq!(method_s(vm, m, "values", &[]), "[1, 20, 0, 5]");
        assert_eq!(method_s(vm, m, "items", &[]), r#"[["a", 1], [2, 20], [nil, 0], [true, 5]]"#);
        let a = vm.heap.str("a");
        assert_eq!(method_s(vm, m, "has", &[a]), "true");
        assert_eq!(method_s(vm, m, "contains", &[I(3)]), "false");
        assert_eq!(method_s(vm, m, "get", &[I(2)]), "20");
        assert_eq!(method_s(vm, m, "get", &[I(3)]), "nil");
        assert_eq!(method_s(vm, m, "get", &[I(3), I(-1)]), "-1");
        let c = method(vm, m, "copy", &[]).unwrap();
        assert_eq!(method_s(vm, m, "remove", &[a]), "1");
        assert_eq!(method_s(vm, m, "remove", &[a]), "nil");
        assert_eq!(show(vm, m), "{2: 20, nil: 0, true: 5}");
        assert_eq!(show(vm, c), r#"{"a": 1, 2: 20, nil: 0, true: 5}"#);
        assert_eq!(err_msg(method(vm, m, "get", &[Value::Float(1.0)])), "get(): float map keys are not allowed");
        assert_eq!(err_msg(method(vm, m, "push", &[])), "map has no method 'push'");
    }
}
