//! Builtin functions and the methods of strings, bytes, lists and maps. Natives never call
//! back into the VM: they follow the protocol of `vm::builtin` (a value, a call
//! of a csp function such as the prelude's `__list_map`, or a blocking operation).

/// A method-table entry (`vm::host::Method`) for a method that only makes a
/// value: `f(vm, receiver, name, args) -> Res<Value>`.
macro_rules! value_method {
    ($f:path) => {
        |vm: &mut crate::vm::Vm,
         _: &crate::vm::Fiber,
         h: crate::vm::Handle,
         name: &str,
         args: &[crate::vm::Value]|
         -> crate::vm::Res<crate::vm::Ret> { $f(vm, h, name, args).map(crate::vm::Ret::Value) }
    };
}
pub(crate) use value_method;

pub mod args;
pub mod bytes;
pub mod compress;
pub mod conc;
pub mod convert;
pub mod core;
pub mod crypto;
pub mod format_fn;
pub mod fs;
pub mod http;
pub mod io;
pub mod isolate;
pub mod json;
pub mod list;
pub mod list_ext;
pub mod log;
pub mod map;
pub mod math;
pub mod net;
pub mod os;
pub mod path;
pub mod process;
pub mod random;
pub mod seq;
pub mod signal;
pub mod sqlite;
pub mod stream_methods;
pub mod string;
pub mod string_ext;
pub mod text;
pub mod time;
mod time_text;
pub mod tls;
pub mod url;
mod walk;
pub mod ws;

use crate::vm::host::{Class, KindClasses};
use crate::vm::object::Obj;
pub(crate) use crate::vm::seq_ops::resolve_index;
use crate::vm::{Res, Ret, Value, Vm};

/// A VM with the library installed: every builtin, and the methods of
/// strings, bytes, lists, maps and the other core kinds.
pub fn vm() -> Vm {
    let mut vm = Vm::new();
    register(&mut vm);
    vm
}

/// Registers every builtin as a global.
fn register(vm: &mut Vm) {
    vm.kinds = KINDS;
    core::register(vm);
    convert::register(vm);
    bytes::register(vm);
    math::register(vm);
    random::register(vm);
    seq::register(vm);
    json::register(vm);
    log::register(vm);
    format_fn::register(vm);
    conc::register(vm);
    io::register(vm);
    isolate::register(vm);
    process::register(vm);
    net::register(vm);
    http::register(vm);
    tls::register(vm);
    stream_methods::register(vm);
    signal::register(vm);
    path::register(vm);
    fs::register(vm);
    os::register(vm);
    text::register(vm);
    crypto::register(vm);
    compress::register(vm);
    time::register(vm);
    url::register(vm);
    sqlite::register(vm);
    ws::register(vm);
}

/// The classes of the core's kinds' methods (`Vm::kinds`).
const KINDS: KindClasses = KindClasses {
    string: &string::CLASS,
    bytes: &bytes::CLASS,
    list: &list::CLASS,
    map: &map::CLASS,
    chan: &conc::CHAN,
    task: &conc::TASK,
    waitgroup: &conc::WAITGROUP,
    range: &RANGE,
};

/// Ranges' one method.
static RANGE: Class = Class {
    name: "range",
    methods: &[("len", |vm, _, h, name, args| {
        args::arity(name, args, 0, 0)?;
        let Obj::Range(lo, hi) = vm.heap.get(h) else { unreachable!("receiver is a range") };
        Ok(Ret::Value(Value::Int(hi.saturating_sub(*lo).max(0))))
    })],
    next: None,
    field: None,
};

/// Calls method `name` on `recv` as a call site does, without its cache (for
/// the tests). Fields of maps that hold functions are the VM's (`vm::object_ops`).
pub fn call_method(vm: &mut Vm, fiber: &crate::vm::Fiber, recv: Value, name: &str, args: &[Value]) -> Res<Ret> {
    let (kind, class) = match recv {
        Value::Obj(h) => (vm.heap.get(h).type_name(), vm.kinds.of(vm.heap.get(h))),
        v => (vm.heap.type_name(v), None),
    };
    match (recv, class.and_then(|c| c.method(name))) {
        (Value::Obj(h), Some(m)) => m(vm, fiber, h, name, args),
        _ => no_method(kind, name),
    }
}

pub(crate) fn no_method<T>(kind: &str, name: &str) -> Res<T> {
    crate::vm::no_method::no_method(kind, name, &methods_of(kind))
}

/// The classes of the host objects the library makes (`vm/host.rs`): one
/// line here is a new kind of value's registration, for hints and completion.
pub static CLASSES: &[&Class] =
    &[&stream_methods::CLASS, &process::CLASS, &net::LISTENER, &net::UDP, &text::re::CLASS, &time::CLASS];

/// The methods of each kind of value that has some.
pub fn methods_of(kind: &str) -> Vec<&'static str> {
    let k = KINDS;
    let class = match kind {
        "coroutine" => return vec!["close", "resume", "throw"],
        "string" => k.string,
        "bytes" => k.bytes,
        "list" => k.list,
        "map" => k.map,
        "chan" => k.chan,
        "task" => k.task,
        "waitgroup" => k.waitgroup,
        "range" => k.range,
        _ => match CLASSES.iter().find(|c| c.name == kind) {
            Some(c) => c,
            None => return Vec::new(),
        },
    };
    class.names().collect()
}

/// Calls the global native `name` (hidden ones too: `__csv_parse`) with `args`
/// outside any fiber: for the tests and the fuzz targets of the text parsers.
pub(crate) fn call_global(vm: &mut Vm, name: &str, args: &[Value]) -> Res<Ret> {
    let slot = *vm.global_names.get(name).unwrap_or_else(|| panic!("no native {name}"));
    let Value::Obj(h) = vm.globals[slot as usize] else { panic!("{name} is not an object") };
    let Obj::Native(n) = vm.heap.get(h) else { panic!("{name} is not native") };
    match n.func {
        crate::vm::NativeFn::Value(f) => f(vm, args).map(Ret::Value),
        crate::vm::NativeFn::Full(f) => f(vm, &crate::vm::Fiber::default(), args),
        crate::vm::NativeFn::Host(i) => vm.host_fns[i as usize].clone()(vm, &crate::vm::Fiber::default(), args),
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// Calls global native `name` with `args`, expecting a value.
    pub fn call(vm: &mut Vm, name: &str, args: &[Value]) -> Res<Value> {
        match call_global(vm, name, args)? {
            Ret::Value(v) => Ok(v),
            _ => panic!("{name} did not return a value"),
        }
    }

    /// Calls method `name` on `recv`, expecting it to finish in Rust.
    pub fn method(vm: &mut Vm, recv: Value, name: &str, args: &[Value]) -> Res<Value> {
        match call_method(vm, &Default::default(), recv, name, args)? {
            Ret::Value(v) => Ok(v),
            _ => panic!("{name} did not return a value"),
        }
    }

    pub fn call_s(vm: &mut Vm, name: &str, args: &[Value]) -> String {
        let r = call(vm, name, args).unwrap();
        show(vm, r)
    }

    pub fn method_s(vm: &mut Vm, recv: Value, name: &str, args: &[Value]) -> String {
        let r = method(vm, recv, name, args).unwrap();
        show(vm, r)
    }

    pub fn show(vm: &Vm, v: Value) -> String {
        crate::display::repr(&vm.heap, v)
    }

    pub fn err_msg(r: Res<Value>) -> String {
        match r {
            Err(crate::vm::Fault::Error(e)) => e.1,
            Err(crate::vm::Fault::Throw(_)) => panic!("threw a value"),
            Err(crate::vm::Fault::Collect) => panic!("asked for a collection"),
            Err(crate::vm::Fault::Trap) => panic!("reached a debugger's trap"),
            Ok(_) => panic!("expected an error"),
        }
    }

    /// The kind of the runtime error `r` failed with.
    pub fn err_kind(r: Res<Value>) -> crate::vm::ErrorKind {
        match r {
            Err(crate::vm::Fault::Error(e)) => e.0,
            Err(_) => panic!("not a runtime error"),
            Ok(_) => panic!("expected an error"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::args::arity;
    use super::testutil::*;
    use super::*;

    #[test]
    fn unknown_methods() {
        let mut vm = crate::natives::vm();
        let l = vm.heap.list(vec![]);
        assert_eq!(err_msg(method(&mut vm, l, "foo", &[])), "list has no method 'foo'");
        assert_eq!(err_msg(method(&mut vm, Value::Int(1), "foo", &[])), "int has no method 'foo'");
        let s = vm.heap.str("x");
        assert_eq!(err_msg(method(&mut vm, s, "foo", &[])), "string has no method 'foo'");
        let r = Value::Obj(vm.heap.alloc(Obj::Range(2, 7)));
        assert_eq!(method_s(&mut vm, r, "len", &[]), "5");
    }

    #[test]
    fn arity_messages() {
        assert_eq!(err_msg(arity("f", &[], 1, 1).map(|_| Value::Nil)), "f() takes 1 argument (0 given)");
        let two = [Value::Nil, Value::Nil];
        assert_eq!(err_msg(arity("f", &two, 0, 1).map(|_| Value::Nil)), "f() takes 0 to 1 arguments (2 given)");
        assert_eq!(
            err_msg(arity("f", &[], 1, usize::MAX).map(|_| Value::Nil)),
            "f() takes at least 1 argument (0 given)"
        );
    }

    /// The method lists (suggestions, completion) name only methods that exist.
    #[test]
    fn method_lists_are_methods() {
        let mut vm = crate::natives::vm();
        let s = vm.heap.str("ab");
        let l = vm.heap.list(vec![Value::Int(1)]);
        let m = Value::Obj(vm.heap.alloc(Obj::Map(Default::default())));
        let b = vm.heap.bytes(&b"ab"[..]);
        let r = Value::Obj(vm.heap.alloc(Obj::Range(1, 3)));
        let c = crate::sched::ops::new_chan(&mut vm, 1);
        let w = crate::sched::ops::new_waitgroup(&mut vm);
        let kinds = [(s, "string"), (l, "list"), (m, "map"), (b, "bytes"), (r, "range"), (c, "chan"), (w, "waitgroup")];
        for (v, kind) in kinds {
            assert!(!methods_of(kind).is_empty(), "{kind}");
            for name in methods_of(kind) {
                if let Err(crate::vm::Fault::Error(e)) = call_method(&mut vm, &Default::default(), v, name, &[]) {
                    assert!(!e.1.contains("has no method"), "{kind}.{name}: {}", e.1);
                }
            }
        }
        assert_eq!(err_msg(method(&mut vm, l, "append", &[])), "list has no method 'append'; did you mean 'push'?");
        assert_eq!(err_msg(method(&mut vm, s, "uper", &[])), "string has no method 'uper'; did you mean 'upper'?");
        let mx = Value::Obj(vm.heap.alloc(Obj::Mutex(Box::default())));
        assert!(err_msg(method(&mut vm, mx, "lock", &[])).ends_with("hold a mutex with `lock m { ... }`"));
    }

    /// A call site keeps one kind's method at a time (`Name::method_in`): the
    /// same name on kinds in turn calls each kind's own method.
    #[test]
    fn a_call_site_follows_the_receivers_kind() {
        let mut vm = crate::natives::vm();
        let name = crate::vm::value::Name::new("len".into());
        let s = vm.heap.str("héllo");
        let l = vm.heap.list(vec![Value::Int(1), Value::Int(2)]);
        let b = vm.heap.bytes(&b"abc"[..]);
        let m = Value::Obj(vm.heap.alloc(Obj::Map(Default::default())));
        for (v, want) in [(s, 5), (l, 2), (s, 5), (b, 3), (l, 2), (m, 0), (s, 5)] {
            let Value::Obj(h) = v else { unreachable!() };
            let class = vm.kinds.of(vm.heap.get(h)).unwrap();
            let len = name.method_in(class).unwrap();
            let r = len(&mut vm, &Default::default(), h, "len", &[]);
            assert!(matches!(r, Ok(Ret::Value(Value::Int(n))) if n == want), "{}", class.name);
        }
        // And through the VM: one call site of `x.len()` and `x.slice(1)`.
        let mut rt = crate::embed::Runtime::new(Default::default());
        let src = "fn f(x) { return [x.len(), x.slice(1)] }\n\
                   [f(\"abc\"), f([1, 2]), f(\"de\"), f([3]), f(\"abc\".encode())]";
        let got = format!("{:?}", rt.eval("t", src).unwrap());
        let want = format!(
            "{:?}",
            rt.eval("w", "[[3, \"bc\"], [2, [2]], [2, \"e\"], [1, []], [3, \"bc\".encode()]]").unwrap()
        );
        assert_eq!(got, want);
    }

    #[test]
    fn error_kinds() {
        use crate::vm::ErrorKind;
        let mut vm = crate::natives::vm();
        assert_eq!(err_kind(arity("f", &[], 1, 1).map(|_| Value::Nil)), ErrorKind::Type);
        assert_eq!(err_kind(method(&mut vm, Value::Int(1), "foo", &[])), ErrorKind::Type);
        let l = vm.heap.list(vec![]);
        assert_eq!(err_kind(method(&mut vm, l, "pop", &[])), ErrorKind::Index);
        assert_eq!(err_kind(method(&mut vm, l, "insert", &[Value::Int(1), Value::Nil])), ErrorKind::Index);
        let s = vm.heap.str("x");
        assert_eq!(err_kind(method(&mut vm, s, "repeat", &[Value::Int(1 << 40)])), ErrorKind::Limit);
        assert_eq!(err_kind(call(&mut vm, "int", &[s])), ErrorKind::Value);
        assert_eq!(err_kind(call(&mut vm, "int", &[l])), ErrorKind::Type);
        assert_eq!(err_kind(call(&mut vm, "int", &[Value::Float(f64::NAN)])), ErrorKind::Value);
        assert_eq!(err_kind(call(&mut vm, "abs", &[Value::Int(i64::MIN)])), ErrorKind::Overflow);
        assert_eq!(err_kind(call(&mut vm, "max", &[l])), ErrorKind::Value);
        assert_eq!(err_kind(call(&mut vm, "assert", &[Value::Nil])), ErrorKind::Assert);
        assert_eq!(err_kind(call(&mut vm, "close", &[Value::Nil])), ErrorKind::Closed);
        assert_eq!(err_kind(call(&mut vm, "chan", &[Value::Int(-1)])), ErrorKind::Value);
        assert_eq!(err_kind(call(&mut vm, "chan", &[s])), ErrorKind::Type);
        let m = Value::Obj(vm.heap.alloc(Obj::Map(Default::default())));
        assert_eq!(err_kind(method(&mut vm, m, "get", &[Value::Float(1.0)])), ErrorKind::Key);
        let bad = vm.heap.str("[1,");
        assert_eq!(err_kind(call(&mut vm, "json_decode", &[bad])), ErrorKind::Value);
        let deep = vm.heap.string("[".repeat(crate::limits::MAX_DEPTH + 1));
        assert_eq!(err_kind(call(&mut vm, "json_decode", &[deep])), ErrorKind::Limit);
        assert_eq!(err_kind(call(&mut vm, "json_encode", &[Value::Float(f64::INFINITY)])), ErrorKind::Value);
        // `error(msg)` and `__timeout_error(msg)` make values; their kinds are in the object.
        for (f, want) in [("error", ErrorKind::User), ("__timeout_error", ErrorKind::Timeout)] {
            let e = call(&mut vm, f, &[s]).unwrap();
            let Value::Obj(h) = e else { panic!("not an object") };
            let Obj::Error(e) = vm.heap.get(h) else { panic!("not an error") };
            assert_eq!(e.kind, want);
        }
    }
}
