//! The virtual machine: values, heap, fibers and the dispatch loop.

pub mod arith;
pub mod call;
pub mod conc;
pub mod coroutine;
pub mod error;
pub mod exec;
mod exec_conc;
pub mod fiber;
pub mod gc;
pub mod heap;
pub mod kind;
pub mod object;
mod ops;
pub mod value;

pub use fiber::{Fiber, Frame};
pub use heap::Heap;
pub use kind::ErrorKind;
pub use object::Obj;
pub use value::{Handle, Key, Value};

use indexmap::IndexMap;
use std::io::Write;
use std::rc::Rc;

/// Why an operation failed: a runtime error of some kind with its message (becomes
/// an error value with a trace) or a value thrown as is.
#[derive(Debug)]
pub enum Fault {
    Error(ErrorKind, String),
    Throw(Value),
    /// A builtin that must wait (`sleep`): the caller parks the fiber.
    Block(Block),
}

/// What a blocking builtin waits for.
#[derive(Debug)]
pub enum Block {
    /// Milliseconds to sleep.
    Sleep(f64),
    /// File or stdin I/O for the thread pool.
    Io(crate::sched::io::IoJob),
}

pub type Res<T> = Result<T, Fault>;

/// Shorthand for a runtime error result of kind `kind`.
pub fn err<T>(kind: ErrorKind, msg: impl Into<String>) -> Res<T> {
    Err(Fault::Error(kind, msg.into()))
}

/// Functions written in csp (std prelude) that builtin methods delegate to, so their
/// callbacks run as ordinary VM frames.
#[derive(Default, Clone, Copy)]
pub struct Prelude {
    pub map: Option<Value>,
    pub filter: Option<Value>,
    pub reduce: Option<Value>,
    pub each: Option<Value>,
    pub sort_by: Option<Value>,
}

/// A replacement for stdout.
pub type Sink = Box<dyn FnMut(&[u8])>;

/// Buffered stdout; a closed pipe ends the process quietly.
pub struct Output {
    buf: Vec<u8>,
    /// Where flushed output goes instead of stdout (the REPL prints above its prompt).
    pub sink: Option<Sink>,
}

impl Output {
    pub fn write(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() > 1 << 16 {
            self.flush();
        }
    }
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if let Some(sink) = &mut self.sink {
            sink(&self.buf);
            self.buf.clear();
            return;
        }
        let mut out = std::io::stdout().lock();
        let res = out.write_all(&self.buf).and_then(|_| out.flush());
        self.buf.clear();
        if let Err(e) = res {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }
    /// Flushes unless output is being captured.
    pub fn flush_if_stdout(&mut self, capture: bool) {
        if !capture {
            self.flush();
        }
    }
    /// Takes what was written so far (tests capture output this way).
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

/// Everything shared by the fibers of one program.
pub struct Vm {
    pub heap: Heap,
    /// Global slots: builtins first, then each file's top-level names.
    pub globals: Vec<Value>,
    /// Name → index into `globals`.
    pub global_names: IndexMap<Rc<str>, u32>,
    /// Prototypes loaded so far; their constants are GC roots.
    pub protos: Vec<Rc<crate::bytecode::Proto>>,
    pub out: Output,
    /// When set, `print` appends here instead of stdout (tests).
    pub capture: bool,
    pub args: Vec<String>,
    pub rng: Rng,
    pub prelude: Prelude,
    /// One shared copy of each string that appears in source (see `Key`).
    pub interned: std::collections::HashSet<Rc<str>>,
    pub sched: crate::sched::Sched,
    /// Modules compiled so far, by key (`std/NAME` or canonical path).
    pub modules: std::collections::HashMap<String, Rc<crate::compile::Module>>,
    /// Import aliases bound by earlier REPL entries.
    pub repl_imports: std::collections::HashMap<String, Rc<crate::compile::Module>>,
    /// Keys of the files being compiled, importer first (finds import cycles).
    pub importing: Vec<String>,
    /// Globals below this are builtins and the prelude, visible to every module.
    pub builtin_globals: u32,
}

impl Vm {
    pub fn new() -> Vm {
        let mut vm = Vm {
            heap: Heap::new(),
            globals: Vec::new(),
            global_names: IndexMap::new(),
            protos: Vec::new(),
            out: Output { buf: Vec::new(), sink: None },
            capture: false,
            args: Vec::new(),
            rng: Rng::new(0x5eed),
            prelude: Prelude::default(),
            interned: Default::default(),
            sched: Default::default(),
            modules: Default::default(),
            importing: Vec::new(),
            repl_imports: Default::default(),
            builtin_globals: u32::MAX,
        };
        crate::natives::register(&mut vm);
        vm
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

    pub fn define_native(&mut self, name: &'static str, func: object::NativeFn) {
        let h = self.heap.alloc(Obj::Native(object::Native { name, func }));
        let slot = self.global_slot(name);
        self.globals[slot as usize] = Value::Obj(h);
    }

    /// The shared copy of `s`.
    pub fn intern(&mut self, s: &str) -> Rc<str> {
        if let Some(r) = self.interned.get(s) {
            return r.clone();
        }
        let r: Rc<str> = Rc::from(s);
        self.interned.insert(r.clone());
        r
    }

    /// Writes program output (stdout, or the capture buffer in tests).
    pub fn print(&mut self, bytes: &[u8]) {
        if self.capture {
            self.out.buf.extend_from_slice(bytes);
        } else {
            self.out.write(bytes);
        }
    }
}

impl Default for Vm {
    fn default() -> Self {
        Self::new()
    }
}

/// xorshift64*: small, fast and seedable so runs repeat.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform float in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
