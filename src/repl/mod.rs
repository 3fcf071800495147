//! The interactive REPL. Line editing runs on its own thread (reader.rs); this
//! thread owns the VM and keeps the scheduler going while the prompt waits, so
//! fibers started at the prompt keep running and timers fire. Each entry runs as a
//! fiber of its own; Ctrl-C (SIGINT, since the terminal is not in raw mode while
//! an entry runs) cancels it. Keys typed meanwhile wait in the terminal (see
//! reader.rs for the rest of the way no key is lost).

mod commands;
pub(crate) mod reader;

use crate::sched::session::{self, Pumped};
use crate::source::SourceFile;
use crate::vm::{Handle, Value, Vm};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the reader thread sends.
pub enum Input {
    Entry(String),
    /// Input that is not text: reported as a failed entry.
    Unreadable(String),
    Quit,
}

/// Set by SIGINT while an entry runs (process-wide: one REPL per process).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Sets NOFLSH on the terminal while the REPL runs, so that a Ctrl-C cancelling
/// an entry does not make the kernel discard what was typed ahead.
struct KeepTypeAhead;

/// The terminal's settings when the REPL started (process-wide, as the terminal is).
static SAVED_TERMINAL: Mutex<Option<libc::termios>> = Mutex::new(None);

impl KeepTypeAhead {
    fn new() -> KeepTypeAhead {
        // SAFETY: termios is plain data that tcgetattr fills in.
        unsafe {
            let mut saved: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(libc::STDIN_FILENO, &mut saved) != 0 {
                return KeepTypeAhead;
            }
            let mut t = saved;
            t.c_lflag |= libc::NOFLSH;
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSADRAIN, &t);
            *SAVED_TERMINAL.lock().unwrap_or_else(|p| p.into_inner()) = Some(saved);
        }
        KeepTypeAhead
    }
}

impl Drop for KeepTypeAhead {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Puts the terminal back as the REPL found it (also out of the line editor's
/// raw mode, when the session ends while a prompt is up).
fn restore_terminal() {
    if let Some(t) = SAVED_TERMINAL.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        // SAFETY: restores settings tcgetattr read.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSADRAIN, t) };
    }
}

/// Writes to the terminal: above the prompt while one is shown (rustyline's
/// external printer redraws it), straight to stdout/stderr otherwise.
#[derive(Clone, Default)]
pub struct Console {
    prompting: Arc<AtomicBool>,
    printer: Arc<Mutex<Option<Box<dyn rustyline::ExternalPrinter + Send>>>>,
}

impl Console {
    fn prompting(&self, on: bool) {
        self.prompting.store(on, Ordering::SeqCst);
    }

    /// Before the process ends: the line editor prints what was handed to it
    /// on its own thread, so while a prompt is up it gets a moment to do so.
    fn settle(&self) {
        if self.prompting.load(Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    fn set_printer(&self, p: Box<dyn rustyline::ExternalPrinter + Send>) {
        if let Ok(mut slot) = self.printer.lock() {
            *slot = Some(p);
        }
    }

    /// Output above the prompt, if one is up; true if it went there.
    fn above_prompt(&self, text: &str) -> bool {
        if !self.prompting.load(Ordering::SeqCst) {
            return false;
        }
        let Ok(mut slot) = self.printer.lock() else { return false };
        match slot.as_mut() {
            Some(p) => p.print(text.to_string()).is_ok(),
            None => false,
        }
    }

    pub fn out(&self, text: &str) {
        use std::io::Write;
        if !self.above_prompt(text) {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
        }
    }

    pub fn err(&self, text: &str) {
        if !self.above_prompt(text) {
            crate::err_print!("{text}");
        }
    }
}

/// Runs the REPL until Ctrl-D or `:quit` in a runtime set up as `options`
/// say; returns the exit code.
pub fn run(options: &crate::embed::Options) -> i32 {
    let mut vm = crate::embed::Runtime::new(options.clone()).into_vm();
    vm.global_slot("_");
    let console = Console::default();
    let sink = console.clone();
    vm.out.set_sink(crate::vm::output::Sink::Func(Box::new(move |bytes| sink.out(&String::from_utf8_lossy(bytes)))));
    let err_sink = console.clone();
    vm.out.set_err_sink(Box::new(move |bytes| err_sink.err(&String::from_utf8_lossy(bytes))));
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
    let interactive = std::io::IsTerminal::is_terminal(&std::io::stdin());
    // Before the reader starts: each `readline` restores the mode it found.
    let _keep = interactive.then(KeepTypeAhead::new);
    let globals = Arc::new(Mutex::new(reader::Names::default()));
    let (entry_tx, entries) = mpsc::channel();
    let (ready, ready_rx) = mpsc::channel();
    let (c, g) = (console.clone(), globals.clone());
    std::thread::spawn(move || reader::run(c, g, entry_tx, ready_rx));
    if interactive {
        console.out(&format!("csp {} — :help for commands, Ctrl-D to quit\n", env!("CARGO_PKG_VERSION")));
    }
    let mut session = Session { vm, console, color: crate::diag::use_color(), failed: false, exit: None };
    loop {
        publish_globals(&session.vm, &globals);
        // A Ctrl-C from here on is for the next entry, even one pressed right
        // after its Enter, before it starts.
        INTERRUPTED.store(false, Ordering::SeqCst);
        if ready.send(()).is_err() {
            break;
        }
        match session.idle_until_input(&entries) {
            Input::Entry(text) => {
                if text.trim_start().starts_with(':') {
                    commands::run(&mut session, text.trim());
                } else {
                    session.eval("<repl>", &text);
                }
            }
            Input::Unreadable(why) => session.fail(&why),
            Input::Quit => break,
        }
        if session.exit.is_some() {
            break;
        }
    }
    session::end(&mut session.vm);
    session.vm.out.flush();
    if let Some(code) = session.exit {
        return code;
    }
    // Piped input (`csp < script`) is a batch: its exit code says whether an entry failed.
    i32::from(!interactive && session.failed)
}

/// Names for tab completion: every global of the main namespace with its type,
/// the exports of modules imported at the prompt, and the keys of maps.
fn publish_globals(vm: &Vm, to: &Arc<Mutex<reader::Names>>) {
    let user_name = |n: &str| n.starts_with(|c: char| c.is_alphabetic()) && !n.contains("::");
    let mut names = reader::Names::default();
    for (n, &g) in vm.global_names.iter().filter(|(n, _)| user_name(n)) {
        let v = vm.globals[g as usize];
        names.globals.push((n.to_string(), vm.heap.type_name(v)));
        if let Value::Obj(h) = v {
            if let crate::vm::Obj::Map(m) = vm.heap.get(h) {
                let keys = m.keys().filter_map(|k| match k {
                    crate::vm::Key::Str(s) => Some(s.to_string()),
                    _ => None,
                });
                names.members.insert(n.to_string(), keys.collect());
            }
        }
    }
    for (alias, m) in &vm.loader.repl_imports {
        names.globals.push((alias.clone(), "module"));
        names.members.insert(alias.clone(), m.exports.clone());
    }
    if let Ok(mut g) = to.lock() {
        *g = names;
    }
}

pub struct Session {
    vm: Vm,
    console: Console,
    color: bool,
    /// An entry failed (an error, a deadlock, a bad command).
    failed: bool,
    /// `exit(code)` was called: the session ends with this status.
    exit: Option<i32>,
}

/// How long the scheduler runs before looking at input and Ctrl-C again.
const TURN: Duration = Duration::from_millis(10);

impl Session {
    /// Runs background fibers until the reader sends something.
    fn idle_until_input(&mut self, entries: &mpsc::Receiver<Input>) -> Input {
        loop {
            match entries.try_recv() {
                Ok(i) => return i,
                Err(TryRecvError::Disconnected) => return Input::Quit,
                Err(TryRecvError::Empty) => {}
            }
            let pumped = self.pump(None);
            if self.exit.is_some() {
                return Input::Quit;
            }
            let wait = match pumped {
                Pumped::Busy | Pumped::Deadlock(_) | Pumped::Exit(_) | Pumped::OutOfBudget => continue,
                Pumped::Idle(next) => self.idle_wait(next),
                Pumped::Done => Duration::from_secs(3600),
            };
            match entries.recv_timeout(wait) {
                Ok(i) => return i,
                Err(RecvTimeoutError::Disconnected) => return Input::Quit,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// How long to sleep when nothing is ready: until the next timer, and briefly
    /// while I/O is in flight (its completions arrive on another channel).
    fn idle_wait(&self, next: Option<Instant>) -> Duration {
        let until_timer = next.map_or(Duration::from_secs(3600), |t| t.saturating_duration_since(Instant::now()));
        if session::io_pending(&self.vm) {
            until_timer.min(Duration::from_millis(2))
        } else {
            until_timer
        }
    }

    /// Reports a failure of an entry.
    pub fn fail(&mut self, text: &str) {
        self.failed = true;
        self.console.err(text);
    }

    /// One turn of the scheduler, reporting errors that reached the top.
    fn pump(&mut self, entry: Option<Handle>) -> Pumped {
        let mut errors = Vec::new();
        let p = session::pump(&mut self.vm, entry, TURN, &mut errors);
        self.vm.out.flush();
        if let Pumped::Deadlock(report) = &p {
            self.fail(report);
        }
        // `exit(code)` ends the session at once, from any fiber, with what was
        // printed shown and the terminal as it was found (`run` returns `code`).
        if let Pumped::Exit(code) = p {
            session::end(&mut self.vm);
            let _ = std::io::Write::flush(&mut std::io::stdout());
            self.console.settle();
            restore_terminal();
            self.exit = Some(code);
        }
        for u in errors {
            let d = crate::runner::runtime_diag(&self.vm, &u);
            self.fail(&crate::diag::render(&d, &u.file, self.color));
        }
        p
    }

    /// Compiles and runs one entry, echoing its value.
    pub fn eval(&mut self, name: &str, text: &str) {
        if let Some(proto) = self.compile_entry(name, text) {
            self.run_entry(proto);
        }
    }

    /// Compiles an entry into the session's environment, or reports why not.
    pub fn compile_entry(&mut self, name: &str, text: &str) -> Option<crate::bytecode::ProtoRef> {
        let file = Rc::new(SourceFile::new(name, text));
        match crate::runner::compile_entry(&mut self.vm, &file) {
            Ok(p) => Some(p),
            Err((_, diags)) => {
                self.fail(&crate::diag::render_all(&diags, &file, self.color));
                None
            }
        }
    }

    fn run_entry(&mut self, proto: crate::bytecode::ProtoRef) {
        let entry = session::start_entry(&mut self.vm, proto);
        let mut cancelled = false;
        let mut cleanup = Vec::new();
        loop {
            if INTERRUPTED.swap(false, Ordering::SeqCst) && !cancelled {
                cancelled = true;
                cleanup = session::cancel_entry(&mut self.vm, entry);
            }
            match self.pump(Some(entry)) {
                Pumped::Done | Pumped::Exit(_) => break,
                Pumped::Busy | Pumped::Deadlock(_) | Pumped::OutOfBudget => {}
                Pumped::Idle(next) => {
                    if session::stuck(&self.vm, entry) {
                        self.fail(&session::deadlock_report(&self.vm));
                        cancelled = true;
                        cleanup = session::cancel_entry(&mut self.vm, entry);
                    } else {
                        std::thread::sleep(self.idle_wait(next).min(TURN));
                    }
                }
            }
        }
        let result = session::result(&self.vm, entry);
        // Like Python's `_`, only a value that was echoed replaces it.
        if let Some(v) = result.filter(|v| !matches!(v, Value::Nil)) {
            let slot = self.vm.global_slot("_");
            self.vm.globals[slot as usize] = v;
            let text = crate::display::repr(&self.vm.heap, v);
            self.console.out(&format!("{text}\n"));
        }
        if cancelled {
            self.finish_cleanup(&cleanup);
            if result.is_none() {
                self.fail("cancelled\n");
            }
        }
    }

    /// The work a cancelled entry waited on (a fiber, a job on another
    /// isolate) runs its `finally` blocks before the next prompt, so their
    /// output comes first; for at most the grace time, and a second Ctrl-C
    /// stops the wait (they finish in the background).
    fn finish_cleanup(&mut self, fibers: &[(u32, Handle)]) {
        let until = Instant::now() + session::grace(&self.vm);
        while session::cleaning_up(&self.vm, fibers) && Instant::now() < until && self.exit.is_none() {
            if INTERRUPTED.swap(false, Ordering::SeqCst) {
                return;
            }
            match self.pump(None) {
                Pumped::Idle(next) => std::thread::sleep(self.idle_wait(next).min(TURN)),
                // Nothing can move them any more.
                Pumped::Done => return,
                Pumped::Busy | Pumped::Deadlock(_) | Pumped::Exit(_) | Pumped::OutOfBudget => {}
            }
        }
    }
}
