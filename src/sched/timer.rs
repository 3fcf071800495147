//! Timers: `sleep`, `after` and `ticker` firing from the heap of deadlines (events.rs).

use super::chan;
use super::events::{Timer, TimerKind};
use crate::vm::{Resume, Value, Vm};
use std::time::{Duration, Instant};

pub(super) fn add(vm: &mut Vm, at: Instant, kind: TimerKind) {
    let t = &mut vm.sched.events.timers;
    t.seq += 1;
    // Equal deadlines fire in the order added, or at random when exploring.
    let seq = vm.sched.policy.choose(|| t.seq);
    t.heap.push(Timer { at, seq, kind });
}

/// Longest wait, in milliseconds (about 31 years): longer ones would not fit
/// a `Duration` or overflow an `Instant`.
const MAX_MS: f64 = 1e12;

/// A deadline `ms` milliseconds from now (negative and NaN mean now).
pub(super) fn deadline(vm: &Vm, ms: f64) -> Instant {
    vm.sched.now() + period(ms)
}

/// `ms` milliseconds as a duration, at most `MAX_MS` (negative and NaN: zero).
pub(super) fn period(ms: f64) -> Duration {
    let ms = if ms.is_finite() && ms > 0.0 { ms.min(MAX_MS) } else { 0.0 };
    Duration::from_secs_f64(ms / 1000.0)
}

/// Runs every timer whose deadline has passed.
pub(super) fn fire_due(vm: &mut Vm) {
    if vm.sched.events.timers.heap.is_empty() {
        return;
    }
    let now = vm.sched.now();
    while vm.sched.events.timers.heap.peek().is_some_and(|t| t.at <= now) {
        let t = vm.sched.events.timers.heap.pop().unwrap();
        match t.kind {
            TimerKind::Wake(w) => {
                vm.sched.wake(w, Resume::Value(Value::Nil));
            }
            TimerKind::Send(ch) => {
                let v = Value::Float(vm.sched.now_ms());
                chan::offer(vm, ch, v);
            }
            TimerKind::Tick(ch, period) => {
                let v = Value::Float(vm.sched.now_ms());
                chan::offer(vm, ch, v);
                let mut next = t.at + period;
                if next <= now {
                    next = now + period;
                }
                add(vm, next, TimerKind::Tick(ch, period));
            }
            TimerKind::Grace(_, th) => {
                if live(vm, &t) {
                    super::lifecycle::grace_ran_out(vm, th);
                }
            }
        }
    }
}

/// Is a timer's deadline past at `now` (one is to fire)?
#[inline]
pub(super) fn due(vm: &Vm, now: Instant) -> bool {
    first(vm).is_some_and(|at| at <= now)
}

/// The earliest deadline, live or not.
#[inline]
pub(super) fn first(vm: &Vm) -> Option<Instant> {
    vm.sched.events.timers.heap.peek().map(|t| t.at)
}

/// Is this timer still useful? A sleep whose fiber was woken another way
/// (cancelled) is not.
fn live(vm: &Vm, t: &Timer) -> bool {
    match t.kind {
        TimerKind::Wake(w) => vm.sched.fibers.is_parked(w),
        TimerKind::Grace(fid, th) => vm.sched.fibers.runs_task(fid, th),
        _ => true,
    }
}

/// Can this timer wake a parked fiber now?
fn wakes_parked(vm: &Vm, t: &Timer) -> bool {
    match t.kind {
        TimerKind::Wake(w) => vm.sched.fibers.is_parked(w),
        TimerKind::Grace(fid, _) => live(vm, t) && vm.sched.fibers.state(fid).parked.is_some(),
        TimerKind::Send(ch) | TimerKind::Tick(ch, _) => chan::has_receiver(vm, ch),
    }
}

/// Are there timers that can still wake someone? A sleep always can; `after`
/// and `ticker` channels only while some fiber is parked (it may wait on one),
/// so a forgotten ticker does not keep a finished program alive.
pub(super) fn pending(vm: &Vm) -> bool {
    let timers = &vm.sched.events.timers.heap;
    timers.iter().any(|t| matches!(t.kind, TimerKind::Wake(_) | TimerKind::Grace(..)) && wakes_parked(vm, t))
        || (!timers.is_empty() && vm.sched.fibers.states().any(|(_, s)| s.parked.is_some()))
}

/// Can some timer still wake a fiber: a live sleep, or an `after`/`ticker`
/// whose channel a fiber is parked receiving from?
pub(super) fn can_wake_a_fiber(vm: &Vm) -> bool {
    vm.sched.events.timers.heap.iter().any(|t| wakes_parked(vm, t))
}

/// When the next timer that can still wake someone is due (dead ones dropped).
pub(super) fn next_deadline(vm: &mut Vm) -> Option<Instant> {
    while vm.sched.events.timers.heap.peek().is_some_and(|t| !live(vm, t)) {
        vm.sched.events.timers.heap.pop();
    }
    vm.sched.events.timers.heap.peek().map(|t| t.at).filter(|_| pending(vm))
}

/// Moves every deadline `by` later (a debugger's stop: no time passed for
/// the program).
pub(super) fn postpone(vm: &mut Vm, by: Duration) {
    let timers = &mut vm.sched.events.timers;
    let mut all = std::mem::take(&mut timers.heap).into_vec();
    for t in &mut all {
        t.at += by;
    }
    timers.heap = all.into();
}
