//! Channels, `select`, mutexes and waitgroups driven through the seam
//! (`sched::ops`) by fake fibers: scheduler slots with a task and no VM fiber.
//! A test runs an operation as a fiber (`run_as`) and checks what it returned,
//! whether it parked, what the parked fibers were woken with (`Resume`), the
//! order they were woken in (the run queue), and what the wait queues hold.

use crate::bytecode::{Proto, Site};
use crate::sched::queue::Runnable;
use crate::sched::task::TaskState;
use crate::sched::values::Chan;
use crate::sched::{lifecycle, ops, Wait};
use crate::source::{SourceFile, Span};
use crate::vm::{ErrorKind, Fault, Handle, Obj, Res, Resume, Rng, Value, Vm};
use std::fmt::Debug;
use std::rc::Rc;

use Value::{Int, Nil};

mod cancel;
mod chan;
mod lock;
mod policy;
mod select;

/// A fake fiber: a scheduler slot with a running task, and no VM fiber (the
/// seam's operations never touch one).
fn fiber(vm: &mut Vm) -> u32 {
    let id = vm.sched.fibers.alloc_id();
    let th = crate::sched::start::new_task(vm, Some(id), TaskState::Running, None, None, false, None);
    vm.sched.fibers.state_mut(id).task = Some(th);
    id
}

/// Makes `id` the running fiber: the one whose operations `ops` performs.
fn run_as(vm: &mut Vm, id: u32) {
    assert!(vm.sched.fibers.state(id).parked.is_none(), "fiber {id} is parked and cannot run");
    vm.sched.fibers.current = id;
}

fn handle(v: Value) -> Handle {
    match v {
        Value::Obj(h) => h,
        v => panic!("expected an object, got {v:?}"),
    }
}

fn chan(vm: &Vm, ch: Value) -> &Chan {
    match vm.heap.get(handle(ch)) {
        Obj::Chan(c) => c,
        o => panic!("expected a channel, got {}", o.type_name()),
    }
}

/// Waiters queued on a channel: (receivers, senders), stale ones included.
fn queued(vm: &Vm, ch: Value) -> (usize, usize) {
    let c = chan(vm, ch);
    (c.recvq.len(), c.sendq.len())
}

fn parked(vm: &Vm, id: u32) -> Option<&Wait> {
    vm.sched.fibers.state(id).parked.as_ref()
}

/// Takes what fiber `id` was woken with.
fn resume(vm: &mut Vm, id: u32) -> Option<Resume> {
    vm.sched.fibers.state_mut(id).resume.take()
}

/// Drains the run queue: the fibers woken, in wake order.
fn woken(vm: &mut Vm) -> Vec<u32> {
    std::iter::from_fn(|| vm.sched.ready.pop())
        .map(|r| match r {
            Runnable::Fiber(id) => id,
            r => panic!("run queue holds {r:?}, not a woken fiber"),
        })
        .collect()
}

/// The kind of an error value.
fn kind_of(vm: &Vm, v: Value) -> ErrorKind {
    match v {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Error(e) => e.kind,
            o => panic!("expected an error value, got {}", o.type_name()),
        },
        v => panic!("expected an error value, got {v:?}"),
    }
}

/// The kind of a runtime error result (`Fault::Error`).
fn error_kind<T: Debug>(r: Res<T>) -> ErrorKind {
    match r {
        Err(Fault::Error(e)) => e.0,
        r => panic!("expected a runtime error, got {r:?}"),
    }
}

/// The kind of the error value a result throws (`Fault::Throw`); the result
/// comes first so the operation's borrow of the VM ends before this one's.
fn thrown_kind<T: Debug>(r: Res<T>, vm: &Vm) -> ErrorKind {
    match r {
        Err(Fault::Throw(v)) => kind_of(vm, v),
        r => panic!("expected a thrown error, got {r:?}"),
    }
}

fn locks(vm: &Vm, id: u32) -> Vec<Handle> {
    vm.sched.fibers.state(id).extra.as_ref().map_or(Vec::new(), |x| x.locks.clone())
}

/// Where a `wait` is: only reported when a fiber waits on its own task, so any
/// site does (a proto owned by the VM that only returns).
fn site(vm: &mut Vm) -> Site {
    let proto = vm.register_proto(Proto {
        name: "<test>".into(),
        code: vec![crate::bytecode::Op::ReturnNil],
        spans: vec![Span::default()],
        consts: Vec::new(),
        selects: Vec::new(),
        rereads: Box::new([]),
        reuses: Box::new([]),
        names: Box::new([]),
        templates: Box::new([]),
        protos: Vec::new(),
        upvals: Vec::new(),
        upval_names: Box::new([]),
        locals: Box::new([]),
        nparams: 0,
        nrequired: 0,
        has_rest: false,
        exact_argc: 0,
        nregs: 0,
        file: Rc::new(SourceFile::new("test", "")),
        span: Span::default(),
        trace_lines: Default::default(),
    });
    Site { proto, pc: 0 }
}

/// `wait wg` as the running fiber: true when ready (nil), false when parked.
fn wait_group(vm: &mut Vm, wg: Value, at: Site) -> Res<bool> {
    match ops::wait_on(vm, wg, at)? {
        ops::Waited::Ready(Nil) => Ok(true),
        ops::Waited::Ready(v) => panic!("wait on a waitgroup gave {v:?}, not nil"),
        ops::Waited::Parked => Ok(false),
        ops::Waited::OnItself(r) => panic!("wait on a waitgroup reported waiting on itself: {r}"),
    }
}

/// The channels of the `select` fiber `id` is parked in.
fn select_chans(vm: &Vm, id: u32) -> Vec<Handle> {
    vm.sched.fibers.state(id).extra.as_ref().map_or(Vec::new(), |x| x.select.clone())
}
