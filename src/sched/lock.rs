//! Mutexes (FIFO hand-off to waiters) and waitgroups.

use super::values::{Mutex, WaitGroup};
use super::Waiter;
use crate::vm::ErrorKind;
use crate::vm::{err, Handle, Obj, Res, Resume, Value, Vm};

fn mutex_mut(vm: &mut Vm, h: Handle) -> &mut Mutex {
    match vm.heap.get_mut(h) {
        Obj::Mutex(m) => m,
        _ => unreachable!("not a mutex"),
    }
}

/// The mutex in `v`, or an error.
pub(super) fn as_mutex(vm: &Vm, v: Value) -> Res<Handle> {
    match v {
        Value::Obj(h) if matches!(vm.heap.get(h), Obj::Mutex(_)) => Ok(h),
        _ => err(ErrorKind::Type, format!("lock needs a mutex, not {}", vm.heap.type_name(v))),
    }
}

/// Takes the mutex if free: true when held now, false when the fiber must wait.
pub(super) fn try_lock(vm: &mut Vm, h: Handle) -> Res<bool> {
    let id = vm.sched.fibers.current;
    let m = mutex_mut(vm, h);
    match m.owner {
        None => {
            m.owner = Some(id);
            vm.sched.fibers.cur().extra_mut().locks.push(h);
            Ok(true)
        }
        Some(o) if o == id => err(ErrorKind::Lock, "mutex is already locked by this fiber"),
        Some(_) => Ok(false),
    }
}

pub(super) fn enqueue(vm: &mut Vm, h: Handle, w: Waiter) {
    mutex_mut(vm, h).waiters.push_back(w);
}

/// Releases the mutex and hands it to the first waiter still waiting.
pub(super) fn unlock(vm: &mut Vm, h: Handle) {
    let id = vm.sched.fibers.current;
    if let Some(locks) = vm.sched.fibers.cur().extra.as_mut().map(|x| &mut x.locks) {
        if let Some(i) = locks.iter().rposition(|&l| l == h) {
            locks.remove(i);
        }
    }
    let m = mutex_mut(vm, h);
    if m.owner != Some(id) {
        return;
    }
    m.owner = None;
    loop {
        let Some(w) = mutex_mut(vm, h).waiters.pop_front() else { return };
        if vm.sched.fibers.is_parked(w) {
            mutex_mut(vm, h).owner = Some(w.fiber);
            vm.sched.fibers.state_mut(w.fiber).extra_mut().locks.push(h);
            vm.sched.wake(w, Resume::Value(Value::Nil));
            return;
        }
    }
}

pub(super) fn group_mut(vm: &mut Vm, h: Handle) -> &mut WaitGroup {
    match vm.heap.get_mut(h) {
        Obj::WaitGroup(g) => g,
        _ => unreachable!("not a waitgroup"),
    }
}

/// `wg.add(n)` (and `wg.done()` as add(-1)); at zero every waiter wakes.
pub(super) fn group_add(vm: &mut Vm, h: Handle, n: i64) -> Res<()> {
    let g = group_mut(vm, h);
    let count = g.count.checked_add(n).unwrap_or(-1);
    if count < 0 {
        return err(ErrorKind::Value, "negative waitgroup counter");
    }
    g.count = count;
    if count == 0 {
        for w in std::mem::take(&mut g.waiters) {
            vm.sched.wake(w, Resume::Retry);
        }
    }
    Ok(())
}
