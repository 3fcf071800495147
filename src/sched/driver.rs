//! Driving fibers: running ready ones a slice at a time, acting on how each
//! stopped, delivering timers and I/O, collecting garbage between slices, and
//! deciding how the program ends. The program (`run_main`) and the REPL
//! (`session.rs`) share `run_ready`.

use super::io::outside_pending;
use super::lifecycle::{cancel_fiber, finish, interrupt};
use super::policy::SLICE_BUDGET;
use super::profile;
use super::queue::Runnable;
use super::reactor::Woken;
use super::report::{deadlock_report, uncaught_at_top};
use super::trace::{self, Ending};
use super::{deadline, io, others, shared, signal, start, task, timer};
use crate::bytecode::ProtoRef;
use crate::vm::exec::{self, Halt};
use crate::vm::{gc, Fault, Fiber, Handle, Resume, Uncaught, Vm};
use std::time::{Duration, Instant};

/// Instructions run between looks at the clock for timers and output flushing.
const CLOCK_TICKS: u64 = 4096;
/// Fibers run between looks at the clock: fibers that block or end before
/// any back-edge or call tick nothing (a tree of fibers each in a `wait { }`
/// block), and `--timeout` or a signal must still be seen within a moment.
const CLOCK_RUNS: u32 = 256;

/// How the program ended.
pub enum Outcome {
    Ok,
    Error(Box<Uncaught>),
    /// The deadlock report (exit code 3).
    Deadlock(String),
    /// Standard output was closed (`csp run x.csp | head`): the program stopped.
    BrokenPipe,
    /// SIGINT or SIGTERM cancelled the program: the exit code (130, 143) and
    /// how the program then ended.
    Signalled(i32, Box<Outcome>),
    /// `--timeout` (as given: "5s") cancelled the program (exit 124), and how
    /// it then ended.
    TimedOut(String, Box<Outcome>),
    /// `exit(code)` ended the program.
    Exit(i32),
    /// The program used up the budget it was given (`Sched::set_budget`).
    OutOfBudget,
    /// The program was being cancelled and its cleanup did not finish within
    /// the grace time (as given: "5s").
    GraceOver(String),
}

/// Why `run_ready` returned.
pub(super) enum Ran {
    /// Nothing is ready.
    Idle,
    /// `stop` held, or the allowance ran out with fibers still ready.
    Stopped,
    /// An error reached the top (the main fiber's, or one nobody can take).
    Error(Box<Uncaught>),
    /// A fiber waited on its own task.
    Deadlock(String),
    BrokenPipe,
    /// A fiber called `exit(code)`.
    Exit(i32),
    /// The budget ran out (`Sched::set_budget`).
    OutOfBudget,
    /// The program is being cancelled and its grace time has passed.
    GraceOver,
}

/// Runs ready fibers (and delivers timers and I/O as they come due) until none
/// is ready, `stop` holds, or `allowance` has passed.
pub(super) fn run_ready(vm: &mut Vm, stop: Option<&dyn Fn(&Vm) -> bool>, allowance: Option<Duration>) -> Ran {
    let began = Instant::now();
    let mut last_flush = Instant::now();
    let mut clock_at = vm.sched.ticks;
    let mut runs = 0u32;
    let ticks_at_start = vm.sched.ticks;
    deliver_events(vm);
    loop {
        if stop.is_some_and(|stop| stop(vm)) {
            return Ran::Stopped;
        }
        // Reading the clock can cost more than a fiber switch: do it only when
        // idle or after a few thousand instructions.
        // A slice that ended for a due timer, or a collection between slices,
        // is followed by a look: the ticks since the last may be few, and the
        // fiber preempted would otherwise run again first (1-3 slices more of
        // heartbeat lag).
        let timer_due = std::mem::take(&mut vm.sched.timer_due);
        // Exploring, the clock is virtual (ticks): runs do not move it.
        runs += !vm.sched.policy.exploring() as u32;
        if timer_due || vm.sched.ready.is_empty() || vm.sched.ticks - clock_at >= CLOCK_TICKS || runs >= CLOCK_RUNS {
            clock_at = vm.sched.ticks;
            runs = 0;
            deliver_events(vm);
            others::busy_turn(vm);
            if last_flush.elapsed() > Duration::from_millis(5) {
                vm.out.flush();
                last_flush = Instant::now();
            }
            if allowance.is_some_and(|a| allowance_over(vm, began, a, ticks_at_start)) {
                return Ran::Stopped;
            }
            if vm.sched.ending.is_some_and(|t| vm.sched.now() >= t) {
                return Ran::GraceOver;
            }
            if let Some(code) = vm.sched.exit {
                return Ran::Exit(code);
            }
        }
        let Some(r) = vm.sched.ready.pop() else { return Ran::Idle };
        let ran = run_fiber(vm, r);
        if !matches!(ran, Ran::Idle) {
            return ran;
        }
        // `Idle` holds nothing: no call to `Ran`'s drop glue per fiber run.
        std::mem::forget(ran);
        if vm.sched.over_budget() {
            return Ran::OutOfBudget;
        }
        if vm.out.is_broken() {
            return Ran::BrokenPipe;
        }
    }
}

/// Has a `run_ready` allowance passed? Exploring, the isolates on one thread
/// take turns of one run each (a run moves the virtual clock).
fn allowance_over(vm: &Vm, began: Instant, allowance: Duration, ticks_at_start: u64) -> bool {
    match vm.sched.policy.exploring() {
        true => vm.sched.ticks != ticks_at_start,
        false => began.elapsed() >= allowance,
    }
}

/// Runs `proto` as the main fiber until the program ends: the main script is done
/// and no fiber can make progress (leftover blocked fibers are cancelled first).
pub fn run_main(vm: &mut Vm, proto: ProtoRef) -> Outcome {
    let main = start::start_main(vm, proto);
    let outcome = run_program(vm, main);
    // Children still running when the program ends are killed (and reaped).
    super::ops::release_adopted(vm, None);
    vm.sched.main_task = None;
    vm.out.flush();
    let stopped = vm.sched.ending.is_some() && matches!(outcome, Outcome::Error(_));
    if matches!(outcome, Outcome::Ok) || stopped {
        if let Some(end) = vm.sched.at_end.take() {
            end(vm.sched.grace);
        }
        others::end(vm);
    }
    let outcome = if vm.out.is_broken() { Outcome::BrokenPipe } else { outcome };
    if let Some(d) = vm.sched.events.deadline.as_ref().filter(|d| d.fired) {
        return Outcome::TimedOut(d.describe(), Box::new(outcome));
    }
    match vm.sched.events.signals.as_ref().and_then(|s| s.stopped_by) {
        Some(i) => Outcome::Signalled(signal::exit_code(i), Box::new(outcome)),
        None => outcome,
    }
}

fn run_program(vm: &mut Vm, main: Handle) -> Outcome {
    loop {
        if vm.sched.over_budget() {
            return Outcome::OutOfBudget;
        }
        match run_ready(vm, None, None) {
            Ran::Idle => {}
            Ran::Stopped => unreachable!("the program's driver has no stop condition"),
            Ran::Error(u) => return Outcome::Error(u),
            Ran::Deadlock(report) => return Outcome::Deadlock(report),
            Ran::BrokenPipe => return Outcome::BrokenPipe,
            Ran::Exit(code) => return Outcome::Exit(code),
            Ran::OutOfBudget => return Outcome::OutOfBudget,
            Ran::GraceOver => return grace_over(vm),
        }
        if vm.sched.ending.is_some_and(|t| vm.sched.now() >= t) {
            return grace_over(vm);
        }
        if let Some(code) = vm.sched.exit {
            return Outcome::Exit(code);
        }
        let next_timer = timer::next_deadline(vm);
        if next_timer.is_some() || outside_pending(vm) {
            // Idle until the next timer or I/O completion: no polling loop
            // (isolates on this thread run meanwhile).
            vm.out.flush();
            others::idle_wait(vm, next_timer);
            continue;
        }
        // Nothing can run and nothing is pending.
        if let Some(e) = vm.sched.orphan_error.take() {
            return Outcome::Error(Box::new(uncaught_at_top(vm, e)));
        }
        if !task::get(&vm.heap, main).finished() {
            if others::wait_on_others(vm) {
                continue;
            }
            return Outcome::Deadlock(deadlock_report(vm));
        }
        if vm.sched.fibers.live == 0 {
            return Outcome::Ok;
        }
        // The script is done; fibers still parked can never wake: cancel them so
        // their finally blocks run.
        let parked: Vec<u32> = vm.sched.fibers.states().filter(|(_, s)| s.parked.is_some()).map(|(id, _)| id).collect();
        if parked.is_empty() {
            return Outcome::Ok;
        }
        vm.sched.begin_ending();
        for id in parked {
            cancel_fiber(vm, id);
        }
        if vm.sched.ready.is_empty() {
            // Only fibers waiting for their wait-block children, which cannot end.
            return Outcome::Ok;
        }
    }
}

/// The program's cleanup ran out of grace time.
fn grace_over(vm: &Vm) -> Outcome {
    Outcome::GraceOver(super::events::show(vm.sched.grace))
}

/// Sleeps until the next timer (None: none) or an I/O completion, then
/// delivers what came due (exploring: moves the virtual clock instead).
pub(super) fn idle_wait(vm: &mut Vm, next_timer: Option<Instant>) {
    trace::gap(vm);
    if vm.sched.policy.exploring() {
        super::explore::idle_wait(vm, next_timer);
    } else {
        // `--timeout` or a budget's time ends the wait too.
        let wake = [next_timer, vm.sched.stop_at()].into_iter().flatten().min();
        let mut wait = wake.map(|t| t.saturating_duration_since(Instant::now()));
        if vm.debug.is_some() {
            // A debugger's pause or breakpoints come while nothing runs.
            wait = Some(wait.map_or(crate::vm::debug::IDLE_LOOK, |w| w.min(crate::vm::debug::IDLE_LOOK)));
        }
        // Nothing to run: a step of the collector's cycle, then only a look for
        // events until the cycle is done.
        if vm.heap.in_cycle() {
            let due = timer::first(vm);
            if gc::step_between_slices(&mut vm.heap, due) {
                cycle_ended(vm, 0);
            }
            wait = Some(Duration::ZERO);
        }
        // (Isolates on this thread cannot answer while it spins.)
        if !others::here(vm) && (shared::spin(vm, wait) || io::spin_for_handoff(vm, wait)) {
            // Another isolate completed a shared-channel operation, or a
            // handed-off job answered: no sleep.
        } else if outside_pending(vm)
            || io::in_flight(vm)
            || signal::watching(vm)
            || shared::listening(vm)
            || others::here(vm)
        {
            // Watched signals end the wait too (the reactor sees their self-pipe),
            // and so does work in flight that cannot keep the program alive on
            // its own (a stalled hand-off: another isolate's message ends it),
            // and so do other isolates' completions on shared channels.
            let wait = if shared::set_idle(vm, true) { wait } else { Some(Duration::ZERO) };
            poll_outside(vm, wait);
            shared::set_idle(vm, false);
        } else if let Some(d) = wait {
            std::thread::sleep(d);
        }
    }
    if vm.debug.is_some() {
        crate::vm::debug::on_idle(vm);
    }
    timer::fire_due(vm);
    deadline::check(vm);
}

/// Fires due timers and delivers finished I/O, without waiting.
pub(super) fn deliver_events(vm: &mut Vm) {
    trace::gap(vm);
    let woken = vm.sched.ready.woken_len();
    if !vm.sched.policy.exploring() {
        vm.sched.ready.share_slice(vm.sched.slice);
    }
    timer::fire_due(vm);
    deadline::check(vm);
    deliver_io(vm);
    signal::deliver(vm);
    shared::deliver(vm);
    if vm.sched.events.reactor.as_ref().is_some_and(|r| r.waiting()) {
        poll_outside(vm, Some(Duration::ZERO));
    }
    place_woken(vm, woken);
}

/// Delivers the worker pool's finished jobs.
fn deliver_io(vm: &mut Vm) {
    if vm.sched.policy.exploring() {
        super::explore::deliver_io(vm);
    } else if io::in_flight(vm) {
        io::deliver(vm);
    }
}

/// Waits up to `timeout` (None: until something happens) in the reactor, then
/// wakes the fibers whose descriptors are ready and delivers finished pool work,
/// in the order the policy gives.
pub(super) fn poll_outside(vm: &mut Vm, timeout: Option<Duration>) {
    if let Some(r) = vm.sched.events.reactor.as_mut() {
        let mut woken = r.poll(timeout);
        vm.sched.policy.order(&mut woken);
        wake_all(vm, woken);
    }
    let mut done = io::take_done(vm, None);
    vm.sched.policy.order(&mut done);
    io::complete(vm, done);
    signal::deliver(vm);
    shared::deliver(vm);
}

/// Fibers woken since the run queue held `from` woken ones stay among the
/// woken (they run before the queued fibers) or, exploring, may go behind the
/// queued ones at random: the language leaves open when a woken fiber runs.
#[inline]
pub(super) fn place_woken(vm: &mut Vm, from: usize) {
    if vm.sched.policy.exploring() {
        demote_woken(vm, from);
    }
}

#[cold]
#[inline(never)]
fn demote_woken(vm: &mut Vm, from: usize) {
    let s = &mut vm.sched;
    let policy = &mut s.policy;
    s.ready.demote_woken(from, || policy.demote());
}

/// Wakes the fibers the reactor is done with.
pub(super) fn wake_all(vm: &mut Vm, woken: Vec<(super::Waiter, Woken)>) {
    for (w, how) in woken {
        let resume = match how {
            Woken::Retry => Resume::Retry,
            Woken::Written => Resume::Value(crate::vm::Value::Nil),
            Woken::Failed(msg) => Resume::Throw(crate::vm::error::bare_error(vm, crate::vm::ErrorKind::Io, &msg)),
        };
        vm.sched.wake(w, resume);
    }
}

/// Fiber `id` (`f`) has ended: its memory is given back at once.
fn ended(vm: &mut Vm, id: u32, f: &Fiber, result: Result<crate::vm::Value, Box<Uncaught>>) -> Ran {
    vm.heap.note_freed(f.bytes());
    finish(vm, id, result).map_or(Ran::Idle, Ran::Error)
}

/// Runs a runnable for one slice and acts on how it stopped.
fn run_fiber(vm: &mut Vm, r: Runnable) -> Ran {
    let Some((id, mut f)) = start::take(vm, r) else { return Ran::Idle };
    vm.sched.fibers.current = id;
    let began = trace::slice_begins(vm, id);
    profile::slice_begins(vm, &mut f);
    let halt = run_slice(vm, &mut f);
    profile::slice_ends(vm, &f);
    // Written once the halt is acted on, so the wakes of a fiber's end (its
    // waiters) fall inside its last slice.
    let ending = began.map(|_| {
        let at = f.current_site();
        match halt {
            Halt::Preempted | Halt::Yielded => Ending::yielded(at),
            Halt::Blocked | Halt::Deadlock(_) => Ending::blocked(at),
            Halt::Done(_) => Ending::done(at),
            Halt::Error(_) => Ending::failed(at),
        }
    });
    let ran = match halt {
        Halt::Preempted | Halt::Yielded => {
            vm.sched.fibers.slots[id as usize].fiber = Some(f);
            vm.sched.ready.push(Runnable::Fiber(id));
            Ran::Idle
        }
        Halt::Blocked => {
            let s = &mut vm.sched;
            let slot = &mut s.fibers.slots[id as usize];
            profile::parked(s.profile.as_deref(), &slot.state, &mut f);
            slot.fiber = Some(f);
            Ran::Idle
        }
        Halt::Deadlock(report) => {
            vm.sched.fibers.slots[id as usize].fiber = Some(f);
            Ran::Deadlock(report)
        }
        Halt::Done(v) => ended(vm, id, &f, Ok(v)),
        Halt::Error(u) => ended(vm, id, &f, Err(u)),
    };
    if let (Some(began), Some(ending)) = (began, ending) {
        trace::slice_ends(vm, id, began, ending);
    }
    if let Some(code) = vm.sched.exit {
        return Ran::Exit(code);
    }
    // Not while an error is on its way out: nothing roots it.
    if matches!(ran, Ran::Idle) && vm.heap.should_collect() {
        collect(vm);
        // A collection takes time: a timer may have come due meanwhile, and
        // the fiber it preempted must not run again first.
        vm.sched.timer_due = true;
    }
    ran
}

/// Runs a fiber for one slice, handing it what it was woken with first and
/// throwing pending interruptions at preemption points outside `lock` blocks.
/// The policy gives the slice's budget and whether the clock ends it.
fn run_slice(vm: &mut Vm, f: &mut Fiber) -> Halt {
    if let Some(r) = vm.sched.fibers.cur().resume.take() {
        if let Some(h) = crate::vm::resume(vm, f, r) {
            return h;
        }
    }
    let woken = vm.sched.ready.woken_len();
    let (budget, timed) = vm.sched.policy.slice();
    let halt = if timed { timed_slice(vm, f) } else { budget_slice(vm, f, budget) };
    place_woken(vm, woken);
    halt
}

/// A slice of exactly `budget` back-edges and calls (exploring).
fn budget_slice(vm: &mut Vm, f: &mut Fiber, budget: u32) -> Halt {
    // Explored with other isolates: after this run, `run_ready` looks at its
    // events, and the others may take a turn (`others::busy_turn`).
    if vm.sched.policy.explore_mut().is_some_and(|x| x.alongside) {
        vm.sched.timer_due = true;
    }
    if let Some(fault) = out_of_memory(vm, f) {
        if let Some(h) = exec::throw(vm, f, fault) {
            return h;
        }
    }
    match exec::run(vm, f, budget) {
        Halt::Yielded => Halt::Preempted,
        Halt::Preempted => preemption_point(vm, f).unwrap_or(Halt::Preempted),
        h => h,
    }
}

/// A preemption point: delivers cancellation or a child's failure, but never
/// inside a critical section. Returns a halt if that ends the fiber's run.
fn preemption_point(vm: &mut Vm, f: &mut Fiber) -> Option<Halt> {
    profile::preempted(vm, f);
    if vm.sched.fibers.cur().holds_locks() {
        return None;
    }
    let e = interrupt(vm)?;
    exec::throw(vm, f, Fault::Throw(e))
}

/// A time slice (about `--slice-us`): budgets of `SLICE_BUDGET` until the
/// clock says the slice is over or a timer is due.
fn timed_slice(vm: &mut Vm, f: &mut Fiber) -> Halt {
    // The clock is read only once the countdown first runs out, so the many
    // fibers that block within a few instructions never pay for it; but from
    // the start for a fiber whose last slice ran out of time, or while a
    // collection cycle runs (its steps, half the slice at most, come on top of
    // the first countdown).
    let cpu_bound = std::mem::take(&mut vm.sched.fibers.cur().cpu_bound);
    let in_cycle = vm.heap.in_cycle();
    let mut started = (cpu_bound || in_cycle).then(Instant::now);
    // A cycle starts between slices: without one under way, no step runs in this one.
    if in_cycle {
        vm.heap.gc.step_time = vm.sched.slice / 2;
        vm.heap.gc.yield_at = timer::first(vm);
    }
    loop {
        if let Some(fault) = out_of_memory(vm, f) {
            if let Some(h) = exec::throw(vm, f, fault) {
                return h;
            }
        }
        // While a big map's index is rebuilt, most insertions fault a fresh
        // page in: a countdown of 1,024 of them ran 4-6 ms (benches/gc, `map`).
        let budget = match crate::vm::key_set::moving() {
            true => SLICE_BUDGET / 8,
            false => SLICE_BUDGET,
        };
        match exec::run(vm, f, budget) {
            Halt::Yielded => return Halt::Preempted,
            Halt::Preempted => {
                if vm.heap.should_collect() {
                    // A cycle starts, or a whole collection runs, between slices
                    // (where every fiber's registers are in its slot): end the
                    // slice so it happens now. A cycle's steps run here.
                    if !vm.heap.in_cycle() || vm.heap.wants_full() {
                        return Halt::Preempted;
                    }
                    if gc::step(&mut vm.heap) {
                        cycle_ended(vm, f.bytes());
                    }
                }
                if let Some(h) = preemption_point(vm, f) {
                    return h;
                }
                // The slice ends when its time is up, or as soon as a timer is
                // due: a fiber woken by a timer (a heartbeat, a timeout) runs
                // within a countdown or so, not after the rest of the slice.
                match started {
                    None => started = Some(Instant::now()),
                    Some(t) => {
                        let now = Instant::now();
                        // A due timer is delivered as the slice ends, however it
                        // ends, before the next slice (`run_ready`).
                        vm.sched.timer_due = timer::due(vm, now);
                        if now.duration_since(t) >= vm.sched.slice {
                            vm.sched.fibers.cur().cpu_bound = true;
                            return Halt::Preempted;
                        }
                        if vm.sched.timer_due {
                            return Halt::Preempted;
                        }
                    }
                }
            }
            h => return h,
        }
    }
}

/// The collector's work due between slices: the whole collection `reserve`
/// asked for, or a cycle's start or next step (see vm/gc.rs).
pub(super) fn collect(vm: &mut Vm) {
    trace::gap(vm);
    let roots = |vm: &Vm| {
        let mut roots = Vec::new();
        vm.sched.roots(&mut roots);
        roots
    };
    if vm.heap.wants_full() {
        // Garbage made since the cycle under way began survives it: run another.
        return collect_whole(vm);
    }
    if vm.heap.gc.done {
        return cycle_ended(vm, 0);
    }
    if !vm.heap.in_cycle() {
        gc::start(vm, roots(vm));
    }
    let due = timer::first(vm);
    if gc::step_between_slices(&mut vm.heap, due) {
        cycle_ended(vm, 0);
    }
}

/// A whole collection, now (between slices).
pub(super) fn collect_whole(vm: &mut Vm) {
    let mut roots = Vec::new();
    vm.sched.roots(&mut roots);
    gc::collect(vm, roots);
    cycle_ended(vm, 0);
}

/// A whole collection another isolate asked for (it nears the runtime's
/// `--max-memory`): what this one holds is published; whether this one is
/// over its own part is for its own collections to decide.
pub(super) fn collect_for_others(vm: &mut Vm) {
    collect_whole(vm);
    vm.sched.out_of_memory = None;
    vm.sched.over_limit = None;
}

/// After a cycle: paces the next and notes whether what is live is over
/// `--max-memory` (`running`: the bytes of a fiber out of its slot).
fn cycle_ended(vm: &mut Vm, running: usize) {
    vm.sched.out_of_memory = vm.heap.after_collection(vm.sched.fiber_bytes() + running);
    if vm.heap.asked_others() && others::here(vm) {
        // They were asked to collect and could not answer on this thread.
        others::collect(vm);
        vm.sched.out_of_memory = vm.heap.others_collected();
    }
    vm.sched.over_limit.clone_from(&vm.sched.out_of_memory);
    vm.sched.limit_check = match vm.sched.limit_check {
        super::LimitCheck::Asked => super::LimitCheck::Decided,
        _ => super::LimitCheck::May,
    };
}

/// The `memory` error for a heap over its limit, thrown into the next fiber
/// that goes on computing, at a preemption point: the one allocating, as a
/// rule. Not into a fiber just starting, which has had no time to allocate
/// (many of them may be what a spawning loop makes, and it should get the
/// error).
#[inline]
pub(super) fn out_of_memory(vm: &mut Vm, f: &Fiber) -> Option<Fault> {
    if vm.sched.out_of_memory.is_none() || f.unstarted() {
        return None;
    }
    let msg = vm.sched.out_of_memory.take()?;
    Some(Fault::Error(Box::new((crate::vm::ErrorKind::Memory, msg))))
}
