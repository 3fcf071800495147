//! `select`: choose uniformly among ready cases, else park on every channel, and
//! leave no waiter behind on the channels not chosen.

use super::chan::{self, SendWaiter};
use super::{Wait, Waiter};
use crate::vm::{err, ErrorKind, Fiber, Handle, Obj, Res, Value, Vm};

/// One evaluated case: its channel (None for a nil channel) and, for a send, the value.
pub struct Case {
    pub chan: Option<Handle>,
    pub send: Option<Value>,
}

/// Runs a select: Ok(Some((case, value, ok))) when a case (or default, -1) ran,
/// Ok(None) when the fiber parked.
pub fn select(vm: &mut Vm, fiber: &mut Fiber, cases: &[Case], has_default: bool) -> Res<Option<(i64, Value, Value)>> {
    let ready: Vec<usize> = cases
        .iter()
        .enumerate()
        .filter(|(_, c)| {
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
        })
        .map(|(i, _)| i)
        .collect();
    if !ready.is_empty() {
        let i = ready[(vm.rng.next_u64() % ready.len() as u64) as usize];
        let c = &cases[i];
        let h = c.chan.unwrap();
        return match c.send {
            Some(v) => {
                if !chan::try_send(vm, h, v)? {
                    return err(ErrorKind::Internal, "internal: a ready send could not complete");
                }
                Ok(Some((i as i64, Value::Nil, Value::Bool(true))))
            }
            None => {
                let (v, ok) = chan::try_recv(vm, h).unwrap_or((Value::Nil, false));
                Ok(Some((i as i64, v, Value::Bool(ok))))
            }
        };
    }
    if has_default {
        return Ok(Some((-1, Value::Nil, Value::Bool(false))));
    }
    if let Some(e) = super::interrupt(vm, fiber) {
        return Err(crate::vm::Fault::Throw(e));
    }
    let chans: Vec<Handle> = cases.iter().filter_map(|c| c.chan).collect();
    let base = vm.sched.park(fiber, Wait::Select(chans.clone()));
    for (i, c) in cases.iter().enumerate() {
        let Some(h) = c.chan else { continue };
        let w = Waiter { case: Some(i as u16), two: true, ..base };
        let ch = chan::chan_mut(vm, h);
        match c.send {
            Some(value) => ch.sendq.push_back(SendWaiter { w, value }),
            None => ch.recvq.push_back(w),
        }
    }
    Ok(None)
}

/// Removes every queue entry of `w`'s fiber from channel `h`.
pub fn remove_from(vm: &mut Vm, h: Handle, w: Waiter) {
    if let Obj::Chan(c) = vm.heap.get_mut(h) {
        c.recvq.retain(|r| r.fiber != w.fiber);
        c.sendq.retain(|s| s.w.fiber != w.fiber);
    }
}

/// After a select waiter was chosen on one channel, takes it off the others.
pub fn cleanup(vm: &mut Vm, w: Waiter) {
    if w.case.is_none() {
        return;
    }
    let chans = match vm.sched.fibers.get(w.fiber as usize) {
        Some(Some(f)) => match f.sched.extra.as_ref().and_then(|x| x.select_chans.as_ref()) {
            Some(c) => c.clone(),
            None => return,
        },
        _ => return,
    };
    for h in chans {
        remove_from(vm, h, w);
    }
    if let Some(Some(f)) = vm.sched.fibers.get_mut(w.fiber as usize) {
        if let Some(x) = f.sched.extra.as_mut() {
            x.select_chans = None;
        }
    }
}
