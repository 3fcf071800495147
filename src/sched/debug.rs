//! What `csp dap` asks of the scheduler while the program is stopped
//! (docs/debugging.md): the fibers as threads, a fiber's stack to read, and the
//! clock moved past the stop so no timer or deadline sees it.

use crate::vm::{Fiber, Vm};
use std::time::Duration;

/// A fiber as a debugger lists it.
pub struct FiberInfo {
    /// Its slot (ids of finished fibers are reused).
    pub id: u32,
    /// "main fiber", or "fiber 3 (go at file:line:col)".
    pub name: String,
    /// "running", "ready", or "blocked on receive from channel".
    pub state: String,
}

/// Ids of fibers a `go` made that have not started (no slot yet) begin here.
pub const NOT_STARTED: u32 = 1 << 30;

/// Every fiber that exists (started and not finished, the running one too),
/// then those not started yet.
pub fn fibers(vm: &Vm) -> Vec<FiberInfo> {
    let running = vm.sched.fibers.current;
    let not_started = super::start::not_started(vm).map(|(n, site)| FiberInfo {
        id: NOT_STARTED + n,
        name: format!("fiber {n} (go at {})", site.location()),
        state: "not started".into(),
    });
    let mut all: Vec<FiberInfo> = vm
        .sched
        .fibers
        .states()
        .map(|(id, s)| {
            let name = name(vm, s);
            let state = match &s.parked {
                Some(w) => format!("blocked on {}", w.describe()),
                None if id == running && vm.sched.fibers.slots[id as usize].fiber.is_none() => "running".into(),
                None => "ready".into(),
            };
            FiberInfo { id, name, state }
        })
        .collect();
    all.extend(not_started);
    all
}

/// "main fiber", or "fiber 3 (go at file:line:col)".
fn name(vm: &Vm, s: &super::FiberState) -> String {
    let task = s.task.map(|t| super::task::get(&vm.heap, t));
    match task.and_then(|t| t.site.map(|site| (t.number, site))) {
        Some((n, site)) => format!("fiber {n} (go at {})", site.location()),
        None => "main fiber".to_string(),
    }
}

/// The name of fiber `id` (one that exists).
pub fn fiber_name(vm: &Vm, id: u32) -> String {
    name(vm, vm.sched.fibers.state(id))
}

/// Fiber `id`, when it is in its slot (not the running one).
pub fn fiber(vm: &Vm, id: u32) -> Option<&Fiber> {
    vm.sched.fibers.slots.get(id as usize)?.fiber.as_deref()
}

/// The program was stopped for `d`: timers, `--timeout`, the grace time and
/// the clock fibers read all move `d` later.
pub fn postpone_clock(vm: &mut Vm, d: Duration) {
    super::timer::postpone(vm, d);
    vm.sched.start += d;
    if let Some(t) = vm.sched.ending.as_mut() {
        *t += d;
    }
    if let Some(dl) = vm.sched.events.deadline.as_mut() {
        dl.postpone(d);
    }
}
