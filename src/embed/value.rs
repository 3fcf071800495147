//! Values as a host sees them (`Val`), and their conversion to and from the
//! VM's values. Data is copied across (strings, bytes, lists, maps); a host
//! object crosses as itself; anything else (a function, a channel, a task)
//! reaches the host as `Val::Other` with its printed form.

use super::host_type::{HostRef, Shared};
use crate::vm::{Handle, Heap, Key, Obj, Value};
use std::cell::RefMut;

/// A csp value on the host's side.
#[derive(Clone)]
pub enum Val {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Val>),
    /// In the map's order; keys are nil, bools, ints, strings or bytes.
    Map(Vec<(Val, Val)>),
    /// A value of a host type (`Runtime::register_type`).
    Object(HostRef),
    /// A value the host cannot take apart: how csp prints it.
    Other(String),
}

impl Val {
    pub fn str(s: impl Into<String>) -> Val {
        Val::Str(s.into())
    }

    /// A map with string keys.
    pub fn record<'a>(fields: impl IntoIterator<Item = (&'a str, Val)>) -> Val {
        Val::Map(fields.into_iter().map(|(k, v)| (Val::str(k), v)).collect())
    }

    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Val::Int(i) => Some(i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The host object inside, if it is of type `T`.
    pub fn object<T: 'static>(&self) -> Option<RefMut<'_, T>> {
        let Val::Object(o) = self else { return None };
        let o = o.try_borrow_mut().ok()?;
        RefMut::filter_map(o, |o| (o as &mut dyn std::any::Any).downcast_mut::<T>()).ok()
    }

    /// The field `name` of a map with string keys.
    pub fn get(&self, name: &str) -> Option<&Val> {
        let Val::Map(fields) = self else { return None };
        fields.iter().find(|(k, _)| k.as_str() == Some(name)).map(|(_, v)| v)
    }
}

impl std::fmt::Debug for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Nil => write!(f, "Nil"),
            Val::Bool(b) => write!(f, "Bool({b})"),
            Val::Int(i) => write!(f, "Int({i})"),
            Val::Float(x) => write!(f, "Float({x})"),
            Val::Str(s) => write!(f, "Str({s:?})"),
            Val::Bytes(b) => write!(f, "Bytes({b:?})"),
            Val::List(items) => f.debug_list().entries(items).finish(),
            Val::Map(fields) => f.debug_map().entries(fields.iter().map(|(k, v)| (k, v))).finish(),
            Val::Object(o) => write!(f, "Object({})", o.try_borrow().map_or("busy", |o| o.class().name)),
            Val::Other(s) => write!(f, "Other({s})"),
        }
    }
}

impl PartialEq for Val {
    fn eq(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Nil, Val::Nil) => true,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            (Val::Int(a), Val::Int(b)) => a == b,
            (Val::Float(a), Val::Float(b)) => a == b,
            (Val::Str(a), Val::Str(b)) => a == b,
            (Val::Bytes(a), Val::Bytes(b)) => a == b,
            (Val::List(a), Val::List(b)) => a == b,
            (Val::Map(a), Val::Map(b)) => a == b,
            (Val::Object(a), Val::Object(b)) => std::rc::Rc::ptr_eq(a, b),
            (Val::Other(a), Val::Other(b)) => a == b,
            _ => false,
        }
    }
}

/// Deepest nesting converted: past it (or on a cycle) the value is refused.
const MAX_DEPTH: usize = 10_000;

/// A VM value as a `Val` (an error for a cyclic or too deeply nested one).
pub fn from_value(heap: &Heap, v: Value) -> Result<Val, String> {
    let mut path = Vec::new();
    convert_out(heap, v, &mut path)
}

fn convert_out(heap: &Heap, v: Value, path: &mut Vec<Handle>) -> Result<Val, String> {
    let h = match v {
        Value::Nil => return Ok(Val::Nil),
        Value::Bool(b) => return Ok(Val::Bool(b)),
        Value::Int(i) => return Ok(Val::Int(i)),
        Value::Float(x) => return Ok(Val::Float(x)),
        Value::Obj(h) => h,
    };
    if path.contains(&h) || path.len() >= MAX_DEPTH {
        return Err("the value is cyclic or nested too deeply to hand to the host".into());
    }
    path.push(h);
    let out = match heap.get(h) {
        Obj::Str(s) => Val::Str(s.s.to_string()),
        Obj::Bytes(b) => Val::Bytes(b.to_vec()),
        Obj::List(items) => Val::List(items.iter().map(|&x| convert_out(heap, x, path)).collect::<Result<_, _>>()?),
        Obj::Map(m) => {
            let mut fields = Vec::with_capacity(m.len());
            for (k, &x) in m.iter() {
                fields.push((key_out(k), convert_out(heap, x, path)?));
            }
            Val::Map(fields)
        }
        Obj::Host(o) => match o.downcast_ref::<Shared>() {
            Some(s) => Val::Object(s.obj.clone()),
            None => Val::Other(crate::display::repr(heap, v)),
        },
        _ => Val::Other(crate::display::repr(heap, v)),
    };
    path.pop();
    Ok(out)
}

fn key_out(k: &Key) -> Val {
    match k {
        Key::Nil => Val::Nil,
        Key::Bool(b) => Val::Bool(*b),
        Key::Int(i) => Val::Int(*i),
        Key::Str(s) => Val::Str(s.to_string()),
        Key::Bytes(b) => Val::Bytes(b.to_vec()),
    }
}

/// A `Val` as a VM value (an error for a map key csp cannot have, or for
/// `Val::Other`, which cannot be made from its printed form).
pub fn to_value(heap: &mut Heap, v: &Val) -> Result<Value, String> {
    Ok(match v {
        Val::Nil => Value::Nil,
        Val::Bool(b) => Value::Bool(*b),
        Val::Int(i) => Value::Int(*i),
        Val::Float(x) => Value::Float(*x),
        Val::Str(s) => heap.str(s),
        Val::Bytes(b) => heap.bytes(b.as_slice()),
        Val::List(items) => {
            let items = items.iter().map(|x| to_value(heap, x)).collect::<Result<Vec<_>, _>>()?;
            heap.list(items)
        }
        Val::Map(fields) => {
            let mut m = crate::vm::value::new_map(fields.len());
            for (k, x) in fields {
                let key = match k {
                    Val::Nil => Key::Nil,
                    Val::Bool(b) => Key::Bool(*b),
                    Val::Int(i) => Key::Int(*i),
                    Val::Str(s) => Key::Str(s.as_str().into()),
                    Val::Bytes(b) => Key::Bytes(b.as_slice().into()),
                    other => {
                        return Err(format!("a map key must be nil, a bool, an int, a string or bytes, not {other:?}"))
                    }
                };
                let x = to_value(heap, x)?;
                m.insert(key, x);
            }
            Value::Obj(heap.alloc(Obj::Map(m)))
        }
        Val::Object(o) => heap.host_object(Shared::new(o.clone())),
        Val::Other(s) => return Err(format!("cannot make a csp value from {s}")),
    })
}
