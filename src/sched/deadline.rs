//! `csp run --timeout`: a wall-clock limit for the whole program. When it
//! passes, the main task is cancelled as SIGTERM would cancel it (every
//! `finally` runs, locks are released, children are killed) and the program
//! exits 124, as GNU `timeout` does; if cleanup is still running when the
//! grace time (`--grace`) has passed, the program ends at once.

use super::lifecycle::{cancel_task, Cause};
use crate::vm::Vm;
use std::time::{Duration, Instant};

pub(crate) struct Deadline {
    at: Instant,
    limit: Duration,
    /// The limit passed and the main task was cancelled.
    pub fired: bool,
}

impl Deadline {
    pub fn new(limit: Duration) -> Deadline {
        Deadline { at: Instant::now() + limit, limit, fired: false }
    }

    /// `5s`, `250ms`: the limit as the user gave it.
    pub fn describe(&self) -> String {
        show(self.limit)
    }
}

impl Deadline {
    /// When the scheduler must next look at it (never again once it fired).
    pub fn at(&self) -> Option<Instant> {
        (!self.fired).then_some(self.at)
    }
}

/// A duration as a user would write it: `5s`, `250ms`.
pub(crate) fn show(d: Duration) -> String {
    match d.subsec_millis() {
        0 => format!("{}s", d.as_secs()),
        _ => format!("{}ms", d.as_millis()),
    }
}

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

impl Deadline {
    /// The limit moves `by` later (a debugger's stop).
    pub fn postpone(&mut self, by: Duration) {
        self.at += by;
    }
}
