//! Object operations the dispatch loop calls out of line: method calls, indexing,
//! fields, and iteration.

use super::call::{builtin_ret, call_value, Called};
use super::fiber::Fiber;
use super::object::{Closure, Obj};
use super::value::Handle;
use super::value::{cached_get, map_slot, Key, Layout, Map, Name, Value};
use super::{arith, err, Res, Vm};
use crate::bytecode::{ProtoRef, UpvalDesc};
use crate::vm::ErrorKind;
use std::rc::Rc;

/// `recv.name(args)`: a map field holding a function is called without the
/// receiver; builtin methods get it (csp-written ones as their first argument).
pub(super) fn invoke(
    vm: &mut Vm,
    fiber: &mut Fiber,
    recv: Value,
    name: &Name,
    slot: usize,
    argc: usize,
) -> Res<Called> {
    let Value::Obj(h) = recv else {
        return super::no_method::no_method(vm.heap.type_name(recv), key_name(name.key()), &[]);
    };
    let class = match vm.heap.get(h) {
        Obj::Map(m) => {
            if let Some(&f) = cached_get(m, name) {
                fiber.stack[slot + 1] = f;
                return call_value(vm, fiber, f, slot + 2, argc, slot);
            }
            vm.kinds.map
        }
        Obj::Coroutine(_) => return coroutine_method(vm, fiber, h, key_name(name.key()), slot, argc),
        Obj::Host(o) => o.class(),
        // The commonest list methods, without the general method lookup
        // (about 275 machine instructions for a `push` through it).
        Obj::List(l) => match (key_name(name.key()), argc) {
            ("push", 1) => {
                super::seq_ops::push(&mut vm.heap, h, fiber.stack[slot + 2])?;
                fiber.stack[slot] = Value::Nil;
                return Ok(Called::Value);
            }
            ("len", 0) => {
                fiber.stack[slot] = Value::Int(l.len() as i64);
                return Ok(Called::Value);
            }
            _ => vm.kinds.list,
        },
        o => match vm.kinds.of(o) {
            Some(class) => class,
            None => return super::no_method::no_method(o.type_name(), key_name(name.key()), &[]),
        },
    };
    // A call site's method is found once (`Name::method_in`), whatever the kind.
    let Some(method) = name.method_in(class) else {
        unusable(vm, recv)?;
        let names: Vec<_> = class.names().collect();
        return super::no_method::no_method(class.name, key_name(name.key()), &names);
    };
    let args = &fiber.stack[slot + 2..slot + 2 + argc];
    let r = method(vm, fiber, h, key_name(name.key()), args)?;
    builtin_ret(vm, fiber, r, slot)
}

/// A map literal with constant keys: `layout`'s keys (hashed when the
/// literal was compiled, shared by every map it makes), the values the first
/// of `values`.
#[inline(never)]
pub(super) fn new_map_from(vm: &mut Vm, layout: &Rc<Layout>, values: &[Value]) -> Value {
    let m = Map::from_layout(layout, &values[..layout.len()]);
    Value::Obj(vm.heap.alloc(Obj::Map(m)))
}

pub(super) fn index(vm: &mut Vm, obj: Value, key: Value) -> Res<Value> {
    if let Value::Obj(h) = obj {
        match (vm.heap.get(h), key) {
            (Obj::List(_), Value::Int(i)) => return super::seq_ops::list_index(&vm.heap, obj, i),
            (Obj::Str(_), Value::Int(i)) => return super::seq_ops::str_index(&mut vm.heap, obj, i),
            (Obj::Bytes(b), Value::Int(i)) => return super::seq_ops::bytes_index(b, i),
            (Obj::Map(m), _) => {
                let k = arith::to_key(&vm.heap, key)?;
                return Ok(m.get(&k).copied().unwrap_or(Value::Nil));
            }
            (Obj::List(_) | Obj::Str(_) | Obj::Bytes(_), _) => {
                return err(ErrorKind::Type, format!("index must be an int, not {}", vm.heap.type_name(key)));
            }
            _ => {}
        }
    }
    err(ErrorKind::Type, format!("cannot index {}", vm.heap.type_name(obj)))
}

pub(super) fn set_index(vm: &mut Vm, obj: Value, key: Value, v: Value) -> Res<()> {
    if let Value::Obj(h) = obj {
        match vm.heap.get(h) {
            Obj::List(_) => {
                let Value::Int(i) = key else {
                    return err(ErrorKind::Type, format!("index must be an int, not {}", vm.heap.type_name(key)));
                };
                return super::seq_ops::list_set(&mut vm.heap, obj, i, v);
            }
            Obj::Map(_) => {
                let k = arith::to_key(&vm.heap, key)?;
                if let Obj::Map(m) = vm.heap.get_mut_items(h) {
                    match m.insert(k, v) {
                        Some(old) => vm.heap.overwritten(old),
                        None => vm.heap.note_growth(48),
                    }
                }
                return Ok(());
            }
            _ => {}
        }
    }
    err(ErrorKind::Type, format!("cannot assign into {}", vm.heap.type_name(obj)))
}

fn key_name(key: &Key) -> &str {
    match key {
        Key::Str(s) => s,
        _ => "",
    }
}

/// `obj.name = v` on a map.
/// Out of line, as `field`.
#[inline(never)]
pub(super) fn set_field(vm: &mut Vm, obj: Value, key: &Key, v: Value) -> Res<()> {
    if let Value::Obj(h) = obj {
        if let Obj::Map(m) = vm.heap.get_mut_items(h) {
            match map_slot(m, key) {
                Some(i) => {
                    let old = std::mem::replace(&mut m[i], v);
                    vm.heap.overwritten(old);
                }
                None => {
                    m.insert(key.clone(), v);
                    vm.heap.note_growth(48);
                }
            }
            return Ok(());
        }
    }
    err(ErrorKind::Type, format!("cannot set field '{}' on {}", key_name(key), vm.heap.type_name(obj)))
}

/// `obj.name`: a map key, or a property of an error (`message trace others kind`).
/// Out of line: inlined into a handler of the dispatch loop, what it keeps on
/// the stack made the handler's next a call instead of a jump (tests/code_layout.rs).
#[inline(never)]
pub(super) fn field(vm: &mut Vm, obj: Value, key: &Key) -> Res<Value> {
    let name = key_name(key);
    if let Value::Obj(h) = obj {
        match vm.heap.get(h) {
            Obj::Map(m) => return Ok(map_slot(m, key).map_or(Value::Nil, |i| m[i])),
            Obj::Coroutine(_) if name == "done" => return Ok(Value::Bool(super::coroutine::is_done(vm, h))),
            Obj::Host(o) => {
                if let Some(v) = o.class().field.and_then(|field| field(vm, h, name)) {
                    return Ok(v);
                }
            }
            Obj::Error(e) => match name {
                "message" => {
                    let m = e.message.clone();
                    return Ok(vm.heap.str(&m));
                }
                "trace" => {
                    let t = e.trace.clone();
                    let items = t.iter().map(|s| vm.heap.str(s)).collect();
                    return Ok(vm.heap.list(items));
                }
                "others" => {
                    let o = e.others.clone();
                    return Ok(vm.heap.list(o));
                }
                "kind" => {
                    let k = e.kind.name();
                    return Ok(vm.heap.str(k));
                }
                _ => {}
            },
            _ => {}
        }
    }
    unusable(vm, obj)?;
    let hint = crate::suggest::field_habit(name).map_or(String::new(), |h| format!(" ({h})"));
    err(ErrorKind::Type, format!("{} has no field '{}'{hint}", vm.heap.type_name(obj), name))
}

pub(super) fn iter_start(vm: &Vm, it: Value) -> Res<Value> {
    if let Value::Obj(h) = it {
        match vm.heap.get(h) {
            Obj::List(_) | Obj::Map(_) | Obj::Str(_) | Obj::Bytes(_) | Obj::Chan(_) | Obj::Coroutine(_) => {
                return Ok(Value::Int(0))
            }
            Obj::Host(o) if o.class().next.is_some() => return Ok(Value::Int(0)),
            Obj::Range(lo, _) => return Ok(Value::Int(*lo)),
            _ => {}
        }
    }
    unusable(vm, it)?;
    err(ErrorKind::Type, format!("cannot iterate over {}", vm.heap.type_name(it)))
}

/// The error of a host object that can no longer be used here (it moved to
/// another isolate), before the generic "has no method" of the marker left.
fn unusable(vm: &Vm, v: Value) -> Res<()> {
    match v {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Host(o) => o.unusable().map_or(Ok(()), |why| err(ErrorKind::Value, why)),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// A builtin refused an argument by its type (`stream.copy(x)` given a
/// socket that moved): if one of `args` moved to another isolate, the error
/// names the crossing instead. Only on a builtin's error path.
#[cold]
pub(super) fn moved_argument(vm: &Vm, args: &[Value], fault: super::Fault) -> super::Fault {
    match &fault {
        super::Fault::Error(e) if matches!(e.0, ErrorKind::Type) => {
            args.iter().find_map(|&a| unusable(vm, a).err()).unwrap_or(fault)
        }
        _ => fault,
    }
}

/// The next item and state of an iteration, or None when it is exhausted.
/// Out of line, as `field`.
#[inline(never)]
pub(super) fn iter_next(vm: &mut Vm, it: Value, state: Value) -> Option<(Value, Value)> {
    let (Value::Obj(h), Value::Int(i)) = (it, state) else {
        return None;
    };
    match vm.heap.get(h) {
        Obj::List(l) => l.get(i as usize).map(|v| (*v, Value::Int(i + 1))),
        Obj::Range(_, hi) => (i < *hi).then_some((Value::Int(i), Value::Int(i + 1))),
        Obj::Bytes(b) => b.get(i as usize).map(|x| (Value::Int(*x as i64), Value::Int(i + 1))),
        Obj::Map(m) => {
            let k = m.get_index(i as usize)?.0.clone();
            Some((arith::key_value(&mut vm.heap, &k), Value::Int(i + 1)))
        }
        Obj::Str(s) => {
            let c = s.s.get(i as usize..)?.chars().next()?;
            Some((vm.heap.char_str(c), Value::Int(i + c.len_utf8() as i64)))
        }
        _ => None,
    }
}

/// `co.resume(v)`, `co.throw(err)`, `co.close()`.
fn coroutine_method(
    vm: &mut Vm,
    fiber: &mut Fiber,
    h: super::Handle,
    name: &str,
    slot: usize,
    argc: usize,
) -> Res<Called> {
    use super::coroutine::{enter, Entry};
    let arg = if argc > 0 { fiber.stack[slot + 2] } else { Value::Nil };
    let (entry, max) = match name {
        "resume" => (Entry::Resume(arg), 1),
        "throw" => (Entry::Throw(arg), 1),
        "close" => (Entry::Close, 0),
        _ => return err(ErrorKind::Type, format!("coroutine has no method '{name}'")),
    };
    if argc > max {
        return err(
            ErrorKind::Type,
            format!("{name}() takes at most {max} argument{}", if max == 1 { "" } else { "s" }),
        );
    }
    enter(vm, fiber, h, entry, slot, None)
}

/// Upvalue `idx` of the running closure: a cell, or a never-changing value.
#[inline]
pub(super) fn upval(vm: &Vm, closure: Option<Handle>, idx: u8) -> Value {
    match closure.map(|h| vm.heap.get(h)) {
        Some(Obj::Closure(c)) => c.upvals[idx as usize],
        _ => unreachable!("upvalue access outside a closure"),
    }
}

/// The captured variable's value: its cell's, or the value itself for a
/// variable that never changes (compile/captures.rs); cells are never values.
/// Out of the dispatch loop, whose register allocation it disturbed.
#[inline(never)]
pub(super) fn get_upval(vm: &Vm, closure: Option<Handle>, idx: u8) -> Value {
    let v = upval(vm, closure, idx);
    match v {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Cell(inner) => *inner,
            _ => v,
        },
        _ => v,
    }
}

/// Assigns a captured variable: only a variable in a cell is assigned.
#[inline(never)]
pub(super) fn set_upval(vm: &mut Vm, closure: Option<Handle>, idx: u8, v: Value) {
    let Value::Obj(cell) = upval(vm, closure, idx) else { unreachable!("an assigned upvalue is a cell") };
    *vm.heap.get_mut(cell) = Obj::Cell(v);
}

/// A closure of `proto`, capturing cells (or the values of variables that
/// never change) from the frame's registers `regs` or from the running
/// closure's upvalues.
pub(super) fn new_closure(vm: &mut Vm, proto: ProtoRef, regs: &[Value], closure: Option<Handle>) -> Value {
    let upvals: Box<[Value]> = proto
        .upvals
        .iter()
        .map(|d| match *d {
            UpvalDesc::Local(r) => regs[r as usize],
            UpvalDesc::Upval(i) => upval(vm, closure, i),
        })
        .collect();
    Value::Obj(vm.heap.alloc(Obj::Closure(Closure { proto, upvals })))
}

/// String interpolation: the parts displayed and joined.
/// An interpolated string. When it starts with a string value (`"${s}..."`),
/// the rest is appended to it as `+` does, so building a string by
/// interpolation in a loop is linear too.
#[inline(never)]
pub(super) fn concat(vm: &mut Vm, parts: &[Value]) -> Res<Value> {
    let (head, rest) = match parts.split_first() {
        Some((&h, rest)) if vm.heap.as_str(h).is_some() => (Some(h), rest),
        _ => (None, parts),
    };
    // Room for a short result: growing from empty reallocated two or three times.
    let mut s = String::with_capacity(64);
    for &v in rest {
        crate::display::write_display(&vm.heap, v, &mut s);
    }
    let head_len = head.and_then(|h| vm.heap.as_str(h)).map_or(0, |h| h.s.len());
    if s.len() + head_len > crate::limits::MAX_STRING {
        return err(ErrorKind::Limit, "string too long");
    }
    match head {
        Some(Value::Obj(h)) => {
            let chars = if s.is_ascii() { s.len() } else { s.chars().count() };
            Ok(vm.heap.append(h, &s, chars))
        }
        _ => Ok(vm.heap.string(s)),
    }
}
