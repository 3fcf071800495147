//! Channels: unbuffered rendezvous and buffered FIFO, with direct hand-off to a
//! parked receiver and FIFO service of parked senders and receivers.

use super::values::{Chan, SendWaiter};
use super::{Sched, Waiter};
use crate::vm::ErrorKind;
use crate::vm::{err, Handle, Obj, Res, Value, Vm};
use std::collections::VecDeque;

pub(super) fn chan_mut(vm: &mut Vm, h: Handle) -> &mut Chan {
    match vm.heap.get_mut(h) {
        Obj::Chan(c) => c,
        _ => unreachable!("not a channel"),
    }
}

/// The channel in `v`, or an error naming what `op` got instead.
#[inline]
pub(super) fn as_chan(vm: &Vm, v: Value, op: &str) -> Res<Option<Handle>> {
    match v {
        Value::Nil => Ok(None),
        Value::Obj(h) if matches!(vm.heap.get(h), Obj::Chan(_)) => Ok(Some(h)),
        _ => not_a_chan(vm, v, op),
    }
}

/// Out of line: the error's formatting made every channel operation's
/// prologue save registers it never used.
#[cold]
#[inline(never)]
fn not_a_chan(vm: &Vm, v: Value, op: &str) -> Res<Option<Handle>> {
    err(ErrorKind::Type, format!("{op} needs a channel, not {}", vm.heap.type_name(v)))
}

/// Pops the first waiter that is still parked where it was queued (and,
/// for a `select` also parked on shared channels, takes its claim).
fn pop_live<T>(q: &mut VecDeque<T>, sched: &Sched, w: impl Fn(&T) -> Waiter) -> Option<T> {
    while let Some(x) = q.pop_front() {
        if takes(sched, w(&x), true) {
            return Some(x);
        }
    }
    None
}

/// Is `w` parked where it was queued and, for a `select`, unclaimed (taking
/// the claim when `commit`)?
#[inline(always)]
fn takes(sched: &Sched, w: Waiter, commit: bool) -> bool {
    sched.fibers.is_parked(w) && (w.case.is_none() || super::shared::claim_select(sched, w, commit))
}

/// Is a fiber parked receiving from channel `h` (one of another isolate may
/// be, if it is shared)?
pub(super) fn has_receiver(vm: &Vm, h: Handle) -> bool {
    matches!(vm.heap.get(h), Obj::Chan(c) if c.shared.is_some() || c.recvq.iter().any(|w| takes(&vm.sched, *w, false)))
}

/// Can a receive complete now?
pub(super) fn can_recv(c: &Chan, sched: &Sched) -> bool {
    !c.buf.is_empty() || c.closed || c.sendq.iter().any(|s| takes(sched, s.w, false))
}

/// Can a send complete now (or fail because the channel is closed)?
pub(super) fn can_send(c: &Chan, sched: &Sched) -> bool {
    c.closed || c.signal_only || c.buf.len() < c.cap as usize || c.recvq.iter().any(|r| takes(sched, *r, false))
}

/// Sends without blocking if possible: true when done, false when it must
/// wait (or the channel is shared: shared.rs sends there).
#[inline(always)]
pub(super) fn try_send(vm: &mut Vm, h: Handle, v: Value) -> Res<bool> {
    let (sched, heap) = (&mut vm.sched, &mut vm.heap);
    let Obj::Chan(c) = heap.get_mut(h) else { unreachable!() };
    if c.special {
        return special_send(c);
    }
    if c.closed {
        return send_on_closed();
    }
    if let Some(r) = pop_live(&mut c.recvq, sched, |w| *w) {
        super::select::wake(vm, r, r.received(v, true));
        return Ok(true);
    }
    if c.buf.len() < c.cap as usize {
        c.buf.push_back(v);
        return Ok(true);
    }
    Ok(false)
}

/// Receives without blocking if possible: Some((value, ok)) when done.
#[inline(always)]
pub(super) fn try_recv(vm: &mut Vm, h: Handle) -> Option<(Value, bool)> {
    let (sched, heap) = (&mut vm.sched, &mut vm.heap);
    let Obj::Chan(c) = heap.get_mut(h) else { unreachable!() };
    if let Some(v) = c.buf.pop_front() {
        // A parked sender's value moves into the freed buffer slot.
        if let Some(s) = pop_live(&mut c.sendq, sched, |s| s.w) {
            c.buf.push_back(s.value);
            wake_sender(vm, s.w);
        }
        return Some((v, true));
    }
    if let Some(s) = pop_live(&mut c.sendq, sched, |s| s.w) {
        wake_sender(vm, s.w);
        return Some((s.value, true));
    }
    if c.closed {
        return Some((Value::Nil, false));
    }
    None
}

fn wake_sender(vm: &mut Vm, w: Waiter) {
    super::select::wake(vm, w, w.sent());
}

#[cold]
#[inline(never)]
fn special_send(c: &Chan) -> Res<bool> {
    if c.signal_only {
        return signal_only("send on");
    }
    Ok(false)
}

#[cold]
#[inline(never)]
fn send_on_closed() -> Res<bool> {
    err(ErrorKind::Closed, "send on closed channel")
}

#[cold]
#[inline(never)]
pub(super) fn signal_only<T>(what: &str) -> Res<T> {
    err(ErrorKind::Type, format!("cannot {what} a task's done() channel: it is closed when the task ends"))
}

/// `close(ch)` in a program: a task's `done()` channel is not the program's to close.
pub(super) fn close_checked(vm: &mut Vm, h: Handle) -> Res<()> {
    if chan_mut(vm, h).signal_only {
        return signal_only("close");
    }
    close(vm, h)
}

/// A timer's send (`after`, `ticker`): dropped when the channel is full.
pub(super) fn offer(vm: &mut Vm, h: Handle, v: Value) {
    match super::shared::of(vm, h) {
        Some(sc) => super::shared::offer_now(vm, &sc, v),
        None => {
            let _ = try_send(vm, h, v);
        }
    }
}

/// `close(ch)`: parked receivers get (nil, false); parked senders get an error.
pub(super) fn close(vm: &mut Vm, h: Handle) -> Res<()> {
    if let Some(sc) = super::shared::of(vm, h) {
        return super::shared::close(vm, &sc);
    }
    let c = chan_mut(vm, h);
    if c.closed {
        return err(ErrorKind::Closed, "close of closed channel");
    }
    c.closed = true;
    let recvs: Vec<Waiter> = c.recvq.drain(..).collect();
    let sends: Vec<SendWaiter> = c.sendq.drain(..).collect();
    for r in recvs {
        if !takes(&vm.sched, r, true) {
            continue;
        }
        super::select::wake(vm, r, r.received(Value::Nil, false));
    }
    for s in sends {
        if !takes(&vm.sched, s.w, true) {
            continue;
        }
        let error = crate::vm::error::bare_error(vm, ErrorKind::Closed, "send on closed channel");
        super::select::wake(vm, s.w, crate::vm::Resume::Throw(error));
    }
    Ok(())
}
