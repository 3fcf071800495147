//! Methods of streams (open files and pipe ends): `read_line`, `read`,
//! `read_text`, `write`, `flush`, `close`; `for line in s` uses `next_line`.
//! A stream is a host object (`vm/host.rs`).

use super::args::{arity, step};
use crate::os::stream::{Fail, Kind, ReadRes, Step, Stream};
use crate::vm::builtin::io;
use crate::vm::host::{Class, HostObject, Iteration, Moving};
use crate::vm::read_cap::ReadCap;
use crate::vm::{err, spare_item, ErrorKind, Fiber, Handle, Heap, NativeFn, Obj, Res, Ret, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("fs.open", NativeFn::Full(open));
}

/// `fs.open(path, mode = "r")`: "r" read, "w" write (create or truncate), "a"
/// append (create), "x" write a new file (fail if it exists), "r+" read and write.
fn open(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("open", args, 1, 2)?;
    let Some(path) = vm.heap.as_str(args[0]).map(|s| s.s.to_string()) else {
        return err(ErrorKind::Type, format!("open() needs a string path, not {}", vm.heap.type_name(args[0])));
    };
    vm.files.check("fs.open", &path)?;
    let mode = match args.get(1) {
        None => "r".to_string(),
        Some(v) => match vm.heap.as_str(*v) {
            Some(s) => s.s.to_string(),
            None => return err(ErrorKind::Type, format!("open() needs a string mode, not {}", vm.heap.type_name(*v))),
        },
    };
    let mut o = std::fs::OpenOptions::new();
    let (r, w) = match mode.as_str() {
        "r" => (true, false),
        "w" => (false, true),
        "a" => (false, true),
        "x" => (false, true),
        "r+" => (true, true),
        _ => {
            return err(ErrorKind::Value, format!("open() mode is \"r\", \"w\", \"a\", \"x\" or \"r+\", not {mode:?}"))
        }
    };
    o.read(r).write(w);
    match mode.as_str() {
        "w" => o.create(true).truncate(true),
        "a" => o.create(true).append(true),
        "x" => o.create_new(true),
        _ => &mut o,
    };
    let work = move || match o.open(&path) {
        Ok(f) if f.metadata().is_ok_and(|m| m.is_dir()) => Err(format!("cannot open {path}: it is a directory")),
        Ok(f) => Ok((f, path, r, w)),
        Err(e) => Err(format!("cannot open {path}: {}", crate::os::io_reason(&e))),
    };
    let done = |heap: &mut Heap, (f, path, r, w): (std::fs::File, String, bool, bool)| {
        heap.host_object(Stream::new(&path, Kind::File, f, r, w))
    };
    Ok(io(work, done))
}

/// With the socket methods of a connection (`natives/net.rs`).
pub static CLASS: Class = Class {
    name: "stream",
    methods: &[
        ("close", flush),
        ("flush", flush),
        ("local_addr", super::net::socket_addr_of),
        ("peer_addr", super::net::socket_addr_of),
        ("read", read),
        ("read_exact", read),
        ("read_line", read_line_method),
        ("read_text", read_text),
        ("set_nodelay", super::net::set_nodelay),
        ("shutdown", super::net::shutdown),
        ("write", write),
    ],
    next: Some(Iteration {
        at_hand: buffered_line,
        next: |vm, h, fiber, slot| read_line(vm, h, None, spare_item(vm, fiber, slot)),
    }),
    field: None,
};

impl HostObject for Stream {
    fn class(&self) -> &'static Class {
        &CLASS
    }
    /// A descriptor is scarcer than memory: abandoned streams should bring
    /// the collection (which closes them) closer.
    fn size(&self) -> usize {
        64 * 1024
    }
    fn display(&self, out: &mut String) {
        out.push_str("<stream ");
        out.push_str(&self.name);
        out.push('>');
    }
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        Stream::fd(self)
    }
    fn close_now(&mut self) {
        Stream::close_now(self)
    }
    fn movable(&self) -> Option<Result<(), String>> {
        Some(self.busy().map_or(Ok(()), Err))
    }
    fn take_to_move(&mut self) -> Box<dyn Moving> {
        Box::new(self.to_move())
    }
}

impl Moving for crate::os::stream::MovingStream {
    fn land(self: Box<Self>, _: &[Value]) -> Box<dyn HostObject> {
        Box::new((*self).land())
    }
}

/// The receiver of a stream method or loop: on every line of `for line in
/// f`, so without the type check (a type id compared: 3% of grep's time).
fn stream(vm: &Vm, h: Handle) -> &Stream {
    // SAFETY: only `CLASS`'s functions call this, and only streams have it.
    unsafe { vm.heap.host_unchecked::<Stream>(h) }
}

/// A connection argument of builtin `name` (a stream, shared with its value).
pub fn conn_arg(vm: &Vm, name: &str, v: Value) -> Res<Stream> {
    let s = match v {
        Value::Obj(h) => vm.heap.host::<Stream>(h),
        _ => None,
    };
    s.cloned()
        .map_or_else(|| err(ErrorKind::Type, format!("{name}() needs a connection, not {}", vm.heap.type_name(v))), Ok)
}

/// A decoding error names the stream and says how to read bytes instead.
fn reading_text<T>(name: &str, r: Res<T>) -> Res<T> {
    r.map_err(|f| match f {
        crate::vm::Fault::Error(e) => {
            crate::vm::Fault::Error(Box::new((e.0, format!("{name} is not text: {}; read() gives bytes", e.1))))
        }
        other => other,
    })
}

/// A read's answer, its cap passed as the error of the limit that set it.
fn capped<T>(heap: &mut Heap, r: ReadRes<T>, cap: ReadCap, name: &str) -> Res<Step<T>> {
    match r {
        Ok(step) => Ok(step),
        Err(Fail::Io(msg)) => err(ErrorKind::Io, msg),
        Err(Fail::Over) => Err(over(heap, cap, name)),
    }
}

/// The error for a read past its cap. The stream keeps what it buffered (a
/// program may read it in parts), which the collector does not see: counted
/// as allocation, it brings the next collection, which frees the buffer of a
/// stream the program dropped.
fn over(heap: &mut Heap, cap: ReadCap, name: &str) -> crate::vm::Fault {
    heap.note_growth(cap.bytes);
    cap.fault(name)
}

/// `for line in f` over a read-only file while its next line is in the buffer
/// (almost always): the line without `read_line`'s locking and answer, which
/// cost a fifth of grep's time. None: ask `read_line`.
fn buffered_line(vm: &mut Vm, h: Handle, fiber: &Fiber, slot: usize) -> Option<Value> {
    let s = stream(vm, h);
    let (front, limit) = (s.front()?.clone(), s.line_limit.unwrap_or(usize::MAX));
    let spare = spare_item(vm, fiber, slot);
    let heap = &mut vm.heap;
    let mut f = front.borrow_mut();
    f.line(limit, |line, ascii| match ascii || line.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        true => Some(heap.reread_str(spare, unsafe { std::str::from_utf8_unchecked(line) }, true)),
        // Invalid UTF-8 is left for `read_line` to report.
        false => std::str::from_utf8(line).ok().map(|text| heap.reread_str(spare, text, false)),
    })
}

/// `s.read_line(max)` and `for line in s`: a line as a string (made over
/// `spare`: see `Iteration`), nil at the end, or a wait. `max` (None: the
/// stream's limit) bounds the line's length.
fn read_line(vm: &mut Vm, h: Handle, max: Option<usize>, spare: Option<Handle>) -> Res<Ret> {
    // The line goes straight from the stream's buffer into a new string on
    // the heap, which needs the heap mutably: the stream leaves its slot for
    // that time (nothing runs that could look at the slot, and the free list
    // does not hold it). Cloning its handle instead cost two atomic operations
    // a line, a sixth of `for line in f` (benches/os/grep.csp).
    let cap = vm.heap.read_cap()?;
    let slot = std::mem::replace(vm.heap.get_mut(h), Obj::Free);
    let Obj::Host(o) = &slot else { unreachable!("a stream") };
    let s = o.downcast_ref::<Stream>().expect("a stream");
    let heap = &mut vm.heap;
    let r = s.read_line(max, cap.bytes, |line| match line.is_ascii() {
        // SAFETY: ASCII is UTF-8 (one pass instead of validating, then counting chars).
        true => Ok(heap.reread_str(spare, unsafe { std::str::from_utf8_unchecked(line) }, true)),
        false => super::bytes::utf8(line).map(|text| heap.reread_str(spare, text, false)),
    });
    let r = match r {
        Ok(Step::Done(Some(Ok(v)))) => Ok(Ret::Value(v)),
        Ok(Step::Done(None)) => Ok(Ret::Value(Value::Nil)),
        Ok(Step::Done(Some(Err(e)))) => reading_text(&s.name, Err(e)),
        Ok(Step::Block(b)) => Ok(Ret::Block(b)),
        Err(Fail::Io(msg)) => err(ErrorKind::Io, msg),
        Err(Fail::Over) => Err(over(heap, cap, &format!("a line from {}", s.name))),
    };
    std::mem::forget(std::mem::replace(vm.heap.get_mut(h), slot));
    r
}

fn read_line_method(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 1)?;
    let max = match args.first() {
        None => None,
        Some(Value::Int(n)) if *n > 0 => Some(*n as usize),
        Some(v) => {
            let what = vm.heap.type_name(*v);
            return err(ErrorKind::Value, format!("read_line() needs a positive int length, not {what}"));
        }
    };
    read_line(vm, h, max, None)
}

fn read_text(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    let sname = stream(vm, h).name.clone();
    let cap = vm.heap.read_cap()?;
    let r = stream(vm, h).read(None, false, cap.bytes, |d| super::bytes::utf8(d).map(str::to_string));
    let r = capped(&mut vm.heap, r, cap, &sname)?;
    step(vm, Ok(r), |vm, all| match all {
        None => Ok(vm.heap.str("")),
        Some(text) => Ok(vm.heap.string(reading_text(&sname, text)?)),
    })
}

/// `s.read(max)` and `s.read_exact(n)`.
fn read(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    let exact = name == "read_exact";
    arity(name, args, usize::from(exact), 1)?;
    let max = match args.first() {
        None | Some(Value::Nil) if !exact => None,
        Some(Value::Int(n)) if *n > 0 => Some(*n as usize),
        Some(v) => {
            let what = vm.heap.type_name(*v);
            return err(ErrorKind::Value, format!("{name}() needs a positive int count, not {what}"));
        }
        None => unreachable!("arity checked"),
    };
    let sname = stream(vm, h).name.clone();
    let cap = vm.heap.read_cap()?;
    if exact && max.is_some_and(|n| n > cap.bytes) {
        // Refused before anything is read: the bytes could never be held.
        return Err(cap.fault(&format!("{} bytes from {sname}", max.unwrap_or_default())));
    }
    let r = stream(vm, h).read(max, exact, cap.bytes, |d| std::rc::Rc::<[u8]>::from(d));
    let r = capped(&mut vm.heap, r, cap, &sname)?;
    step(vm, Ok(r), |vm, data| Ok(data.map_or(Value::Nil, |d| vm.heap.bytes(d))))
}

fn write(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 1, 1)?;
    let data = super::bytes::data_arg(&vm.heap, "write", args[0])?;
    let r = stream(vm, h).write(data);
    step(vm, r, |_, ()| Ok(Value::Nil))
}

/// `s.flush()` and `s.close()`.
fn flush(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    let closing = name == "close";
    if closing {
        if let Some(fd) = stream(vm, h).fd() {
            crate::sched::ops::fd_closing(vm, fd);
        }
    }
    let r = stream(vm, h).flush(closing);
    step(vm, r, |_, ()| Ok(Value::Nil))
}
