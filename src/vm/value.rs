//! The 16-byte `Copy` value every register and container slot holds.

use std::rc::Rc;

/// An index into the heap's slot table; valid while the object is reachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(pub u32);

#[derive(Clone, Copy, Debug)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Obj(Handle),
}

impl Value {
    #[inline]
    pub fn truthy(self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }
}

/// A map key: maps accept nil, bool, int and string keys, compared by value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Nil,
    Bool(bool),
    Int(i64),
    Str(Rc<str>),
}
