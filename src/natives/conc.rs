//! Concurrency builtins: channels, mutexes, waitgroups, timers, and the methods of
//! tasks (`cancel`, `done`), waitgroups (`add`, `done`) and channels (`len`, `cap`).

use super::arity;
use crate::sched::io::IoJob;
use crate::sched::{self, chan, lock, timer};
use crate::vm::object::Obj;
use crate::vm::{err, Block, ErrorKind, Fault, Handle, Res, Value, Vm};
use std::time::Duration;

pub fn register(vm: &mut Vm) {
    vm.define_native("chan", make_chan);
    vm.define_native("close", close);
    vm.define_native("mutex", mutex);
    vm.define_native("waitgroup", waitgroup);
    vm.define_native("sleep", sleep);
    vm.define_native("after", after);
    vm.define_native("ticker", ticker);
    vm.define_native("now", now);
    vm.define_native("cap", cap);
    vm.define_native("coroutine", coroutine);
    vm.define_native("read_file", read_file);
    vm.define_native("write_file", write_file);
    vm.define_native("read_line", read_line);
    vm.define_native("lines", lines);
    vm.define_native("exists", exists);
}

fn number(vm: &Vm, name: &str, v: Value) -> Res<f64> {
    match v {
        Value::Int(i) => Ok(i as f64),
        Value::Float(f) => Ok(f),
        _ => err(ErrorKind::Type, format!("{name}() needs a number of milliseconds, not {}", vm.heap.type_name(v))),
    }
}

fn new_chan(vm: &mut Vm, cap: usize) -> Handle {
    vm.heap.alloc(Obj::Chan(Box::new(chan::Chan::new(cap))))
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
                    crate::format::repr(&vm.heap, *v)
                ),
            );
        }
    };
    Ok(Value::Obj(new_chan(vm, cap)))
}

fn close(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("close", args, 1, 1)?;
    match chan::as_chan(vm, args[0], "close")? {
        Some(h) => chan::close(vm, h)?,
        None => return err(ErrorKind::Closed, "close of nil channel"),
    }
    Ok(Value::Nil)
}

fn mutex(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("mutex", args, 0, 0)?;
    Ok(Value::Obj(vm.heap.alloc(Obj::Mutex(Box::default()))))
}

fn waitgroup(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("waitgroup", args, 0, 0)?;
    Ok(Value::Obj(vm.heap.alloc(Obj::WaitGroup(Box::default()))))
}

/// `sleep(ms)` parks only the calling fiber.
fn sleep(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("sleep", args, 1, 1)?;
    let ms = number(vm, "sleep", args[0])?;
    Err(Fault::Block(Block::Sleep(ms)))
}

/// `after(ms)`: a channel that receives the time once, after ms.
fn after(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("after", args, 1, 1)?;
    let ms = number(vm, "after", args[0])?;
    let h = new_chan(vm, 1);
    timer::add(vm, timer::deadline(ms), timer::TimerKind::Send(h));
    Ok(Value::Obj(h))
}

/// `ticker(ms)`: a channel that receives the time every ms (ticks are dropped
/// while a previous one is unread).
fn ticker(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("ticker", args, 1, 1)?;
    let ms = number(vm, "ticker", args[0])?;
    if !(ms >= 0.1 && ms.is_finite()) {
        return err(ErrorKind::Value, "ticker() needs a period of at least 0.1 ms");
    }
    let h = new_chan(vm, 1);
    let period = Duration::from_secs_f64(ms / 1000.0);
    timer::add(vm, timer::deadline(ms), timer::TimerKind::Tick(h, period));
    Ok(Value::Obj(h))
}

/// `coroutine(f)`: a coroutine that runs `f` when first resumed.
fn coroutine(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("coroutine", args, 1, 1)?;
    match args[0] {
        Value::Obj(h) if matches!(vm.heap.get(h), Obj::Closure(_) | Obj::Native(_)) => {
            let co = crate::vm::coroutine::Coroutine::new(args[0]);
            Ok(Value::Obj(vm.heap.alloc(Obj::Coroutine(Box::new(co)))))
        }
        v => err(ErrorKind::Type, format!("coroutine() needs a function, not {}", vm.heap.type_name(v))),
    }
}

/// `now()`: monotonic milliseconds since the program started, as a float.
fn now(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("now", args, 0, 0)?;
    Ok(Value::Float(vm.sched.now_ms()))
}

fn cap(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("cap", args, 1, 1)?;
    match args[0] {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Chan(c) => Ok(Value::Int(c.cap as i64)),
            Obj::List(l) => Ok(Value::Int(l.capacity() as i64)),
            o => err(ErrorKind::Type, format!("cap() of {} is not defined", o.type_name())),
        },
        v => err(ErrorKind::Type, format!("cap() of {} is not defined", vm.heap.type_name(v))),
    }
}

/// Methods of tasks, waitgroups and channels; None when `h` is none of those.
pub fn call_method(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Option<Res<Value>> {
    let r = match (vm.heap.get(h), name) {
        (Obj::Task(_), "cancel") => arity(name, args, 0, 0).map(|_| {
            sched::cancel_task(vm, h);
            Value::Nil
        }),
        (Obj::Task(t), "done") => {
            let (existing, finished) = (t.done_chan(), t.finished());
            arity(name, args, 0, 0).map(|_| task_done(vm, h, existing, finished))
        }

        (Obj::WaitGroup(_), "add") => arity(name, args, 1, 1).and_then(|_| match args[0] {
            Value::Int(n) => lock::group_add(vm, h, n).map(|_| Value::Nil),
            v => err(ErrorKind::Type, format!("add() needs an int, not {}", vm.heap.type_name(v))),
        }),
        (Obj::WaitGroup(_), "done") => {
            arity(name, args, 0, 0).and_then(|_| lock::group_add(vm, h, -1).map(|_| Value::Nil))
        }
        (Obj::Chan(c), "len") => arity(name, args, 0, 0).map(|_| Value::Int(c.buf.len() as i64)),
        (Obj::Chan(c), "cap") => arity(name, args, 0, 0).map(|_| Value::Int(c.cap as i64)),
        (Obj::Task(_) | Obj::WaitGroup(_) | Obj::Chan(_) | Obj::Mutex(_), _) => {
            super::no_method(vm.heap.get(h).type_name(), name)
        }
        _ => return None,
    };
    Some(r)
}

/// `t.done()`: one channel per task, closed when it finishes.
fn task_done(vm: &mut Vm, h: Handle, existing: Option<Handle>, finished: bool) -> Value {
    if let Some(c) = existing {
        return Value::Obj(c);
    }
    let c = new_chan(vm, 0);
    if finished {
        let _ = chan::close(vm, c);
    }
    sched::task_mut(vm, h).extra_mut().done_chan = Some(c);
    Value::Obj(c)
}

/// A blocking job on the file at the one path argument; only the calling fiber waits.
fn path_job(vm: &Vm, name: &str, args: &[Value], job: fn(String) -> IoJob) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let path = string_arg(vm, name, args[0])?;
    Err(Fault::Block(Block::Io(job(path))))
}

/// `read_file(path)`: the file's text.
fn read_file(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    path_job(vm, "read_file", args, IoJob::ReadFile)
}

/// `lines(path)`: the file's lines without their `\n` or `\r\n`.
fn lines(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    path_job(vm, "lines", args, IoJob::Lines)
}

/// `exists(path)`: whether a file or folder is there.
fn exists(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    path_job(vm, "exists", args, IoJob::Exists)
}

/// `write_file(path, text)`: writes (replacing) the file.
fn write_file(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("write_file", args, 2, 2)?;
    let path = string_arg(vm, "write_file", args[0])?;
    let text = crate::format::display(&vm.heap, args[1]);
    Err(Fault::Block(Block::Io(IoJob::WriteFile(path, text))))
}

/// `read_line()`: the next line of stdin without its newline, or nil at the end.
fn read_line(_vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("read_line", args, 0, 0)?;
    Err(Fault::Block(Block::Io(IoJob::ReadLine)))
}

fn string_arg(vm: &Vm, name: &str, v: Value) -> Res<String> {
    match vm.heap.as_str(v) {
        Some(s) => Ok(s.s.to_string()),
        None => err(ErrorKind::Type, format!("{name}() needs a string path, not {}", vm.heap.type_name(v))),
    }
}
