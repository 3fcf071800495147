//! `std/os` (the process: environment, working directory, clock, identity)
//! and the global builtins `eprint` and `exit`.

use super::args::{arity, text_arg};
use crate::vm::builtin::io;
use crate::vm::{err, Blocking, ErrorKind, Fiber, NativeFn, Res, Ret, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_native("eprint", eprint);
    vm.define_builtin("exit", NativeFn::Full(exit));
    vm.define_hidden("os.env", NativeFn::Value(env));
    vm.define_hidden("os.environ", NativeFn::Value(environ));
    vm.define_hidden("os.setenv", NativeFn::Value(setenv));
    vm.define_hidden("os.unsetenv", NativeFn::Value(unsetenv));
    vm.define_hidden("os.cwd", NativeFn::Value(cwd));
    vm.define_hidden("os.chdir", NativeFn::Full(chdir));
    vm.define_hidden("os.time", NativeFn::Value(time));
    vm.define_hidden("os.hostname", NativeFn::Value(hostname));
    vm.define_hidden("os.pid", NativeFn::Value(pid));
    vm.define_hidden("os.executable", NativeFn::Value(executable));
}

/// `eprint(a, b, ...)`: `print` to stderr, written at once, after what is
/// buffered for stdout.
fn eprint(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    let line = super::core::print_line(&vm.heap, args);
    vm.out.write_err(line.as_bytes());
    Ok(Value::Nil)
}

/// `exit(code = 0)`: ends the program now with that status. Output printed so
/// far is flushed; `finally` blocks do not run (Go's os.Exit, Python's os._exit).
fn exit(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("exit", args, 0, 1)?;
    let code = match args.first() {
        None => 0,
        Some(Value::Int(c)) if (0..=255).contains(c) => *c as i32,
        Some(Value::Int(c)) => return err(ErrorKind::Value, format!("exit() status must be 0 to 255, not {c}")),
        Some(&v) => return err(ErrorKind::Type, format!("exit() needs an int status, not {}", vm.heap.type_name(v))),
    };
    Ok(Ret::Block(Blocking::Exit(code)))
}

/// An environment variable's name: not empty, no `=` or NUL.
fn var_name(vm: &Vm, name: &str, v: Value) -> Res<String> {
    let s = text_arg(&vm.heap, name, "a string name", v)?;
    if s.is_empty() || s.contains(['=', '\0']) {
        return err(ErrorKind::Value, format!("{name}() bad variable name {s:?}"));
    }
    Ok(s)
}

/// `os.env(name, default = nil)`: the variable's value, or `default` when it
/// is not set (or not UTF-8).
fn env(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.env", args, 1, 2)?;
    let name = var_name(vm, "os.env", args[0])?;
    Ok(match std::env::var(&name) {
        Ok(v) => vm.heap.string(v),
        Err(_) => args.get(1).copied().unwrap_or(Value::Nil),
    })
}

/// `os.environ()`: every variable, in the order the OS lists them (values
/// that are not UTF-8 are decoded lossily).
fn environ(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.environ", args, 0, 0)?;
    let vars: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    let mut m = crate::vm::value::new_map(vars.len());
    for (k, v) in vars {
        let v = vm.heap.string(v);
        m.insert(crate::vm::Key::Str(k.into()), v);
    }
    Ok(Value::Obj(vm.heap.alloc(crate::vm::Obj::Map(m))))
}

/// `os.setenv(name, value)`: for this process and processes it starts later.
fn setenv(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.setenv", args, 2, 2)?;
    let name = var_name(vm, "os.setenv", args[0])?;
    let value = text_arg(&vm.heap, "os.setenv", "a string value", args[1])?;
    if value.contains('\0') {
        return err(ErrorKind::Value, "os.setenv() value cannot contain a NUL byte");
    }
    // std serialises its own environment reads and writes (the I/O workers read
    // $TMPDIR through it), so this does not race them.
    std::env::set_var(name, value);
    Ok(Value::Nil)
}

fn unsetenv(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.unsetenv", args, 1, 1)?;
    let name = var_name(vm, "os.unsetenv", args[0])?;
    std::env::remove_var(name);
    Ok(Value::Nil)
}

fn cwd(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.cwd", args, 0, 0)?;
    match std::env::current_dir() {
        Ok(p) => Ok(vm.heap.string(p.to_string_lossy().into_owned())),
        Err(e) => err(ErrorKind::Io, format!("cannot read the current directory: {}", crate::os::io_reason(&e))),
    }
}

/// `os.chdir(path)`: the process's working directory (shared by every fiber).
fn chdir(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = super::fs::path_arg(vm, "os.chdir", args, 1)?;
    let work = move || std::env::set_current_dir(&path).map_err(|e| super::fs::fail("change directory to", &path, &e));
    Ok(io(work, |_, ()| Value::Nil))
}

/// `os.time()`: wall-clock seconds since the Unix epoch.
fn time(_: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.time", args, 0, 0)?;
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    Ok(Value::Float(d.as_secs_f64()))
}

fn hostname(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.hostname", args, 0, 0)?;
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return err(ErrorKind::Io, format!("cannot read the host name: {}", crate::os::io_reason(&e)));
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(vm.heap.string(String::from_utf8_lossy(&buf[..end]).into_owned()))
}

fn pid(_: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.pid", args, 0, 0)?;
    Ok(Value::Int(i64::from(std::process::id())))
}

/// `os.executable()`: the absolute path of the running csp binary (Go's
/// `os.Executable`, Python's `sys.executable`), to start csp again.
fn executable(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("os.executable", args, 0, 0)?;
    let path = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return err(ErrorKind::Io, format!("cannot find csp's executable: {}", crate::os::io_reason(&e))),
    };
    match path.into_os_string().into_string() {
        Ok(s) => Ok(vm.heap.string(s)),
        Err(p) => err(ErrorKind::Io, format!("csp's executable path is not UTF-8: {}", p.to_string_lossy())),
    }
}
