//! Builtin map methods. Maps keep insertion order; removal keeps the order of the rest.

/// Every map method (for suggestions and completion).
pub const METHODS: &[&str] = &[
    "contains", "copy", "delete", "entries", "get", "has", "items", "keys", "len", "merge", "remove", "update",
    "values",
];

use super::{arity, no_method};
use crate::vm::arith::{key_value, to_key};
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

pub fn call(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    let heap = &mut vm.heap;
    match name {
        "len" => {
            arity(name, args, 0, 0)?;
            Ok(Value::Int(entries(heap, h).len() as i64))
        }
        "keys" => {
            arity(name, args, 0, 0)?;
            let keys: Vec<Key> = entries(heap, h).keys().cloned().collect();
            let items = keys.iter().map(|k| key_value(heap, k)).collect();
            Ok(heap.list(items))
        }
        "values" => {
            arity(name, args, 0, 0)?;
            let items = entries(heap, h).values().copied().collect();
            Ok(heap.list(items))
        }
        "items" | "entries" => {
            arity(name, args, 0, 0)?;
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
        "contains" | "has" => {
            arity(name, args, 1, 1)?;
            // Like `k in m`: a value that cannot be a key is in no map.
            let Ok(k) = to_key(heap, args[0]) else { return Ok(Value::Bool(false)) };
            Ok(Value::Bool(entries(heap, h).contains_key(&k)))
        }
        "remove" | "delete" => {
            arity(name, args, 1, 1)?;
            let k = super::key_arg(heap, name, args[0])?;
            Ok(entries_mut(heap, h).shift_remove(&k).unwrap_or(Value::Nil))
        }
        "get" => {
            arity(name, args, 1, 2)?;
            let k = super::key_arg(heap, name, args[0])?;
            let default = args.get(1).copied().unwrap_or(Value::Nil);
            Ok(entries(heap, h).get(&k).copied().unwrap_or(default))
        }
        "copy" => {
            arity(name, args, 0, 0)?;
            let m = entries(heap, h).clone();
            Ok(Value::Obj(heap.alloc(Obj::Map(m))))
        }
        "merge" | "update" => {
            arity(name, args, 1, 1)?;
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
        _ => no_method("map", name),
    }
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
