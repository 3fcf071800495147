//! Concurrency builtins: channels, mutexes, waitgroups, timers, and the classes of
//! tasks (`cancel`, `done`), waitgroups (`add`, `done`) and channels (`len`, `cap`).
//! They reach the scheduler through `sched::ops` only.

use super::args::arity;
use crate::sched::ops;
use crate::vm::host::Class;
use crate::vm::object::Obj;
use crate::vm::ErrorKind;
use crate::vm::{err, Blocking, Fiber, NativeFn, Res, Ret, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_native("chan", make_chan);
    vm.define_native("close", close);
    vm.define_native("mutex", mutex);
    vm.define_native("waitgroup", waitgroup);
    vm.define_builtin("sleep", NativeFn::Full(sleep));
    vm.define_native("after", after);
    vm.define_native("ticker", ticker);
    vm.define_native("now", now);
    vm.define_native("cap", cap);
    vm.define_native("coroutine", coroutine);
    vm.define_native("__deadlocked", deadlocked);
    vm.define_hidden("go.detached", NativeFn::Full(go_detached));
}

fn number(vm: &Vm, name: &str, v: Value) -> Res<f64> {
    match v {
        Value::Int(i) => Ok(i as f64),
        Value::Float(f) => Ok(f),
        _ => err(ErrorKind::Type, format!("{name}() needs a number of milliseconds, not {}", vm.heap.type_name(v))),
    }
}

/// `chan()` is unbuffered, `chan(n)` buffers n values.
fn make_chan(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("chan", args, 0, 1)?;
    let cap = match args.first() {
        None => 0,
        Some(Value::Int(n)) if *n >= 0 && (*n as usize) <= crate::limits::MAX_LIST => *n as usize,
        Some(v) => {
            // An int out of range is a bad value; anything else, the wrong type.
            let kind = if matches!(v, Value::Int(_)) { ErrorKind::Value } else { ErrorKind::Type };
            return err(
                kind,
                format!(
                    "chan() needs a capacity from 0 to {}, not {}",
                    crate::limits::MAX_LIST,
                    crate::display::repr(&vm.heap, *v)
                ),
            );
        }
    };
    Ok(ops::new_chan(vm, cap))
}

fn close(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("close", args, 1, 1)?;
    ops::close(vm, args[0])?;
    Ok(Value::Nil)
}

fn mutex(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("mutex", args, 0, 0)?;
    Ok(ops::new_mutex(vm))
}

fn waitgroup(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("waitgroup", args, 0, 0)?;
    Ok(ops::new_waitgroup(vm))
}

/// `sleep(ms)` parks only the calling fiber.
fn sleep(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("sleep", args, 1, 1)?;
    let ms = number(vm, "sleep", args[0])?;
    Ok(Ret::Block(Blocking::Sleep(ms)))
}

/// `after(ms)`: a channel that receives the time once, after ms.
fn after(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("after", args, 1, 1)?;
    let ms = number(vm, "after", args[0])?;
    Ok(ops::after(vm, ms))
}

/// `ticker(ms)`: a channel that receives the time every ms (ticks are dropped
/// while a previous one is unread).
fn ticker(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("ticker", args, 1, 1)?;
    let ms = number(vm, "ticker", args[0])?;
    if !(ms >= 0.1 && ms.is_finite()) {
        return err(ErrorKind::Value, "ticker() needs a period of at least 0.1 ms");
    }
    Ok(ops::ticker(vm, ms))
}

/// `coroutine(f)`: a coroutine that runs `f` when first resumed.
fn coroutine(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("coroutine", args, 1, 1)?;
    match args[0] {
        Value::Obj(h) if matches!(vm.heap.get(h), Obj::Closure(_) | Obj::Native(_)) => {
            let co = crate::vm::fiber::Coroutine::new(args[0]);
            Ok(Value::Obj(vm.heap.alloc(Obj::Coroutine(Box::new(co)))))
        }
        v => err(ErrorKind::Type, format!("coroutine() needs a function, not {}", vm.heap.type_name(v))),
    }
}

/// `__deadlocked()`: the deadlock report if every other fiber is blocked for
/// good, else nil (for `csp test`'s driver; hidden from completion by its name).
fn deadlocked(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("__deadlocked", args, 0, 0)?;
    Ok(match ops::others_deadlocked(vm) {
        Some(report) => vm.heap.string(report),
        None => Value::Nil,
    })
}

/// `now()`: monotonic milliseconds since the program started, as a float.
fn now(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("now", args, 0, 0)?;
    Ok(Value::Float(ops::now(vm)))
}

fn cap(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("cap", args, 1, 1)?;
    match args[0] {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Chan(c) => Ok(Value::Int(c.cap() as i64)),
            Obj::List(l) => Ok(Value::Int(l.capacity() as i64)),
            o => err(ErrorKind::Type, format!("cap() of {} is not defined", o.type_name())),
        },
        v => err(ErrorKind::Type, format!("cap() of {} is not defined", vm.heap.type_name(v))),
    }
}

/// Tasks' methods (`Vm::kinds`).
pub static TASK: Class = Class {
    name: "task",
    methods: &[
        ("cancel", |vm, fiber, h, name, args| {
            arity(name, args, 0, 0)?;
            ops::cancel(vm, h, fiber.current_site());
            Ok(Ret::Value(Value::Nil))
        }),
        ("done", |vm, _, h, name, args| {
            arity(name, args, 0, 0)?;
            Ok(Ret::Value(ops::task_done(vm, h)))
        }),
    ],
    next: None,
    field: None,
};

/// Waitgroups' methods (`Vm::kinds`).
pub static WAITGROUP: Class = Class {
    name: "waitgroup",
    methods: &[
        ("add", |vm, _, h, name, args| {
            arity(name, args, 1, 1)?;
            match args[0] {
                Value::Int(n) => ops::group_add(vm, h, n).map(|_| Ret::Value(Value::Nil)),
                v => err(ErrorKind::Type, format!("add() needs an int, not {}", vm.heap.type_name(v))),
            }
        }),
        ("done", |vm, _, h, name, args| {
            arity(name, args, 0, 0)?;
            ops::group_add(vm, h, -1).map(|_| Ret::Value(Value::Nil))
        }),
    ],
    next: None,
    field: None,
};

/// Channels' methods (`Vm::kinds`).
pub static CHAN: Class = Class {
    name: "chan",
    methods: &[
        ("cap", |vm, _, h, name, args| {
            arity(name, args, 0, 0)?;
            let Obj::Chan(c) = vm.heap.get(h) else { unreachable!("receiver is a chan") };
            Ok(Ret::Value(Value::Int(c.cap() as i64)))
        }),
        ("len", |vm, _, h, name, args| {
            arity(name, args, 0, 0)?;
            let Obj::Chan(c) = vm.heap.get(h) else { unreachable!("receiver is a chan") };
            Ok(Ret::Value(Value::Int(c.len() as i64)))
        }),
    ],
    next: None,
    field: None,
};

/// `__go_detached(f)` (for `std/`): starts `f()` in a fiber owned by the
/// program, not by the caller, so it is not cancelled with the caller: a
/// server's connection left to finish its request when the server's fiber is
/// cancelled, a cancelled waiter's cleanup that must take a lock. Its task.
fn go_detached(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("go", args, 1, 1)?;
    let site = fiber.current_site().expect("a builtin is called from a frame");
    Ok(Ret::Value(ops::go_detached(vm, args, site)?))
}
