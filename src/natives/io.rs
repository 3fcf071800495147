//! File and stdin builtins: each blocks only the calling fiber while an I/O
//! worker thread does the work (`vm::builtin::Blocking::Io`).

use super::args::arity;
use crate::vm::builtin::{io, io_kind};
use crate::vm::read_cap::ReadCap;
use crate::vm::ErrorKind;
use crate::vm::{err, Fiber, Heap, NativeFn, Res, Ret, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_builtin("read_file", NativeFn::Full(read_file));
    vm.define_builtin("write_file", NativeFn::Full(write_file));
    vm.define_builtin("append_file", NativeFn::Full(append_file));
    vm.define_builtin("read_line", NativeFn::Full(read_line));
    vm.define_builtin("lines", NativeFn::Full(lines));
    vm.define_builtin("exists", NativeFn::Full(exists));
}

fn read(path: &str, cap: ReadCap) -> Result<String, (ErrorKind, String)> {
    let bytes = super::fs::read_whole(path, cap)?;
    String::from_utf8(bytes)
        .map_err(|_| (ErrorKind::Io, format!("cannot read {path}: stream did not contain valid UTF-8")))
}

fn text(heap: &mut Heap, s: String) -> Value {
    heap.string(s)
}

fn nil(_: &mut Heap, _: ()) -> Value {
    Value::Nil
}

/// `read_file(path)`: the file's text.
fn read_file(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "read_file", args, 1)?;
    let cap = vm.heap.read_cap()?;
    Ok(io_kind(move || read(&path, cap), text))
}

/// The least a line of `lines` costs: a list item and a heap object.
const LINE_COST: usize = 16 + 32;

/// `lines(path)`: the file's lines without their `\n` or `\r\n`.
fn lines(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "lines", args, 1)?;
    let cap = vm.heap.read_cap()?;
    let work = move || {
        let text = read(&path, cap)?;
        // The list is sized before it is built: each line is at least a list
        // item and a string object.
        let n = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
        if n > crate::limits::MAX_LIST {
            let msg = format!("cannot read {path}: more than the {} lines a list may hold", crate::limits::MAX_LIST);
            return Err((ErrorKind::Limit, msg));
        }
        if n.saturating_mul(LINE_COST) > cap.room.saturating_sub(text.len()) {
            return Err(cap.memory_error(&format!("the {n} lines of {path}")));
        }
        Ok(text)
    };
    let to_list = |heap: &mut Heap, text: String| {
        let items = text.lines().map(|l| heap.str(l)).collect();
        heap.list(items)
    };
    Ok(io_kind(work, to_list))
}

/// `exists(path)`: whether a file or folder is there.
fn exists(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "exists", args, 1)?;
    Ok(io(move || Ok(std::path::Path::new(&path).exists()), |_, b| Value::Bool(b)))
}

/// `write_file(path, text)`: writes (replacing) the file.
fn write_file(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "write_file", args, 2)?;
    let data = crate::display::display(&vm.heap, args[1]);
    Ok(io(move || std::fs::write(&path, data).map_err(|e| format!("cannot write {path}: {e}")), nil))
}

/// `append_file(path, text)`: appends to the file, creating it if missing.
fn append_file(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    use std::io::Write;
    let path = path_arg(vm, "append_file", args, 2)?;
    let data = crate::display::display(&vm.heap, args[1]);
    let append = move || {
        let mut f = std::fs::OpenOptions::new().append(true).create(true).open(&path);
        f.as_mut().map_err(|e| format!("cannot open {path}: {e}"))?;
        f.and_then(|mut f| f.write_all(data.as_bytes())).map_err(|e| format!("cannot write {path}: {e}"))
    };
    Ok(io(append, nil))
}

/// `read_line()`: the next line of stdin without its newline, or nil at the end.
fn read_line(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("read_line", args, 0, 0)?;
    let cap = vm.heap.read_cap()?;
    let read = move || {
        use std::io::{BufRead, Read};
        let mut line = String::new();
        // Bounded as it is read: a line longer than the cap is not buffered whole.
        match std::io::stdin().lock().take(cap.bytes as u64 + 1).read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(n) if n > cap.bytes => Err(cap.error("a line of stdin")),
            Ok(_) => {
                if line.ends_with('\n') {
                    line.pop();
                    if line.ends_with('\r') {
                        line.pop();
                    }
                }
                Ok(Some(line))
            }
            Err(e) => Err((ErrorKind::Io, format!("cannot read stdin: {e}"))),
        }
    };
    Ok(io_kind(read, |heap, line| line.map_or(Value::Nil, |l| heap.string(l))))
}

/// The path argument of a builtin taking `n` arguments.
fn path_arg(vm: &Vm, name: &str, args: &[Value], n: usize) -> Res<String> {
    arity(name, args, n, n)?;
    match vm.heap.as_str(args[0]) {
        Some(s) => {
            vm.files.check(name, &s.s)?;
            Ok(s.s.to_string())
        }
        None => err(ErrorKind::Type, format!("{name}() needs a string path, not {}", vm.heap.type_name(args[0]))),
    }
}
