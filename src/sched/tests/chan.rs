//! Channels: hand-off, buffers, FIFO service, close, stale waiters, nil channels.

use super::*;
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
    vm.sched.fibers.state_mut(a).gen += 1;
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
    vm.sched.fibers.state_mut(a).gen += 1;
    vm.sched.fibers.state_mut(b).gen += 1;
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
