//! `fs.walk` and `fs.glob`: whole-tree work done in one worker job each, so a
//! tree of 100,000 files costs one wait, not one per entry.

use super::fs::{fail, kind_name, path_arg};
use crate::vm::builtin::io;
use crate::vm::{err, ErrorKind, Fiber, Heap, NativeFn, Res, Ret, Value, Vm};
use std::path::{Path, PathBuf};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("fs.walk", NativeFn::Full(walk));
    vm.define_hidden("fs.glob", NativeFn::Full(glob));
}

/// One entry found by `fs.walk`.
struct Entry {
    path: String,
    kind: &'static str,
    size: u64,
}

/// `fs.walk(root)`: every entry under `root` (not `root` itself), depth first,
/// sorted by name within each directory; symbolic links are listed, not followed.
fn walk(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let root = path_arg(vm, "fs.walk", args, 1)?;
    let work = move || {
        let mut out = Vec::new();
        visit(Path::new(&root), &mut out)?;
        Ok(out)
    };
    Ok(io(work, entries))
}

fn visit(dir: &Path, out: &mut Vec<Entry>) -> Result<(), String> {
    let shown = || dir.to_string_lossy().into_owned();
    let read = std::fs::read_dir(dir).map_err(|e| fail("list", &shown(), &e))?;
    let mut items = Vec::new();
    for e in read {
        let e = e.map_err(|e| fail("list", &shown(), &e))?;
        items.push((e.file_name(), e.path()));
    }
    items.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (_, path) in items {
        // Without following symbolic links.
        let m = std::fs::symlink_metadata(&path).map_err(|e| fail("stat", &path.to_string_lossy(), &e))?;
        let kind = kind_name(m.file_type());
        out.push(Entry { path: path.to_string_lossy().into_owned(), kind, size: m.len() });
        if kind == "dir" {
            visit(&path, out)?;
        }
    }
    Ok(())
}

/// The entries as a list of `{path, kind, size}` maps (keys and kinds shared).
fn entries(heap: &mut Heap, found: Vec<Entry>) -> Value {
    let keys: [crate::vm::Str; 3] = ["path".into(), "kind".into(), "size".into()];
    let mut kinds: Vec<(&'static str, Value)> = Vec::new();
    let mut items = Vec::with_capacity(found.len());
    for e in found {
        let kind = match kinds.iter().find(|(k, _)| *k == e.kind) {
            Some(&(_, v)) => v,
            None => {
                let v = heap.str(e.kind);
                kinds.push((e.kind, v));
                v
            }
        };
        let mut m = crate::vm::value::new_map(3);
        m.insert(crate::vm::Key::Str(keys[0].clone()), heap.string(e.path));
        m.insert(crate::vm::Key::Str(keys[1].clone()), kind);
        m.insert(crate::vm::Key::Str(keys[2].clone()), Value::Int(e.size as i64));
        items.push(Value::Obj(heap.alloc(crate::vm::Obj::Map(m))));
    }
    heap.list(items)
}

/// `fs.glob(pattern)`: the sorted paths matching `*`, `?`, `[...]` (`[!...]`
/// negates) and `**` (any number of directories). Wildcards do not match a
/// leading dot (like a shell and Python); unreadable directories are skipped
/// (like Go and Python).
fn glob(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    super::args::arity("fs.glob", args, 1, 1)?;
    let pattern = super::args::text_arg(&vm.heap, "fs.glob", "a string pattern", args[0])?;
    if let Err(e) = glob::Pattern::new(&pattern) {
        return err(ErrorKind::Value, format!("fs.glob() bad pattern {pattern:?}: {} (at {})", e.msg, e.pos));
    }
    let opts =
        glob::MatchOptions { case_sensitive: true, require_literal_separator: true, require_literal_leading_dot: true };
    // Matches outside the folders a host allows are left out, as if absent.
    let access = vm.files.clone();
    let work = move || {
        let paths = glob::glob_with(&pattern, opts).map_err(|e| e.msg.to_string())?;
        let allowed = |p: &PathBuf| access.check("fs.glob", &p.to_string_lossy()).is_ok();
        let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).filter(allowed).collect();
        found.sort_unstable();
        Ok(found.into_iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>())
    };
    let done = |heap: &mut Heap, paths: Vec<String>| {
        let items = paths.into_iter().map(|p| heap.string(p)).collect();
        heap.list(items)
    };
    Ok(io(work, done))
}

#[cfg(test)]
mod tests {
    #[test]
    fn record_has_fields_in_order() {
        let mut heap = crate::vm::Heap::new();
        let v = crate::natives::fs::record(&mut heap, &[("a", crate::vm::Value::Int(1)), ("b", crate::vm::Value::Nil)]);
        assert_eq!(crate::display::repr(&heap, v), "{\"a\": 1, \"b\": nil}");
    }
}
