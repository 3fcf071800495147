//! Other isolates, as this one's scheduler sees them (docs/isolates.md): the
//! isolates that run on this thread (`--isolates 1`), stepped between this
//! one's slices and while it has nothing to run, and whether any isolate can
//! still make progress, so that this one is not called deadlocked while
//! another can still wake it. The isolate layer implements `Others`.

use super::driver;
use crate::vm::Vm;
use std::time::{Duration, Instant};

/// The other isolates of the runtime.
pub trait Others {
    /// Can one of them still make progress (run, or be woken by a timer or
    /// I/O)? Decided atomically with what they send here: when it says no,
    /// whatever one of them sent before it stopped has arrived.
    fn active(&self) -> bool;
    /// Runs those on this thread for up to `allowance`.
    fn step(&mut self, _allowance: Duration) -> Stepped {
        Stepped::Stuck
    }
    /// The program ends in order: those on this thread end their fibers
    /// (their `finally` blocks run, under the grace rule).
    fn end(&mut self, _grace: Duration) {}
    /// Those on this thread collect their garbage now (this one nears the
    /// runtime's `--max-memory`).
    fn collect(&mut self) {}
    /// Do some of them run on this thread?
    fn here(&self) -> bool {
        false
    }
    /// SIGQUIT: each prints its fibers on stderr (those on this thread now,
    /// the others as soon as they run).
    fn dump(&mut self) {}
}

/// How the isolates on this thread stand after a step.
pub enum Stepped {
    /// They have more to run.
    Busy,
    /// They wait for a timer (its deadline) or I/O (None), which wakes this
    /// thread's reactor.
    Waits(Option<Instant>),
    /// Only another isolate (this one) can wake them.
    Stuck,
    /// One called `exit(code)`.
    Exit(i32),
    /// One failed beyond recovery: what to print on stderr and the exit
    /// code (an error nobody takes, a fiber waiting on its own task).
    Fatal(String, i32),
}

/// The scheduler's part: the other isolates and when those on this thread
/// last ran.
pub(crate) struct Held {
    others: Box<dyn Others>,
    turn: Instant,
}

/// Sets the other isolates (the isolate layer, when it starts the pool).
pub fn set(vm: &mut Vm, others: Box<dyn Others>) {
    vm.sched.events.others = Some(Held { others, turn: Instant::now() });
}

/// Watches `fd` (the reactor of the isolates on this thread) in this
/// isolate's reactor, so its idle sleep ends when they have work.
pub fn watch(vm: &mut Vm, fd: std::os::fd::RawFd) -> std::io::Result<()> {
    vm.sched.events.reactor()?.watch_others(fd)
}

/// SIGQUIT reached this isolate: the others list their fibers too.
pub(super) fn dump(vm: &mut Vm) {
    if let Some(h) = vm.sched.events.others.as_mut() {
        h.others.dump();
    }
}

/// Is any other isolate still able to make progress?
fn active(vm: &Vm) -> bool {
    vm.sched.events.others.as_ref().is_some_and(|h| h.others.active())
}

/// Only a job handed off or a shared channel lets another isolate wake a
/// fiber here: blocked on local channels alone, this one is deadlocked
/// whatever the others do.
fn linked(vm: &Vm) -> bool {
    super::io::in_flight(vm) || super::shared::parked_here(vm)
}

/// Can another isolate still wake a fiber of this one?
pub(super) fn may_wake(vm: &Vm) -> bool {
    linked(vm) && active(vm)
}

/// Do isolates run on this thread (so this one's idle sleep must watch them)?
pub(super) fn here(vm: &Vm) -> bool {
    vm.sched.events.others.as_ref().is_some_and(|h| h.others.here())
}

/// Between this isolate's slices: the isolates on this thread get a turn of
/// one slice after each slice of this one's.
/// Exploring, after each run of this isolate's fibers (see `explore_turn`).
#[inline]
pub(super) fn busy_turn(vm: &mut Vm) {
    let Some(h) = vm.sched.events.others.as_ref() else { return };
    if vm.sched.policy.exploring() {
        explore_turn(vm);
    } else if h.others.here() && h.turn.elapsed() >= vm.sched.slice {
        step(vm);
    }
}

/// Exploring, between two runs of this isolate's fibers: the isolates on
/// this thread take a turn, or not, as the schedule decides. A turn is
/// often a run or two of their fibers and sometimes a few hundred, as a
/// thread of its own may run far ahead of this one (descheduled by the OS).
fn explore_turn(vm: &mut Vm) {
    if !here(vm) {
        return;
    }
    let r = vm.sched.policy.choose(|| 0);
    if r & 1 == 0 {
        return;
    }
    let runs = 1 + (r >> 16) % (1 << ((r >> 1) % 9));
    for _ in 0..runs {
        if !matches!(step(vm), Stepped::Busy) || vm.sched.exit.is_some() {
            return;
        }
    }
}

/// This isolate has nothing to run: how those on this thread stand after
/// a turn (None: there are none).
pub(super) fn idle_turn(vm: &mut Vm) -> Option<Stepped> {
    if !here(vm) {
        return None;
    }
    Some(step(vm))
}

/// This isolate waits for a timer (`next`) or I/O: the isolates on this
/// thread run meanwhile, and it sleeps only when they wait too.
pub(super) fn idle_wait(vm: &mut Vm, next: Option<Instant>) {
    match idle_turn(vm) {
        // This one looks at its events again before their next turn.
        Some(Stepped::Busy) => {}
        Some(Stepped::Waits(at)) => driver::idle_wait(vm, [next, at].into_iter().flatten().min()),
        _ => driver::idle_wait(vm, next),
    }
}

fn step(vm: &mut Vm) -> Stepped {
    let slice = vm.sched.slice;
    let Some(held) = vm.sched.events.others.as_mut() else { return Stepped::Stuck };
    let stepped = held.others.step(slice);
    held.turn = Instant::now();
    match stepped {
        Stepped::Exit(code) => {
            vm.sched.exit = Some(code);
            Stepped::Busy
        }
        Stepped::Fatal(text, code) => {
            vm.out.flush();
            eprint!("{text}");
            // The trace is closed first, with this isolate's events.
            super::trace::end_now(vm);
            std::process::exit(code);
        }
        s => s,
    }
}

/// The isolates on this thread collect their garbage now.
pub(super) fn collect(vm: &mut Vm) {
    if let Some(h) = vm.sched.events.others.as_mut() {
        h.others.collect();
    }
}

/// The program ends in order: the isolates on this thread end too.
pub(super) fn end(vm: &mut Vm) {
    let grace = vm.sched.grace;
    if let Some(h) = vm.sched.events.others.as_mut() {
        h.others.end(grace);
    }
}

/// How often an isolate that would be deadlocked looks again while another
/// isolate can still make progress (and so perhaps wake it).
const RECHECK: Duration = Duration::from_millis(10);

/// This isolate is stuck: if another can still wake it, lets it run (on
/// this thread) or sleeps a little (or until woken), and says so; false when
/// no other isolate can (a deadlock).
pub(super) fn wait_on_others(vm: &mut Vm) -> bool {
    if !linked(vm) {
        return false;
    }
    match idle_turn(vm) {
        Some(Stepped::Busy) => return true,
        Some(Stepped::Waits(at)) => {
            driver::idle_wait(vm, at);
            return true;
        }
        Some(_) => {}
        None if active(vm) => {
            vm.out.flush();
            driver::idle_wait(vm, Some(Instant::now() + RECHECK));
            return true;
        }
        None => {}
    }
    // Whatever they sent before they stopped has come: it may wake this one.
    super::io::outside_pending(vm)
}
