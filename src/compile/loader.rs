//! What loading code needs across compilations: modules compiled so far, the
//! import chain (for cycles), the REPL's imports, and the prelude's functions.

use super::Module;
use crate::vm::{Handle, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

pub struct Loader {
    /// Modules compiled so far, by key (`std/NAME` or canonical path).
    pub modules: HashMap<String, Rc<Module>>,
    /// Import aliases bound by earlier REPL entries.
    pub repl_imports: HashMap<String, Rc<Module>>,
    /// Keys of the files being compiled, importer first (finds import cycles).
    pub importing: Vec<String>,
    /// Globals below this are builtins and the prelude, visible to every module.
    pub builtin_globals: u32,
    /// The prelude's top-level functions by name (builtin methods with callbacks
    /// call them), kept apart from the globals that user code may reassign.
    prelude: HashMap<Rc<str>, Value>,
    /// Only `std/` modules may be imported: no file is read (the sandbox).
    pub std_only: bool,
    /// The `std/` modules a script may import (None: all); an embedding
    /// host's choice.
    pub std_offered: Option<Vec<String>>,
    /// The project's packages by name (docs/packages.md), resolved at the
    /// first package import; the error that stopped it.
    pub packages: Option<Result<Rc<HashMap<String, PathBuf>>, String>>,
    /// `--offline`: packages come only from the cache.
    pub offline: bool,
    /// A standalone executable's modules (docs/build.md): imports read them,
    /// not files.
    pub bundle: Option<std::sync::Arc<crate::bundle::Bundle>>,
    /// `csp build`: every module file read, by its name, with its source.
    pub record: Option<Vec<(String, String)>>,
}

impl Default for Loader {
    fn default() -> Self {
        Loader {
            modules: HashMap::new(),
            repl_imports: HashMap::new(),
            importing: Vec::new(),
            builtin_globals: u32::MAX,
            prelude: HashMap::new(),
            std_only: false,
            std_offered: None,
            packages: None,
            offline: false,
            bundle: None,
            record: None,
        }
    }
}

impl Loader {
    /// Records the prelude's functions once it has run.
    pub fn set_prelude(&mut self, functions: HashMap<Rc<str>, Value>) {
        self.prelude = functions;
    }

    /// A prelude function (`__list_map`).
    pub fn prelude(&self, name: &str) -> Option<Value> {
        self.prelude.get(name).copied()
    }

    /// The prelude's functions (GC roots).
    pub fn roots(&self) -> impl Iterator<Item = Handle> + '_ {
        self.prelude.values().filter_map(|v| match v {
            Value::Obj(h) => Some(*h),
            _ => None,
        })
    }

    /// The folder of package `name` for an import in the file `importer`:
    /// the project's packages are resolved once, from the `csp.toml` at or
    /// above the first file importing one. Ok(None): no such package.
    pub fn package_root(&mut self, name: &str, importer: &str) -> Result<Option<PathBuf>, String> {
        if let Some(b) = &self.bundle {
            return Ok(b.packages.get(name).map(PathBuf::from));
        }
        let packages = self.packages.get_or_insert_with(|| {
            let dir =
                Path::new(importer).parent().filter(|d| Path::new(importer).is_file() && !d.as_os_str().is_empty());
            let start = dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            crate::pkg::project_packages(&start, self.offline).map(Rc::new)
        });
        match packages {
            Ok(m) => Ok(m.get(name).cloned()),
            Err(e) => Err(e.clone()),
        }
    }
}
