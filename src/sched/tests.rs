//! Channels, `select`, mutexes and waitgroups driven through the seam
//! (`sched::ops`) by fake fibers: scheduler slots with a task and no VM fiber.
//! A test runs an operation as a fiber (`run_as`) and checks what it returned,
//! whether it parked, what the parked fibers were woken with (`Resume`), the
//! order they were woken in (the run queue), and what the wait queues hold.

use super::chan::Chan;
use super::queue::Runnable;
use super::task::TaskState;
use super::{lifecycle, ops, Wait};
use crate::bytecode::{Proto, Site};
use crate::source::{SourceFile, Span};
use crate::vm::{ErrorKind, Fault, Handle, Obj, Res, Resume, Rng, Value, Vm};
use std::fmt::Debug;
use std::rc::Rc;

use Value::{Int, Nil};

// ---- helpers ---------------------------------------------------------------

/// A fake fiber: a scheduler slot with a running task, and no VM fiber (the
/// seam's operations never touch one).
fn fiber(vm: &mut Vm) -> u32 {
    let id = vm.sched.alloc_id();
    let th = super::start::new_task(vm, Some(id), TaskState::Running, None, None, false, None);
    vm.sched.state_mut(id).task = Some(th);
    id
}

/// Makes `id` the running fiber: the one whose operations `ops` performs.
fn run_as(vm: &mut Vm, id: u32) {
    assert!(vm.sched.state(id).parked.is_none(), "fiber {id} is parked and cannot run");
    vm.sched.current = id;
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
    vm.sched.state(id).parked.as_ref()
}

/// Takes what fiber `id` was woken with.
fn resume(vm: &mut Vm, id: u32) -> Option<Resume> {
    vm.sched.state_mut(id).resume.take()
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
    vm.sched.state(id).extra.as_ref().map_or(Vec::new(), |x| x.locks.clone())
}

/// Where a `wait` is: only reported when a fiber waits on its own task, so any
/// site does (an empty proto owned by the VM).
fn site(vm: &mut Vm) -> Site {
    let proto = vm.register_proto(Proto {
        name: "<test>".into(),
        code: Vec::new(),
        spans: Vec::new(),
        consts: Vec::new(),
        selects: Vec::new(),
        names: Vec::new(),
        protos: Vec::new(),
        upvals: Vec::new(),
        nparams: 0,
        nrequired: 0,
        has_rest: false,
        nregs: 0,
        file: Rc::new(SourceFile::new("test", "")),
        span: Span::default(),
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

// ---- channels --------------------------------------------------------------

/// The channels of the `select` fiber `id` is parked in.
fn select_chans(vm: &Vm, id: u32) -> Vec<Handle> {
    vm.sched.state(id).extra.as_ref().map_or(Vec::new(), |x| x.select.clone())
}

#[test]
fn unbuffered_receiver_parks_then_sender_hands_off() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 0);

    run_as(vm, a);
    assert!(matches!(ops::recv(vm, ch), Ok(None)), "a receive with no sender parks");
    assert!(matches!(parked(vm, a), Some(Wait::Recv(h)) if *h == handle(ch)), "a: {:?}", parked(vm, a));
    assert_eq!(queued(vm, ch), (1, 0));

    run_as(vm, b);
    assert!(matches!(ops::send(vm, ch, Int(7)), Ok(true)), "a send to a parked receiver completes at once");
    assert!(parked(vm, b).is_none());
    assert!(parked(vm, a).is_none(), "the receiver is woken");
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Recv(Int(7), true))), "receiver woken with {r:?}");
    assert_eq!(queued(vm, ch), (0, 0));
    assert_eq!(chan(vm, ch).len(), 0, "a hand-off does not go through the buffer");
    assert_eq!(woken(vm), [a]);
}

#[test]
fn unbuffered_sender_parks_then_receiver_takes() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 0);

    run_as(vm, a);
    assert!(matches!(ops::send(vm, ch, Int(7)), Ok(false)), "a send with no receiver parks");
    assert!(matches!(parked(vm, a), Some(Wait::Send(h)) if *h == handle(ch)), "a: {:?}", parked(vm, a));
    assert_eq!(queued(vm, ch), (0, 1));

    run_as(vm, b);
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(7), true)))), "the receiver takes the parked sender's value: {got:?}");
    assert!(parked(vm, b).is_none());
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Value(Nil))), "sender woken with {r:?}");
    assert_eq!(queued(vm, ch), (0, 0));
    assert_eq!(woken(vm), [a]);
}

#[test]
fn buffered_is_fifo_up_to_its_capacity() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let ch = ops::new_chan(vm, 3);
    assert_eq!(chan(vm, ch).cap(), 3);

    run_as(vm, a);
    for i in 1..=3 {
        assert!(matches!(ops::send(vm, ch, Int(i)), Ok(true)), "send {i} fits in the buffer");
    }
    assert_eq!(chan(vm, ch).len(), 3);
    for i in 1..=3 {
        let got = ops::recv(vm, ch);
        assert!(matches!(got, Ok(Some((Int(v), true))) if v == i), "receive {i} got {got:?}");
    }
    assert!(chan(vm, ch).is_empty());
    // Refill past the capacity: the fourth send parks.
    for i in 1..=3 {
        assert!(matches!(ops::send(vm, ch, Int(i)), Ok(true)));
    }
    assert!(matches!(ops::send(vm, ch, Int(4)), Ok(false)), "a send to a full buffer parks");
    assert!(matches!(parked(vm, a), Some(Wait::Send(_))));
    assert_eq!(chan(vm, ch).len(), 3, "the parked sender's value is not buffered");
    assert_eq!(queued(vm, ch), (0, 1));
    assert!(woken(vm).is_empty());
}

#[test]
fn buffered_empty_receive_parks() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 2);
    run_as(vm, a);
    assert!(matches!(ops::recv(vm, ch), Ok(None)));
    run_as(vm, b);
    assert!(matches!(ops::send(vm, ch, Int(5)), Ok(true)));
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Recv(Int(5), true))), "got {r:?}");
    assert!(chan(vm, ch).is_empty(), "handed to the parked receiver, not buffered");
    assert_eq!(woken(vm), [a]);
}

#[test]
fn parked_senders_value_moves_into_the_freed_slot() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 1);

    run_as(vm, a);
    assert!(matches!(ops::send(vm, ch, Int(1)), Ok(true)));
    assert!(matches!(ops::send(vm, ch, Int(2)), Ok(false)), "the buffer is full");

    run_as(vm, b);
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(1), true)))), "the buffered value first: {got:?}");
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Value(Nil))), "sender woken with {r:?}");
    assert_eq!(woken(vm), [a]);
    assert_eq!(chan(vm, ch).len(), 1, "the sender's value is in the buffer now");
    assert_eq!(queued(vm, ch), (0, 0));
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(2), true)))), "then the sender's value: {got:?}");
    assert!(matches!(ops::recv(vm, ch), Ok(None)), "then the channel is empty");
}

#[test]
fn receivers_are_served_fifo() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let rs = [fiber(vm), fiber(vm), fiber(vm)];
    let s = fiber(vm);
    let ch = ops::new_chan(vm, 0);
    for &r in &rs {
        run_as(vm, r);
        assert!(matches!(ops::recv(vm, ch), Ok(None)));
    }
    assert_eq!(queued(vm, ch), (3, 0));
    run_as(vm, s);
    for i in 1..=3 {
        assert!(matches!(ops::send(vm, ch, Int(i)), Ok(true)));
    }
    for (i, &r) in rs.iter().enumerate() {
        let got = resume(vm, r);
        assert!(
            matches!(got, Some(Resume::Recv(Int(v), true)) if v == i as i64 + 1),
            "receiver {i} (parked {i}th) got {got:?}"
        );
    }
    assert_eq!(woken(vm), rs, "woken in the order they parked");
}

#[test]
fn senders_are_served_fifo() {
    // Unbuffered: each receive takes the oldest parked sender's value.
    let mut vm = Vm::new();
    let vm = &mut vm;
    let ss = [fiber(vm), fiber(vm), fiber(vm)];
    let r = fiber(vm);
    let ch = ops::new_chan(vm, 0);
    for (i, &s) in ss.iter().enumerate() {
        run_as(vm, s);
        assert!(matches!(ops::send(vm, ch, Int(i as i64)), Ok(false)));
    }
    run_as(vm, r);
    for i in 0..3 {
        let got = ops::recv(vm, ch);
        assert!(matches!(got, Ok(Some((Int(v), true))) if v == i), "receive {i} got {got:?}");
    }
    assert_eq!(woken(vm), ss);

    // Buffered and full: parked senders' values join the buffer in the order they parked.
    let ch = ops::new_chan(vm, 1);
    run_as(vm, r);
    assert!(matches!(ops::send(vm, ch, Int(0)), Ok(true)));
    for (i, &s) in ss.iter().enumerate() {
        run_as(vm, s);
        assert!(matches!(ops::send(vm, ch, Int(i as i64 + 1)), Ok(false)));
    }
    run_as(vm, r);
    for i in 0..4 {
        let got = ops::recv(vm, ch);
        assert!(matches!(got, Ok(Some((Int(v), true))) if v == i), "receive {i} got {got:?}");
    }
    assert_eq!(woken(vm), ss);
}

#[test]
fn close_wakes_receivers_with_nil_false() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 0);
    for id in [a, b] {
        run_as(vm, id);
        assert!(matches!(ops::recv(vm, ch), Ok(None)));
    }
    run_as(vm, c);
    ops::close(vm, ch).expect("close of an open channel");
    for id in [a, b] {
        let r = resume(vm, id);
        assert!(matches!(r, Some(Resume::Recv(Nil, false))), "receiver {id} woken with {r:?}");
    }
    assert_eq!(queued(vm, ch), (0, 0));
    assert_eq!(woken(vm), [a, b]);
}

#[test]
fn close_throws_into_parked_senders() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 0);
    for (i, id) in [a, b].into_iter().enumerate() {
        run_as(vm, id);
        assert!(matches!(ops::send(vm, ch, Int(i as i64)), Ok(false)));
    }
    run_as(vm, c);
    ops::close(vm, ch).expect("close of an open channel");
    for id in [a, b] {
        match resume(vm, id) {
            Some(Resume::Throw(e)) => assert_eq!(kind_of(vm, e), ErrorKind::Closed, "sender {id}"),
            r => panic!("sender {id} woken with {r:?}, not a thrown error"),
        }
    }
    assert_eq!(queued(vm, ch), (0, 0));
    assert_eq!(woken(vm), [a, b]);
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Nil, false)))), "the senders' values are not delivered: {got:?}");
}

#[test]
fn closed_channel_drains_its_buffer_then_gives_nil_false() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let ch = ops::new_chan(vm, 2);
    run_as(vm, a);
    assert!(matches!(ops::send(vm, ch, Int(1)), Ok(true)));
    assert!(matches!(ops::send(vm, ch, Int(2)), Ok(true)));
    ops::close(vm, ch).unwrap();
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(1), true)))), "{got:?}");
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(2), true)))), "{got:?}");
    for _ in 0..2 {
        let got = ops::recv(vm, ch);
        assert!(matches!(got, Ok(Some((Nil, false)))), "a drained closed channel gives (nil, false) at once: {got:?}");
        assert!(parked(vm, a).is_none());
    }
}

#[test]
fn send_on_closed_and_close_of_closed_or_nil_are_closed_errors() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    run_as(vm, a);
    for cap in [0, 1] {
        let ch = ops::new_chan(vm, cap);
        ops::close(vm, ch).unwrap();
        assert_eq!(error_kind(ops::send(vm, ch, Int(1))), ErrorKind::Closed, "send on closed (cap {cap})");
        assert_eq!(error_kind(ops::close(vm, ch)), ErrorKind::Closed, "close of closed (cap {cap})");
        assert!(chan(vm, ch).is_empty(), "nothing was buffered");
    }
    assert_eq!(error_kind(ops::close(vm, Nil)), ErrorKind::Closed, "close of nil");
    assert!(parked(vm, a).is_none());
}

#[test]
fn channel_ops_on_a_non_channel_are_type_errors() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    run_as(vm, a);
    assert_eq!(error_kind(ops::recv(vm, Int(1))), ErrorKind::Type);
    assert_eq!(error_kind(ops::send(vm, Int(1), Int(2))), ErrorKind::Type);
    assert_eq!(error_kind(ops::close(vm, Int(1))), ErrorKind::Type);
    assert_eq!(error_kind(ops::select(vm, &[(Int(1), None)], true)), ErrorKind::Type);
    assert!(parked(vm, a).is_none());
}

#[test]
fn stale_receivers_are_skipped() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    let (ch, other) = (ops::new_chan(vm, 0), ops::new_chan(vm, 0));

    // a parks on ch, is woken another way (its entry stays behind), and parks
    // again on another channel: a new park generation.
    run_as(vm, a);
    assert!(matches!(ops::recv(vm, ch), Ok(None)));
    vm.sched.wake_forced(a, Resume::Retry);
    assert_eq!(woken(vm), [a]);
    resume(vm, a);
    run_as(vm, a);
    assert!(matches!(ops::recv(vm, other), Ok(None)));
    // b parks on ch behind a's stale entry.
    run_as(vm, b);
    assert!(matches!(ops::recv(vm, ch), Ok(None)));
    assert_eq!(queued(vm, ch), (2, 0));

    run_as(vm, c);
    assert!(matches!(ops::send(vm, ch, Int(1)), Ok(true)));
    let r = resume(vm, b);
    assert!(matches!(r, Some(Resume::Recv(Int(1), true))), "b gets the value: {r:?}");
    assert!(resume(vm, a).is_none(), "the stale entry of a (parked elsewhere) is not woken");
    assert!(matches!(parked(vm, a), Some(Wait::Recv(h)) if *h == handle(other)), "a still waits on the other channel");
    assert_eq!(queued(vm, ch), (0, 0), "the stale entry is dropped");
    assert_eq!(woken(vm), [b]);

    // A stale entry alone does not make a send complete or a select case ready.
    run_as(vm, b);
    assert!(matches!(ops::recv(vm, ch), Ok(None)));
    vm.sched.wake_forced(b, Resume::Retry);
    woken(vm);
    resume(vm, b);
    run_as(vm, c);
    let got = ops::select(vm, &[(ch, Some(Int(2)))], true);
    assert!(matches!(got, Ok(Some((-1, Nil, false)))), "only the default is ready: {got:?}");
    assert!(matches!(ops::send(vm, ch, Int(2)), Ok(false)), "no live receiver: the send parks");
    assert!(resume(vm, b).is_none());
    assert!(woken(vm).is_empty());
}

#[test]
fn stale_senders_are_skipped() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 0);

    // a's send is abandoned: its park generation moves on (as cancellation does).
    run_as(vm, a);
    assert!(matches!(ops::send(vm, ch, Int(1)), Ok(false)));
    vm.sched.state_mut(a).gen += 1;
    run_as(vm, c);
    let got = ops::select(vm, &[(ch, None)], true);
    assert!(matches!(got, Ok(Some((-1, Nil, false)))), "a stale sender does not make a receive ready: {got:?}");
    run_as(vm, b);
    assert!(matches!(ops::send(vm, ch, Int(2)), Ok(false)));

    run_as(vm, c);
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(2), true)))), "the stale sender's value is not delivered: {got:?}");
    assert!(resume(vm, a).is_none(), "the stale sender is not woken");
    assert!(matches!(resume(vm, b), Some(Resume::Value(Nil))));
    assert_eq!(queued(vm, ch), (0, 0));
    assert_eq!(woken(vm), [b]);
    assert!(matches!(ops::recv(vm, ch), Ok(None)), "nothing left to receive");
}

#[test]
fn close_skips_stale_waiters() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    // A stale receiver on one channel, a stale sender on another (on one
    // channel, the sender would hand its value to the receiver).
    let (rch, sch) = (ops::new_chan(vm, 0), ops::new_chan(vm, 0));
    run_as(vm, a);
    assert!(matches!(ops::recv(vm, rch), Ok(None)));
    run_as(vm, b);
    assert!(matches!(ops::send(vm, sch, Int(1)), Ok(false)));
    vm.sched.state_mut(a).gen += 1;
    vm.sched.state_mut(b).gen += 1;
    assert_eq!((queued(vm, rch), queued(vm, sch)), ((1, 0), (0, 1)));
    run_as(vm, c);
    ops::close(vm, rch).unwrap();
    ops::close(vm, sch).unwrap();
    assert!(resume(vm, a).is_none(), "a stale receiver is not woken by close");
    assert!(resume(vm, b).is_none(), "a stale sender gets no error from close");
    assert!(parked(vm, a).is_some() && parked(vm, b).is_some());
    assert_eq!((queued(vm, rch), queued(vm, sch)), ((0, 0), (0, 0)), "close empties the wait queues");
    assert!(woken(vm).is_empty());
}

#[test]
fn cancelling_a_parked_receiver_takes_it_off_the_channel() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 0);
    run_as(vm, a);
    assert!(matches!(ops::recv(vm, ch), Ok(None)));
    lifecycle::cancel_fiber(vm, a);
    match resume(vm, a) {
        Some(Resume::Throw(e)) => assert_eq!(kind_of(vm, e), ErrorKind::Cancelled),
        r => panic!("cancelled receiver woken with {r:?}"),
    }
    assert_eq!(woken(vm), [a]);
    assert_eq!(queued(vm, ch), (0, 0));
    run_as(vm, b);
    assert!(matches!(ops::send(vm, ch, Int(1)), Ok(false)), "no receiver left: the send parks");
    assert!(woken(vm).is_empty());
}

#[test]
fn nil_channel_parks_forever() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    run_as(vm, a);
    assert!(matches!(ops::recv(vm, Nil), Ok(None)), "receive from nil parks");
    assert!(matches!(parked(vm, a), Some(Wait::Select)) && select_chans(vm, a).is_empty(), "a: {:?}", parked(vm, a));
    run_as(vm, b);
    assert!(matches!(ops::send(vm, Nil, Int(1)), Ok(false)), "send to nil parks");
    assert!(matches!(parked(vm, b), Some(Wait::Select)) && select_chans(vm, b).is_empty(), "b: {:?}", parked(vm, b));
    run_as(vm, c);
    let got = ops::select(vm, &[(Nil, None), (Nil, Some(Int(1)))], false);
    assert!(matches!(got, Ok(None)), "select on nil channels only parks: {got:?}");
    assert!(matches!(parked(vm, c), Some(Wait::Select)) && select_chans(vm, c).is_empty());
    assert!(woken(vm).is_empty(), "nothing can wake them");
}

// ---- select ----------------------------------------------------------------

#[test]
fn select_runs_a_ready_case_at_once() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let (empty, full) = (ops::new_chan(vm, 0), ops::new_chan(vm, 1));
    run_as(vm, a);
    assert!(matches!(ops::send(vm, full, Int(5)), Ok(true)));
    let got = ops::select(vm, &[(empty, None), (full, None)], false);
    assert!(matches!(got, Ok(Some((1, Int(5), true)))), "the one ready case: {got:?}");
    assert!(parked(vm, a).is_none());
    assert_eq!(queued(vm, empty), (0, 0), "no waiter left on the case not chosen");
    assert!(chan(vm, full).is_empty());
    // A ready send case: room in a buffer.
    let got = ops::select(vm, &[(empty, None), (full, Some(Int(6)))], false);
    assert!(matches!(got, Ok(Some((1, Nil, true)))), "{got:?}");
    let got = ops::recv(vm, full);
    assert!(matches!(got, Ok(Some((Int(6), true)))), "{got:?}");
}

/// The cases chosen by `n` selects over three always-ready receive cases.
fn choices(seed: u64, n: usize) -> Vec<i64> {
    let mut vm = Vm::new();
    let vm = &mut vm;
    vm.rng = Rng::new(seed);
    let a = fiber(vm);
    run_as(vm, a);
    let chans: Vec<Value> = (0..3).map(|_| ops::new_chan(vm, n)).collect();
    for (i, &ch) in chans.iter().enumerate() {
        for k in 0..n {
            assert!(matches!(ops::send(vm, ch, Int((i * n + k) as i64)), Ok(true)));
        }
    }
    let cases: Vec<(Value, Option<Value>)> = chans.iter().map(|&c| (c, None)).collect();
    let mut next = [0usize; 3];
    (0..n)
        .map(|_| {
            let (i, v, ok) = ops::select(vm, &cases, false).unwrap().expect("a case is ready");
            assert!(ok);
            let i = i as usize;
            // Each channel still gives its values in order.
            assert!(matches!(v, Int(x) if x == (i * n + next[i]) as i64), "case {i} gave {v:?}");
            next[i] += 1;
            i as i64
        })
        .collect()
}

#[test]
fn select_chooses_at_random_reproducibly() {
    let n = 300;
    let first = choices(42, n);
    assert_eq!(first, choices(42, n), "the same seed makes the same choices");
    assert_ne!(first, choices(43, n), "another seed makes other choices");
    for case in 0..3 {
        let k = first.iter().filter(|&&c| c == case).count();
        assert!(k > n / 6, "case {case} chosen {k} times out of {n}: not uniform among ready cases");
    }
}

#[test]
fn select_takes_the_default_when_no_case_is_ready() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let (r, s) = (ops::new_chan(vm, 0), ops::new_chan(vm, 0));
    run_as(vm, a);
    let got = ops::select(vm, &[(r, None), (s, Some(Int(1))), (Nil, None)], true);
    assert!(matches!(got, Ok(Some((-1, Nil, false)))), "default: {got:?}");
    assert!(parked(vm, a).is_none());
    assert_eq!(queued(vm, r), (0, 0));
    assert_eq!(queued(vm, s), (0, 0));
    let got = ops::select(vm, &[], true);
    assert!(matches!(got, Ok(Some((-1, Nil, false)))), "a select of only a default: {got:?}");
}

#[test]
fn select_parks_on_every_channel_and_leaves_no_waiter_behind() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let (c0, c1, c2) = (ops::new_chan(vm, 0), ops::new_chan(vm, 0), ops::new_chan(vm, 0));
    run_as(vm, a);
    let got = ops::select(vm, &[(c0, None), (c1, None), (Nil, None), (c2, Some(Int(9)))], false);
    assert!(matches!(got, Ok(None)), "nothing ready and no default: parks: {got:?}");
    assert!(matches!(parked(vm, a), Some(Wait::Select)), "a parked on {:?}", parked(vm, a));
    assert_eq!(select_chans(vm, a), [handle(c0), handle(c1), handle(c2)]);
    assert_eq!(queued(vm, c0), (1, 0));
    assert_eq!(queued(vm, c1), (1, 0));
    assert_eq!(queued(vm, c2), (0, 1));
    assert_eq!(chan(vm, c0).recvq[0].case, Some(0));
    assert_eq!(chan(vm, c1).recvq[0].case, Some(1));
    assert_eq!(chan(vm, c2).sendq[0].w.case, Some(3), "case indices count the nil case");

    run_as(vm, b);
    assert!(matches!(ops::send(vm, c1, Int(4)), Ok(true)), "the select's receiver takes it");
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Select(1, Int(4), true))), "a woken with {r:?}");
    assert_eq!(woken(vm), [a]);
    for (i, ch) in [c0, c1, c2].into_iter().enumerate() {
        assert_eq!(queued(vm, ch), (0, 0), "waiter left behind on channel {i}");
    }
    // The other cases are gone: nothing pairs with them.
    assert!(matches!(ops::send(vm, c0, Int(1)), Ok(false)), "no receiver left on c0");
    let (b2, b3) = (fiber(vm), fiber(vm));
    run_as(vm, b2);
    assert!(matches!(ops::recv(vm, c2), Ok(None)), "no sender left on c2");
    run_as(vm, b3);
    assert!(matches!(ops::recv(vm, c0), Ok(Some((Int(1), true)))));
    assert!(resume(vm, a).is_none(), "a is woken once");
}

#[test]
fn select_with_two_cases_on_one_channel_is_woken_once() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let ch = ops::new_chan(vm, 0);
    run_as(vm, a);
    // A receive and a send on the same unbuffered channel cannot pair with each other.
    let got = ops::select(vm, &[(ch, None), (ch, Some(Int(1))), (ch, None)], false);
    assert!(matches!(got, Ok(None)), "{got:?}");
    assert_eq!(queued(vm, ch), (2, 1));
    run_as(vm, b);
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(1), true)))), "b takes the select's send: {got:?}");
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Select(1, Nil, true))), "a woken with {r:?}");
    assert_eq!(queued(vm, ch), (0, 0), "the select's receive cases are gone too");
    assert_eq!(woken(vm), [a]);
}

#[test]
fn select_send_case() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let (ch, other) = (ops::new_chan(vm, 0), ops::new_chan(vm, 0));

    // Parked on a send case; a receiver takes the value.
    run_as(vm, a);
    assert!(matches!(ops::select(vm, &[(other, None), (ch, Some(Int(7)))], false), Ok(None)));
    run_as(vm, b);
    let got = ops::recv(vm, ch);
    assert!(matches!(got, Ok(Some((Int(7), true)))), "{got:?}");
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Select(1, Nil, true))), "a woken with {r:?}");
    assert_eq!(queued(vm, other), (0, 0));
    assert_eq!(woken(vm), [a]);

    // Ready at once: a receiver is parked.
    assert!(matches!(ops::recv(vm, ch), Ok(None)));
    run_as(vm, a);
    let got = ops::select(vm, &[(other, None), (ch, Some(Int(8)))], false);
    assert!(matches!(got, Ok(Some((1, Nil, true)))), "{got:?}");
    let r = resume(vm, b);
    assert!(matches!(r, Some(Resume::Recv(Int(8), true))), "b woken with {r:?}");
    assert_eq!(woken(vm), [b]);
}

#[test]
fn select_on_a_closed_channel() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let (open, closed) = (ops::new_chan(vm, 0), ops::new_chan(vm, 0));
    run_as(vm, a);
    ops::close(vm, closed).unwrap();
    let got = ops::select(vm, &[(open, None), (closed, None)], false);
    assert!(matches!(got, Ok(Some((1, Nil, false)))), "a receive case on a closed channel is ready, not ok: {got:?}");
    let got = ops::select(vm, &[(open, None), (closed, Some(Int(1)))], true);
    assert_eq!(error_kind(got), ErrorKind::Closed, "a send case on a closed channel");

    // Parked, then the channel of one case is closed.
    let (c0, c1) = (ops::new_chan(vm, 0), ops::new_chan(vm, 0));
    assert!(matches!(ops::select(vm, &[(c0, None), (c1, None)], false), Ok(None)));
    run_as(vm, b);
    ops::close(vm, c1).unwrap();
    let r = resume(vm, a);
    assert!(matches!(r, Some(Resume::Select(1, Nil, false))), "a woken with {r:?}");
    assert_eq!(queued(vm, c0), (0, 0));
    assert_eq!(woken(vm), [a]);

    // Parked on a send case, then that channel is closed: thrown.
    run_as(vm, a);
    assert!(matches!(ops::select(vm, &[(c0, None), (open, Some(Int(1)))], false), Ok(None)));
    run_as(vm, b);
    ops::close(vm, open).unwrap();
    match resume(vm, a) {
        Some(Resume::Throw(e)) => assert_eq!(kind_of(vm, e), ErrorKind::Closed),
        r => panic!("a woken with {r:?}"),
    }
    assert_eq!(queued(vm, c0), (0, 0));
    assert_eq!(woken(vm), [a]);
}

// ---- mutexes and waitgroups ------------------------------------------------

#[test]
fn lock_a_free_mutex_and_relock_is_an_error() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let m = ops::new_mutex(vm);
    run_as(vm, a);
    assert!(matches!(ops::lock(vm, m), Ok(true)), "a free mutex is taken at once");
    assert_eq!(locks(vm, a), [handle(m)]);
    assert_eq!(error_kind(ops::lock(vm, m)), ErrorKind::Lock, "relock by the holder");
    assert!(parked(vm, a).is_none());
    assert_eq!(locks(vm, a), [handle(m)]);
    ops::unlock(vm, m).unwrap();
    assert!(locks(vm, a).is_empty());
    assert!(matches!(ops::lock(vm, m), Ok(true)), "free again after unlock");
    assert_eq!(error_kind(ops::lock(vm, Int(1))), ErrorKind::Type);
}

#[test]
fn unlock_hands_the_mutex_to_waiters_fifo() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    let m = ops::new_mutex(vm);
    run_as(vm, a);
    assert!(matches!(ops::lock(vm, m), Ok(true)));
    for id in [b, c] {
        run_as(vm, id);
        assert!(matches!(ops::lock(vm, m), Ok(false)), "fiber {id} waits for the holder");
        assert!(matches!(parked(vm, id), Some(Wait::Lock(_))));
        assert!(locks(vm, id).is_empty());
    }

    run_as(vm, a);
    ops::unlock(vm, m).unwrap();
    assert!(locks(vm, a).is_empty());
    let r = resume(vm, b);
    assert!(matches!(r, Some(Resume::Value(Nil))), "the first waiter woken with {r:?}");
    assert_eq!(locks(vm, b), [handle(m)], "the first waiter holds it now");
    assert!(parked(vm, c).is_some(), "the second still waits");
    assert_eq!(woken(vm), [b]);
    // Handed over, not released: a waits behind c now.
    assert!(matches!(ops::lock(vm, m), Ok(false)), "the mutex is b's");

    run_as(vm, b);
    ops::unlock(vm, m).unwrap();
    assert!(matches!(resume(vm, c), Some(Resume::Value(Nil))));
    assert_eq!(locks(vm, c), [handle(m)]);
    run_as(vm, c);
    ops::unlock(vm, m).unwrap();
    assert!(matches!(resume(vm, a), Some(Resume::Value(Nil))));
    assert_eq!(locks(vm, a), [handle(m)]);
    assert_eq!(woken(vm), [c, a]);
}

#[test]
fn unlock_skips_a_cancelled_waiter() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    let m = ops::new_mutex(vm);
    run_as(vm, a);
    assert!(matches!(ops::lock(vm, m), Ok(true)));
    for id in [b, c] {
        run_as(vm, id);
        assert!(matches!(ops::lock(vm, m), Ok(false)));
    }
    lifecycle::cancel_fiber(vm, b);
    match resume(vm, b) {
        Some(Resume::Throw(e)) => assert_eq!(kind_of(vm, e), ErrorKind::Cancelled),
        r => panic!("cancelled waiter woken with {r:?}"),
    }
    assert_eq!(woken(vm), [b]);
    run_as(vm, a);
    ops::unlock(vm, m).unwrap();
    assert!(locks(vm, b).is_empty(), "the cancelled waiter does not get the mutex");
    assert!(resume(vm, b).is_none());
    assert!(matches!(resume(vm, c), Some(Resume::Value(Nil))));
    assert_eq!(locks(vm, c), [handle(m)]);
    assert_eq!(woken(vm), [c]);
}

#[test]
fn waitgroup_wait_parks_until_zero() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b, c) = (fiber(vm), fiber(vm), fiber(vm));
    let at = site(vm);
    let wg = ops::new_waitgroup(vm);
    run_as(vm, a);
    assert!(matches!(wait_group(vm, wg, at), Ok(true)), "a zero counter does not wait");
    ops::group_add(vm, handle(wg), 2).unwrap();
    for id in [a, b] {
        run_as(vm, id);
        assert!(matches!(wait_group(vm, wg, at), Ok(false)), "fiber {id} waits");
        assert!(matches!(parked(vm, id), Some(Wait::Group)));
    }
    run_as(vm, c);
    ops::group_add(vm, handle(wg), -1).unwrap();
    assert!(woken(vm).is_empty(), "not at zero yet");
    ops::group_add(vm, handle(wg), -1).unwrap();
    for id in [a, b] {
        let r = resume(vm, id);
        assert!(matches!(r, Some(Resume::Retry)), "fiber {id} woken with {r:?}");
    }
    assert_eq!(woken(vm), [a, b]);
    run_as(vm, a);
    assert!(matches!(wait_group(vm, wg, at), Ok(true)), "the rerun wait finds zero");
}

#[test]
fn waitgroup_skips_a_cancelled_waiter() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, b) = (fiber(vm), fiber(vm));
    let at = site(vm);
    let wg = ops::new_waitgroup(vm);
    ops::group_add(vm, handle(wg), 1).unwrap();
    for id in [a, b] {
        run_as(vm, id);
        assert!(matches!(wait_group(vm, wg, at), Ok(false)));
    }
    lifecycle::cancel_fiber(vm, a);
    assert_eq!(woken(vm), [a]);
    ops::group_add(vm, handle(wg), -1).unwrap();
    match resume(vm, a) {
        Some(Resume::Throw(e)) => assert_eq!(kind_of(vm, e), ErrorKind::Cancelled, "not overwritten by the wake"),
        r => panic!("cancelled waiter has {r:?}"),
    }
    assert!(matches!(resume(vm, b), Some(Resume::Retry)));
    assert_eq!(woken(vm), [b], "the cancelled waiter is not queued twice");
}

#[test]
fn waitgroup_counter_cannot_go_negative() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let at = site(vm);
    let wg = ops::new_waitgroup(vm);
    run_as(vm, a);
    assert_eq!(error_kind(ops::group_add(vm, handle(wg), -1)), ErrorKind::Value, "done on a zero counter");
    ops::group_add(vm, handle(wg), 1).unwrap();
    assert_eq!(error_kind(ops::group_add(vm, handle(wg), -2)), ErrorKind::Value);
    // The failed adds changed nothing: one done brings it to zero.
    assert!(matches!(wait_group(vm, wg, at), Ok(false)));
    let b = fiber(vm);
    run_as(vm, b);
    ops::group_add(vm, handle(wg), -1).unwrap();
    assert!(matches!(resume(vm, a), Some(Resume::Retry)));
    assert_eq!(woken(vm), [a]);
}

// ---- cancellation ----------------------------------------------------------

#[test]
fn a_cancelled_fiber_does_not_park() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let (a, holder) = (fiber(vm), fiber(vm));
    let at = site(vm);
    let (unbuf, buf) = (ops::new_chan(vm, 0), ops::new_chan(vm, 1));
    let (m, wg) = (ops::new_mutex(vm), ops::new_waitgroup(vm));
    ops::group_add(vm, handle(wg), 1).unwrap();
    run_as(vm, holder);
    assert!(matches!(ops::lock(vm, m), Ok(true)));

    run_as(vm, a);
    vm.sched.state_mut(a).cancelled = true;
    // Operations that complete at once still do.
    assert!(matches!(ops::send(vm, buf, Int(1)), Ok(true)), "a send into a buffer with room");
    assert!(matches!(ops::select(vm, &[(unbuf, None)], true), Ok(Some((-1, _, _)))), "a select's default");
    let free = ops::new_mutex(vm);
    assert!(matches!(ops::lock(vm, free), Ok(true)), "a free mutex");
    // Every blocking one throws Cancelled instead of parking, each time (level-triggered).
    for round in 0..2 {
        assert_eq!(thrown_kind(ops::recv(vm, unbuf), vm), ErrorKind::Cancelled, "recv, round {round}");
        assert_eq!(thrown_kind(ops::send(vm, buf, Int(2)), vm), ErrorKind::Cancelled, "send to a full buffer");
        assert_eq!(thrown_kind(ops::send(vm, unbuf, Int(2)), vm), ErrorKind::Cancelled, "unbuffered send");
        assert_eq!(thrown_kind(ops::recv(vm, Nil), vm), ErrorKind::Cancelled, "recv from nil");
        let sel = ops::select(vm, &[(unbuf, None), (buf, Some(Int(3)))], false);
        assert_eq!(thrown_kind(sel, vm), ErrorKind::Cancelled, "select");
        assert_eq!(thrown_kind(ops::lock(vm, m), vm), ErrorKind::Cancelled, "lock of a held mutex");
        assert_eq!(thrown_kind(ops::wait_on(vm, wg, at).map(|_| ()), vm), ErrorKind::Cancelled, "wait on a waitgroup");
        assert!(parked(vm, a).is_none(), "round {round}: a cancelled fiber never parks");
    }
    assert_eq!(queued(vm, unbuf), (0, 0));
    assert_eq!(queued(vm, buf), (0, 0));
    assert!(lock_group_waiters(vm, wg).is_empty());
    // The holder's unlock finds no waiter: the mutex is free.
    run_as(vm, holder);
    ops::unlock(vm, m).unwrap();
    let other = fiber(vm);
    run_as(vm, other);
    assert!(matches!(ops::lock(vm, m), Ok(true)), "the cancelled fiber was never queued on the mutex");
    assert!(woken(vm).is_empty());
    // A receive that completes at once still does.
    run_as(vm, a);
    let got = ops::recv(vm, buf);
    assert!(matches!(got, Ok(Some((Int(1), true)))), "{got:?}");
}

fn lock_group_waiters(vm: &mut Vm, wg: Value) -> Vec<super::Waiter> {
    super::lock::group_mut(vm, handle(wg)).waiters.clone()
}

#[test]
fn a_childs_failure_is_thrown_instead_of_parking() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let ch = ops::new_chan(vm, 0);
    let e = crate::vm::error::bare_error(vm, ErrorKind::Value, "child failed");
    run_as(vm, a);
    vm.sched.state_mut(a).extra_mut().pending = Some(e);
    match ops::recv(vm, ch) {
        Err(Fault::Throw(v)) => assert_eq!(handle(v), handle(e), "the child's own error is thrown"),
        r => panic!("expected the pending error, got {r:?}"),
    }
    assert!(parked(vm, a).is_none());
    assert_eq!(queued(vm, ch), (0, 0));
    assert!(matches!(ops::recv(vm, ch), Ok(None)), "thrown once: the next receive parks");
}
