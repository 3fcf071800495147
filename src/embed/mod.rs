//! csp as a library (docs/embedding.md): a `Runtime` with limits and
//! capabilities, source loaded and run to completion or a step at a time from
//! the host's own loop, csp functions called with Rust values, and host
//! functions and types registered for scripts to use.

mod caps;
mod host_type;
mod options;
mod value;

pub use caps::{Caps, Files};
use host_type::args_out;
pub use host_type::{object, HostRef, HostType, Hosted};
pub use options::Options;
pub use value::Val;

use crate::bytecode::ProtoRef;
use crate::sched::session::{self, Pumped};
use crate::source::SourceFile;
use crate::vm::builtin::{io_kind, Ret};
use crate::vm::{err, ErrorKind, Handle, Res, Uncaught, Value, Vm};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Why loading or running csp code failed.
#[derive(Clone, Debug)]
pub struct Error {
    /// The error's kind as `e.kind` reads it (`"type"`, `"denied"`, ...), or
    /// `"syntax"` / `"compile"` for source that does not compile, `"exit"`
    /// for `exit(code)`, `"deadlock"`, `"timeout"`, `"budget"`.
    pub kind: String,
    pub message: String,
    /// The csp stack at the throw, innermost first ("f (main.csp:3:5)").
    pub stack: Vec<String>,
    /// The report `csp run` would print (with the source line).
    pub report: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

/// What a step of the runtime left.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// The code started by `start` finished with this value.
    Done(Val),
    /// Fibers are ready to run: step again soon.
    Busy,
    /// Every fiber waits: for a timer (due then), I/O, or the host; `wait`
    /// sleeps until one of those.
    Idle(Option<Instant>),
}

/// One csp program's world, for a Rust program to run scripts in.
pub struct Runtime {
    vm: Vm,
    /// The code `start` began, until it finishes.
    entry: Option<Handle>,
    /// Errors `session::pump` hands back (boxed there, as the REPL keeps them).
    #[allow(clippy::vec_box)]
    errors: Vec<Box<Uncaught>>,
    /// `call`'s compiled trampolines, by number of arguments.
    calls: HashMap<usize, ProtoRef>,
    fuel: Option<u64>,
    timeout: Option<Duration>,
}

impl Runtime {
    /// The one way a runtime is made: the CLI, the REPL, `csp test` and the
    /// tools start csp here too, so options mean the same everywhere.
    pub fn new(options: Options) -> Runtime {
        let mut vm = new_vm();
        options.apply(&mut vm);
        Runtime {
            vm,
            entry: None,
            errors: Vec::new(),
            calls: HashMap::new(),
            fuel: options.fuel,
            timeout: options.timeout,
        }
    }

    /// Runs `src` named `name` as `csp run` does, to the program's end (its
    /// fibers cancelled then); the exit code and report are the CLI's.
    pub fn run_program(&mut self, name: &str, src: &str, color: bool) -> crate::runner::Outcome {
        if let Some(t) = self.timeout {
            self.vm.sched.set_deadline(t);
        }
        crate::runner::run_source(&mut self.vm, name, src, color)
    }

    /// `csp run`'s handling of signals: SIGINT and SIGTERM cancel the main
    /// task, SIGQUIT prints every fiber (for a runtime that owns the process).
    pub fn install_signal_handlers(&mut self) -> std::io::Result<()> {
        crate::sched::install_signal_handlers(&mut self.vm)
    }

    /// Registers a host function as the global `name`: it gets the call's
    /// arguments and returns a value, or an error message (a `value` error in
    /// csp, catchable there).
    pub fn register_fn(&mut self, name: &'static str, f: impl Fn(Vec<Val>) -> Result<Val, String> + 'static) {
        let f = move |vm: &mut Vm, _: &crate::vm::Fiber, args: &[Value]| -> Res<Ret> {
            let r = f(args_out(vm, name, args)?).or_else(|m| err(ErrorKind::Value, format!("{name}(): {m}")))?;
            let v = value::to_value(&mut vm.heap, &r)
                .or_else(|m| err(ErrorKind::Type, format!("{name}() returned {m}")))?;
            Ok(Ret::Value(v))
        };
        self.vm.define_host_fn(name, Rc::new(f));
    }

    /// Registers a host function that blocks (a database query, a request to
    /// another service): it runs on csp's I/O threads while its fiber waits and
    /// the others run, as a builtin's blocking work does. Its arguments and
    /// result cross as plain data (`Val` without host objects).
    pub fn register_blocking_fn(
        &mut self,
        name: &'static str,
        f: impl Fn(Vec<Val>) -> Result<Val, String> + Send + Sync + 'static,
    ) {
        let f = std::sync::Arc::new(f);
        let call = move |vm: &mut Vm, _: &crate::vm::Fiber, args: &[Value]| -> Res<Ret> {
            let args = args_out(vm, name, args)?;
            let Some(args) = args.iter().map(Data::of).collect::<Option<Vec<_>>>() else {
                return err(ErrorKind::Type, format!("{name}() cannot take a host object (it runs on another thread)"));
            };
            let f = f.clone();
            let work = move || {
                let r = f(args.into_iter().map(Data::val).collect());
                let r = r.map_err(|m| (ErrorKind::Value, format!("{name}(): {m}")))?;
                Data::of(&r)
                    .ok_or_else(|| (ErrorKind::Type, format!("{name}() returned a host object from another thread")))
            };
            let done = |heap: &mut crate::vm::Heap, r: Data| value::to_value(heap, &r.val()).unwrap_or(Value::Nil);
            Ok(io_kind(work, done))
        };
        self.vm.define_host_fn(name, Rc::new(call));
    }

    /// Loads `src` (named `name` in errors) and runs it to its end; the value
    /// of a final expression is the result. Its top-level names stay defined
    /// for later `eval`s and `call`s, as in the REPL.
    pub fn eval(&mut self, name: &str, src: &str) -> Result<Val, Error> {
        self.start(name, src)?;
        self.finish()
    }

    /// Calls the global function `name` with `args`, running until it returns.
    pub fn call(&mut self, name: &str, args: &[Val]) -> Result<Val, Error> {
        let Some(&slot) = self.vm.global_names.get(name) else {
            return Err(plain("name", format!("no global function '{name}'")));
        };
        let mut values = Vec::with_capacity(args.len() + 1);
        values.push(self.vm.globals[slot as usize]);
        for a in args {
            values.push(value::to_value(&mut self.vm.heap, a).map_err(|m| plain("type", m))?);
        }
        // The callee and arguments wait in a global (a root) for the fiber.
        let list = self.vm.heap.list(values);
        let at = self.vm.global_slot("__embed_call");
        self.vm.globals[at as usize] = list;
        let proto = match self.calls.get(&args.len()) {
            Some(&p) => p,
            None => {
                let params: Vec<String> = (1..=args.len()).map(|i| format!("__embed_call[{i}]")).collect();
                let src = format!("__embed_call[0]({})", params.join(", "));
                let p = self.compile("<call>", &src)?;
                self.calls.insert(args.len(), p);
                p
            }
        };
        self.begin(proto)?;
        self.finish()
    }

    /// Compiles `src` and starts it, for a host that runs csp from its own
    /// loop with `step` and `wait`.
    pub fn start(&mut self, name: &str, src: &str) -> Result<(), Error> {
        let proto = self.compile(name, src)?;
        self.begin(proto)
    }

    /// Runs ready fibers for at most `max`; says what is left.
    pub fn step(&mut self, max: Duration) -> Result<Step, Error> {
        let pumped = session::pump(&mut self.vm, self.entry, max, &mut self.errors);
        if !self.errors.is_empty() {
            let u = self.errors.remove(0);
            self.errors.clear();
            self.entry = None;
            return Err(self.uncaught(&u));
        }
        match pumped {
            Pumped::Done => {
                let Some(entry) = self.entry.take() else { return Ok(Step::Done(Val::Nil)) };
                // Failed with no error to report: cancelled (by the timeout).
                let Some(v) = session::result(&self.vm, entry) else {
                    return Err(match self.timeout.filter(|_| self.timed_out()) {
                        Some(t) => plain("timeout", format!("the code ran past its timeout ({t:?}) and was cancelled")),
                        None => plain("cancelled", "the code was cancelled".into()),
                    });
                };
                value::from_value(&self.vm.heap, v).map(Step::Done).map_err(|m| plain("value", m))
            }
            Pumped::Busy => Ok(Step::Busy),
            Pumped::Idle(next) => {
                if self.entry.is_some_and(|e| session::stuck(&self.vm, e)) {
                    let report = session::deadlock_report(&self.vm);
                    if let Some(e) = self.entry.take() {
                        session::cancel_entry(&mut self.vm, e);
                    }
                    let first = report.lines().next().unwrap_or("deadlock").to_string();
                    return Err(Error { kind: "deadlock".into(), message: first, stack: Vec::new(), report });
                }
                Ok(Step::Idle(next))
            }
            Pumped::Deadlock(report) => {
                self.entry = None;
                let first = report.lines().next().unwrap_or("deadlock").to_string();
                Err(Error { kind: "deadlock".into(), message: first, stack: Vec::new(), report })
            }
            Pumped::Exit(code) => {
                self.entry = None;
                Err(plain("exit", format!("the script called exit({code})")))
            }
            Pumped::OutOfBudget => {
                self.entry = None;
                let fuel = self.fuel.unwrap_or(0);
                Err(plain("budget", format!("the script used up its fuel ({fuel} instructions)")))
            }
        }
    }

    /// Sleeps until `until`, the next timer, or I/O a fiber waits for.
    pub fn wait(&mut self, until: Option<Instant>) {
        session::wait(&mut self.vm, until);
    }

    /// What `print` wrote since the last call (when `Options::stdout` is off).
    pub fn take_output(&mut self) -> String {
        self.vm.out.flush();
        String::from_utf8_lossy(&self.vm.out.take()).into_owned()
    }

    /// The VM, for what this API does not cover yet (registering a builtin
    /// of the whole protocol with `Vm::define_host_fn`).
    pub fn vm(&mut self) -> &mut Vm {
        &mut self.vm
    }

    /// The VM itself, for a tool that drives it on its own terms (the REPL,
    /// the debugger, the test runner).
    pub fn into_vm(self) -> Vm {
        self.vm
    }

    fn finish(&mut self) -> Result<Val, Error> {
        loop {
            match self.step(Duration::from_millis(50))? {
                Step::Done(v) => return Ok(v),
                Step::Busy => {}
                Step::Idle(next) => self.wait(next),
            }
        }
    }

    fn compile(&mut self, name: &str, src: &str) -> Result<ProtoRef, Error> {
        let file = Rc::new(SourceFile::new(name, src));
        crate::runner::compile_entry(&mut self.vm, &file).map_err(|(kind, diags)| Error {
            kind: kind.into(),
            message: diags.first().map_or(String::new(), |d| d.message.clone()),
            stack: Vec::new(),
            report: crate::diag::render_all(&diags, &file, false),
        })
    }

    fn begin(&mut self, proto: ProtoRef) -> Result<(), Error> {
        if self.entry.is_some() {
            return Err(plain("busy", "the runtime is still running code it started".into()));
        }
        if let Some(t) = self.timeout {
            self.vm.sched.set_deadline(t);
        }
        self.entry = Some(session::start_entry(&mut self.vm, proto));
        Ok(())
    }

    fn uncaught(&self, u: &Uncaught) -> Error {
        let d = crate::runner::runtime_diag(&self.vm, u);
        let kind = match u.value {
            Value::Obj(h) => match self.vm.heap.get(h) {
                crate::vm::Obj::Error(e) if self.timed_out() && e.kind == ErrorKind::Cancelled => "timeout".to_string(),
                crate::vm::Obj::Error(e) => e.kind.name().to_string(),
                _ => "throw".to_string(),
            },
            _ => "throw".to_string(),
        };
        let stack = u.trace.iter().map(|t| t.to_string()).collect();
        Error { kind, message: d.message.clone(), stack, report: crate::diag::render(&d, &u.file, false) }
    }

    fn timed_out(&self) -> bool {
        session::timed_out(&self.vm)
    }
}

/// A VM with the builtins and the csp-written prelude installed; only
/// `Runtime::new` makes one, so every runtime is set up through `Options`.
fn new_vm() -> Vm {
    let mut vm = crate::natives::vm();
    let file = Rc::new(SourceFile::std(crate::source::PRELUDE_NAME, crate::runner::PRELUDE));
    let proto = crate::runner::compile(&mut vm, &file).unwrap_or_else(|d| panic!("prelude does not compile: {:?}", d));
    if !matches!(crate::sched::run_main(&mut vm, proto), crate::sched::Outcome::Ok) {
        panic!("prelude failed to run");
    }
    let functions = vm.global_names.iter().filter(|(name, _)| name.starts_with("__"));
    let functions = functions.map(|(name, &slot)| (name.clone(), vm.globals[slot as usize])).collect();
    vm.loader.set_prelude(functions);
    // The prelude ran as a program of its own; user programs start afresh.
    vm.sched = Default::default();
    vm.loader.builtin_globals = vm.globals.len() as u32;
    vm
}

/// Global builtins that embed/caps.rs does not place (a test keeps it empty).
pub fn unclassified_builtins(vm: &Vm) -> Vec<String> {
    let natives = vm.global_names.iter().filter(|(_, &i)| {
        matches!(vm.globals[i as usize], Value::Obj(h) if matches!(vm.heap.get(h), crate::vm::Obj::Native(_)))
    });
    natives.map(|(n, _)| n.to_string()).filter(|n| caps::access(n).is_none()).collect()
}

fn plain(kind: &str, message: String) -> Error {
    Error { kind: kind.into(), report: format!("{kind}: {message}\n"), message, stack: Vec::new() }
}

/// A `Val` without host objects, which may cross to csp's I/O threads (a
/// host object is an `Rc`, tied to the VM's thread).
enum Data {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Data>),
    Map(Vec<(Data, Data)>),
    Other(String),
}

impl Data {
    /// None if `v` holds a host object.
    fn of(v: &Val) -> Option<Data> {
        Some(match v {
            Val::Nil => Data::Nil,
            Val::Bool(b) => Data::Bool(*b),
            Val::Int(i) => Data::Int(*i),
            Val::Float(x) => Data::Float(*x),
            Val::Str(s) => Data::Str(s.clone()),
            Val::Bytes(b) => Data::Bytes(b.clone()),
            Val::List(items) => Data::List(items.iter().map(Data::of).collect::<Option<_>>()?),
            Val::Map(fields) => {
                Data::Map(fields.iter().map(|(k, v)| Some((Data::of(k)?, Data::of(v)?))).collect::<Option<_>>()?)
            }
            Val::Object(_) => return None,
            Val::Other(s) => Data::Other(s.clone()),
        })
    }

    fn val(self) -> Val {
        match self {
            Data::Nil => Val::Nil,
            Data::Bool(b) => Val::Bool(b),
            Data::Int(i) => Val::Int(i),
            Data::Float(x) => Val::Float(x),
            Data::Str(s) => Val::Str(s),
            Data::Bytes(b) => Val::Bytes(b),
            Data::List(items) => Val::List(items.into_iter().map(Data::val).collect()),
            Data::Map(fields) => Val::Map(fields.into_iter().map(|(k, v)| (k.val(), v.val())).collect()),
            Data::Other(s) => Val::Other(s),
        }
    }
}
