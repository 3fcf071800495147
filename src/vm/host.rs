//! Host objects: every kind of value the core does not define itself —
//! streams, sockets, processes, regexes, times, databases, compressors, and an
//! embedding host's own types (docs/embedding.md). The VM knows them only
//! through `HostObject` and their `Class`, so a new kind is one new file that
//! implements the trait, plus one registration line (`Vm::register_class`).
//! Strings, lists, maps, closures, channels and tasks stay `Obj` variants of
//! their own, for speed; their methods are classes too (`KindClasses`),
//! installed by the library.

use super::object::Obj;
use super::{Fiber, Handle, Heap, Res, Ret, Value, Vm};
use std::any::Any;
use std::cmp::Ordering;
use std::rc::Rc;

/// A host function: called like a builtin with the calling fiber (read-only).
pub type HostFn = Rc<dyn Fn(&mut Vm, &Fiber, &[Value]) -> Res<Ret>>;

/// A method of a host type. The receiver stays on the heap (`Heap::host_mut`
/// reaches it); `name` is the method's, for messages. It follows the
/// builtins' protocol and rerun contract (`vm/builtin.rs`).
pub type Method = fn(&mut Vm, &Fiber, Handle, &str, &[Value]) -> Res<Ret>;

/// `for x in obj` over a host object.
pub struct Iteration {
    /// The next item when it is at hand (a line already buffered): no wait,
    /// no error, no `Ret` to build, so a loop over a file stays cheap. None:
    /// ask `next`. Both get the running fiber and the stack slot of the loop
    /// variable: `vm::spare_item` of them is the last item when the loop lets
    /// none out (`Proto::reuses`), and a string item may be made over it
    /// (`Heap::reread_str`).
    pub at_hand: fn(&mut Vm, Handle, &Fiber, usize) -> Option<Value>,
    /// The next item, `nil` at the end, or a wait (after which the loop's
    /// instruction runs again).
    pub next: fn(&mut Vm, Handle, &Fiber, usize) -> Res<Ret>,
}

/// `obj.name` of a host object: its value, or None when it has no such field.
pub type Field = fn(&mut Vm, Handle, &str) -> Option<Value>;

/// What a kind of host object answers: its name (`type()`, errors) and its
/// methods. One `static` per type; a call site keeps the method it found
/// (`Name::method`), so the table is searched once per site, not per call.
pub struct Class {
    pub name: &'static str,
    pub methods: &'static [(&'static str, Method)],
    /// None: `for` over it is a type error.
    pub next: Option<Iteration>,
    /// `obj.name` (a process's `pid`, a time's `year`); None from it: no such field.
    pub field: Option<Field>,
}

impl Class {
    /// The method called `name`.
    pub fn method(&self, name: &str) -> Option<Method> {
        self.methods.iter().find(|(n, _)| *n == name).map(|&(_, m)| m)
    }

    /// Its methods' names, for "did you mean" and completion.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.methods.iter().map(|&(n, _)| n)
    }
}

/// The methods of the core's own kinds (`Vm::kinds`): empty classes until a
/// library installs its own (`natives::register`), as Lua's string library
/// installs strings'. A class's name is its kind's `type()`.
#[derive(Clone, Copy)]
pub struct KindClasses {
    pub string: &'static Class,
    pub bytes: &'static Class,
    pub list: &'static Class,
    pub map: &'static Class,
    pub chan: &'static Class,
    pub task: &'static Class,
    pub waitgroup: &'static Class,
    pub range: &'static Class,
}

impl KindClasses {
    /// The class of `o`'s methods: its own for a host object, its kind's for
    /// the core's, None for a kind without methods (functions, mutexes...).
    /// Coroutines' methods are the VM's own (`vm/object_ops.rs`).
    #[inline]
    pub fn of(&self, o: &Obj) -> Option<&'static Class> {
        Some(match o {
            Obj::Str(_) => self.string,
            Obj::Bytes(_) => self.bytes,
            Obj::List(_) => self.list,
            Obj::Map(_) => self.map,
            Obj::Chan(_) => self.chan,
            Obj::Task(_) => self.task,
            Obj::WaitGroup(_) => self.waitgroup,
            Obj::Range(..) => self.range,
            Obj::Host(h) => h.class(),
            _ => return None,
        })
    }
}

impl Default for KindClasses {
    fn default() -> KindClasses {
        const fn empty(name: &'static str) -> Class {
            Class { name, methods: &[], next: None, field: None }
        }
        static EMPTY: [Class; 8] = [
            empty("string"),
            empty("bytes"),
            empty("list"),
            empty("map"),
            empty("chan"),
            empty("task"),
            empty("waitgroup"),
            empty("range"),
        ];
        let [string, bytes, list, map, chan, task, waitgroup, range] = &EMPTY;
        KindClasses { string, bytes, list, map, chan, task, waitgroup, range }
    }
}

/// The one trait of host objects (`Obj::Host`). Only `class` is required.
pub trait HostObject: Any {
    fn class(&self) -> &'static Class;
    /// Bytes it holds outside the heap's count (counted against the memory
    /// limit, and pacing the collector: a descriptor is scarcer than memory).
    fn size(&self) -> usize {
        0
    }
    /// The csp values it holds: a host object that keeps values must name
    /// them here, or the collector frees them.
    fn trace(&self, _out: &mut dyn FnMut(Value)) {}
    /// How `print` shows it.
    fn display(&self, out: &mut String) {
        out.push('<');
        out.push_str(self.class().name);
        out.push('>');
    }
    /// `==` with another object of its class (the same object is always equal).
    fn equals(&self, _other: &dyn HostObject) -> bool {
        false
    }
    /// `<` and the others, with another object of its class; None: unordered.
    fn compare(&self, _other: &dyn HostObject) -> Option<Ordering> {
        None
    }
    /// Its owning task ended (`ending`: the program is ending). A resource
    /// bound to the task that made it (a child process) stops here; see
    /// `Released`. Only objects given to `sched::ops::adopt` are asked.
    fn release(&mut self, _ending: bool) -> Released {
        Released::default()
    }
    /// Still needs its owner to be told when it ends (`release`).
    fn adopted(&self) -> bool {
        false
    }
    /// The descriptor fibers may wait on, while open.
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    /// Closes it now (its owner ended), rather than when it is collected.
    fn close_now(&mut self) {}
    /// Whether it can move to another isolate (docs/isolates.md, "Resources
    /// that move"): None for a kind that never moves, else now or why not
    /// (an operation on it in progress).
    fn movable(&self) -> Option<Result<(), String>> {
        None
    }
    /// Takes what it owns to move to another isolate (called only once
    /// `movable` said yes); the object left behind is replaced at once. The
    /// values it holds (`trace`) move with it, in the same order.
    fn take_to_move(&mut self) -> Box<dyn Moving> {
        unreachable!("{} does not move", self.class().name)
    }
    /// Why it can no longer be used here (it moved away): the error every
    /// method call, field and loop on it then throws. None: usable.
    fn unusable(&self) -> Option<String> {
        None
    }
}

/// A resource on its way to another isolate: what it owned (a descriptor,
/// a child, its buffers), free of the heap it left.
pub trait Moving: Send {
    /// The object it is in the receiving isolate, given the values it held,
    /// moved there first.
    fn land(self: Box<Self>, held: &[Value]) -> Box<dyn HostObject>;
}

/// What `release` leaves the scheduler to finish.
#[derive(Default)]
pub struct Released {
    /// Streams to close now, not when collected.
    pub close: Vec<Value>,
    /// Threads that reap what was stopped; joined before the program exits.
    pub reapers: Vec<std::thread::JoinHandle<()>>,
}

impl dyn HostObject {
    /// Itself as a `T`, if it is one.
    pub fn downcast_ref<T: HostObject>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref()
    }
    pub fn downcast_mut<T: HostObject>(&mut self) -> Option<&mut T> {
        (self as &mut dyn Any).downcast_mut()
    }
}

impl Heap {
    /// The host object of type `T` at `h`, if it is one.
    pub fn host<T: HostObject>(&self, h: Handle) -> Option<&T> {
        match self.get(h) {
            super::Obj::Host(o) => o.downcast_ref(),
            _ => None,
        }
    }

    /// The host object of type `T` at `h`, without the type check: for the
    /// functions of `T`'s own class (its methods and iteration), which are
    /// called only with objects whose `class()` is that class.
    ///
    /// # Safety
    /// The object at `h` is a `T` (debug builds check it).
    #[inline]
    pub unsafe fn host_unchecked<T: HostObject>(&self, h: Handle) -> &T {
        let super::Obj::Host(o) = self.get(h) else {
            // SAFETY: the caller's promise.
            unsafe { std::hint::unreachable_unchecked() }
        };
        debug_assert!(o.downcast_ref::<T>().is_some(), "not a {}", std::any::type_name::<T>());
        // SAFETY: the caller's promise: the box holds a `T`.
        unsafe { &*(&**o as *const dyn HostObject as *const T) }
    }

    pub fn host_mut<T: HostObject>(&mut self, h: Handle) -> Option<&mut T> {
        match self.get_mut(h) {
            super::Obj::Host(o) => o.downcast_mut(),
            _ => None,
        }
    }

    /// A new host object.
    pub fn host_object(&mut self, obj: impl HostObject) -> Value {
        Value::Obj(self.alloc(super::Obj::Host(Box::new(obj))))
    }
}

impl Vm {
    /// Registers host function `f` as the global `name`.
    pub fn define_host_fn(&mut self, name: &'static str, f: HostFn) {
        let i = self.host_fns.len() as u32;
        self.host_fns.push(f);
        self.define_builtin(name, super::NativeFn::Host(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::value::Name;

    fn one(_: &mut Vm, _: &Fiber, _: Handle, _: &str, _: &[Value]) -> Res<Ret> {
        Ok(Ret::Value(Value::Int(1)))
    }
    fn two(_: &mut Vm, _: &Fiber, _: Handle, _: &str, _: &[Value]) -> Res<Ret> {
        Ok(Ret::Value(Value::Int(2)))
    }

    static A: Class = Class { name: "a", methods: &[("get", one), ("other", two)], next: None, field: None };
    static B: Class = Class { name: "b", methods: &[("get", two)], next: None, field: None };

    /// A call site keeps the method it found, and finds another when the
    /// receiver's class changes.
    #[test]
    fn a_call_site_finds_each_class_method() {
        let get = Name::new("get".into());
        let mut vm = Vm::new();
        let fiber = Fiber::default();
        let h = Handle(0);
        for (class, want) in [(&A, 1), (&A, 1), (&B, 2), (&A, 1), (&B, 2)] {
            let m = get.method_in(class).expect("a method");
            let Ok(Ret::Value(Value::Int(n))) = m(&mut vm, &fiber, h, "get", &[]) else { panic!() };
            assert_eq!(n, want, "{}", class.name);
        }
        assert!(Name::new("nope".into()).method_in(&A).is_none());
    }
}
