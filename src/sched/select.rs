//! `select`: choose uniformly among ready cases, else park on every channel, and
//! leave no waiter behind on the channels not chosen.

use super::chan;
use super::values::SendWaiter;
use super::{Wait, Waiter};
use crate::vm::{Handle, Obj, Res, Resume, Value, Vm};
use std::collections::VecDeque;

/// One evaluated case: its channel (None for a nil channel) and, for a send, the value.
pub(super) struct Case {
    pub chan: Option<Handle>,
    pub send: Option<Value>,
}

/// Can case `c` (on a local channel) complete now?
pub(super) fn case_ready(vm: &Vm, c: &Case) -> bool {
    c.chan.is_some_and(|h| match vm.heap.get(h) {
        Obj::Chan(ch) => {
            if c.send.is_some() {
                chan::can_send(ch, &vm.sched)
            } else {
                chan::can_recv(ch, &vm.sched)
            }
        }
        _ => false,
    })
}

/// Runs a ready case on a local channel: Some((value, ok)), or None if it
/// could not complete after all (its partner was claimed by another isolate).
pub(super) fn run_case(vm: &mut Vm, c: &Case) -> Res<Option<(Value, bool)>> {
    let h = c.chan.expect("a ready case has a channel");
    Ok(match c.send {
        Some(v) => chan::try_send(vm, h, v)?.then_some((Value::Nil, true)),
        None => chan::try_recv(vm, h),
    })
}

/// Runs a ready case (chosen at random among the ready ones) or the default:
/// Some((case or -1, value, ok)), or None when the fiber must park.
pub(super) fn try_select(vm: &mut Vm, cases: &[Case], has_default: bool) -> Res<Option<(i64, Value, bool)>> {
    let mut ready: Vec<usize> = (0..cases.len()).filter(|&i| case_ready(vm, &cases[i])).collect();
    while !ready.is_empty() {
        let rng = &mut vm.select_rng;
        let r = vm.sched.policy.choose(|| rng.next_u64());
        let k = (r % ready.len() as u64) as usize;
        if let Some((v, ok)) = run_case(vm, &cases[ready[k]])? {
            return Ok(Some((ready[k] as i64, v, ok)));
        }
        ready.swap_remove(k);
    }
    if has_default {
        return Ok(Some((-1, Value::Nil, false)));
    }
    Ok(None)
}

/// Parks the running fiber with a waiter for each case on its channel.
pub(super) fn park_on_all(vm: &mut Vm, cases: &[Case]) {
    park_local(vm, cases, |_| true);
}

/// Parks the running fiber in a `select` (remembering all its channels) with
/// a waiter for each case `local(i)` accepts on that case's channel.
pub(super) fn park_local(vm: &mut Vm, cases: &[Case], local: impl Fn(usize) -> bool) -> Waiter {
    // Each channel once: taking the fiber off a channel takes all its entries.
    let mut chans: Vec<Handle> = Vec::with_capacity(cases.len());
    for h in cases.iter().filter_map(|c| c.chan) {
        if !chans.contains(&h) {
            chans.push(h);
        }
    }
    if let Some(x) = vm.sched.fibers.cur().extra.as_mut() {
        x.select = chans;
        x.claim = None;
    } else if !chans.is_empty() {
        vm.sched.fibers.cur().extra_mut().select = chans;
    }
    let base = vm.sched.fibers.park(Wait::Select);
    for (i, c) in cases.iter().enumerate() {
        let Some(h) = c.chan.filter(|_| local(i)) else { continue };
        let w = Waiter { case: Some(i as u16), ..base };
        let ch = chan::chan_mut(vm, h);
        match c.send {
            Some(value) => ch.sendq.push_back(SendWaiter { w, value }),
            None => ch.recvq.push_back(w),
        }
    }
    base
}

/// Removes every queue entry of `w`'s fiber from channel `h`. A fiber's entries
/// in one queue are side by side (a `select` parks on all its cases at once),
/// and fibers usually leave in the order they parked (the program's end
/// cancels them in turn), so they are mostly at an end of the queue: taken
/// from there, a million cancellations stay linear, not quadratic.
pub(super) fn remove_from(vm: &mut Vm, h: Handle, w: Waiter) {
    fn take_out<T>(q: &mut VecDeque<T>, is: impl Fn(&T) -> bool) {
        if q.front().is_some_and(&is) {
            while q.front().is_some_and(&is) {
                q.pop_front();
            }
        } else if q.back().is_some_and(&is) {
            while q.back().is_some_and(&is) {
                q.pop_back();
            }
        } else {
            q.retain(|x| !is(x));
        }
    }
    if let Some(sc) = super::shared::of(vm, h) {
        return super::shared::remove(vm, &sc, w.fiber);
    }
    if let Obj::Chan(c) = vm.heap.get_mut(h) {
        take_out(&mut c.recvq, |r| r.fiber == w.fiber);
        take_out(&mut c.sendq, |s| s.w.fiber == w.fiber);
    }
}

/// Wakes a waiter taken off a channel's queue; a `select`'s waiter is first
/// taken off its other channels. Inlined, so the resume value is built where
/// it is stored (passing it through memory stalls store-to-load forwarding).
#[inline(always)]
pub(super) fn wake(vm: &mut Vm, w: Waiter, resume: Resume) {
    if w.case.is_some() {
        let extra = vm.sched.fibers.state_mut(w.fiber).extra.as_mut();
        let chans = extra.map(|x| {
            x.claim = None;
            std::mem::take(&mut x.select)
        });
        for h in chans.into_iter().flatten() {
            remove_from(vm, h, w);
        }
    }
    vm.sched.wake(w, resume);
}
