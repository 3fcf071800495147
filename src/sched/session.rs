//! Driving the scheduler a little at a time, for the REPL: each entry runs as a
//! main fiber of its own while fibers started by earlier entries keep running,
//! and nothing ends the program when the run queue empties.

use super::driver::{run_ready, Ran};
use super::report::uncaught_at_top;
use super::task::{self, TaskState};
use super::timer;
use crate::bytecode::ProtoRef;
use crate::vm::{Handle, Uncaught, Value, Vm};
use std::time::{Duration, Instant};

/// How far `pump` got.
pub enum Pumped {
    /// The entry has finished (or there was none and nothing is ready).
    Done,
    /// The time allowance ran out with fibers still ready.
    Busy,
    /// Nothing can run until the given timer deadline (None: no timer) or an I/O
    /// completion.
    Idle(Option<Instant>),
    /// A fiber waited on its own task: the report.
    Deadlock(String),
    /// `exit(code)` was called: the session ends with this status.
    Exit(i32),
    /// The budget an embedding host set (its fuel) is used up.
    OutOfBudget,
}

/// Starts an entry's top level as a fiber with no owner; it runs at the next pump.
pub fn start_entry(vm: &mut Vm, proto: ProtoRef) -> Handle {
    super::start::start_main(vm, proto)
}

/// Runs ready fibers, timers and I/O completions for up to `allowance`, stopping
/// early when `entry` finishes or nothing can run. An error that reaches the top
/// (the entry's own, or a background fiber's with nobody to take it) goes to
/// `errors`.
pub fn pump(vm: &mut Vm, entry: Option<Handle>, allowance: Duration, errors: &mut Vec<Box<Uncaught>>) -> Pumped {
    let stop = |vm: &Vm| vm.sched.orphan_error.is_some() || entry.is_some_and(|t| task::get(&vm.heap, t).finished());
    match run_ready(vm, Some(&stop), Some(allowance)) {
        Ran::Error(u) => {
            // The entry's error ends only the entry: record it so `finished` holds.
            if let Some(t) = entry.filter(|&t| !task::get(&vm.heap, t).finished()) {
                let tk = task::get_mut(&mut vm.heap, t);
                tk.state = TaskState::Failed(u.value);
                tk.fiber = None;
                tk.observed = true;
            }
            errors.push(u);
            Pumped::Busy
        }
        Ran::Deadlock(report) => Pumped::Deadlock(report),
        // Output goes to the console, never to a pipe.
        Ran::BrokenPipe => Pumped::Busy,
        Ran::Exit(code) => Pumped::Exit(code),
        // Only an embedding host sets a budget (its fuel).
        Ran::OutOfBudget => Pumped::OutOfBudget,
        // Only a program's end, a signal or `--timeout` start the grace time.
        Ran::GraceOver => Pumped::Busy,
        Ran::Stopped | Ran::Idle => {
            // An error found is handed back at once: only the VM roots values, so
            // it must be reported before the collector can run again.
            if let Some(e) = vm.sched.orphan_error.take() {
                errors.push(Box::new(uncaught_at_top(vm, e)));
                return Pumped::Busy;
            }
            if entry.is_some_and(|t| task::get(&vm.heap, t).finished()) {
                vm.sched.main_task = None;
                return Pumped::Done;
            }
            if !vm.sched.ready.is_empty() {
                return Pumped::Busy;
            }
            let next = timer::next_deadline(vm);
            if entry.is_none() && next.is_none() && !super::io::outside_pending(vm) {
                return Pumped::Done;
            }
            Pumped::Idle(next)
        }
    }
}

/// Sleeps until `until`, the next timer, or an I/O completion; delivers
/// what came due.
pub fn wait(vm: &mut Vm, until: Option<Instant>) {
    let next = [until, timer::next_deadline(vm)].into_iter().flatten().min();
    // Nothing could end the wait.
    if next.is_none() && !super::io::outside_pending(vm) {
        return;
    }
    super::others::idle_wait(vm, next);
}

/// Watches briefly for another isolate to complete a shared-channel
/// operation of this one (before sleeping); true if one came, delivered.
pub fn spin_for_shared(vm: &mut Vm) -> bool {
    super::shared::spin(vm, None)
}

/// The isolate is about to sleep outside the scheduler (`on`) or awake
/// again: while it sleeps, another isolate's completion wakes it (through
/// its mailbox's hook). False when one came meanwhile: it must not sleep.
pub fn set_idle(vm: &Vm, on: bool) -> bool {
    super::shared::set_idle(vm, on)
}

/// This isolate's reactor's descriptor (made now if it is not yet): for an
/// isolate that steps this one on its thread to watch (`others::watch`).
pub fn reactor_fd(vm: &mut Vm) -> std::io::Result<std::os::fd::RawFd> {
    Ok(vm.sched.events.reactor()?.fd())
}

/// A whole collection, now (between the isolate's slices), that another
/// isolate asked for (`driver::collect_for_others`).
pub fn collect_for_others(vm: &mut Vm) {
    super::driver::collect_for_others(vm);
}

/// Has `--timeout` (an embedding host's `timeout`) cancelled the code?
pub fn timed_out(vm: &Vm) -> bool {
    vm.sched.events.deadline.as_ref().is_some_and(|d| d.fired)
}

/// True when the entry is blocked and nothing pending can ever wake it.
pub fn stuck(vm: &Vm, entry: Handle) -> bool {
    !task::get(&vm.heap, entry).finished()
        && vm.sched.ready.is_empty()
        && !super::io::outside_pending(vm)
        && !timer::pending(vm)
        && !super::others::may_wake(vm)
}

/// The entry's result, once it finished well.
pub fn result(vm: &Vm, entry: Handle) -> Option<Value> {
    match task::get(&vm.heap, entry).state {
        TaskState::Done(v) => Some(v),
        _ => None,
    }
}

/// The deadlock report for a stuck entry.
pub fn fiber_dump(vm: &Vm) -> String {
    super::report::fiber_dump(vm)
}

pub fn deadlock_report(vm: &Vm) -> String {
    super::report::deadlock_report(vm)
}

/// Cancels the entry's fiber (Ctrl-C, or stuck for ever): `Cancelled` is thrown
/// where it waits, so its `finally` blocks run. The tasks it started and is
/// waiting on (`wait t`: a fiber, a job on another isolate) are its work and
/// are cancelled with it; the others it started keep running in the background.
/// Returns the fibers of the tasks cancelled with it, for `cleaning_up`.
pub fn cancel_entry(vm: &mut Vm, entry: Handle) -> Vec<(u32, Handle)> {
    let Some(fid) = task::get(&vm.heap, entry).fiber else { return Vec::new() };
    let tk = task::get(&vm.heap, entry);
    let children = tk.extra.as_ref().map(|x| x.children.clone()).unwrap_or_default();
    let awaited = children.into_iter().filter(|&c| {
        let waiters = task::get(&vm.heap, c).extra.as_ref().map_or(&[][..], |x| &x.waiters[..]);
        waiters.iter().any(|&(f, _)| f == fid)
    });
    let mut cancelled = Vec::new();
    for c in awaited.collect::<Vec<_>>() {
        cancelled.extend(task::get(&vm.heap, c).fiber.map(|f| (f, c)));
        super::lifecycle::cancel_task(vm, c, super::lifecycle::Cause::Signal("SIGINT"));
    }
    super::lifecycle::cancel_fiber(vm, fid);
    cancelled
}

/// Does one of these fibers (from `cancel_entry`) still run its task (its
/// `finally` blocks, or a job's on another isolate that it waits for)?
pub fn cleaning_up(vm: &Vm, fibers: &[(u32, Handle)]) -> bool {
    fibers.iter().any(|&(f, t)| vm.sched.fibers.runs_task(f, t))
}

/// How long a cancelled fiber's cleanup may take (`--grace`).
pub fn grace(vm: &Vm) -> Duration {
    vm.sched.grace
}

/// One line per fiber for `:fibers`: id, state, what it waits on, where it is.
pub fn describe_fibers(vm: &Vm) -> Vec<String> {
    super::report::fiber_lines(vm)
}

/// Is blocking work in flight (its completion wakes a fiber)?
pub fn io_pending(vm: &Vm) -> bool {
    super::io::outside_pending(vm)
}

/// The isolate is ending (a worker, at the program's end): every fiber is
/// cancelled, their `finally` blocks run under the grace rule.
pub fn cancel_all(vm: &mut Vm) {
    vm.sched.begin_ending();
    let ids: Vec<u32> = vm.sched.fibers.states().map(|(id, _)| id).collect();
    for id in ids {
        super::lifecycle::cancel_fiber(vm, id);
    }
}

/// Has the grace time of an ending isolate run out?
pub fn grace_over(vm: &Vm) -> bool {
    vm.sched.ending.is_some_and(|t| vm.sched.now() >= t)
}

/// May a fiber here be waiting on another isolate (a job handed off, a
/// shared channel)?
pub fn awaits_others(vm: &Vm) -> bool {
    vm.sched.fibers.live > 0 && (super::io::in_flight(vm) || super::shared::listening(vm))
}

/// The session is over (Ctrl-D, `:quit`, `exit`): children still running are
/// killed and reaped, as at a program's end.
pub fn end(vm: &mut Vm) {
    super::ops::release_adopted(vm, None);
}
