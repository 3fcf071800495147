//! Starting fibers: the one place that knows a fiber not started yet has three
//! forms. `go` makes a pending task holding only the call its fiber will make;
//! a `go` statement outside any `wait { }` block whose task is dropped (nobody
//! can hold it) does not even make a task until it starts, only a record in
//! `unstarted.rs`. Either becomes a fiber when the run queue first hands it out.

use super::lifecycle::compact;
use super::queue::Runnable;
use super::task::{self, Born, Kickoff, Task, TaskState};
use crate::bytecode::{ProtoRef, Site};
use crate::vm::{Fiber, Handle, Obj, Value, Vm};

/// Starts a fiber whose first step is the call in `call` (see `Fiber::for_call`),
/// owned by the running fiber (or its innermost `wait { }` block); returns its
/// task (nil for a dropped task that gets only a record).
/// `born` is `born(vm)`.
pub(super) fn spawn(vm: &mut Vm, call: &[Value], method: bool, site: Site, dropped: bool, born: Born) -> Value {
    let cur = vm.sched.fibers.current;
    let owner = vm.sched.fibers.state(cur).task;
    let scope = vm.sched.fibers.state(cur).scopes().len().checked_sub(1).map(|s| s as u32);
    let cancelled = born != Born::Live;
    if born == Born::Stillborn {
        if dropped && scope.is_none() {
            // Nobody holds its task and it would never run: nothing to make
            // (a cancelled fiber bomb's queue then drains in one pass).
            return Value::Nil;
        }
        return stillborn(vm, owner, scope, dropped, site);
    }
    vm.sched.fibers.started();
    if dropped && scope.is_none() {
        let number = vm.sched.fibers.take_number();
        // Counted before it is made, so the collections that check
        // --max-memory come due even when a program only queues fibers (a
        // fiber bomb): the record and the run queue's growth.
        let grows = super::unstarted::record_bytes(call.len()) + vm.sched.ready.growth(Runnable::Record);
        vm.heap.note_growth(grows);
        if let Some(o) = owner {
            task::extra_of(&mut vm.heap, o).unstarted += 1;
        }
        vm.sched.unstarted.push(owner, site, number, method, born == Born::Cancelled, call.iter().copied());
        vm.sched.ready.push(Runnable::Record);
        return Value::Nil;
    }
    let id = alloc_id(vm);
    let state = TaskState::Pending(call.into(), Kickoff { method, born });
    let th = new_task(vm, Some(id), state, owner, scope, dropped, Some(site));
    task::get_mut(&mut vm.heap, th).cancelled = cancelled;
    adopt(vm, owner, scope, th);
    vm.heap.note_growth(vm.sched.ready.growth(Runnable::Task(th)));
    vm.sched.ready.push(Runnable::Task(th));
    Value::Obj(th)
}

/// A `go` whose fiber would never run (`Born::Stillborn`): its task ends
/// cancelled at once, with no fiber made or run, so a tree of `wait { }`
/// blocks collapses in time linear in what it had started.
fn stillborn(vm: &mut Vm, owner: Option<Handle>, scope: Option<u32>, dropped: bool, site: Site) -> Value {
    let th = new_task(vm, None, TaskState::Running, owner, scope, dropped, Some(site));
    // Nobody can wait on a dropped `go`'s task: no error is made for it.
    let e = if dropped { Value::Nil } else { super::lifecycle::task_cancelled_error(vm, Some(th)) };
    let t = task::get_mut(&mut vm.heap, th);
    t.state = TaskState::Cancelled(e);
    t.cancelled = true;
    t.marks |= task::TREE_DONE;
    adopt(vm, owner, scope, th);
    Value::Obj(th)
}

/// Task `th` joins its owner's children and its `wait { }` block's.
fn adopt(vm: &mut Vm, owner: Option<Handle>, scope: Option<u32>, th: Handle) {
    if let Some(owner) = owner {
        add_child(vm, owner, th);
    }
    if scope.is_some() {
        fn innermost(vm: &mut Vm) -> &mut super::Scope {
            vm.sched.fibers.cur().extra_mut().scopes.last_mut().expect("a scope")
        }
        let mut children = std::mem::take(&mut innermost(vm).children);
        compact(vm, &mut children);
        children.push(th);
        innermost(vm).children = children;
    }
}

/// How the running fiber's `go` starts its fiber: a cancelled fiber's `go`
/// starts it cancelled too, except in a `finally` block within the grace time
/// (it is cancelled when that ends); a fiber born cancelled starts stillborn.
pub(super) fn born(vm: &Vm) -> Born {
    let cur = vm.sched.fibers.current;
    let s = vm.sched.fibers.state(cur);
    match (s.cancelled && !super::lifecycle::holds_back(vm, cur), s.born_cancelled) {
        (false, _) => Born::Live,
        (true, false) => Born::Cancelled,
        (true, true) => Born::Stillborn,
    }
}

/// Starts a fiber owned by the program (the main task) instead of the running
/// fiber: it is not cancelled with its starter and outlives it (a server's
/// connections finish their requests after the server was cancelled). Like a
/// dropped `go`'s, its uncaught error goes to the owner at once.
pub(super) fn spawn_detached(vm: &mut Vm, call: &[Value], site: Site) -> Value {
    let owner = vm.sched.main_task;
    vm.sched.fibers.started();
    let id = alloc_id(vm);
    let state = TaskState::Pending(call.into(), Kickoff { method: false, born: Born::Live });
    let th = new_task(vm, Some(id), state, owner, None, true, Some(site));
    task::get_mut(&mut vm.heap, th).marks |= task::DETACHED;
    if let Some(owner) = owner {
        add_child(vm, owner, th);
    }
    vm.heap.note_growth(vm.sched.ready.growth(Runnable::Task(th)));
    vm.sched.ready.push(Runnable::Task(th));
    Value::Obj(th)
}

/// A fiber id for a fiber about to be made, the slots' growth counted.
fn alloc_id(vm: &mut Vm) -> u32 {
    vm.heap.note_growth(vm.sched.fibers.id_growth());
    vm.sched.fibers.alloc_id()
}

fn add_child(vm: &mut Vm, owner: Handle, child: Handle) {
    let mut children = std::mem::take(&mut task::extra_of(&mut vm.heap, owner).children);
    compact(vm, &mut children);
    if children.len() == children.capacity() {
        // The list doubles (4 at first): counted as it grows.
        let cap = (children.capacity() * 2).max(4);
        vm.heap.note_growth(crate::limits::malloc_size(cap * 4));
    }
    children.push(child);
    task::get_mut(&mut vm.heap, owner).extra_mut().children = children;
}

/// The fiber of a runnable about to run: one that exists, or one built now for a
/// pending task or the oldest record (whose task is made now).
pub(super) fn take(vm: &mut Vm, r: Runnable) -> Option<(u32, Box<Fiber>)> {
    match r {
        Runnable::Fiber(id) => Some((id, vm.sched.fibers.slots[id as usize].fiber.take()?)),
        Runnable::Task(th) => {
            let t = task::get_mut(&mut vm.heap, th);
            let TaskState::Pending(call, kick) = std::mem::replace(&mut t.state, TaskState::Running) else {
                unreachable!("queued task is not pending")
            };
            let id = t.fiber.expect("pending task without fiber id");
            let (cancelled, site) = (t.cancelled, t.site.expect("a go site"));
            Some((id, begin(vm, &call, kick.method, site, id, th, cancelled, kick.born)))
        }
        Runnable::Record => {
            let r = vm.sched.unstarted.pop().expect("run queue names a missing record");
            // Cancelled at its `go`, or since: its owner was cancelled after it.
            let below =
                r.owner.map_or(0, |o| task::get(&vm.heap, o).extra.as_ref().map_or(0, |x| x.records_cancelled_below));
            let cancelled = r.born_cancelled || r.number < below;
            let born = if r.born_cancelled { Born::Cancelled } else { Born::Live };
            let id = alloc_id(vm);
            let t = Task {
                number: r.number,
                fiber: Some(id),
                state: TaskState::Running,
                owner: r.owner,
                scope: None,
                observed: false,
                dropped: true,
                cancelled,
                marks: in_scope(vm, None, r.owner),
                site: Some(r.site),
                extra: None,
            };
            let th = vm.heap.alloc(Obj::Task(Box::new(t)));
            if let Some(o) = r.owner {
                task::get_mut(&mut vm.heap, o).extra_mut().unstarted -= 1;
                add_child(vm, o, th);
            }
            Some((id, begin(vm, &r.call, r.method, r.site, id, th, cancelled, born)))
        }
    }
}

/// A fiber about to make its first call, with its scheduling state.
#[allow(clippy::too_many_arguments)]
fn begin(
    vm: &mut Vm,
    call: &[Value],
    method: bool,
    site: Site,
    id: u32,
    th: Handle,
    cancelled: bool,
    born: Born,
) -> Box<Fiber> {
    let s = vm.sched.fibers.state_mut(id);
    s.task = Some(th);
    s.cancelled = cancelled || born != Born::Live;
    s.born_cancelled = cancelled || born != Born::Live;
    let proto = match (method, call[0]) {
        (false, Value::Obj(h)) => match vm.heap.get(h) {
            Obj::Closure(c) => Some(c.proto),
            _ => None,
        },
        _ => None,
    };
    // Sized for the callee's registers: a program may park a million fibers.
    let regs = proto.map_or(0, |p| p.nregs as usize);
    let f = Box::new(Fiber::for_call(call, method, site, regs, born == Born::Stillborn));
    vm.heap.note_growth(f.bytes());
    if vm.sched.trace.is_some() {
        let label = super::report::fiber_title(vm, th, &callee(vm, call, method));
        super::trace::name_fiber(vm, id, task::get(&vm.heap, th).number, &label);
    }
    f
}

/// What a `go` calls, for its fiber's name in a trace: the function's name, or
/// `type.method`.
fn callee(vm: &Vm, call: &[Value], method: bool) -> String {
    match (method, call[0]) {
        (true, name) => format!("{}.{}", vm.heap.type_name(call[1]), crate::display::display(&vm.heap, name)),
        (false, Value::Obj(h)) => match vm.heap.get(h) {
            Obj::Closure(c) => c.proto.display_name().to_string(),
            _ => crate::display::display(&vm.heap, call[0]),
        },
        (false, v) => crate::display::display(&vm.heap, v),
    }
}

/// Marks what task `t` has not started yet as cancelled: its own fiber if it is
/// pending (true then), and the records of dropped `go`s it owns — those
/// queued so far, in O(1): cancelling a tree of a million queued fibers is
/// linear in the tree, not quadratic.
pub(super) fn cancel_not_started(vm: &mut Vm, t: Handle) -> bool {
    if task::get(&vm.heap, t).unstarted() > 0 {
        let next = vm.sched.fibers.next_number;
        task::get_mut(&mut vm.heap, t).extra_mut().records_cancelled_below = next;
    }
    let tk = task::get_mut(&mut vm.heap, t);
    let pending = matches!(tk.state, TaskState::Pending(..));
    tk.cancelled |= pending;
    pending
}

/// `(task number, go site)` of every fiber not started yet, in start order
/// within each form (for `:fibers`).
pub(super) fn not_started(vm: &Vm) -> impl Iterator<Item = (u32, Site)> + '_ {
    let pending = vm.sched.ready.pending_tasks().map(|th| {
        let t = task::get(&vm.heap, th);
        (t.number, t.site.expect("a go site"))
    });
    pending.chain(vm.sched.unstarted.describe().map(|(n, site)| (n, *site)))
}

/// `IN_SCOPE` for a task of `wait { }` block `scope` or under one.
fn in_scope(vm: &Vm, scope: Option<u32>, owner: Option<Handle>) -> u8 {
    let under = scope.is_some() || owner.is_some_and(|o| task::get(&vm.heap, o).is(task::IN_SCOPE));
    if under {
        task::IN_SCOPE
    } else {
        0
    }
}

/// A new task object, numbered in start order.
pub(super) fn new_task(
    vm: &mut Vm,
    fiber: Option<u32>,
    state: TaskState,
    owner: Option<Handle>,
    scope: Option<u32>,
    dropped: bool,
    site: Option<Site>,
) -> Handle {
    let number = vm.sched.fibers.take_number();
    let marks = in_scope(vm, scope, owner);
    let t = Task {
        number,
        fiber,
        state,
        owner,
        scope,
        observed: false,
        dropped,
        cancelled: false,
        marks,
        site,
        extra: None,
    };
    vm.heap.alloc(Obj::Task(Box::new(t)))
}

/// Starts a file's top level (the program, or a REPL entry) as a fiber with no
/// owner; returns its task.
pub(super) fn start_main(vm: &mut Vm, proto: ProtoRef) -> Handle {
    let id = alloc_id(vm);
    let th = new_task(vm, Some(id), TaskState::Running, None, None, false, None);
    vm.sched.main_task = Some(th);
    vm.sched.fibers.state_mut(id).task = Some(th);
    vm.sched.fibers.slots[id as usize].fiber = Some(Box::new(Fiber::for_main(proto)));
    vm.sched.ready.push(Runnable::Fiber(id));
    vm.sched.fibers.started();
    if vm.sched.trace.is_some() {
        let label = super::report::fiber_title(vm, th, "");
        super::trace::name_fiber(vm, id, task::get(&vm.heap, th).number, &label);
    }
    th
}
