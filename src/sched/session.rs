//! Driving the scheduler a little at a time, for the REPL: each entry runs as a
//! main fiber of its own while fibers started by earlier entries keep running,
//! and nothing ends the program when the run queue empties.

use super::task::TaskState;
use super::{io, run_fiber, start, task, task_mut, timer, Fiber, Handle, Instant, Vm};
use crate::vm::fiber::Uncaught;
use std::rc::Rc;
use std::time::Duration;

/// How far `pump` got.
pub enum Pumped {
    /// The entry has finished (or there was none and nothing is ready).
    Done,
    /// The time allowance ran out with fibers still ready.
    Busy,
    /// Nothing can run until the given timer deadline (None: no timer) or an I/O
    /// completion.
    Idle(Option<Instant>),
}

/// Starts an entry's top level as a fiber with no owner; it runs at the next pump.
pub fn start_entry(vm: &mut Vm, proto: Rc<crate::bytecode::Proto>) -> Handle {
    let id = vm.sched.alloc_id();
    let th = super::new_task(vm, Some(id), TaskState::Running, None, None, false, None);
    vm.sched.main_task = Some(th);
    start(vm, Fiber::for_main(proto), id, th);
    th
}

/// Runs ready fibers, timers and I/O completions for up to `allowance`, stopping
/// early when `entry` finishes or nothing can run. An error that reaches the top
/// (the entry's own, or a background fiber's with nobody to take it) goes to
/// `errors`. A fiber waiting on its own task leaves its report in `sched.self_wait`.
pub fn pump(vm: &mut Vm, entry: Option<Handle>, allowance: Duration, errors: &mut Vec<Box<Uncaught>>) -> Pumped {
    let began = Instant::now();
    loop {
        super::deliver_events(vm);
        // An error found is handed back at once: only the VM roots values, so
        // it must be reported before the collector can run again.
        if let Some(e) = vm.sched.top_error.take() {
            errors.push(Box::new(super::report::uncaught_at_top(vm, e)));
            return Pumped::Busy;
        }
        if entry.is_some_and(|t| task(vm, t).finished()) {
            vm.sched.main_task = None;
            return Pumped::Done;
        }
        let Some(id) = vm.sched.ready.pop() else {
            let next = timer::next_deadline(vm);
            if entry.is_none() && next.is_none() && !io::pending(vm) {
                return Pumped::Done;
            }
            return Pumped::Idle(next);
        };
        if let Some(u) = run_fiber(vm, id) {
            // The entry's error ends only the entry: record it so `finished` holds.
            if let Some(t) = entry.filter(|&t| !task(vm, t).finished()) {
                let tk = task_mut(vm, t);
                tk.state = TaskState::Failed(u.value);
                tk.fiber = None;
                tk.observed = true;
            }
            errors.push(u);
            return Pumped::Busy;
        }
        if began.elapsed() >= allowance {
            return Pumped::Busy;
        }
    }
}

/// True when the entry is blocked and nothing pending can ever wake it.
pub fn stuck(vm: &Vm, entry: Handle) -> bool {
    !task(vm, entry).finished()
        && vm.sched.ready.is_empty()
        && !io::pending(vm)
        && (vm.sched.timers.is_empty() || !timer::pending(vm))
}

/// The deadlock report for a stuck entry.
pub fn deadlock_report(vm: &Vm) -> String {
    super::report::deadlock_report(vm)
}

/// Cancels the entry's fiber (Ctrl-C, or stuck for ever): `Cancelled` is thrown
/// where it waits, so its `finally` blocks run.
pub fn cancel_entry(vm: &mut Vm, entry: Handle) {
    if let Some(fid) = task(vm, entry).fiber {
        super::lifecycle::cancel_fiber(vm, fid);
    }
}

/// One line per fiber for `:fibers`: id, state, what it waits on, where it is.
pub fn describe_fibers(vm: &Vm) -> Vec<String> {
    super::report::fiber_lines(vm)
}
