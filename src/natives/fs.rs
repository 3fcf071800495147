//! `std/fs`: files and directories. Every function runs its disk work on the
//! I/O worker pool, so only the calling fiber waits; a failure is an `io` error
//! naming the path and the OS reason (`cannot read /x: No such file or directory`).

use super::args::{arity, text_arg};
use crate::os::io_reason;
use crate::vm::builtin::{io, io_kind};
use crate::vm::read_cap::ReadCap;
use crate::vm::{err, ErrorKind, Fiber, Heap, NativeFn, Res, Ret, Value, Vm};
use std::path::Path;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("fs.read", NativeFn::Full(read));
    vm.define_hidden("fs.read_bytes", NativeFn::Full(read_bytes));
    vm.define_hidden("fs.write", NativeFn::Full(write));
    vm.define_hidden("fs.append", NativeFn::Full(append));
    vm.define_hidden("fs.exists", NativeFn::Full(|vm, _, a| probe(vm, a, "fs.exists", |_| true)));
    vm.define_hidden("fs.is_file", NativeFn::Full(|vm, _, a| probe(vm, a, "fs.is_file", |m| m.is_file())));
    vm.define_hidden("fs.is_dir", NativeFn::Full(|vm, _, a| probe(vm, a, "fs.is_dir", |m| m.is_dir())));
    vm.define_hidden("fs.list", NativeFn::Full(list));
    vm.define_hidden("fs.mkdir", NativeFn::Full(mkdir));
    vm.define_hidden("fs.mkdir_all", NativeFn::Full(mkdir_all));
    vm.define_hidden("fs.remove", NativeFn::Full(remove));
    vm.define_hidden("fs.remove_all", NativeFn::Full(remove_all));
    vm.define_hidden("fs.rename", NativeFn::Full(rename));
    vm.define_hidden("fs.copy", NativeFn::Full(copy));
    vm.define_hidden("fs.stat", NativeFn::Full(stat));
    vm.define_hidden("fs.temp_dir", NativeFn::Full(|vm, _, a| temp(vm, a, "fs.temp_dir")));
    vm.define_hidden("fs.temp_file", NativeFn::Full(|vm, _, a| temp(vm, a, "fs.temp_file")));
    super::walk::register(vm);
}

/// The path argument of a function taking `n` arguments, the first a path.
pub(super) fn path_arg(vm: &Vm, name: &str, args: &[Value], n: usize) -> Res<String> {
    arity(name, args, n, n)?;
    let path = text_arg(&vm.heap, name, "a string path", args[0])?;
    vm.files.check(name, &path)?;
    Ok(path)
}

/// `cannot VERB PATH: REASON`.
pub(super) fn fail(verb: &str, path: &str, e: &std::io::Error) -> String {
    format!("cannot {verb} {path}: {}", io_reason(e))
}

/// A whole file, refused when it is longer than `cap` allows (a string's
/// 256 MiB, or the memory `--max-memory` leaves) before it is read into memory.
pub(crate) fn read_whole(path: &str, cap: ReadCap) -> Result<Vec<u8>, (ErrorKind, String)> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| (ErrorKind::Io, fail("read", path, &e)))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > cap.bytes as u64 {
        return Err(cap.error(path));
    }
    let mut out = Vec::with_capacity(size as usize);
    // A file that grows while read (or reports no size, as /proc does) stops at
    // the cap too.
    file.take(cap.bytes as u64 + 1).read_to_end(&mut out).map_err(|e| (ErrorKind::Io, fail("read", path, &e)))?;
    if out.len() > cap.bytes {
        return Err(cap.error(path));
    }
    Ok(out)
}

fn nil(_: &mut Heap, _: ()) -> Value {
    Value::Nil
}

fn text(heap: &mut Heap, s: String) -> Value {
    heap.string(s)
}

fn boolean(_: &mut Heap, b: bool) -> Value {
    Value::Bool(b)
}

/// `fs.read(path)`: the file's text; a file that is not UTF-8 is a `value`
/// error (binary data is for `fs.read_bytes`).
fn read(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.read", args, 1)?;
    let cap = vm.heap.read_cap()?;
    let work = move || {
        let bytes = read_whole(&path, cap)?;
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let msg =
                format!("cannot read {path} as text: not valid UTF-8 at byte {at} (use fs.read_bytes for binary data)");
            (ErrorKind::Value, msg)
        })
    };
    Ok(io_kind(work, text))
}

/// What `fs.write`/`fs.append` write: the one place that decides which values
/// are data (strings now; bytes join here).
fn data_arg(vm: &Vm, name: &str, v: Value) -> Res<Vec<u8>> {
    super::bytes::data_arg(&vm.heap, name, v).map(<[u8]>::to_vec)
}

/// `fs.read_bytes(path)`: the file's contents as bytes.
fn read_bytes(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.read_bytes", args, 1)?;
    let cap = vm.heap.read_cap()?;
    Ok(io_kind(move || read_whole(&path, cap), |heap, b| heap.bytes(b)))
}

/// `fs.write(path, text)`: creates or replaces the file.
fn write(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.write", args, 2)?;
    let data = data_arg(vm, "fs.write", args[1])?;
    Ok(io(move || std::fs::write(&path, data).map_err(|e| fail("write", &path, &e)), nil))
}

/// `fs.append(path, text)`: appends, creating the file if missing.
fn append(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    use std::io::Write;
    let path = path_arg(vm, "fs.append", args, 2)?;
    let data = data_arg(vm, "fs.append", args[1])?;
    let work = move || {
        let f = std::fs::OpenOptions::new().append(true).create(true).open(&path);
        f.and_then(|mut f| f.write_all(&data)).map_err(|e| fail("append to", &path, &e))
    };
    Ok(io(work, nil))
}

/// `fs.exists`, `fs.is_file`, `fs.is_dir`: false when the path cannot be
/// looked at, whatever the reason (symbolic links are followed).
fn probe(vm: &mut Vm, args: &[Value], name: &str, test: fn(&std::fs::Metadata) -> bool) -> Res<Ret> {
    let path = path_arg(vm, name, args, 1)?;
    Ok(io(move || Ok(std::fs::metadata(&path).is_ok_and(|m| test(&m))), boolean))
}

/// The names in a directory, sorted (not `.` and `..`).
pub(super) fn names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        out.push(e?.file_name().to_string_lossy().into_owned());
    }
    out.sort_unstable();
    Ok(out)
}

/// `fs.list(dir)`: the sorted names of the directory's entries.
fn list(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.list", args, 1)?;
    let to_list = |heap: &mut Heap, names: Vec<String>| {
        let items = names.into_iter().map(|n| heap.string(n)).collect();
        heap.list(items)
    };
    Ok(io(move || names(Path::new(&path)).map_err(|e| fail("list", &path, &e)), to_list))
}

fn mkdir(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.mkdir", args, 1)?;
    Ok(io(move || std::fs::create_dir(&path).map_err(|e| fail("create directory", &path, &e)), nil))
}

fn mkdir_all(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.mkdir_all", args, 1)?;
    Ok(io(move || std::fs::create_dir_all(&path).map_err(|e| fail("create directory", &path, &e)), nil))
}

/// `fs.remove(path)`: a file, a symbolic link or an empty directory.
fn remove(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.remove", args, 1)?;
    let work = move || {
        let m = std::fs::symlink_metadata(&path).map_err(|e| fail("remove", &path, &e))?;
        let r = if m.is_dir() { std::fs::remove_dir(&path) } else { std::fs::remove_file(&path) };
        r.map_err(|e| fail("remove", &path, &e))
    };
    Ok(io(work, nil))
}

/// `fs.remove_all(path)`: a whole tree; a missing path is fine (Go's RemoveAll).
fn remove_all(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let path = path_arg(vm, "fs.remove_all", args, 1)?;
    let work = move || {
        let r = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
        };
        r.map_err(|e| fail("remove", &path, &e))
    };
    Ok(io(work, nil))
}

/// The two path arguments of `fs.rename` and `fs.copy`.
fn two_paths(vm: &Vm, name: &str, args: &[Value]) -> Res<(String, String)> {
    let from = path_arg(vm, name, args, 2)?;
    let to = text_arg(&vm.heap, name, "a string path", args[1])?;
    vm.files.check(name, &to)?;
    Ok((from, to))
}

fn rename(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let (from, to) = two_paths(vm, "fs.rename", args)?;
    let work = move || std::fs::rename(&from, &to).map_err(|e| fail("rename", &format!("{from} to {to}"), &e));
    Ok(io(work, nil))
}

/// `fs.copy(from, to)`: copies a file's bytes and permissions; the number of
/// bytes copied.
fn copy(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let (from, to) = two_paths(vm, "fs.copy", args)?;
    let work = move || {
        let mut src = std::fs::File::open(&from).map_err(|e| fail("read", &from, &e))?;
        let meta = src.metadata().map_err(|e| fail("read", &from, &e))?;
        if meta.is_dir() {
            return Err(format!("cannot copy {from}: it is a directory (fs.copy copies files)"));
        }
        let mut dst = std::fs::File::create(&to).map_err(|e| fail("write", &to, &e))?;
        let n = std::io::copy(&mut src, &mut dst).map_err(|e| fail("copy", &format!("{from} to {to}"), &e))?;
        dst.set_permissions(meta.permissions()).map_err(|e| fail("write", &to, &e))?;
        Ok(n as i64)
    };
    Ok(io(work, |_, n| Value::Int(n)))
}

/// The `kind` of an entry: "file", "dir", "symlink" or "other".
pub(super) fn kind_name(t: std::fs::FileType) -> &'static str {
    if t.is_symlink() {
        "symlink"
    } else if t.is_dir() {
        "dir"
    } else if t.is_file() {
        "file"
    } else {
        "other"
    }
}

/// What `fs.stat` found, moved from the worker to the VM's thread.
struct Stat {
    size: u64,
    modified: f64,
    kind: &'static str,
    mode: u32,
}

/// `fs.stat(path)`: `{size, modified, kind, mode}` of what the path names
/// (symbolic links are followed, like Go's os.Stat).
fn stat(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    use std::os::unix::fs::PermissionsExt;
    let path = path_arg(vm, "fs.stat", args, 1)?;
    let work = move || {
        let m = std::fs::metadata(&path).map_err(|e| fail("stat", &path, &e))?;
        let modified = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        let mode = m.permissions().mode() & 0o7777;
        Ok(Stat {
            size: m.len(),
            modified: modified.map_or(0.0, |d| d.as_secs_f64()),
            kind: kind_name(m.file_type()),
            mode,
        })
    };
    let done = |heap: &mut Heap, s: Stat| {
        let kind = heap.str(s.kind);
        let fields = [
            ("size", Value::Int(s.size as i64)),
            ("modified", Value::Float(s.modified)),
            ("kind", kind),
            ("mode", Value::Int(s.mode as i64)),
        ];
        record(heap, &fields)
    };
    Ok(io(work, done))
}

/// A map of string keys to values.
pub(crate) fn record(heap: &mut Heap, fields: &[(&str, Value)]) -> Value {
    let mut m = crate::vm::value::new_map(fields.len());
    for (k, v) in fields {
        m.insert(crate::vm::Key::Str((*k).into()), *v);
    }
    Value::Obj(heap.alloc(crate::vm::Obj::Map(m)))
}

/// `fs.temp_dir(prefix = "csp")`, `fs.temp_file(prefix = "csp")`: a new
/// directory (mode 700) or empty file (mode 600) named `PREFIX-RANDOM` in the
/// system temp directory ($TMPDIR, else /tmp); its path.
fn temp(vm: &mut Vm, args: &[Value], name: &'static str) -> Res<Ret> {
    arity(name, args, 0, 1)?;
    let prefix = match args.first() {
        Some(&v) => text_arg(&vm.heap, name, "a string prefix", v)?,
        None => "csp".to_string(),
    };
    if prefix.contains('/') || prefix.contains('\0') {
        return err(ErrorKind::Value, format!("{name}() prefix cannot contain '/': {prefix:?}"));
    }
    vm.files.check(name, &std::env::temp_dir().join(&prefix).to_string_lossy())?;
    let is_dir = name == "fs.temp_dir";
    Ok(io(move || make_temp(&prefix, is_dir), text))
}

fn make_temp(prefix: &str, is_dir: bool) -> Result<String, String> {
    use std::hash::{BuildHasher, Hasher};
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let root = std::env::temp_dir();
    let mut last = None;
    for attempt in 0..100u64 {
        // RandomState is seeded randomly per process and per call.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(attempt);
        h.write_u32(std::process::id());
        let path = root.join(format!("{prefix}-{:012x}", h.finish() & 0xffff_ffff_ffff));
        let made = if is_dir {
            std::fs::DirBuilder::new().mode(0o700).create(&path)
        } else {
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path).map(drop)
        };
        match made {
            Ok(()) => return Ok(path.to_string_lossy().into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(fail("create a temporary file in", &root.to_string_lossy(), &e)),
        }
    }
    let e = last.unwrap_or_else(|| std::io::Error::other("no free name"));
    Err(fail("create a temporary file in", &root.to_string_lossy(), &e))
}
