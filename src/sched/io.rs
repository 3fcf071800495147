//! Blocking work (files, stdin) on a small thread pool: the calling fiber parks,
//! a worker thread does the work, and the completion is posted back to the
//! scheduler (waking its `epoll` through the reactor's waker), so only that fiber
//! waits. What the work is belongs to the builtin that asked for it
//! (`vm::builtin::IoWork`); the pool only runs it. Work handed to a thread of
//! a builtin's own (`Blocking::Handoff`: a database's) posts back the same way,
//! through a `Reply` (the threads and `Reply` are in pool.rs; here, the fibers).

use super::pool::{Done, IoPool, Reply};
use super::Waiter;
use crate::vm::{IoWork, Resume, Vm};

/// The pool, started on first use.
fn pool(vm: &mut Vm) -> std::io::Result<&mut IoPool> {
    if vm.sched.events.io.is_none() {
        let waker = vm.sched.events.reactor()?.waker.clone();
        vm.sched.events.io = Some(IoPool::start(waker));
    }
    Ok(vm.sched.events.io.as_mut().expect("started"))
}

/// Hands work to the pool (started on first use).
pub(super) fn submit(vm: &mut Vm, w: Waiter, work: IoWork, retry: bool) -> std::io::Result<()> {
    let pool = pool(vm)?;
    pool.waiting.push(w);
    pool.run((w, work, retry));
    Ok(())
}

/// Hands work to a thread of the builtin's own (or to another isolate:
/// `isolate`): `start` sends it there with its `Reply`; `cancel` runs if the
/// fiber is cancelled before the reply.
pub(super) fn hand_off(
    vm: &mut Vm,
    w: Waiter,
    start: Box<dyn FnOnce(Reply)>,
    cancel: Box<dyn FnOnce()>,
    isolate: bool,
) -> std::io::Result<()> {
    let pool = pool(vm)?;
    pool.waiting.push(w);
    if isolate {
        pool.isolates.push(w);
    }
    pool.cancels.push((w, cancel));
    let reply = pool.reply(w);
    start(reply);
    Ok(())
}

/// The fiber `w` stopped waiting (it was cancelled): runs its job's cancel
/// action, if the job has one.
pub(super) fn abandon(vm: &mut Vm, w: Waiter) {
    let Some(pool) = vm.sched.events.io.as_mut() else { return };
    if let Some(i) = pool.cancels.iter().position(|(x, _)| *x == w) {
        let (_, cancel) = pool.cancels.swap_remove(i);
        cancel();
    }
    pool.stalls.retain(|(x, _)| *x != w);
}

/// Jobs are in flight (cheap: for delivering them).
pub(super) fn in_flight(vm: &Vm) -> bool {
    vm.sched.events.io.as_ref().is_some_and(|p| !p.waiting.is_empty())
}

/// Is a job in flight whose completion can still wake its fiber?
pub(super) fn pending(vm: &Vm) -> bool {
    pending_where(vm, |_, _| true)
}

/// Is a job in flight, of those `keep` accepts, whose completion can still wake its fiber?
fn pending_where(vm: &Vm, keep: impl Fn(&IoPool, Waiter) -> bool) -> bool {
    let parked = |p: &IoPool, w: Waiter| vm.sched.fibers.is_parked(w) && !p.stalled(w) && keep(p, w);
    vm.sched.events.io.as_ref().is_some_and(|p| p.waiting.iter().any(|&w| parked(p, w)))
}

/// How long the idle scheduler watches for a handed-off job's answer before
/// it sleeps: a database statement often answers within it, and waking from
/// a sleep costs more than the statement (benches/sqlite).
const HANDOFF_SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// With handed-off jobs in flight, waits up to `HANDOFF_SPIN` (never past
/// `limit`) for one to finish; delivers what finished. True if something did.
pub(super) fn spin_for_handoff(vm: &mut Vm, limit: Option<std::time::Duration>) -> bool {
    let Some(pool) = vm.sched.events.io.as_mut() else { return false };
    if pool.cancels.is_empty() {
        return false;
    }
    let until = std::time::Instant::now() + limit.map_or(HANDOFF_SPIN, |l| l.min(HANDOFF_SPIN));
    loop {
        if let Ok(d) = pool.done.try_recv() {
            let mut done = vec![d];
            done.extend(pool.done.try_iter());
            complete(vm, done);
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        // Not a busy spin: the thread that answers may need this core.
        std::thread::yield_now();
    }
}

/// Delivers finished work, without waiting.
pub(super) fn deliver(vm: &mut Vm) {
    let Some(pool) = vm.sched.events.io.as_mut() else { return };
    let done: Vec<_> = pool.done.try_iter().collect();
    complete(vm, done);
}

/// Takes finished work without delivering it; with `patience`, first waits up
/// to that long for every job in flight (schedule exploration) but those
/// handed to another isolate (explored on this thread, it answers only when
/// stepped). In submission order (park generations grow), so the order
/// never depends on the workers.
pub(super) fn take_done(vm: &mut Vm, patience: Option<std::time::Duration>) -> Vec<Done> {
    let Some(pool) = vm.sched.events.io.as_mut() else { return Vec::new() };
    let mut done: Vec<Done> = pool.done.try_iter().collect();
    if let Some(p) = patience {
        let until = std::time::Instant::now() + p;
        while owed(pool, &done) {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match pool.done.recv_timeout(left) {
                Ok(d) => done.push(d),
                Err(_) => break,
            }
        }
    }
    done.sort_by_key(|d| d.0.gen);
    done
}

/// Is work still running on a thread (not on another isolate) besides the
/// finished `done`?
fn owed(pool: &IoPool, done: &[Done]) -> bool {
    let running = |w: &&Waiter| !pool.isolates.contains(w) && !done.iter().any(|d| d.0 == **w);
    pool.waiting.iter().any(|w| running(&w))
}

/// Is work still running on a thread besides the finished `done`?
pub(super) fn in_flight_after(vm: &Vm, done: &[Done]) -> bool {
    vm.sched.events.io.as_ref().is_some_and(|p| owed(p, done))
}

/// Wakes the fibers of finished work with its results, in the order given.
pub(super) fn complete(vm: &mut Vm, done: Vec<Done>) {
    let Some(pool) = vm.sched.events.io.as_mut() else { return };
    for (w, _, _) in &done {
        if let Some(i) = pool.waiting.iter().position(|x| x == w) {
            pool.waiting.swap_remove(i);
        }
        if let Some(i) = pool.cancels.iter().position(|(x, _)| x == w) {
            drop(pool.cancels.swap_remove(i));
        }
        if let Some(i) = pool.stalls.iter().position(|(x, _)| x == w) {
            pool.stalls.swap_remove(i);
        }
        if let Some(i) = pool.isolates.iter().position(|x| x == w) {
            pool.isolates.swap_remove(i);
        }
    }
    for (w, finish, retry) in done {
        let resume = match finish(&mut vm.heap).and_then(|v| vm.heap.take_oversize().map_or(Ok(v), Err)) {
            Ok(_) if retry => Resume::Retry,
            Ok(v) => Resume::Value(v),
            Err((kind, msg)) => Resume::Throw(crate::vm::error::bare_error(vm, kind, &msg)),
        };
        vm.sched.wake(w, resume);
    }
}

/// Exploring (every isolate on this thread, stepped between this one's
/// turns): can something that runs in real time (pool work, a descriptor,
/// a signal) or mail already come from another isolate wake a fiber?
pub(super) fn real_time_pending(vm: &Vm) -> bool {
    pending_where(vm, |p, w| !p.isolates.contains(&w))
        || super::shared::pending(vm)
        || vm.sched.events.reactor.as_ref().is_some_and(|r| r.waiting())
        || super::signal::can_wake(vm)
}

/// Can something outside the fibers (finished pool work, a ready descriptor,
/// a signal asked for on a channel, another isolate's completion) still wake one?
pub(super) fn outside_pending(vm: &Vm) -> bool {
    pending(vm)
        || super::shared::pending(vm)
        || vm.sched.events.reactor.as_ref().is_some_and(|r| r.waiting())
        || super::signal::can_wake(vm)
}
