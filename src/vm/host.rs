//! What a host program embedding csp adds to the VM (docs/embedding.md):
//! functions that are Rust closures, so they can hold the host's state, and
//! values of the host's own types. Both use the builtins' one protocol
//! (`vm/builtin.rs`): a host function returns a `Ret`, so it can block its
//! fiber (on the I/O pool) without blocking the thread.

use super::{Fiber, Handle, Res, Ret, Value, Vm};
use std::cell::RefCell;
use std::rc::Rc;

/// A host function: called like a builtin with the calling fiber (read-only).
pub type HostFn = Rc<dyn Fn(&mut Vm, &Fiber, &[Value]) -> Res<Ret>>;

/// A value of a host's own type (`Obj::Host`). Shared behind a `RefCell` so
/// that a method call can take the VM mutably while it runs.
pub trait HostObject {
    /// What `type()` says and errors name.
    fn type_name(&self) -> &'static str;
    /// The methods `call` answers, for errors' "did you mean" and completion.
    fn methods(&self) -> &'static [&'static str];
    /// Calls method `name` (one of `methods()`; others are answered with the
    /// VM's usual "has no method" error before this is reached).
    fn call(&mut self, vm: &mut Vm, name: &str, args: &[Value]) -> Res<Value>;
    /// Bytes it holds outside the heap's count (counted against the memory limit).
    fn size(&self) -> usize {
        0
    }
    /// Itself, for a host to reach its own type (`embed::Val::object`).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
    /// The heap objects it refers to: a host object that keeps csp values
    /// must name them here, or the collector frees them.
    fn trace(&self, _out: &mut Vec<Handle>) {}
}

/// The body of `Obj::Host`.
pub type HostRef = Rc<RefCell<dyn HostObject>>;

impl Vm {
    /// Registers host function `f` as the global `name`.
    pub fn define_host_fn(&mut self, name: &'static str, f: HostFn) {
        let i = self.host_fns.len() as u32;
        self.host_fns.push(f);
        self.define_builtin(name, super::NativeFn::Host(i));
    }

    /// A new host object on the heap.
    pub fn host_object(&mut self, obj: HostRef) -> Value {
        Value::Obj(self.heap.alloc(super::Obj::Host(obj)))
    }
}

/// Calls method `name` of host object `h`.
pub fn call_method(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Option<Res<Value>> {
    let super::Obj::Host(o) = vm.heap.get(h) else { return None };
    let o = o.clone();
    let Ok(mut obj) = o.try_borrow_mut() else {
        return Some(super::err(
            super::ErrorKind::Value,
            format!("the object is busy (a call of '{name}' from its own method)"),
        ));
    };
    if !obj.methods().contains(&name) {
        return None;
    }
    Some(obj.call(vm, name, args))
}
