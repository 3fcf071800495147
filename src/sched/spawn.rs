//! Starting fibers: `go` makes a pending task holding only the callee and its
//! arguments; the fiber (stack, frames) is built when the task first runs.
//!
//! A `go` statement outside any `wait { }` block whose task is dropped (nobody
//! can hold it) does not even make a task until it starts: it leaves a record in
//! `unstarted.rs`.

use super::lifecycle::compact;
use super::task::{self, Task, TaskState};
use super::{task_mut, Fiber};
use crate::bytecode::Op;
use crate::vm::call::{call_value, check_arity, Called};
use crate::vm::fiber::ProtoRef;
use crate::vm::{ErrorKind, Handle, Obj, Value, Vm};

/// Tags a run-queue entry as a pending task's handle rather than a fiber id.
const PENDING: u32 = 1 << 31;
/// A run-queue entry meaning "the oldest `Unstarted` record".
const NEXT_RECORD: u32 = u32::MAX;

/// The pending task a run-queue entry names, if it names one.
pub(super) fn pending(entry: u32) -> Option<Handle> {
    (entry & PENDING != 0 && entry != NEXT_RECORD).then_some(Handle(entry & !PENDING))
}

/// Does a run-queue entry name a task or record whose fiber is not built yet?
pub(super) fn not_started(entry: u32) -> bool {
    entry & PENDING != 0
}

impl super::Sched {
    /// Pending tasks in the run queue (roots for the collector).
    pub fn pending_tasks(&self) -> impl Iterator<Item = Handle> + '_ {
        self.ready.iter().filter_map(pending)
    }
}

/// Starts a fiber running `stack[slot](stack[slot + 1 ..= slot + argc])` of the
/// running fiber, owned by it (or its innermost `wait { }` block); returns its
/// task (nil for a dropped task that gets only a record).
pub fn spawn(
    vm: &mut Vm,
    parent: &mut Fiber,
    slot: usize,
    argc: usize,
    site: task::Site,
    dropped: bool,
) -> crate::vm::Res<Value> {
    let call = &parent.stack[slot..=slot + argc];
    let callee = call[0];
    let closure = match callee {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Closure(c) => Some(ProtoRef::new(&c.proto)),
            _ => None,
        },
        _ => None,
    };
    // A builtin runs in its own fiber too, through a function that calls it.
    let (proto, tramp) = match (closure, callee) {
        (Some(p), _) => (p, None),
        (None, Value::Obj(h)) if matches!(vm.heap.get(h), Obj::Native(_)) => {
            let tramp = trampoline(vm, argc, site);
            let Value::Obj(t) = tramp else { unreachable!() };
            let Obj::Closure(c) = vm.heap.get(t) else { unreachable!() };
            (ProtoRef::new(&c.proto), Some(tramp))
        }
        (None, _) => return crate::vm::err(ErrorKind::Type, format!("cannot call {}", vm.heap.type_name(callee))),
    };
    let argc = argc + tramp.is_some() as usize;
    // Arity errors are thrown by the `go`, as if the fiber were built now.
    check_arity(&proto, argc)?;
    let values = tramp.into_iter().chain(call.iter().copied());
    let owner = parent.sched.task;
    let scope = parent.sched.scopes().len().checked_sub(1).map(|s| s as u32);
    vm.sched.live += 1;
    if dropped && scope.is_none() {
        let number = take_number(vm);
        vm.sched.unstarted.push(owner, site, number, values);
        if let Some(o) = owner {
            task_mut(vm, o).extra_mut().unstarted += 1;
        }
        vm.sched.ready.push(NEXT_RECORD);
        return Ok(Value::Nil);
    }
    let id = vm.sched.alloc_id();
    let th = new_task(vm, Some(id), TaskState::Pending(values.collect()), owner, scope, dropped, Some(site));
    debug_assert!(th.0 < PENDING, "heap handle too large to tag");
    if let Some(owner) = owner {
        add_child(vm, owner, th);
    }
    if let Some(s) = parent.sched.extra.as_mut().and_then(|x| x.scopes.last_mut()) {
        compact(vm, &mut s.children);
        s.children.push(th);
    }
    vm.sched.ready.push(th.0 | PENDING);
    Ok(Value::Obj(th))
}

fn add_child(vm: &mut Vm, owner: Handle, child: Handle) {
    let mut children = std::mem::take(&mut task_mut(vm, owner).extra_mut().children);
    compact(vm, &mut children);
    children.push(child);
    task_mut(vm, owner).extra_mut().children = children;
}

/// `fn(f, a1, .., aN) { return f(a1, .., aN) }` for the `go` at `site` (so its
/// errors point there), made once per site and kept in a hidden global (so the
/// collector keeps it).
fn trampoline(vm: &mut Vm, argc: usize, site: task::Site) -> Value {
    let slot = vm.global_slot(&format!("<go {argc} at {}>", site.location())) as usize;
    if let Value::Obj(_) = vm.globals[slot] {
        return vm.globals[slot];
    }
    let (file, span) = (site.proto.file.clone(), site.span());
    let n = argc.min(254) as u8;
    let proto = std::rc::Rc::new(crate::bytecode::Proto {
        name: "<go builtin>".into(),
        code: vec![Op::Call { base: 0, argc: n }, Op::Return { src: 0 }],
        spans: vec![span; 2],
        consts: Vec::new(),
        selects: Vec::new(),
        names: Vec::new(),
        protos: Vec::new(),
        upvals: Vec::new(),
        nparams: n + 1,
        nrequired: n + 1,
        has_rest: false,
        nregs: n + 1,
        file,
        span,
    });
    vm.protos.push(proto.clone());
    let h = vm.heap.alloc(Obj::Closure(crate::vm::object::Closure { proto, upvals: Box::new([]) }));
    vm.globals[slot] = Value::Obj(h);
    vm.globals[slot]
}

/// Builds the fiber of a run-queue entry about to run for the first time: a
/// pending task, or the oldest record (whose task is made now).
pub(super) fn begin(vm: &mut Vm, entry: u32) -> Box<Fiber> {
    if entry != NEXT_RECORD {
        let th = Handle(entry & !PENDING);
        let t = task_mut(vm, th);
        let TaskState::Pending(call) = std::mem::replace(&mut t.state, TaskState::Running) else {
            unreachable!("queued task is not pending")
        };
        let id = t.fiber.expect("pending task without fiber id");
        let cancelled = t.cancelled;
        return build(vm, call.into_vec().into_iter(), id, th, cancelled);
    }
    let r = vm.sched.unstarted.pop().expect("run queue names a missing record");
    let id = vm.sched.alloc_id();
    let t = Task {
        number: r.number,
        fiber: Some(id),
        state: TaskState::Running,
        owner: r.owner,
        scope: None,
        observed: false,
        dropped: true,
        cancelled: r.cancelled,
        site: Some(r.site),
        extra: None,
    };
    let th = vm.heap.alloc(Obj::Task(Box::new(t)));
    if let Some(o) = r.owner {
        task_mut(vm, o).extra_mut().unstarted -= 1;
        add_child(vm, o, th);
    }
    build(vm, r.call.into_iter(), id, th, r.cancelled)
}

/// A fiber about to call `call[0](call[1..])` for task `th`.
fn build(vm: &mut Vm, call: impl ExactSizeIterator<Item = Value>, id: u32, th: Handle, cancelled: bool) -> Box<Fiber> {
    let mut call = call.peekable();
    let (n, callee) = (call.len(), *call.peek().expect("a call has a callee"));
    let regs = match callee {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Closure(c) => c.proto.nregs as usize,
            _ => 0,
        },
        _ => 0,
    };
    let mut f = Box::new(Fiber::default());
    // Sized exactly: a program may park a million fibers.
    f.stack.reserve_exact(n.max(1 + regs));
    f.stack.extend(call);
    f.frames.reserve_exact(1);
    match call_value(vm, &mut f, callee, 1, n - 1, 0) {
        Ok(Called::Frame) => {}
        _ => unreachable!("spawn checked the callee and its arity"),
    }
    f.sched.id = id;
    f.sched.task = Some(th);
    f.sched.cancelled = cancelled;
    f
}

fn take_number(vm: &mut Vm) -> u32 {
    vm.sched.next_number += 1;
    vm.sched.next_number - 1
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
    let number = take_number(vm);
    let t = Task { number, fiber, state, owner, scope, observed: false, dropped, cancelled: false, site, extra: None };
    vm.heap.alloc(Obj::Task(Box::new(t)))
}

/// Gives fiber `f` its id and task and queues it to run.
pub(super) fn start(vm: &mut Vm, mut f: Fiber, id: u32, th: Handle) {
    f.sched.id = id;
    f.sched.task = Some(th);
    vm.sched.fibers[id as usize] = Some(Box::new(f));
    vm.sched.ready.push(id);
    vm.sched.live += 1;
}
