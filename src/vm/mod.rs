//! The virtual machine: values, heap, fibers and the dispatch loop.

pub mod arith;
pub mod budget;
pub mod builtin;
pub mod call;
mod char_index;
pub mod coroutine;
pub mod debug;
mod entry;
pub mod error;
pub mod exec;
mod exec_conc;
mod exec_iter;
mod exec_rare;
pub mod fiber;
pub mod file_access;
pub mod gc;
pub mod heap;
mod heap_limit;
pub mod host;
mod intern;
pub mod key_set;
pub mod kind;
pub mod list;
pub mod map;
pub mod no_method;
pub mod object;
mod object_ops;
pub mod output;
pub mod read_cap;
pub mod rng;
pub mod seq_ops;
mod slots;
pub mod str;
mod substr;
pub mod value;

pub use builtin::{Blocking, IoDone, IoWork, NativeFn, Ret};
pub use entry::resume;
pub use exec_iter::spare_item;
pub use fiber::{Fiber, Frame, Resume, Uncaught};
pub use heap::Heap;
pub use kind::{err, ErrorKind, Fault, Res};
pub use list::List;
pub use object::Obj;
pub use output::Output;
pub use rng::Rng;
pub use str::Str;
pub use value::{Handle, Key, Value};

use crate::bytecode::{Proto, ProtoRef};
use indexmap::IndexMap;
use std::rc::Rc;

/// The runtime shared by the fibers of one program: heap, globals, compiled
/// code, output and the scheduler (reached only through `sched::ops`). What
/// loading modules needs is apart, in `loader`.
pub struct Vm {
    pub heap: Heap,
    /// The dispatch loop's handler table (`exec::Handlers`).
    pub(super) handlers: exec::Handlers,
    /// Global slots: builtins first, then each file's top-level names.
    pub globals: Vec<Value>,
    /// Name → index into `globals`.
    pub global_names: IndexMap<Rc<str>, u32>,
    /// Every proto compiled: their one owner (see `ProtoRef`); their constants are GC roots.
    pub protos: Vec<Box<Proto>>,
    pub out: Output,
    pub args: Vec<String>,
    /// The program's name in usage messages (`std/flag`): the script's file
    /// name without `.csp` (`csp run tools/wc.csp` → `wc`); "" in the REPL.
    pub program: String,
    /// `random` and the other random helpers: seeded from the operating system
    /// (`--seed N` or `seed(n)` make runs repeat).
    pub rng: Rng,
    /// `select`'s choice among ready cases: a fixed default seed, so a
    /// program's output repeats (`--seed N` changes it).
    pub select_rng: Rng,
    pub sched: crate::sched::Sched,
    pub loader: crate::compile::Loader,
    /// The methods of the core's own kinds, installed by the library
    /// (`natives::register`), as Lua's string library installs strings'.
    pub kinds: host::KindClasses,
    /// Host functions (`NativeFn::Host` indexes them; docs/embedding.md).
    pub host_fns: Vec<host::HostFn>,
    /// Which files the builtins may touch (an embedding host may narrow it).
    pub files: file_access::FileAccess,
    /// `--coverage`: the counters `Op::Count` bumps and what each counts; None
    /// compiles no counting code.
    pub coverage: Option<Box<crate::coverage::Counters>>,
    /// `csp dap`'s debugger and its traps (vm/debug.rs); None otherwise.
    pub debug: Option<Box<debug::Debug>>,
    /// This isolate's part in `std/isolate` (isolate/: the shared pool, the
    /// functions re-linked here); typed there, so the core does not import it.
    pub isolate: Option<Box<dyn std::any::Any>>,
}

impl Vm {
    /// Records the script at `path` as the program (see `program`).
    pub fn set_program(&mut self, path: &str) {
        let base = path.rsplit('/').next().unwrap_or(path);
        self.program = base.strip_suffix(".csp").unwrap_or(base).to_string();
    }

    pub fn new() -> Vm {
        Vm {
            heap: Heap::new(),
            handlers: Default::default(),
            globals: Vec::new(),
            global_names: IndexMap::new(),
            protos: Vec::new(),
            out: Output::default(),
            args: Vec::new(),
            program: String::new(),
            rng: Rng::from_os(),
            select_rng: Rng::new(Rng::DEFAULT_SEED),
            sched: Default::default(),
            loader: Default::default(),
            kinds: Default::default(),
            host_fns: Vec::new(),
            files: Default::default(),
            coverage: None,
            debug: None,
            isolate: None,
        }
    }

    /// The global slot for `name`, created (holding nil) if new.
    pub fn global_slot(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.global_names.get(name) {
            return i;
        }
        let i = self.globals.len() as u32;
        self.globals.push(Value::Nil);
        self.global_names.insert(Rc::from(name), i);
        i
    }

    /// Registers a builtin that computes a value from its arguments.
    pub fn define_native(&mut self, name: &'static str, func: builtin::ValueFn) {
        self.define_builtin(name, NativeFn::Value(func));
    }

    /// Registers a one-argument builtin that computes a value, with the fast
    /// path the dispatch loop calls directly (`object::QuickFn`).
    pub fn define_quick(&mut self, name: &'static str, func: builtin::ValueFn, quick: object::QuickFn) {
        let native = object::Native { quick: Some(quick), ..object::Native::new(name, NativeFn::Value(func)) };
        let h = self.heap.alloc(Obj::Native(Box::new(native)));
        let slot = self.global_slot(name);
        self.globals[slot as usize] = Value::Obj(h);
    }

    /// Registers a builtin of the whole protocol (it may block or call back).
    pub fn define_builtin(&mut self, name: &'static str, func: NativeFn) {
        let h = self.heap.alloc(Obj::Native(Box::new(object::Native::new(name, func))));
        let slot = self.global_slot(name);
        self.globals[slot as usize] = Value::Obj(h);
    }

    /// Registers a builtin that a std module binds under its public name
    /// (`fs.read`): the global is hidden (`__fs_read`: no suggestion, no
    /// completion), while the function prints and reports as `fs.read`.
    pub fn define_hidden(&mut self, public: &'static str, func: NativeFn) {
        let h = self.heap.alloc(Obj::Native(Box::new(object::Native::new(public, func))));
        let slot = self.global_slot(&format!("__{}", public.replace('.', "_")));
        self.globals[slot as usize] = Value::Obj(h);
    }

    /// Takes ownership of a compiled proto for the VM's life.
    pub fn register_proto(&mut self, proto: Proto) -> ProtoRef {
        let b = Box::new(proto);
        // SAFETY: the box is kept in `self.protos` for the VM's life.
        let r = unsafe { ProtoRef::new(&b) };
        self.protos.push(b);
        r
    }

    /// The shared copy of `s`, a name or string constant in source (see `Key`).
    pub fn intern(&mut self, s: &str) -> Str {
        self.heap.strings.name(s)
    }
}

impl Default for Vm {
    fn default() -> Self {
        Self::new()
    }
}
