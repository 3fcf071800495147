//! Cancellation and propagated failures: a fiber with one due never parks.

use super::*;
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
    vm.sched.fibers.state_mut(a).cancelled = true;
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

fn lock_group_waiters(vm: &mut Vm, wg: Value) -> Vec<crate::sched::Waiter> {
    crate::sched::lock::group_mut(vm, handle(wg)).waiters.clone()
}

#[test]
fn a_childs_failure_is_thrown_instead_of_parking() {
    let mut vm = Vm::new();
    let vm = &mut vm;
    let a = fiber(vm);
    let ch = ops::new_chan(vm, 0);
    let e = crate::vm::error::bare_error(vm, ErrorKind::Value, "child failed");
    run_as(vm, a);
    vm.sched.fibers.state_mut(a).extra_mut().pending = Some(e);
    match ops::recv(vm, ch) {
        Err(Fault::Throw(v)) => assert_eq!(handle(v), handle(e), "the child's own error is thrown"),
        r => panic!("expected the pending error, got {r:?}"),
    }
    assert!(parked(vm, a).is_none());
    assert_eq!(queued(vm, ch), (0, 0));
    assert!(matches!(ops::recv(vm, ch), Ok(None)), "thrown once: the next receive parks");
}
