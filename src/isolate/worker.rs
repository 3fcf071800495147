//! A worker isolate's thread: its own VM, made as the main isolate's was,
//! running the driver (driver.csp) that starts a fiber per job, until the
//! process ends. When every fiber of the worker waits on something only
//! another isolate can end, the worker is stuck: it says so on its jobs'
//! answers (so the program's end and deadlocks are seen across isolates)
//! and sleeps until a message comes.

use super::pool::{Factory, Pool};
use crate::sched::session::{self, Pumped};
use crate::source::SourceFile;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DRIVER: &str = include_str!("driver.csp");
/// The driver's file name in traces (its frames are left out of them).
pub const DRIVER_NAME: &str = "<isolate>";

pub fn spawn(pool: Arc<Pool>, index: usize, make: Factory) {
    let name = format!("csp-isolate-{}", index + 1);
    let started = std::thread::Builder::new().name(name).spawn(move || run(pool, index, make));
    if let Err(e) = started {
        eprintln!("csp: cannot start an isolate's thread: {e}");
        std::process::exit(70);
    }
}

fn run(pool: Arc<Pool>, index: usize, make: Factory) {
    let mut vm = make();
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
    let mut errors = Vec::new();
    loop {
        let pumped = session::pump(&mut vm, Some(entry), Duration::from_millis(20), &mut errors);
        fail_on(&mut vm, &errors);
        match pumped {
            Pumped::Busy => {}
            Pumped::Idle(next) => {
                vm.out.flush();
                if session::spin_for_shared(&mut vm) {
                    // Another isolate answered on a shared channel.
                } else if session::stuck(&vm, entry) {
                    if session::set_idle(&vm, true) {
                        inbox.sleep_stuck(&stuck_report(&vm, index));
                    }
                    session::set_idle(&vm, false);
                } else {
                    session::wait(&mut vm, next);
                }
            }
            Pumped::Exit(code) => {
                vm.out.flush();
                std::process::exit(code);
            }
            Pumped::Deadlock(report) => {
                vm.out.flush();
                eprint!("{report}");
                std::process::exit(3);
            }
            Pumped::Done | Pumped::OutOfBudget => {
                // The driver stops at the program's end.
                end_fibers(&mut vm);
                vm.out.flush();
                pool.worker_ended();
                return;
            }
        }
    }
}

/// An error nobody can take (a module's background fiber failed) ends the
/// program, as in the main isolate.
fn fail_on(vm: &mut crate::vm::Vm, errors: &[Box<crate::vm::Uncaught>]) {
    if let Some(u) = errors.first() {
        let d = crate::runner::runtime_diag(vm, u);
        vm.out.flush();
        eprint!("{}", crate::diag::render(&d, &u.file, false));
        std::process::exit(1);
    }
}

/// The program's end: the fibers this isolate's modules started are
/// cancelled, never waited for (docs/isolates.md); their `finally` blocks
/// run until they are done or the grace time is over.
fn end_fibers(vm: &mut crate::vm::Vm) {
    session::cancel_all(vm);
    let mut errors = Vec::new();
    while !session::grace_over(vm) {
        let pumped = session::pump(vm, None, Duration::from_millis(20), &mut errors);
        errors.retain(|u| !crate::vm::error::is_kind(vm, u.value, crate::vm::ErrorKind::Cancelled));
        fail_on(vm, &errors);
        match pumped {
            Pumped::Busy => {}
            Pumped::Idle(next) => session::wait(vm, next),
            // A cleanup waits on another isolate (a job's answer, a shared
            // channel): it may come within the grace time.
            Pumped::Done if session::awaits_others(vm) => {
                session::wait(vm, Some(Instant::now() + Duration::from_millis(5)));
            }
            _ => return,
        }
    }
}

/// What the stuck worker's fibers wait on, for the deadlock report of an
/// isolate waiting on one of its jobs (the driver's own lines left out).
fn stuck_report(vm: &crate::vm::Vm, index: usize) -> String {
    let report = session::deadlock_report(vm);
    let lines = report.lines().skip(1).filter(|l| !l.contains(DRIVER_NAME));
    let mut out = format!("a job on worker isolate {}", index + 1);
    for l in lines {
        out.push_str("\n    ");
        out.push_str(l.trim_start_matches("  "));
    }
    out
}
