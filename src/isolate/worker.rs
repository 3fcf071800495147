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
use std::time::Duration;

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
    {
        let local = super::local(&mut vm);
        local.pool = Some(pool);
        local.worker = Some(index);
    }
    let file = Rc::new(SourceFile::std(DRIVER_NAME, DRIVER));
    let proto = match crate::runner::compile_entry(&mut vm, &file) {
        Ok(p) => p,
        Err((_, d)) => panic!("the isolate driver does not compile: {:?}", d.first().map(|d| &d.message)),
    };
    let entry = session::start_entry(&mut vm, proto);
    let mut errors = Vec::new();
    loop {
        let pumped = session::pump(&mut vm, Some(entry), Duration::from_millis(20), &mut errors);
        if let Some(u) = errors.first() {
            // An error nobody can take (a module's background fiber failed):
            // it ends the program, as in the main isolate.
            let d = crate::runner::runtime_diag(&vm, u);
            vm.out.flush();
            eprint!("{}", crate::diag::render(&d, &u.file, false));
            std::process::exit(1);
        }
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
                vm.out.flush();
                return;
            }
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
