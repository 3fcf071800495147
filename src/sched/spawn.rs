//! Starting fibers: `go` makes a pending task holding only the callee and its
//! arguments; the fiber (stack, frames) is built when the task first runs.

use super::lifecycle::compact;
use super::task::{self, Task, TaskState};
use super::{task_mut, Fiber};
use crate::vm::call::{call_value, check_arity, Called};
use crate::vm::fiber::ProtoRef;
use crate::vm::{Handle, Obj, Value, Vm};

/// Tags a run-queue entry as a pending task's handle rather than a fiber id.
const PENDING: u32 = 1 << 31;

/// The pending task a run-queue entry names, if it names one.
pub(super) fn pending(entry: u32) -> Option<Handle> {
    (entry & PENDING != 0).then_some(Handle(entry & !PENDING))
}

impl super::Sched {
    /// Pending tasks in the run queue (roots for the collector).
    pub fn pending_tasks(&self) -> impl Iterator<Item = Handle> + '_ {
        self.ready.iter().filter_map(|&e| pending(e))
    }
}

/// Starts a fiber running `call[0](call[1..])`, owned by the running fiber (or
/// its innermost `wait { }` block); returns its task.
pub fn spawn(
    vm: &mut Vm,
    parent: &mut Fiber,
    call: Box<[Value]>,
    site: task::Site,
    dropped: bool,
) -> crate::vm::Res<Value> {
    let callee = call[0];
    let argc = call.len() - 1;
    let closure = match callee {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Closure(c) => Some(ProtoRef::new(&c.proto)),
            _ => None,
        },
        _ => None,
    };
    let Some(proto) = closure else {
        // A builtin runs at once (or the call fails): its task is already done.
        let mut f = Fiber::default();
        f.stack.extend_from_slice(&call);
        call_value(vm, &mut f, callee, 1, argc, 0)?;
        let t = new_task(vm, None, TaskState::Done(f.stack[0]), parent.sched.task, None, dropped, Some(site));
        return Ok(Value::Obj(t));
    };
    // Arity errors are thrown by the `go`, as if the fiber were built now.
    check_arity(&proto, argc)?;
    let id = vm.sched.alloc_id();
    let scope = parent.sched.scopes().len().checked_sub(1).map(|s| s as u32);
    let th = new_task(vm, Some(id), TaskState::Pending(call), parent.sched.task, scope, dropped, Some(site));
    debug_assert!(th.0 < PENDING, "heap handle too large to tag");
    if let Some(owner) = parent.sched.task {
        let mut children = std::mem::take(&mut task_mut(vm, owner).extra_mut().children);
        compact(vm, &mut children);
        children.push(th);
        task_mut(vm, owner).extra_mut().children = children;
    }
    if let Some(s) = parent.sched.extra.as_mut().and_then(|x| x.scopes.last_mut()) {
        compact(vm, &mut s.children);
        s.children.push(th);
    }
    vm.sched.ready.push_back(th.0 | PENDING);
    vm.sched.live += 1;
    Ok(Value::Obj(th))
}

/// Builds the fiber of a pending task about to run for the first time.
pub(super) fn begin(vm: &mut Vm, th: Handle) -> Box<Fiber> {
    let t = task_mut(vm, th);
    let TaskState::Pending(call) = std::mem::replace(&mut t.state, TaskState::Running) else {
        unreachable!("queued task is not pending")
    };
    let id = t.fiber.expect("pending task without fiber id");
    let cancelled = t.cancelled;
    let callee = call[0];
    let regs = match callee {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Closure(c) => c.proto.nregs as usize,
            _ => 0,
        },
        _ => 0,
    };
    let mut f = Box::new(Fiber::default());
    // Sized exactly: a program may park a million fibers.
    f.stack.reserve_exact(call.len().max(1 + regs));
    f.frames.reserve_exact(2);
    f.stack.extend_from_slice(&call);
    let argc = call.len() - 1;
    drop(call);
    match call_value(vm, &mut f, callee, 1, argc, 0) {
        Ok(Called::Frame) => {}
        _ => unreachable!("spawn checked the callee and its arity"),
    }
    f.sched.id = id;
    f.sched.task = Some(th);
    f.sched.cancelled = cancelled;
    f
}

/// A new task object, numbered in start order.
pub(super) fn new_task(
    vm: &mut Vm,
    fiber: Option<u32>,
    state: TaskState,
    owner: Option<Handle>,
    scope: Option<u32>,
    dropped: bool,
    site: Option<task::Site>,
) -> Handle {
    let number = vm.sched.next_number;
    vm.sched.next_number += 1;
    let t = Task { number, fiber, state, owner, scope, observed: false, dropped, cancelled: false, site, extra: None };
    vm.heap.alloc(Obj::Task(Box::new(t)))
}

/// Gives fiber `f` its id and task and queues it to run.
pub(super) fn start(vm: &mut Vm, mut f: Fiber, id: u32, th: Handle) {
    f.sched.id = id;
    f.sched.task = Some(th);
    vm.sched.fibers[id as usize] = Some(Box::new(f));
    vm.sched.ready.push_back(id);
    vm.sched.live += 1;
}
