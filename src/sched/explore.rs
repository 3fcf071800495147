//! Schedule exploration (`--explore N`, `--explore-seed S`; docs/testing.md).
//! One generator, seeded by the schedule's number, decides everything the
//! language leaves open: where a fiber is preempted (a random number of
//! back-edges and calls, often just one), which ready `select` case runs, the
//! order of timers due at the same instant, whether a woken fiber runs before
//! the queued ones or behind them, and the order of I/O completions delivered
//! together. Time is virtual, so a run is a function of its seed: the clock
//! advances with instructions run and jumps to the next timer when every fiber
//! waits. The program's `random()` keeps its own generator (`--seed`).
//!
//! The driver asks for these decisions through `policy.rs`, which holds the
//! generator and the virtual clock (`Explore`); here is what the exploring
//! policy does with I/O and idle waits; off (the
//! default), it asks only where it already does rare work: a slice's end, a
//! `select` with a ready case, adding a timer, going idle.

use super::io::{self, real_time_pending};
use crate::vm::Vm;
use std::time::{Duration, Instant};

/// How long to wait for pool work in flight before giving up on delivering it
/// at a fixed point (a read of a terminal may never finish).
const PATIENCE: Duration = Duration::from_millis(200);

/// Exploring, pool work takes no virtual time: waits until every job in flight
/// is done (with patience), then delivers them all in a random order.
pub(super) fn deliver_io(vm: &mut Vm) {
    let in_flight = io::in_flight(vm);
    let x = vm.sched.policy.explore_mut().expect("exploring");
    if !in_flight {
        x.patient = true;
        return;
    }
    let patience = x.patient.then_some(PATIENCE);
    let mut done = io::take_done(vm, patience);
    if patience.is_some() && io::in_flight_after(vm, &done) {
        vm.sched.policy.explore_mut().expect("exploring").patient = false;
    }
    vm.sched.policy.order(&mut done);
    io::complete(vm, done);
}

/// Exploring, nothing is ready: waits in real time only for what runs in real
/// time (descriptors, slow pool work), at most the next timer's virtual wait,
/// then moves the virtual clock to the next timer.
pub(super) fn idle_wait(vm: &mut Vm, next_timer: Option<Instant>) {
    deliver_io(vm);
    if vm.sched.ready.is_empty() && real_time_pending(vm) {
        // (Signals watched for Ctrl-C are only looked at: time jumps past them.)
        let wait = next_timer.map(|t| t.saturating_duration_since(vm.sched.now()));
        let began = Instant::now();
        super::driver::poll_outside(vm, wait);
        let waited = began.elapsed().min(wait.unwrap_or(Duration::MAX));
        vm.sched.policy.explore_mut().expect("exploring").jump(waited);
    }
    if vm.sched.ready.is_empty() {
        if let Some(t) = next_timer {
            let skip = t.saturating_duration_since(vm.sched.now());
            vm.sched.policy.explore_mut().expect("exploring").jump(skip);
        }
    }
}

impl super::Sched {
    /// Exploring, another isolate on this thread (`other`) is explored with
    /// this one: on the same virtual clock, seeded from this schedule.
    pub fn explore_alongside(&mut self, other: &mut super::Sched) {
        if let Some(x) = self.policy.explore_mut() {
            other.policy = super::policy::Policy::Explore(Box::new(x.alongside(other.ticks)));
            other.start = self.start;
        }
    }

    /// Exploring, a number drawn from the schedule (None in real time).
    pub fn explore_draw(&mut self) -> Option<u64> {
        self.policy.explore_mut().map(|x| x.next())
    }
}
