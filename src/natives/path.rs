//! `std/path`: Unix path strings, computed without touching the disk (only
//! `path.abs` reads the current directory). The functions follow Go's `path`
//! where Python and Go agree; see docs/os.md for each choice.

use super::args::{arity, text_arg};
use crate::vm::{err, ErrorKind, NativeFn, Res, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("path.join", NativeFn::Value(join));
    vm.define_hidden("path.base", NativeFn::Value(|vm, a| unary(vm, a, "path.base", |p| base(p).to_string())));
    vm.define_hidden("path.dir", NativeFn::Value(|vm, a| unary(vm, a, "path.dir", dir)));
    vm.define_hidden("path.ext", NativeFn::Value(|vm, a| unary(vm, a, "path.ext", |p| ext(p).to_string())));
    vm.define_hidden("path.stem", NativeFn::Value(|vm, a| unary(vm, a, "path.stem", stem)));
    vm.define_hidden("path.normalize", NativeFn::Value(|vm, a| unary(vm, a, "path.normalize", normalize)));
    vm.define_hidden("path.abs", NativeFn::Value(abs));
    vm.define_hidden("path.split", NativeFn::Value(split));
    vm.define_hidden("path.is_abs", NativeFn::Value(is_abs));
}

/// The one string argument of `name`.
fn path_arg(vm: &Vm, args: &[Value], name: &str) -> Res<String> {
    arity(name, args, 1, 1)?;
    text_arg(&vm.heap, name, "a string path", args[0])
}

fn unary(vm: &mut Vm, args: &[Value], name: &str, f: impl Fn(&str) -> String) -> Res<Value> {
    let p = path_arg(vm, args, name)?;
    Ok(vm.heap.string(f(&p)))
}

/// `path.join(a, b, ...)`: Python's `os.path.join`: a `/` between parts, an
/// absolute part starts over; the result is not normalised.
fn join(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("path.join", args, 1, usize::MAX)?;
    let mut out = String::new();
    for &a in args {
        let part = text_arg(&vm.heap, "path.join", "string arguments", a)?;
        if part.starts_with('/') {
            out = part;
        } else {
            if !out.is_empty() && !out.ends_with('/') {
                out.push('/');
            }
            out.push_str(&part);
        }
    }
    Ok(vm.heap.string(out))
}

/// `p` without trailing slashes (`/` stays `/`).
fn trimmed(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() && !p.is_empty() {
        "/"
    } else {
        t
    }
}

/// The last element: trailing slashes ignored, `""` → `.`, `/` → `/`.
pub fn base(p: &str) -> &str {
    let t = trimmed(p);
    match t {
        "" => ".",
        "/" => "/",
        _ => t.rsplit('/').next().unwrap_or(t),
    }
}

/// Everything but the last element, normalised (`.` if there is none).
pub fn dir(p: &str) -> String {
    let t = trimmed(p);
    match t.rfind('/') {
        _ if t == "/" => "/".to_string(),
        None => ".".to_string(),
        Some(0) => "/".to_string(),
        Some(i) => normalize(&t[..i]),
    }
}

/// The extension of the last element, dot included; leading dots do not start
/// one (`.bashrc` has none).
pub fn ext(p: &str) -> &str {
    let b = base(p);
    let body = b.trim_start_matches('.');
    match body.rfind('.') {
        Some(i) => &body[i..],
        None => "",
    }
}

/// The last element without its extension.
fn stem(p: &str) -> String {
    let b = base(p);
    b[..b.len() - ext(p).len()].to_string()
}

/// Go's `path.Clean`: one slash between elements, no `.`, `..` resolved
/// lexically (kept at the start of a relative path, dropped after the root);
/// `""` becomes `.`.
pub fn normalize(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for e in p.split('/') {
        match e {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            e => parts.push(e),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_string(),
        (false, false) => body,
    }
}

/// `path.abs(p)`: joined to the current directory and normalised; symbolic
/// links are not resolved.
fn abs(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    let p = path_arg(vm, args, "path.abs")?;
    let full = if p.starts_with('/') {
        normalize(&p)
    } else {
        match std::env::current_dir() {
            Ok(cwd) => normalize(&format!("{}/{p}", cwd.to_string_lossy())),
            Err(e) => {
                return err(ErrorKind::Io, format!("cannot read the current directory: {}", crate::os::io_reason(&e)))
            }
        }
    };
    Ok(vm.heap.string(full))
}

/// `path.split(p)`: `[path.dir(p), path.base(p)]`.
fn split(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    let p = path_arg(vm, args, "path.split")?;
    let (d, b) = (vm.heap.string(dir(&p)), vm.heap.str(base(&p)));
    Ok(vm.heap.list(vec![d, b]))
}

fn is_abs(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    let p = path_arg(vm, args, "path.is_abs")?;
    Ok(Value::Bool(p.starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_like_go() {
        let cases = [
            ("", "."),
            (".", "."),
            ("a/b/../c", "a/c"),
            ("/../a", "/a"),
            ("../../a/..", "../.."),
            ("a//b/./c/", "a/b/c"),
            ("/", "/"),
            ("//x", "/x"),
            ("a/..", "."),
            ("./..", ".."),
        ];
        for (p, want) in cases {
            assert_eq!(normalize(p), want, "normalize({p:?})");
        }
    }

    #[test]
    fn elements() {
        assert_eq!((base("/a/b/"), base(""), base("/"), base("a")), ("b", ".", "/", "a"));
        assert_eq!(
            (dir("/a/b/"), dir("a"), dir("/a"), dir("/"), dir("")),
            ("/a".into(), ".".into(), "/".into(), "/".into(), ".".into())
        );
        assert_eq!((ext("a.tar.gz"), ext(".bashrc"), ext("a"), ext("x/.a.b"), ext("a.")), (".gz", "", "", ".b", "."));
        assert_eq!((stem("x/a.tar.gz"), stem(".bashrc"), stem("a")), ("a.tar".into(), ".bashrc".into(), "a".into()));
    }
}
