//! What a host lets a script reach (docs/embedding.md): files (none, those
//! under some folders, or all), the network, child processes, the process's
//! environment, standard input, and which `std/` modules it may import. A
//! builtin outside what is given throws a `denied` error; its name stays, so
//! traces still say what was called.

use crate::vm::file_access::FileAccess;
use crate::vm::object::{Native, Obj};
use crate::vm::{builtin::NativeFn, err, ErrorKind, Res, Value, Vm};
use std::path::PathBuf;

/// The capabilities of a script: nothing outside the VM unless given.
#[derive(Clone, Debug, Default)]
pub struct Caps {
    pub files: Files,
    pub network: bool,
    pub processes: bool,
    /// Environment variables, the working directory, the host name, the
    /// process id and signals.
    pub environment: bool,
    pub stdin: bool,
    /// The `std/` modules the script may import (without `std/`); None: all.
    pub modules: Option<Vec<String>>,
}

#[derive(Clone, Debug, Default)]
pub enum Files {
    #[default]
    None,
    /// Files under these folders (and the folders themselves).
    Under(Vec<PathBuf>),
    All,
}

impl Caps {
    /// Nothing outside the VM: computing, printing, and the pure std modules.
    pub fn none() -> Caps {
        Caps::default()
    }

    /// Everything `csp run` gives a program.
    pub fn all() -> Caps {
        Caps { files: Files::All, network: true, processes: true, environment: true, stdin: true, modules: None }
    }

    pub fn files_under(mut self, dir: impl Into<PathBuf>) -> Caps {
        match &mut self.files {
            Files::Under(dirs) => dirs.push(dir.into()),
            Files::None => self.files = Files::Under(vec![dir.into()]),
            Files::All => {}
        }
        self
    }

    pub fn network(mut self, on: bool) -> Caps {
        self.network = on;
        self
    }

    pub fn processes(mut self, on: bool) -> Caps {
        self.processes = on;
        self
    }

    pub fn environment(mut self, on: bool) -> Caps {
        self.environment = on;
        self
    }

    pub fn modules(mut self, names: &[&str]) -> Caps {
        self.modules = Some(names.iter().map(|s| s.to_string()).collect());
        self
    }

    fn allows(&self, a: Access) -> bool {
        match a {
            Access::Pure => true,
            Access::Files => !matches!(self.files, Files::None),
            Access::Network => self.network,
            Access::Processes => self.processes,
            Access::Environment => self.environment,
            Access::Stdin => self.stdin,
        }
    }
}

/// What a global builtin reaches outside the VM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Access {
    Pure,
    Files,
    Network,
    Processes,
    Environment,
    Stdin,
}

/// The access builtin `name` needs; None for one not classified yet, which
/// only `Caps::all()` gives (so a builtin added later is denied until it is
/// placed here: tests/embed.rs lists every builtin).
pub(crate) fn access(name: &str) -> Option<Access> {
    const FILES: &[&str] = &["read_file", "write_file", "append_file", "lines", "exists", "__os_chdir", "__os_cwd"];
    const ENVIRONMENT: &[&str] = &[
        "__os_env",
        "__os_environ",
        "__os_setenv",
        "__os_unsetenv",
        "__os_hostname",
        "__os_pid",
        "__os_executable",
        "__os_signals",
    ];
    Some(if crate::sandbox::is_pure(name) || name == "seed" {
        Access::Pure
    } else if name.starts_with("__fs_") || name == "__sqlite_open" || FILES.contains(&name) {
        Access::Files
    } else if name.starts_with("__net_") {
        Access::Network
    } else if name.starts_with("__proc_") {
        Access::Processes
    } else if ENVIRONMENT.contains(&name) {
        Access::Environment
    } else if name == "read_line" {
        Access::Stdin
    } else if name.starts_with("__isolate_") {
        // Workers are made with the same capabilities as the runtime.
        Access::Pure
    } else if name.starts_with("__db_") || name.starts_with("__http_") {
        // They work on a database or a connection, which only an allowed
        // `sqlite.open` or `net` call makes.
        Access::Pure
    } else {
        return None;
    })
}

/// Replaces every global builtin that `caps` does not allow by one that throws
/// `denied`, and narrows file access and imports.
pub(crate) fn apply(vm: &mut Vm, caps: &Caps) {
    if matches!(caps, Caps { files: Files::All, network: true, processes: true, environment: true, stdin: true, .. }) {
        vm.loader.std_offered = caps.modules.clone();
        return;
    }
    let names: Vec<(std::rc::Rc<str>, u32)> = vm.global_names.iter().map(|(n, &i)| (n.clone(), i)).collect();
    for (name, slot) in names {
        let Value::Obj(h) = vm.globals[slot as usize] else { continue };
        let Obj::Native(n) = vm.heap.get(h) else { continue };
        let denied: fn(&mut Vm, &[Value]) -> Res<Value> = match access(&name) {
            Some(a) if caps.allows(a) => continue,
            Some(Access::Files) => |_, _| denied("files"),
            Some(Access::Network) => |_, _| denied("the network"),
            Some(Access::Processes) => |_, _| denied("child processes"),
            Some(Access::Environment) => |_, _| denied("the environment"),
            Some(Access::Stdin) => |_, _| denied("standard input"),
            Some(Access::Pure) => continue,
            None => |_, _| denied("this builtin"),
        };
        let native = Native::new(n.name, NativeFn::Value(denied));
        vm.globals[slot as usize] = Value::Obj(vm.heap.alloc(Obj::Native(Box::new(native))));
    }
    // Resolving packages reads csp.toml and may run git or curl: not for a
    // script its host limits.
    let why = "packages are not available to a script whose host limits it (docs/embedding.md)";
    vm.loader.packages = Some(Err(why.to_string()));
    match &caps.files {
        Files::Under(dirs) => vm.files = FileAccess::under(dirs),
        // No builtin reaches a file; imports of files are refused too.
        Files::None => vm.files = FileAccess::Under(Vec::new()),
        Files::All => {}
    }
    vm.loader.std_offered = caps.modules.clone();
}

fn denied(what: &str) -> Res<Value> {
    err(ErrorKind::Denied, format!("access to {what} is denied to this script by the program running it"))
}
