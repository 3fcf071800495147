//! `select`: ready cases, the seeded random choice, default, parking on every channel and cleaning up.

use super::*;
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
    vm.select_rng = Rng::new(seed);
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
