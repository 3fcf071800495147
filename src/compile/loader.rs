//! What loading code needs across compilations: modules compiled so far, the
//! import chain (for cycles), the REPL's imports, and the prelude's functions.

use super::Module;
use crate::vm::{Handle, Value};
use std::collections::HashMap;
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
}
