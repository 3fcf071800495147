//! `csp run --timeout`: a wall-clock limit for the whole program. When it
//! passes, the main task is cancelled as SIGTERM would cancel it (every
//! `finally` runs, locks are released, children are killed) and the program
//! exits 124, as GNU `timeout` does; if cleanup is still running when the
//! grace time (`--grace`) has passed, the program ends at once.

use super::lifecycle::{cancel_task, Cause};
use crate::vm::Vm;
use std::time::Instant;

/// Acts on a deadline that has passed: cancels the program (which then ends
/// when its cleanup is done, or its grace time has passed).
pub(super) fn check(vm: &mut Vm) {
    let Some(d) = vm.sched.events.deadline.as_mut() else { return };
    if d.fired || Instant::now() < d.at {
        return;
    }
    d.fired = true;
    let limit = d.describe();
    vm.sched.begin_ending();
    if let Some(main) = vm.sched.main_task {
        cancel_task(vm, main, Cause::Timeout(limit));
    }
}
