//! Timers: `sleep`, `after` and `ticker`, kept in a binary heap of deadlines.

use super::{chan, Resume, Timer, Waiter};
use crate::vm::{Handle, Value, Vm};
use std::time::{Duration, Instant};

pub enum TimerKind {
    /// Wake a sleeping fiber.
    Wake(Waiter),
    /// `after(ms)`: send the time once on this channel.
    Send(Handle),
    /// `ticker(ms)`: send the time on this channel every period (dropped when full).
    Tick(Handle, Duration),
}

pub fn add(vm: &mut Vm, at: Instant, kind: TimerKind) {
    vm.sched.timer_seq += 1;
    let seq = vm.sched.timer_seq;
    vm.sched.timers.push(Timer { at, seq, kind });
}

/// A deadline `ms` milliseconds from now (negative and NaN mean now).
pub fn deadline(ms: f64) -> Instant {
    let ms = if ms.is_finite() && ms > 0.0 { ms.min(1e12) } else { 0.0 };
    Instant::now() + Duration::from_secs_f64(ms / 1000.0)
}

/// Runs every timer whose deadline has passed.
pub fn fire_due(vm: &mut Vm) {
    let now = Instant::now();
    while vm.sched.timers.peek().is_some_and(|t| t.at <= now) {
        let t = vm.sched.timers.pop().unwrap();
        match t.kind {
            TimerKind::Wake(w) => {
                vm.sched.wake(w, Resume::Value(Value::Nil));
            }
            TimerKind::Send(ch) => {
                let v = Value::Float(vm.sched.now_ms());
                let _ = chan::try_send(vm, ch, v);
            }
            TimerKind::Tick(ch, period) => {
                let v = Value::Float(vm.sched.now_ms());
                let _ = chan::try_send(vm, ch, v);
                let mut next = t.at + period;
                if next <= now {
                    next = now + period;
                }
                add(vm, next, TimerKind::Tick(ch, period));
            }
        }
    }
}

/// Is this timer still useful? A sleep whose fiber was woken another way
/// (cancelled) is not.
fn live(vm: &Vm, t: &Timer) -> bool {
    match t.kind {
        TimerKind::Wake(w) => vm.sched.is_parked(w),
        _ => true,
    }
}

/// Drops dead timers from the top of the heap, so the earliest is a live one.
pub fn prune(vm: &mut Vm) {
    while vm.sched.timers.peek().is_some_and(|t| !live(vm, t)) {
        vm.sched.timers.pop();
    }
}

/// Are there timers that can still wake someone? A sleep always can; `after`
/// and `ticker` channels only while some fiber is parked (it may wait on one),
/// so a forgotten ticker does not keep a finished program alive.
pub fn pending(vm: &Vm) -> bool {
    vm.sched.timers.iter().any(|t| matches!(t.kind, TimerKind::Wake(_)) && live(vm, t))
        || (!vm.sched.timers.is_empty() && vm.sched.fibers.iter().flatten().any(|f| f.sched.parked.is_some()))
}

/// When the next timer that can still wake someone is due (dead ones dropped).
pub fn next_deadline(vm: &mut Vm) -> Option<Instant> {
    prune(vm);
    vm.sched.timers.peek().map(|t| t.at).filter(|_| pending(vm))
}
