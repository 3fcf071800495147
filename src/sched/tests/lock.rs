//! Mutexes (FIFO hand-off) and waitgroups.

use super::*;
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
