//! The 16-byte `Copy` value every register and container slot holds.

use std::rc::Rc;

/// An index into the heap's slot table; valid while the object is reachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(pub u32);

/// `repr(C, u64)` fixes the layout at two 8-byte words (tag, payload), so the
/// dispatch loop can copy registers word by word (see `copy_value`).
#[derive(Clone, Copy, Debug)]
#[repr(C, u64)]
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

/// Copies a value as two 8-byte loads and stores. A plain copy is one 16-byte load,
/// which stalls when the value was just written as separate tag and payload
/// stores (store-to-load forwarding fails); word copies forward cleanly.
///
/// # Safety
/// Both pointers must be valid and aligned for a `Value`.
#[inline(always)]
pub unsafe fn copy_value(dst: *mut Value, src: *const Value) {
    use std::mem::MaybeUninit;
    let s = src as *const MaybeUninit<u64>;
    let d = dst as *mut MaybeUninit<u64>;
    // Volatile loads keep LLVM from fusing the two words back into one wide load.
    let (tag, payload) = (s.read_volatile(), s.add(1).read_volatile());
    d.write(tag);
    d.add(1).write(payload);
}

/// Reads a value word by word (see `copy_value`).
///
/// # Safety
/// `src` must be valid and aligned for a `Value`.
#[inline(always)]
pub unsafe fn load_value(src: *const Value) -> Value {
    let mut out = std::mem::MaybeUninit::<Value>::uninit();
    copy_value(out.as_mut_ptr(), src);
    out.assume_init()
}
