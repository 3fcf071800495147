//! A fiber's life after it starts: finishing (recording the outcome, waking
//! waiters), error propagation to owners and `wait { }` blocks, cancellation.

use super::report::{add_spawn_chain, uncaught_at_top};
use super::task;
use super::task::TaskState;
use super::{chan, select, Wait, Waiter};
use crate::bytecode::Site;
use crate::vm::error::{bare_error, is_kind};
use crate::vm::{ErrorKind, Fault, Handle, Obj, Res, Resume, Uncaught, Value, Vm};
use std::rc::Rc;

fn task_mut(vm: &mut Vm, h: Handle) -> &mut task::Task {
    task::get_mut(&mut vm.heap, h)
}

/// The `Cancelled` error thrown into fiber `fid`; its trace ends with why the
/// fiber was cancelled, when a cancellation of its task or an owner's says so.
fn cancelled_error(vm: &mut Vm, fid: u32) -> Value {
    let th = vm.sched.fibers.state(fid).task;
    task_cancelled_error(vm, th)
}

/// The `Cancelled` error of task `th` (see `cancelled_error`).
pub(super) fn task_cancelled_error(vm: &mut Vm, th: Option<Handle>) -> Value {
    let e = bare_error(vm, ErrorKind::Cancelled, "cancelled");
    let mut t = th;
    let mut via = None;
    while let Some(h) = t {
        let tk = task::get(&vm.heap, h);
        if let Some(why) = tk.extra.as_ref().and_then(|x| x.cancelled_by.clone()) {
            let line: Rc<str> = match via {
                None => why,
                // The fibers of a cancelled tree share the line (one string,
                // not one each: cancelling a million fibers makes little).
                Some(n) => match &vm.sched.cancel_line {
                    Some((m, line)) if *m == n => line.clone(),
                    _ => {
                        let line: Rc<str> = Rc::from(format!("cancelled with fiber {n}, {why}"));
                        vm.sched.cancel_line = Some((n, line.clone()));
                        line
                    }
                },
            };
            if let Value::Obj(eh) = e {
                if let Obj::Error(er) = vm.heap.get_mut(eh) {
                    er.trace.push(line);
                }
            }
            break;
        }
        via = Some(tk.number);
        t = tk.owner;
    }
    e
}

/// Who cancels a task, in words, for its `Cancelled` error's report.
pub(super) enum Cause {
    /// `t.cancel()` in fiber `by` (None: the main fiber), where it was called.
    Call(Option<u32>, Option<Site>),
    /// A sibling in the same `wait { }` block failed.
    Sibling(u32),
    /// Its `wait { }` block was left by an error.
    BlockLeft,
    /// The process got this signal ("SIGINT").
    Signal(&'static str),
    /// `--timeout` passed (the limit, as given: "5s").
    Timeout(String),
    /// The fiber's grace time ran out in a `finally` block.
    GraceOver,
}

impl Cause {
    fn text(&self) -> String {
        match self {
            Cause::Call(by, site) => {
                let who = by.map_or("the main fiber".to_string(), |n| format!("fiber {n}"));
                let at = site.map(|s| format!(" at {}", s.location())).unwrap_or_default();
                format!("cancelled by {who}{at}")
            }
            Cause::Sibling(n) => format!("cancelled because fiber {n} in the same `wait {{ }}` block failed"),
            Cause::BlockLeft => "cancelled because its `wait { }` block was left by an error".to_string(),
            Cause::Signal(name) => format!("cancelled by {name}"),
            Cause::GraceOver => "cancelled: its grace time ran out (--grace)".to_string(),
            Cause::Timeout(limit) => format!("cancelled: the program timed out after {limit} (--timeout)"),
        }
    }
}

/// A fiber ended: record its outcome in its task, wake waiters, close `done()`,
/// and propagate an unobserved failure. Returns an error that ends the program.
pub(super) fn finish(vm: &mut Vm, id: u32, result: Result<Value, Box<Uncaught>>) -> Option<Box<Uncaught>> {
    let woken = vm.sched.ready.woken_len();
    let end = finish_task(vm, id, result);
    super::driver::place_woken(vm, woken);
    end
}

fn finish_task(vm: &mut Vm, id: u32, result: Result<Value, Box<Uncaught>>) -> Option<Box<Uncaught>> {
    vm.sched.fibers.free.push(id);
    vm.sched.fibers.ended();
    let st = std::mem::take(vm.sched.fibers.state_mut(id));
    let th = st.task.expect("fiber without task");
    let is_main = Some(th) == vm.sched.main_task;
    let cancelled = st.cancelled;
    let mut result = result;
    // A child's failure that arrived after the fiber's last suspension point.
    if let (Ok(_), Some(e)) = (&result, st.extra.as_ref().and_then(|x| x.pending)) {
        result = Err(Box::new(uncaught_at_top(vm, e)));
    }
    // A child that failed unobserved fails its owner when the owner ends.
    if result.is_ok() {
        let children = task::get(&vm.heap, th).children().to_vec();
        for c in children {
            let t = task::get(&vm.heap, c);
            if let TaskState::Failed(e) = t.state {
                if !t.observed && t.scope.is_none() {
                    task_mut(vm, c).observed = true;
                    result = Err(Box::new(uncaught_at_top(vm, e)));
                    break;
                }
            }
        }
    }
    // Nobody holds a dropped `go`'s task: its `Cancelled` error is not made
    // (cancelling a million queued fibers makes no garbage).
    let unheld = task::get(&vm.heap, th).dropped && !task::get(&vm.heap, th).is(task::DETACHED);
    let state = match &result {
        Ok(_) if cancelled && unheld => TaskState::Cancelled(Value::Nil),
        // `wait` on a cancelled task throws `Cancelled`, even if it caught it.
        Ok(_) if cancelled => TaskState::Cancelled(cancelled_error(vm, id)),
        Ok(v) => TaskState::Done(*v),
        Err(u) if cancelled && is_kind(vm, u.value, ErrorKind::Cancelled) => TaskState::Cancelled(u.value),
        Err(u) => TaskState::Failed(u.value),
    };
    // A fiber that failed or was cancelled takes the processes it started with it.
    if !matches!(state, TaskState::Done(_)) {
        super::ops::release_adopted(vm, Some(th));
    }
    if is_main && result.is_err() && !matches!(state, TaskState::Cancelled(_)) {
        return result.err();
    }
    let failed = matches!(state, TaskState::Failed(_));
    if let TaskState::Failed(e) = state {
        add_spawn_chain(vm, e, th);
    }
    let t = task_mut(vm, th);
    t.state = state;
    t.fiber = None;
    let waiters = t.extra.as_mut().map(|x| std::mem::take(&mut x.waiters)).unwrap_or_default();
    let done = t.done_chan();
    let (owner, scope, dropped, in_scope) = (t.owner, t.scope, t.dropped, t.is(task::IN_SCOPE));
    for (fid, gen) in waiters {
        vm.sched.wake(Waiter { fiber: fid, gen, case: None }, Resume::Retry);
    }
    if let Some(ch) = done {
        let _ = chan::close(vm, ch);
    }
    // Not a walk up every owner at every end: a chain of fibers each
    // starting the next would take quadratic time.
    if in_scope {
        wake_scope_waiters(vm, owner);
    }
    if let (Some(owner), Some(scope)) = (owner, scope) {
        if failed {
            let e = task::get(&vm.heap, th).result();
            task_mut(vm, th).observed = true;
            scope_failure(vm, owner, scope as usize, th, e);
        }
    } else if failed && (dropped || owner.is_some_and(|o| task::get(&vm.heap, o).finished())) {
        // Nobody can wait on it any more once its owner has ended without doing so.
        let e = task::get(&vm.heap, th).result();
        task_mut(vm, th).observed = true;
        if let Some(orphan) = propagate(vm, owner, e) {
            vm.sched.orphan_error.get_or_insert(orphan);
        }
    }
    if let Err(u) = result {
        if failed && owner.is_none() {
            return Some(u);
        }
    }
    forget_if_unreachable(vm, th);
    None
}

/// A fire-and-forget task (`go` statement, outside `wait { }`) that ended well
/// (or cancelled) and started nothing: only its owner's list of children refers to it, so when
/// it is the newest child (a fiber that ran to its end at once) it is dropped
/// from the list and freed, without waiting for a collection. Leaves of a tree
/// of a million fibers then leave no garbage behind.
fn forget_if_unreachable(vm: &mut Vm, th: Handle) {
    let t = task::get(&vm.heap, th);
    let forgettable = t.dropped
        && !t.is(task::DETACHED)
        && t.scope.is_none()
        && matches!(t.state, TaskState::Done(_) | TaskState::Cancelled(_))
        && t.extra.as_ref().is_none_or(|x| x.children.is_empty() && x.unstarted == 0 && x.done_chan.is_none());
    let Some(owner) = t.owner.filter(|_| forgettable) else { return };
    let Some(x) = task_mut(vm, owner).extra.as_mut() else { return };
    if x.children.last() == Some(&th) {
        x.children.pop();
        let bytes = vm.heap.get(th).size();
        vm.heap.free(th);
        vm.heap.note_freed(bytes);
    }
}

/// Drops children whose whole tree is done and whose outcome needs nobody's
/// attention, so a long-lived fiber starting many short ones stays small. Runs
/// when the list doubles, so the cost is amortised.
pub(super) fn compact(vm: &Vm, children: &mut Vec<Handle>) {
    let n = children.len();
    if n < 64 || !n.is_power_of_two() {
        return;
    }
    children.retain(|&c| {
        let t = task::get(&vm.heap, c);
        let unobserved_failure = matches!(t.state, TaskState::Failed(_)) && !t.observed;
        unobserved_failure || !tree_is_done(vm, c)
    });
}

/// Has the task and every task started under it finished? A tree found done
/// is marked so (it stays done: nothing in it runs to start more), so the
/// blocks of a deep tree do not walk it again at every level.
pub fn tree_done(vm: &mut Vm, th: Handle) -> bool {
    let done = tree_is_done(vm, th);
    if done {
        task::get_mut(&mut vm.heap, th).marks |= task::TREE_DONE;
    }
    done
}

fn tree_is_done(vm: &Vm, th: Handle) -> bool {
    let mut work = vec![th];
    while let Some(t) = work.pop() {
        let tk = task::get(&vm.heap, t);
        if tk.is(task::TREE_DONE) {
            continue;
        }
        if !tk.finished() || tk.unstarted() > 0 {
            return false;
        }
        work.extend(tk.children().iter().copied());
    }
    true
}

/// Wakes the ancestor waiting at the end of a `wait { }` block that the end
/// of a task may let go on, so it can recheck whether its fibers are done.
/// Only the nearest unfinished owner can be that one: the blocks of owners
/// above it wait for it too (so cancelling a tree of blocks is not quadratic).
pub(super) fn wake_scope_waiters(vm: &mut Vm, owner: Option<Handle>) {
    let mut owner = owner;
    while let Some(o) = owner {
        if let Some(fid) = task::get(&vm.heap, o).fiber {
            let s = vm.sched.fibers.state(fid);
            if matches!(s.parked, Some(Wait::Scope)) {
                let w = Waiter { fiber: fid, gen: s.gen, case: None };
                vm.sched.wake(w, Resume::Retry);
            }
        }
        if !task::get(&vm.heap, o).finished() {
            return;
        }
        owner = task::get(&vm.heap, o).owner;
    }
}

/// A child of a `wait { }` block failed (or a fiber under it whose failure
/// reached it): record the error, cancel the siblings and interrupt the owner.
fn scope_failure(vm: &mut Vm, owner: Handle, scope: usize, child: Handle, err: Value) {
    let Some(fid) = task::get(&vm.heap, owner).fiber else { return };
    let of = vm.sched.fibers.state_mut(fid);
    let innermost = of.scopes().len() == scope + 1;
    let parked = of.parked.is_some();
    let parked_inside = parked && !matches!(of.parked, Some(Wait::Scope));
    let Some(s) = of.extra.as_mut().and_then(|x| x.scopes.get_mut(scope)) else { return };
    s.errors.push(err);
    let siblings = s.children.clone();
    // Interrupt the block's body so it can end: at once if it is blocked inside
    // the block, else at its next suspension point.
    let interrupt = innermost && parked_inside;
    s.interrupt = innermost && !parked;
    let failed = task::get(&vm.heap, child).number;
    for s in siblings.into_iter().filter(|&s| s != child) {
        cancel_task(vm, s, Cause::Sibling(failed));
    }
    if interrupt {
        let e = cancelled_error(vm, fid);
        if unpark(vm, fid) {
            vm.sched.wake_forced(fid, Resume::Throw(e));
        } else if let Some(s) = vm.sched.fibers.state_mut(fid).extra.as_mut().and_then(|x| x.scopes.get_mut(scope)) {
            s.interrupt = true;
        }
    }
}

/// Sends a child's failure to its owner fiber: thrown where the owner is blocked,
/// or at its next suspension point; past a finished owner, further up. Returns
/// the error if no owner is left to take it.
fn propagate(vm: &mut Vm, owner: Option<Handle>, e: Value) -> Option<Value> {
    let mut owner = owner;
    while let Some(o) = owner {
        // Past a finished child of a `wait { }` block, the block takes it (the
        // block is still open: it waits for this failed fiber's whole tree).
        if let (None, Some(up), Some(scope)) =
            (task::get(&vm.heap, o).fiber, task::get(&vm.heap, o).owner, task::get(&vm.heap, o).scope)
        {
            if task::get(&vm.heap, up).fiber.is_some() {
                scope_failure(vm, up, scope as usize, o, e);
                return None;
            }
        }
        if let Some(fid) = task::get(&vm.heap, o).fiber {
            if parked_outside_scope_end(vm, fid) && !holds_back(vm, fid) && unpark(vm, fid) {
                vm.sched.wake_forced(fid, Resume::Throw(e));
            } else {
                vm.sched.fibers.state_mut(fid).extra_mut().pending = Some(e);
            }
            return None;
        }
        owner = task::get(&vm.heap, o).owner;
    }
    Some(e)
}

/// Parked, and not at the end of a `wait { }` block (which keeps waiting for
/// its children and then throws itself).
fn parked_outside_scope_end(vm: &Vm, fid: u32) -> bool {
    let s = vm.sched.fibers.state(fid);
    s.parked.is_some() && !matches!(s.parked, Some(Wait::Scope))
}

/// Takes a parked fiber off the wait queues it is on (channels keep no stale
/// entries; other queues recognise stale ones by generation). False, leaving
/// it parked, when another isolate completed its shared-channel operation
/// first: it gets that, and the interruption comes at its next suspension.
fn unpark(vm: &mut Vm, fid: u32) -> bool {
    let s = vm.sched.fibers.state(fid);
    let wait = s.parked.clone();
    let w = Waiter { fiber: fid, gen: s.gen, case: None };
    let on_chan = matches!(wait, Some(Wait::Recv(_) | Wait::Send(_) | Wait::Select));
    if on_chan && !super::shared::release(vm, fid) {
        return false;
    }
    match wait {
        Some(Wait::Recv(h)) | Some(Wait::Send(h)) => select::remove_from(vm, h, w),
        Some(Wait::Select) => {
            let chans = vm.sched.fibers.state_mut(fid).extra.as_mut().map(|x| std::mem::take(&mut x.select));
            for h in chans.into_iter().flatten() {
                select::remove_from(vm, h, w);
            }
        }
        Some(Wait::Fd(fd)) => {
            if let Some(r) = vm.sched.events.reactor.as_mut() {
                r.forget(fd, fid);
            }
        }
        Some(Wait::Io) => super::io::abandon(vm, w),
        _ => {}
    }
    let s = vm.sched.fibers.state_mut(fid);
    s.gen = s.gen.wrapping_add(0x8000_0000);
    true
}

/// `t.cancel()`: cancels the task's fiber and, recursively, its children.
pub(super) fn cancel_task(vm: &mut Vm, th: Handle, cause: Cause) {
    // Cancelled before: what was under it then is cancelled, and what it
    // started since starts cancelled, save what a shielded `finally` started,
    // which its grace time's end cancels. So a block's end, which cancels its
    // children each time it wakes, does not walk their trees again.
    let again = task::get(&vm.heap, th).extra.as_ref().is_some_and(|x| x.cancelled_by.is_some());
    if again && !matches!(cause, Cause::GraceOver) {
        return;
    }
    let extra = task::extra_of(&mut vm.heap, th);
    if extra.cancelled_by.is_none() {
        extra.cancelled_by = Some(Rc::from(cause.text()));
    }
    let mut work = vec![th];
    while let Some(t) = work.pop() {
        if task::get(&vm.heap, t).is(task::TREE_DONE) {
            continue;
        }
        work.extend(task::get(&vm.heap, t).children().iter().copied());
        // Fibers not started yet start cancelled.
        if !super::start::cancel_not_started(vm, t) {
            if let Some(fid) = task::get(&vm.heap, t).fiber {
                cancel_fiber(vm, fid);
            }
        }
    }
}

/// Does fiber `fid` hold interruptions back: does a `finally` block of it run,
/// within its grace time (docs/concurrency.md, "Cancellation")?
pub(super) fn holds_back(vm: &Vm, fid: u32) -> bool {
    let s = vm.sched.fibers.state(fid);
    s.shielded && s.extra.as_ref().and_then(|x| x.grace_until).is_none_or(|t| vm.sched.now() < t)
}

/// Cancellation has reached fiber `fid` in a `finally` block (or it entered one
/// cancelled): its grace time starts, the first time.
/// When it ends, the task is cancelled again: a fiber still parked in a
/// `finally` block gets `Cancelled`, and fibers started there are cancelled.
pub(super) fn start_grace(vm: &mut Vm, fid: u32) {
    let until = vm.sched.now() + vm.sched.grace;
    let s = vm.sched.fibers.state_mut(fid);
    let (Some(th), None) = (s.task, s.extra.as_ref().and_then(|x| x.grace_until)) else { return };
    s.extra_mut().grace_until = Some(until);
    super::timer::add(vm, until, super::events::TimerKind::Grace(fid, th));
}

/// The grace time of the fiber running task `th` has passed.
pub(super) fn grace_ran_out(vm: &mut Vm, th: Handle) {
    cancel_task(vm, th, Cause::GraceOver);
}

/// Marks a fiber cancelled; a parked one gets `Cancelled` thrown at once (the
/// running one notices at its next suspension point).
pub(super) fn cancel_fiber(vm: &mut Vm, fid: u32) {
    vm.sched.fibers.state_mut(fid).cancelled = true;
    if vm.sched.fibers.state(fid).shielded {
        start_grace(vm, fid);
    }
    // At the end of a `wait { }` block the fiber keeps waiting for its (now
    // cancelled) children; the block then throws `Cancelled` itself. A fiber
    // in a `finally` block gets it when the block ends or its grace runs out.
    if parked_outside_scope_end(vm, fid) && !holds_back(vm, fid) && unpark(vm, fid) {
        let e = cancelled_error(vm, fid);
        vm.sched.wake_forced(fid, Resume::Throw(e));
    }
}

/// The error to throw into the running fiber at a suspension point: a
/// propagated child failure first, else `Cancelled` if it was cancelled
/// (level-triggered).
pub(super) fn interrupt(vm: &mut Vm) -> Option<Value> {
    if holds_back(vm, vm.sched.fibers.current) {
        return None;
    }
    let s = vm.sched.fibers.cur();
    if let Some(e) = s.extra.as_mut().and_then(|x| x.pending.take()) {
        return Some(e);
    }
    let scope_interrupt =
        s.extra.as_mut().and_then(|x| x.scopes.last_mut()).is_some_and(|sc| std::mem::take(&mut sc.interrupt));
    if scope_interrupt || s.cancelled {
        let fid = vm.sched.fibers.current;
        return Some(cancelled_error(vm, fid));
    }
    None
}

/// End of a `wait { }` block of the running fiber: true when it may continue
/// (after rethrowing a failure), false after parking until its fibers are done.
pub(super) fn scope_end(vm: &mut Vm, abort: Option<Value>) -> Res<bool> {
    let Some(scope) = vm.sched.fibers.cur().scopes().last() else { return Ok(true) };
    let children = scope.children.clone();
    // A fiber started after a sibling failed (the body ran on) was not among
    // those cancelled then: the block is being left by an error, so cancel it.
    if abort.is_some() || !scope.errors.is_empty() {
        for &c in &children {
            cancel_task(vm, c, Cause::BlockLeft);
        }
    }
    if !children.iter().all(|&c| tree_done(vm, c)) {
        vm.sched.fibers.park(Wait::Scope);
        return Ok(false);
    }
    let scope = vm.sched.fibers.cur().extra_mut().scopes.pop().unwrap();
    if let Some(&first) = scope.errors.first() {
        if let Value::Obj(h) = first {
            if let Obj::Error(e) = vm.heap.get_mut(h) {
                e.others = scope.errors[1..].to_vec();
            }
        }
        return Err(Fault::Throw(first));
    }
    if let Some(e) = abort {
        return Err(Fault::Throw(e));
    }
    if vm.sched.fibers.cur().cancelled && !holds_back(vm, vm.sched.fibers.current) {
        let fid = vm.sched.fibers.current;
        return Err(Fault::Throw(cancelled_error(vm, fid)));
    }
    Ok(true)
}
