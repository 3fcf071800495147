//! `import`: finding a module, compiling it once per VM, and binding its alias.
//! A module's top level is compiled into a Proto that runs at the first `import`
//! executed, stores the map of its exports in a global and returns it; later imports
//! read that global. `alias.name` compiles straight to the export's global.

use super::{CompileError, Compiler, Unit};
use crate::bytecode::{Op, ProtoRef};
use crate::source::SourceFile;
use crate::source::Span;
use crate::syntax::ast::{Expr, ExprKind, Ident, Stmt, StmtKind};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

include!(concat!(env!("OUT_DIR"), "/std_modules.rs"));

/// The source of the standard module `std/NAME` (for the language server).
pub fn std_source(name: &str) -> Option<&'static str> {
    STD_MODULES.iter().find(|(n, _)| *n == name).map(|(_, src)| *src)
}

/// A compiled module.
pub struct Module {
    /// `std/NAME`, or the canonical path of the file.
    pub key: String,
    /// Prefix of its globals (see `Unit::prefix`); the global named just this holds
    /// its exports map once it has run.
    pub prefix: String,
    pub proto: ProtoRef,
    /// Top-level names, in source order.
    pub exports: Vec<String>,
}

/// The cache key of a file on disk (None for the REPL, stdin, generated code).
pub(crate) fn file_key(file: &SourceFile) -> Option<String> {
    let p = Path::new(&file.name);
    p.is_file().then(|| std::fs::canonicalize(p).ok()).flatten().map(|p| p.to_string_lossy().into_owned())
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// A module key for people: a file's path relative to the working directory.
fn shown(key: &str) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    Path::new(key).strip_prefix(&cwd).map_or_else(|_| key.to_string(), |p| p.to_string_lossy().into_owned())
}

/// The name `import PATH` binds without `as`: the file name without `.csp`.
fn default_alias(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.strip_suffix(".csp").unwrap_or(base).to_string()
}

impl Compiler<'_> {
    /// Compiles every top-level import before the code that may use its alias.
    /// A top-level `let` or `fn` may not reuse an alias (`alias.name` could not
    /// mean both); in the REPL, a later entry's definition replaces an old import.
    pub(crate) fn load_imports(&mut self, stmts: &[Stmt]) {
        let defined: std::collections::HashSet<String> = super::top_names(stmts).into_iter().collect();
        self.imports.retain(|alias, _| !defined.contains(alias));
        for s in stmts {
            if let StmtKind::Import { path, alias } = &s.kind {
                self.span = s.span;
                let name = alias.as_ref().map_or_else(|| default_alias(path), |a| a.name.clone());
                let ident = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ident {
                    let help = format!("name it: `import {path:?} as some_name`");
                    self.error_help(s.span, format!("'{name}' is not a name to bind the module to"), help);
                }
                if defined.contains(&name) {
                    let help = "rename the variable, or import with `as` another name";
                    self.error_help(s.span, format!("'{name}' is both an import and a top-level name"), help);
                }
                if let Some(m) = self.load_module(path, s.span) {
                    self.imports.insert(name.clone(), m);
                }
                self.top.insert(name);
            }
        }
    }

    /// Runs the module unless it already ran, then binds the alias to its exports map.
    pub(crate) fn import_stmt(&mut self, path: &str, alias: Option<&Ident>, span: Span) {
        if !self.at_top_level() {
            self.error_help(span, "`import` is only allowed at the top level of a file", "move it to the top");
            return;
        }
        let name = alias.map_or_else(|| default_alias(path), |a| a.name.clone());
        let Some(m) = self.imports.get(&name).cloned() else {
            return; // Its error was reported when it was loaded.
        };
        let t = self.alloc();
        let slot = self.global(&m.prefix);
        self.emit(Op::GetGlobal { dst: t, idx: slot });
        let skip = self.emit(Op::JmpIf { src: t, target: 0 });
        // A module imported twice by one file is embedded once.
        let f = self.fs();
        let idx = match f.protos.iter().position(|p| p.as_ptr() == m.proto.as_ptr()) {
            Some(i) => i as u16,
            None => {
                f.protos.push(m.proto);
                let n = f.protos.len();
                self.table_index(n, "nested functions and imports")
            }
        };
        self.emit(Op::Closure { dst: t, proto: idx });
        self.emit(Op::Call { base: t, argc: 0 });
        self.patch(skip);
        let g = self.top_global(&name);
        self.emit(Op::SetGlobal { src: t, idx: g });
        self.free_to(t);
    }

    /// Does `e` name an imported module (not shadowed by a local)?
    pub(crate) fn is_module(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(n) => {
                self.imports.contains_key(n) && !self.funcs.iter().any(|f| super::find_local(f, n).is_some())
            }
            _ => false,
        }
    }

    /// The key of the module `e` names (`std/isolate`), if it names one.
    pub(crate) fn module_key(&self, e: &Expr) -> Option<&str> {
        let ExprKind::Name(n) = &e.kind else { return None };
        self.is_module(e).then(|| self.imports[n].key.as_str())
    }

    /// `alias(...)`: a module is not a function. Most often the import hid a
    /// builtin of the same name (`import "std/hex"` then `hex(255)`).
    pub(crate) fn module_called(&mut self, f: &Expr) {
        let ExprKind::Name(alias) = &f.kind else { return };
        let m = self.imports[alias].clone();
        let msg = format!("'{alias}' is the module {}, not a function", shown(&m.key));
        let builtin = self.vm.global_names.get(alias.as_str()).and_then(|&i| self.vm.globals.get(i as usize)).is_some_and(
            |&v| matches!(v, crate::vm::Value::Obj(h) if matches!(self.vm.heap.get(h), crate::vm::object::Obj::Native(_))),
        );
        let help = if builtin {
            format!("the import hides the builtin {alias}(); import the module under another name: `import \"{}\" as {alias}_mod`", shown(&m.key))
        } else {
            format!(
                "call one of its functions: {}",
                m.exports.iter().take(4).map(|e| format!("{alias}.{e}()")).collect::<Vec<_>>().join(", ")
            )
        };
        self.error_help(f.span, msg, help);
    }

    /// The export's global when `recv.name` reads a member of an imported module.
    pub(crate) fn module_member(&mut self, recv: &Expr, name: &Ident) -> Option<u16> {
        if !self.is_module(recv) {
            return None;
        }
        let ExprKind::Name(alias) = &recv.kind else {
            return None;
        };
        let m = self.imports[alias].clone();
        if !m.exports.contains(&name.name) {
            let near = crate::suggest::closest(&name.name, m.exports.iter().map(String::as_str));
            let help = match near {
                Some(near) => format!("did you mean `{alias}.{near}`?"),
                None if name.name.starts_with('_') => {
                    format!("names starting with `_` are private to {}", shown(&m.key))
                }
                None => {
                    let more = if m.exports.len() > 12 { ", ..." } else { "" };
                    let listed = m.exports.iter().take(12).cloned().collect::<Vec<_>>().join(", ");
                    format!("{} exports: {listed}{more}", shown(&m.key))
                }
            };
            self.error_help(name.span, format!("module '{alias}' has no '{}'", name.name), help);
            return Some(0);
        }
        Some(self.global(&format!("{}{}", m.prefix, name.name)))
    }

    /// Finds, parses and compiles a module once; None after reporting why not.
    fn load_module(&mut self, path: &str, span: Span) -> Option<Rc<Module>> {
        let (key, file) = self.find_module(path, span)?;
        if let Some(m) = self.vm.loader.modules.get(&key) {
            return Some(m.clone());
        }
        if let Some(at) = self.vm.loader.importing.iter().position(|k| *k == key) {
            let mut cycle: Vec<String> = self.vm.loader.importing[at..].iter().map(|k| shown(k)).collect();
            cycle.push(shown(&key));
            let help = "a module cannot import, directly or not, a module that imports it";
            self.error_help(span, format!("import cycle: {}", cycle.join(" -> ")), help);
            return None;
        }
        let program = match crate::syntax::parse(&file.src) {
            Ok(p) => p,
            Err(errs) => {
                let errs = errs.into_iter().map(|e| CompileError {
                    span: e.span,
                    message: e.message,
                    help: e.help,
                    code: "csp::syntax",
                    file: Some(file.clone()),
                });
                return self.module_failed(path, span, errs.collect());
            }
        };
        let prefix = format!("{key}::");
        let unit = Unit { prefix: prefix.clone(), module: true, key: Some(key.clone()), repl: false };
        let compiled = super::compile_unit(self.vm, file.clone(), &program, unit);
        let proto = match compiled {
            Ok(p) => p,
            Err(errs) => {
                let errs = errs.into_iter().map(|e| CompileError { file: e.file.or_else(|| Some(file.clone())), ..e });
                return self.module_failed(path, span, errs.collect());
            }
        };
        let exports = super::exported_names(&program.stmts);
        let m = Rc::new(Module { key: key.clone(), prefix, proto, exports });
        self.vm.loader.modules.insert(key, m.clone());
        Some(m)
    }

    fn module_failed(&mut self, path: &str, span: Span, errs: Vec<CompileError>) -> Option<Rc<Module>> {
        self.errors.extend(errs);
        self.error(span, format!("module '{path}' has errors (reported above)"));
        None
    }

    /// The cache key and source of the module `path` names.
    fn find_module(&mut self, path: &str, span: Span) -> Option<(String, Rc<SourceFile>)> {
        if let Some(name) = path.strip_prefix("std/") {
            let Some((_, src)) = STD_MODULES.iter().find(|(n, _)| *n == name) else {
                let names: Vec<&str> = STD_MODULES.iter().map(|(n, _)| *n).collect();
                let help = format!("the standard modules are std/{}", names.join(", std/"));
                self.error_help(span, format!("no standard module '{path}'"), help);
                return None;
            };
            // An embedding host may offer a script only some modules; std's
            // own imports among themselves are not the script's.
            let offered = self.vm.loader.std_offered.as_ref().is_none_or(|o| o.iter().any(|m| m == name));
            if !offered && !self.file.std {
                let help = "the program that runs this script does not offer it (docs/embedding.md)";
                self.error_help(span, format!("module '{path}' is not available here"), help);
                return None;
            }
            return Some((path.to_string(), Rc::new(SourceFile::std(format!("{path}.csp"), *src))));
        }
        let relative = path.starts_with("./") || path.starts_with("../") || path.starts_with('/');
        let pkg = path.split('/').next().unwrap_or(path);
        if !relative && path.ends_with(".csp") {
            let help = format!("a file's path starts with `./`, `../` or `/`: `import \"./{path}\"`");
            self.error_help(span, format!("cannot import '{path}'"), help);
            return None;
        }
        if !relative && !crate::pkg::manifest::valid_name(pkg) {
            let help = "write `std/NAME` for the standard library, `NAME` or `NAME/sub/mod` for a package \
                        (docs/packages.md), or a path starting with `./`, `../` or `/`";
            self.error_help(span, format!("cannot import '{path}'"), help);
            return None;
        }
        if self.vm.loader.std_only {
            let help = "only `std/NAME` modules can be imported here";
            self.error_help(span, format!("cannot import '{path}' in the sandbox"), help);
            return None;
        }
        let full = if relative {
            let dir = Path::new(&self.file.name).parent().unwrap_or(Path::new(""));
            normalize(&dir.join(path))
        } else {
            self.package_file(path, pkg, span)?
        };
        if self.vm.files.check("import", &full.to_string_lossy()).is_err() {
            let help = "the program that runs this script allows only files under some folders (docs/embedding.md)";
            self.error_help(span, format!("cannot import '{path}': access denied"), help);
            return None;
        }
        let name = full.to_string_lossy().into_owned();
        if let Some(b) = &self.vm.loader.bundle {
            let Some(src) = b.files.get(&name).cloned() else {
                let help = format!("{name} was not bundled into this executable");
                self.error_help(span, format!("cannot find module '{path}'"), help);
                return None;
            };
            return Some((name.clone(), Rc::new(SourceFile::new(name, src))));
        }
        let src = match std::fs::read_to_string(&full) {
            Ok(s) => s,
            Err(e) => {
                let help = format!("looked for {} ({e})", full.display());
                self.error_help(span, format!("cannot find module '{path}'"), help);
                return None;
            }
        };
        if let Some(r) = &mut self.vm.loader.record {
            r.push((name.clone(), src.clone()));
        }
        let key = std::fs::canonicalize(&full).unwrap_or(full.clone()).to_string_lossy().into_owned();
        Some((key, Rc::new(SourceFile::new(name, src))))
    }

    /// The file `import "NAME"` (the package's `lib.csp`) or `import
    /// "NAME/sub/mod"` (its `sub/mod.csp`) names.
    fn package_file(&mut self, path: &str, pkg: &str, span: Span) -> Option<PathBuf> {
        let sub = path[pkg.len()..].strip_prefix('/').unwrap_or("");
        let bad_part = |c: &str| c.is_empty() || c == "." || c == "..";
        if path.ends_with('/') || (!sub.is_empty() && sub.split('/').any(bad_part)) {
            let help = "a module inside a package is `NAME/sub/mod` (its file `sub/mod.csp`)";
            self.error_help(span, format!("cannot import '{path}'"), help);
            return None;
        }
        let importer = self.file.name.clone();
        match self.vm.loader.package_root(pkg, &importer) {
            Ok(Some(root)) => Some(if sub.is_empty() { root.join("lib.csp") } else { root.join(format!("{sub}.csp")) }),
            Ok(None) => {
                let help = format!("add it to the project's csp.toml: `csp add {pkg} URL` (docs/packages.md)");
                self.error_help(span, format!("no package '{pkg}'"), help);
                None
            }
            Err(e) => {
                self.error_help(span, format!("cannot load package '{pkg}'"), e);
                None
            }
        }
    }

    /// End of a module's top level: build the exports map, keep it, return it.
    pub(crate) fn return_exports(&mut self, stmts: &[Stmt]) {
        let names = super::exported_names(stmts);
        let slot = self.global(&self.unit.prefix.clone());
        let m = self.alloc();
        self.emit(Op::NewMap { dst: m, start: m, count: 0 });
        let (k, v) = (self.alloc(), self.alloc());
        for n in names {
            let kc = self.str_const(&n);
            self.emit(Op::LoadK { dst: k, k: kc });
            let g = self.top_global(&n);
            self.emit(Op::GetGlobal { dst: v, idx: g });
            self.emit(Op::SetIndex { obj: m, key: k, src: v });
        }
        self.emit(Op::SetGlobal { src: m, idx: slot });
        self.emit(Op::Return { src: m });
    }
}
