//! `csp run --timeout`: a wall-clock limit for the whole program. When it
//! passes, the main task is cancelled as SIGTERM would cancel it (every
//! `finally` runs, locks are released, children are killed) and the program
//! exits 124, as GNU `timeout` does; if cleanup is still running a second
//! later, the process ends at once.

use super::lifecycle::{cancel_task, Cause};
use crate::vm::Vm;
use std::time::{Duration, Instant};

/// How long cleanup may take after the limit before the process just ends.
const GRACE: Duration = Duration::from_secs(1);

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
        match self.limit.subsec_millis() {
            0 => format!("{}s", self.limit.as_secs()),
            _ => format!("{}ms", self.limit.as_millis()),
        }
    }
}

impl Deadline {
    /// When the scheduler must next look at it.
    pub fn at(&self) -> Instant {
        self.at
    }
}

/// Acts on a deadline that has passed: cancels the program the first time,
/// ends the process when the grace period has passed too.
pub(super) fn check(vm: &mut Vm) {
    let Some(d) = vm.sched.deadline.as_mut() else { return };
    if Instant::now() < d.at {
        return;
    }
    if d.fired {
        let limit = d.describe();
        super::ops::kill_children(vm, None);
        vm.out.flush();
        super::trace::close(vm);
        crate::err_println!("csp: timed out after {limit} (--timeout); cleanup did not finish within {GRACE:?}");
        std::process::exit(crate::runner::TIMED_OUT);
    }
    d.fired = true;
    d.at = Instant::now() + GRACE;
    let limit = d.describe();
    if let Some(main) = vm.sched.main_task {
        cancel_task(vm, main, Cause::Timeout(limit));
    }
}
