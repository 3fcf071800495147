//! A worker isolate: its own VM, made as the main isolate's was, running the
//! driver (driver.csp) that starts a fiber per job, until the program ends.
//! It runs on a thread of its own, or (`--isolates 1`) on the main
//! isolate's thread, stepped by its scheduler (`inline.rs`). When every
//! fiber of the worker waits on something only another isolate can end, the
//! worker is stuck: it says so on its jobs' answers and in the pool (so the
//! program's end and deadlocks are seen across isolates) and sleeps until a
//! message comes.

use super::pool::{Factory, Inbox, Pool};
use crate::sched::others::Stepped;
use crate::sched::session::{self, Pumped};
use crate::sched::TraceFile;
use crate::source::SourceFile;
use crate::vm::{Handle, Uncaught, Vm};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DRIVER: &str = include_str!("driver.csp");
/// The driver's file name in traces (its frames are left out of them).
pub const DRIVER_NAME: &str = "<isolate>";

/// A worker isolate and its driver.
pub struct Worker {
    pub vm: Vm,
    entry: Handle,
    pub inbox: Arc<Inbox>,
    index: usize,
    /// What `session::pump` hands back (its type).
    #[allow(clippy::vec_box)]
    errors: Vec<Box<Uncaught>>,
}

pub fn spawn(pool: Arc<Pool>, index: usize, make: Factory) {
    let name = format!("csp-isolate-{}", index + 1);
    let started = std::thread::Builder::new().name(name).spawn(move || run(pool, index, make));
    if let Err(e) = started {
        eprintln!("csp: cannot start an isolate's thread: {e}");
        std::process::exit(70);
    }
}

fn run(pool: Arc<Pool>, index: usize, make: Factory) {
    let trace = pool.trace.as_ref().map(|t| t.open());
    let mut w = Worker::new(&pool, index, &make, trace);
    loop {
        let Some(stepped) = w.step(Duration::from_millis(20)) else {
            w.end_fibers();
            pool.worker_ended();
            return;
        };
        match stepped {
            Stepped::Busy => {}
            Stepped::Exit(code) => w.exit(code),
            Stepped::Fatal(text, code) => {
                eprint!("{text}");
                w.exit(code);
            }
            // Another isolate answered on a shared channel.
            _ if session::spin_for_shared(&mut w.vm) => {}
            Stepped::Waits(next) => session::wait(&mut w.vm, next),
            Stepped::Stuck => {
                if session::set_idle(&w.vm, true) {
                    w.inbox.sleep_stuck(&w.stuck_report());
                }
                session::set_idle(&w.vm, false);
            }
        }
    }
}

impl Worker {
    /// Makes worker `index`'s VM and starts its driver; with `trace`, the VM
    /// records into it as `worker isolate N`.
    pub fn new(pool: &Arc<Pool>, index: usize, make: &Factory, trace: Option<TraceFile>) -> Worker {
        let mut vm = make();
        if let Some(t) = trace {
            t.attach(&mut vm);
            vm.sched.name_trace_process(&format!("worker isolate {}", index + 1));
            vm.sched.name_trace_main("driver (runs each job in a fiber)");
        }
        let inbox = pool.inboxes[index].clone();
        let poked = inbox.clone();
        crate::sched::shared::set_hook(&mut vm, Arc::new(move || poked.poke()));
        crate::sched::shared::answer_asks(&mut vm);
        {
            let local = super::local(&mut vm);
            local.pool = Some(pool.clone());
            local.worker = Some(index);
        }
        let file = Rc::new(SourceFile::std(DRIVER_NAME, DRIVER));
        let proto = match crate::runner::compile_entry(&mut vm, &file) {
            Ok(p) => p,
            Err((_, d)) => panic!("the isolate driver does not compile: {:?}", d.first().map(|d| &d.message)),
        };
        let entry = session::start_entry(&mut vm, proto);
        // The driver is not the program's: `--max-fibers` does not count it.
        crate::sched::ops::exempt_fibers(&vm, 1);
        Worker { vm, entry, inbox, index, errors: Vec::new() }
    }

    /// Runs the worker's fibers for up to `allowance`; how it stands then,
    /// or None when its driver has stopped (the program's end).
    pub fn step(&mut self, allowance: Duration) -> Option<Stepped> {
        let pumped = session::pump(&mut self.vm, Some(self.entry), allowance, &mut self.errors);
        if let Some(text) = self.failure() {
            return Some(Stepped::Fatal(text, 1));
        }
        Some(match pumped {
            Pumped::Busy => Stepped::Busy,
            Pumped::Idle(next) => {
                self.vm.out.flush();
                if session::stuck(&self.vm, self.entry) {
                    Stepped::Stuck
                } else {
                    Stepped::Waits(next)
                }
            }
            Pumped::Exit(code) => {
                self.vm.out.flush();
                Stepped::Exit(code)
            }
            Pumped::Deadlock(report) => {
                self.vm.out.flush();
                Stepped::Fatal(report, 3)
            }
            // The driver stops at the program's end.
            Pumped::Done | Pumped::OutOfBudget => return None,
        })
    }

    /// An error nobody can take (a module's background fiber failed) ends
    /// the program, as in the main isolate: its report.
    fn failure(&mut self) -> Option<String> {
        let u = self.errors.first()?;
        let d = crate::runner::runtime_diag(&self.vm, u);
        self.vm.out.flush();
        Some(crate::diag::render(&d, &u.file, false))
    }

    /// The program's end: the fibers this isolate's modules started are
    /// cancelled, never waited for (docs/isolates.md); their `finally`
    /// blocks run until they are done or the grace time is over.
    pub fn end_fibers(&mut self) {
        session::cancel_all(&mut self.vm);
        self.errors.clear();
        while !session::grace_over(&self.vm) {
            let pumped = session::pump(&mut self.vm, None, Duration::from_millis(20), &mut self.errors);
            let vm = &self.vm;
            self.errors.retain(|u| !crate::vm::error::is_kind(vm, u.value, crate::vm::ErrorKind::Cancelled));
            if let Some(text) = self.failure() {
                eprint!("{text}");
                self.exit(1);
            }
            match pumped {
                Pumped::Busy => {}
                Pumped::Idle(next) => session::wait(&mut self.vm, next),
                // A cleanup waits on another isolate (a job's answer, a shared
                // channel): it may come within the grace time.
                Pumped::Done if session::awaits_others(&self.vm) => {
                    session::wait(&mut self.vm, Some(Instant::now() + Duration::from_millis(5)));
                }
                _ => break,
            }
        }
        self.vm.out.flush();
        // Before the pool hears it ended: the program's end closes the trace.
        crate::sched::ops::trace_flush(&mut self.vm, false);
    }

    /// The process ends now (`exit(code)`, an error nobody takes): the
    /// trace is closed first, with this isolate's events.
    pub fn exit(&mut self, code: i32) -> ! {
        crate::sched::ops::trace_flush(&mut self.vm, true);
        std::process::exit(code)
    }

    /// What the stuck worker's fibers wait on, for the deadlock report of an
    /// isolate waiting on one of its jobs (the driver's own lines left out).
    pub fn stuck_report(&self) -> String {
        let report = session::deadlock_report(&self.vm);
        let lines = report.lines().skip(1).filter(|l| !l.contains(DRIVER_NAME));
        let mut out = format!("a job on worker isolate {}", self.index + 1);
        for l in lines {
            out.push_str("\n    ");
            out.push_str(l.trim_start_matches("  "));
        }
        out
    }
}

/// SIGQUIT's list of a worker's fibers (`vm` is the worker's), headed with
/// the worker's number; the driver's fibers and frames left out.
pub fn fiber_dump(vm: &Vm) -> String {
    let index = super::local_ref(vm).and_then(|l| l.worker).map_or(0, |i| i + 1);
    let dump = session::fiber_dump(vm);
    let mut out = format!("SIGQUIT: every fiber of worker isolate {index}\n");
    // A fiber's lines: its state line (two spaces in), then its frames.
    let mut fiber = Vec::new();
    let flush = |fiber: &mut Vec<&str>, out: &mut String| {
        if !fiber.is_empty() && !fiber[0].contains(DRIVER_NAME) {
            for l in fiber.iter().filter(|l| !l.contains(DRIVER_NAME)) {
                out.push_str(l);
                out.push('\n');
            }
        }
        fiber.clear();
    };
    for line in dump.lines().skip(1) {
        if !line.starts_with("    ") {
            flush(&mut fiber, &mut out);
        }
        fiber.push(line);
    }
    flush(&mut fiber, &mut out);
    out
}
