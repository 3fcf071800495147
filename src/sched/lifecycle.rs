//! A fiber's life after it starts: finishing (recording the outcome, waking
//! waiters), error propagation to owners and `wait { }` blocks, cancellation.

use super::report::{add_spawn_chain, uncaught_at_top};
use super::task::TaskState;
use super::{cancelled_error, chan, is_cancelled_error, select, task, task_mut, Resume, Sched, Wait, Waiter};
use crate::vm::fiber::Uncaught;
use crate::vm::{Fiber, Handle, Value, Vm};

/// A fiber ended: record its outcome in its task, wake waiters, close `done()`,
/// and propagate an unobserved failure. Returns an error that ends the program.
pub(super) fn finish(vm: &mut Vm, f: &Fiber, result: Result<Value, Box<Uncaught>>) -> Option<Box<Uncaught>> {
    let id = f.sched.id;
    vm.sched.free.push(id);
    vm.sched.live -= 1;
    let th = f.sched.task.expect("fiber without task");
    let is_main = Some(th) == vm.sched.main_task;
    let cancelled = f.sched.cancelled;
    let mut result = result;
    // A child's failure that arrived after the fiber's last suspension point.
    if let (Ok(_), Some(e)) = (&result, f.sched.extra.as_ref().and_then(|x| x.pending)) {
        result = Err(Box::new(uncaught_at_top(vm, e)));
    }
    // A child that failed unobserved fails its owner when the owner ends.
    if result.is_ok() {
        let children = task(vm, th).children().to_vec();
        for c in children {
            let t = task(vm, c);
            if let TaskState::Failed(e) = t.state {
                if !t.observed && t.scope.is_none() {
                    task_mut(vm, c).observed = true;
                    result = Err(Box::new(uncaught_at_top(vm, e)));
                    break;
                }
            }
        }
    }
    let state = match &result {
        // `wait` on a cancelled task throws `Cancelled`, even if it caught it.
        Ok(_) if cancelled => TaskState::Cancelled(cancelled_error(vm)),
        Ok(v) => TaskState::Done(*v),
        Err(u) if cancelled && is_cancelled_error(vm, u.value) => TaskState::Cancelled(u.value),
        Err(u) => TaskState::Failed(u.value),
    };
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
    let (owner, scope, dropped) = (t.owner, t.scope, t.dropped);
    for (fid, gen) in waiters {
        vm.sched.wake(Waiter { fiber: fid, gen, case: None, two: false }, Resume::Retry);
    }
    if let Some(ch) = done {
        let _ = chan::close(vm, ch);
    }
    wake_scope_waiters(vm, owner);
    if let (Some(owner), Some(scope)) = (owner, scope) {
        if failed {
            let e = task(vm, th).result();
            task_mut(vm, th).observed = true;
            scope_failure(vm, owner, scope as usize, th, e);
        }
    } else if failed && (dropped || owner.is_some_and(|o| task(vm, o).finished())) {
        // Nobody can wait on it any more once its owner has ended without doing so.
        let e = task(vm, th).result();
        task_mut(vm, th).observed = true;
        propagate(vm, owner, e);
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
/// and started nothing: only its owner's list of children refers to it, so when
/// it is the newest child (a fiber that ran to its end at once) it is dropped
/// from the list and freed, without waiting for a collection. Leaves of a tree
/// of a million fibers then leave no garbage behind.
fn forget_if_unreachable(vm: &mut Vm, th: Handle) {
    let t = task(vm, th);
    let forgettable = t.dropped
        && t.scope.is_none()
        && matches!(t.state, TaskState::Done(_))
        && t.extra.as_ref().is_none_or(|x| x.children.is_empty() && x.unstarted == 0 && x.done_chan.is_none());
    let Some(owner) = t.owner.filter(|_| forgettable) else { return };
    let Some(x) = task_mut(vm, owner).extra.as_mut() else { return };
    if x.children.last() == Some(&th) {
        x.children.pop();
        vm.heap.free(th);
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
        let t = task(vm, c);
        let unobserved_failure = matches!(t.state, TaskState::Failed(_)) && !t.observed;
        unobserved_failure || !tree_done(vm, c)
    });
}

/// Has the task and every task started under it finished?
pub fn tree_done(vm: &Vm, th: Handle) -> bool {
    let mut work = vec![th];
    while let Some(t) = work.pop() {
        let tk = task(vm, t);
        if !tk.finished() || tk.unstarted() > 0 {
            return false;
        }
        work.extend(tk.children().iter().copied());
    }
    true
}

/// Wakes every ancestor waiting at the end of a `wait { }` block, so it can
/// recheck whether its whole tree of fibers is done.
pub(super) fn wake_scope_waiters(vm: &mut Vm, owner: Option<Handle>) {
    let mut owner = owner;
    while let Some(o) = owner {
        if let Some(fid) = task(vm, o).fiber {
            if let Some(Some(f)) = vm.sched.fibers.get(fid as usize) {
                if matches!(f.sched.parked, Some(Wait::Scope)) {
                    let w = Waiter { fiber: fid, gen: f.sched.gen, case: None, two: false };
                    vm.sched.wake(w, Resume::Retry);
                }
            }
        }
        owner = task(vm, o).owner;
    }
}

/// A child of a `wait { }` block failed (or a fiber under it whose failure
/// reached it): record the error, cancel the siblings and interrupt the owner.
fn scope_failure(vm: &mut Vm, owner: Handle, scope: usize, child: Handle, err: Value) {
    let Some(fid) = task(vm, owner).fiber else { return };
    let Some(Some(of)) = vm.sched.fibers.get_mut(fid as usize) else { return };
    let innermost = of.sched.scopes().len() == scope + 1;
    let parked = of.sched.parked.is_some();
    let parked_inside = parked && !matches!(of.sched.parked, Some(Wait::Scope));
    let Some(s) = of.sched.extra.as_mut().and_then(|x| x.scopes.get_mut(scope)) else { return };
    s.errors.push(err);
    let siblings = s.children.clone();
    // Interrupt the block's body so it can end: at once if it is blocked inside
    // the block, else at its next suspension point.
    let interrupt = innermost && parked_inside;
    s.interrupt = innermost && !parked;
    for s in siblings.into_iter().filter(|&s| s != child) {
        cancel_task(vm, s);
    }
    if interrupt {
        let e = cancelled_error(vm);
        unpark(vm, fid);
        vm.sched.wake_forced(fid, Resume::Throw(e));
    }
}

/// Sends a child's failure to its owner fiber: thrown where the owner is blocked,
/// or at its next suspension point; past a finished owner, further up.
pub(super) fn propagate(vm: &mut Vm, owner: Option<Handle>, e: Value) {
    let mut owner = owner;
    while let Some(o) = owner {
        // Past a finished child of a `wait { }` block, the block takes it (the
        // block is still open: it waits for this failed fiber's whole tree).
        if let (None, Some(up), Some(scope)) = (task(vm, o).fiber, task(vm, o).owner, task(vm, o).scope) {
            if task(vm, up).fiber.is_some() {
                scope_failure(vm, up, scope as usize, o, e);
                return;
            }
        }
        if let Some(fid) = task(vm, o).fiber {
            let parked = vm.sched.fibers[fid as usize]
                .as_ref()
                .is_some_and(|f| f.sched.parked.is_some() && !matches!(f.sched.parked, Some(Wait::Scope)));
            if parked {
                unpark(vm, fid);
                vm.sched.wake_forced(fid, Resume::Throw(e));
            } else if let Some(Some(f)) = vm.sched.fibers.get_mut(fid as usize) {
                f.sched.extra_mut().pending = Some(e);
            }
            return;
        }
        owner = task(vm, o).owner;
    }
    vm.sched.top_error.get_or_insert(e);
}

impl Sched {
    /// Wakes a fiber that `unpark` just took off its queues.
    pub(super) fn wake_forced(&mut self, fid: u32, resume: Resume) {
        if let Some(Some(f)) = self.fibers.get_mut(fid as usize) {
            f.sched.parked = None;
            f.sched.resume = Some(resume);
            self.ready.push_woken(fid);
        }
    }
}

/// Takes a parked fiber off the wait queues it is on (channels keep no stale
/// entries; other queues recognise stale ones by generation).
pub fn unpark(vm: &mut Vm, fid: u32) {
    let Some(Some(f)) = vm.sched.fibers.get(fid as usize) else { return };
    let wait = f.sched.parked.clone();
    let w = Waiter { fiber: fid, gen: f.sched.gen, case: None, two: false };
    match wait {
        Some(Wait::Recv(h)) | Some(Wait::Send(h)) => select::remove_from(vm, h, w),
        Some(Wait::Select(hs)) => {
            for h in hs {
                select::remove_from(vm, h, w);
            }
        }
        _ => {}
    }
    if let Some(Some(f)) = vm.sched.fibers.get_mut(fid as usize) {
        f.sched.gen = f.sched.gen.wrapping_add(0x8000_0000);
    }
}

/// `t.cancel()`: cancels the task's fiber and, recursively, its children.
pub fn cancel_task(vm: &mut Vm, th: Handle) {
    let mut work = vec![th];
    while let Some(t) = work.pop() {
        let tk = task(vm, t);
        work.extend(tk.children().iter().copied());
        if tk.unstarted() > 0 {
            vm.sched.unstarted.cancel_owned_by(t);
        }
        let tk = task(vm, t);
        if matches!(tk.state, TaskState::Pending(_)) {
            task_mut(vm, t).cancelled = true;
        } else if let Some(fid) = tk.fiber {
            cancel_fiber(vm, fid);
        }
    }
}

/// Marks a fiber cancelled; a parked one gets `Cancelled` thrown at once.
pub fn cancel_fiber(vm: &mut Vm, fid: u32) {
    if fid == vm.sched.current && matches!(vm.sched.fibers.get(fid as usize), Some(None)) {
        // The running fiber cancelled itself: it notices at its next suspension.
        vm.sched.cancel_self = true;
        return;
    }
    let Some(Some(f)) = vm.sched.fibers.get_mut(fid as usize) else { return };
    f.sched.cancelled = true;
    // At the end of a `wait { }` block the fiber keeps waiting for its (now
    // cancelled) children; the block then throws `Cancelled` itself.
    if f.sched.parked.is_some() && !matches!(f.sched.parked, Some(Wait::Scope)) {
        unpark(vm, fid);
        let e = cancelled_error(vm);
        vm.sched.wake_forced(fid, Resume::Throw(e));
    }
}
