//! A host's own types (`HostType`) as csp values: a value is shared between
//! the host's `Val::Object`s and the heap's `Obj::Host` (a `Shared` box), and
//! each type gets one method table (`Class`), made the first time the type is
//! used and kept for the process.

use super::value::{self, Val};
use crate::vm::host::{Class, HostObject, Method};
use crate::vm::{err, ErrorKind, Fiber, Handle, Res, Ret, Value, Vm};
use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Mutex;

/// A host type: values of it live in csp and answer these methods.
pub trait HostType: 'static {
    /// Its name for `type()` and in errors.
    const NAME: &'static str;
    const METHODS: &'static [&'static str];
    fn call(&mut self, method: &str, args: Vec<Val>) -> Result<Val, String>;
}

/// A value of some `HostType`, as `Val::Object` holds it.
pub trait Hosted: Any {
    fn class(&self) -> &'static Class;
    fn call(&mut self, method: &str, args: Vec<Val>) -> Result<Val, String>;
}

impl<T: HostType> Hosted for T {
    fn class(&self) -> &'static Class {
        class_of::<T>()
    }
    fn call(&mut self, method: &str, args: Vec<Val>) -> Result<Val, String> {
        HostType::call(self, method, args)
    }
}

/// A host value shared between the host and csp.
pub type HostRef = Rc<RefCell<dyn Hosted>>;

/// Wraps a value of a host type to hand to csp.
pub fn object<T: HostType>(t: T) -> Val {
    Val::Object(Rc::new(RefCell::new(t)))
}

/// The heap's side of a `HostRef`.
pub(super) struct Shared {
    pub obj: HostRef,
    class: &'static Class,
}

impl Shared {
    pub fn new(obj: HostRef) -> Shared {
        // Not borrowed while a method of it runs: only host code runs then.
        let class = obj.try_borrow().map(|o| o.class()).expect("a host object is not busy when handed to csp");
        Shared { obj, class }
    }
}

impl HostObject for Shared {
    fn class(&self) -> &'static Class {
        self.class
    }
}

/// `T`'s class: every method of it calls `call_method`, which passes the
/// method's name to `T::call`.
fn class_of<T: HostType>() -> &'static Class {
    static CLASSES: Mutex<Option<HashMap<TypeId, &'static Class>>> = Mutex::new(None);
    let mut classes = CLASSES.lock().unwrap_or_else(|e| e.into_inner());
    let map = classes.get_or_insert_with(HashMap::new);
    map.entry(TypeId::of::<T>()).or_insert_with(|| {
        let methods: Vec<(&'static str, Method)> = T::METHODS.iter().map(|&n| (n, call_method as Method)).collect();
        // Made once per type for the process: a small, bounded leak.
        Box::leak(Box::new(Class {
            name: T::NAME,
            methods: Box::leak(methods.into_boxed_slice()),
            next: None,
            field: None,
        }))
    })
}

fn call_method(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    let obj = vm.heap.host::<Shared>(h).expect("a host type's value").obj.clone();
    let Ok(mut o) = obj.try_borrow_mut() else {
        return err(ErrorKind::Value, format!("the object is busy (a call of '{name}' from its own method)"));
    };
    let args = args_out(vm, name, args)?;
    let r = o.call(name, args).or_else(|m| err(ErrorKind::Value, format!("{name}(): {m}")))?;
    let v = value::to_value(&mut vm.heap, &r).or_else(|m| err(ErrorKind::Type, format!("{name}() returned {m}")))?;
    Ok(Ret::Value(v))
}

pub(super) fn args_out(vm: &Vm, name: &str, args: &[Value]) -> Res<Vec<Val>> {
    let conv = args.iter().map(|&v| value::from_value(&vm.heap, v)).collect::<Result<Vec<_>, _>>();
    conv.or_else(|m| err(ErrorKind::Value, format!("{name}(): {m}")))
}
