//! Channels shared between isolates (docs/isolates.md). A channel is promoted
//! here, in place, the first time it crosses: from then on its buffer and wait
//! queues sit behind a lock every isolate holding it reaches, values on it
//! travel as payloads (copies, made by the isolate layer's `Carrier`), and a
//! fiber parked on it is woken through its isolate's `Mailbox`. A parked fiber
//! is completed by one side only: each park has a claim, taken first by
//! whoever completes it (a sender, a receiver, another case of its `select`
//! or its cancellation). Channels that never cross never come here.

use super::shared_state::{can_recv, can_send, lock, offer, take, take_value, taken, Claim, Done, Got};
pub use super::shared_state::{Hook, Mailbox, Payload, SharedChan};
use super::shared_state::{Remote, State};
use super::trace::{self, Crossing};
use super::values::Chan;
use super::{chan, select, Wait, Waiter};
use crate::vm::{err, ErrorKind, Handle, Obj, Res, Resume, Value, Vm};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How values become payloads and back: the isolate layer's structured
/// clone. `pack` fails with what cannot cross and the message saying where;
/// `unpack` with why not.
pub struct Carrier {
    pub pack: fn(&mut Vm, Value) -> Result<Payload, CannotPack>,
    pub unpack: fn(&mut Vm, Payload) -> Result<Value, String>,
    /// A payload this isolate packed that was not sent after all (a
    /// `select`'s other case won, the send was cancelled): the resources it
    /// carried are this isolate's again.
    pub restore: fn(&mut Vm, Payload),
    /// Where a payload carries its `--trace` flow id.
    pub flow: fn(&mut Payload) -> Option<&mut u64>,
}

/// What cannot cross, and the message saying where it sits.
pub type CannotPack = (String, String);

/// Shared by every isolate (immutable): set by the first channel to cross.
static CARRIER: OnceLock<Carrier> = OnceLock::new();

pub fn set_carrier(c: Carrier) {
    let _ = CARRIER.set(c);
}

fn carrier() -> &'static Carrier {
    CARRIER.get().expect("a channel was shared, so the carrier is set")
}

/// Sets what a delivery also tells (a worker's inbox).
pub fn set_hook(vm: &mut Vm, hook: Hook) {
    vm.sched.events.shared.hook = Some(hook);
}

/// This isolate's mailbox, where what it sent and was not delivered comes back.
pub fn home(vm: &mut Vm) -> Option<Arc<Mailbox>> {
    mailbox(vm).ok()
}

fn mailbox(vm: &mut Vm) -> Res<Arc<Mailbox>> {
    if let Some(m) = &vm.sched.events.shared.mailbox {
        return Ok(m.clone());
    }
    let waker = match vm.sched.events.reactor() {
        Ok(r) => r.waker.clone(),
        Err(e) => return err(ErrorKind::Io, format!("cannot wait on a shared channel: {e}")),
    };
    let hook = vm.sched.events.shared.hook.clone();
    let m = Arc::new(Mailbox {
        queue: Mutex::default(),
        returned: Mutex::default(),
        has: AtomicBool::new(false),
        idle: AtomicBool::new(false),
        collect: AtomicBool::new(false),
        waker,
        hook,
    });
    vm.sched.events.shared.mailbox = Some(m.clone());
    Ok(m)
}

/// The shared channel behind `h`, if it is one.
pub(super) fn of(vm: &Vm, h: Handle) -> Option<Arc<SharedChan>> {
    match vm.heap.get(h) {
        Obj::Chan(c) => c.shared.clone(),
        _ => None,
    }
}

fn pack(vm: &mut Vm, v: Value) -> Res<Payload> {
    (carrier().pack)(vm, v).or_else(|(_, msg)| err(ErrorKind::Type, format!("send on a shared channel: {msg}")))
}

fn unpack(vm: &mut Vm, p: Payload) -> Result<Value, String> {
    (carrier().unpack)(vm, p).map_err(|why| format!("receive from a shared channel: {why}"))
}

/// `--trace`: `p` leaves from the running fiber's slice: the flow it
/// carries to the fiber that gets it starts there (once: a select's send
/// offered again keeps its flow).
fn stamp(vm: &mut Vm, p: &mut Payload) {
    if vm.sched.trace.is_none() {
        return;
    }
    if let Some(flow) = (carrier().flow)(p).filter(|f| **f == 0) {
        *flow = trace::cross_out(vm, Crossing::Message);
    }
}

/// `--trace`: the flow `p` carries (0: none).
fn flow(p: &mut Payload) -> u64 {
    (carrier().flow)(p).map_or(0, |f| *f)
}

/// A value delivered to parked fiber `fid`: unpacked, its flow to end at the
/// fiber's next slice.
fn arrive(vm: &mut Vm, fid: u32, mut p: Payload) -> Result<Value, String> {
    let id = flow(&mut p);
    trace::cross_to_parked(vm, fid, id);
    unpack(vm, p)
}

/// A value taken now by the running fiber: unpacked, its flow ended here.
fn take_now(vm: &mut Vm, mut p: Payload) -> Res<Value> {
    let id = flow(&mut p);
    trace::cross_in(vm, id, Crossing::Message);
    unpack(vm, p).or_else(|m| err(ErrorKind::Value, m))
}

/// Completes what the locked section decided: this isolate's fibers now,
/// other isolates' through their mailboxes.
fn dispatch(vm: &mut Vm, done: Done) {
    for (r, got) in done {
        if vm.sched.events.shared.mailbox.as_ref().is_some_and(|m| Arc::ptr_eq(m, &r.to)) {
            complete(vm, r.w, got);
        } else {
            r.to.post(r.w, got);
        }
    }
}

/// Wakes a parked fiber of this isolate with what completed it.
fn complete(vm: &mut Vm, w: Waiter, got: Got) {
    if !vm.sched.fibers.is_parked(w) {
        return; // its program is over
    }
    let resume = match got {
        // What cannot be unpacked here is thrown where the fiber waits (it
        // must not stay parked: the sender has gone on).
        Got::Received(Some(p)) => match arrive(vm, w.fiber, p) {
            Ok(v) => w.received(v, true),
            Err(msg) => Resume::Throw(crate::vm::error::bare_error(vm, ErrorKind::Value, &msg)),
        },
        Got::Received(None) => w.received(Value::Nil, false),
        Got::Sent => w.sent(),
        Got::Closed => Resume::Throw(crate::vm::error::bare_error(vm, ErrorKind::Closed, "send on closed channel")),
    };
    if let Some(x) = vm.sched.fibers.state_mut(w.fiber).extra.as_mut() {
        x.claim = None;
    }
    select::wake(vm, w, resume);
}

/// Delivers what other isolates completed, without waiting.
pub(super) fn deliver(vm: &mut Vm) {
    let Some(m) = &vm.sched.events.shared.mailbox else { return };
    if !m.has.load(Ordering::Acquire) {
        return;
    }
    let (got, collect, returned) = {
        let mut q = lock(&m.queue);
        m.has.store(false, Ordering::Relaxed);
        let returned = std::mem::take(&mut *lock(&m.returned));
        (std::mem::take(&mut *q), m.collect.swap(false, Ordering::AcqRel), returned)
    };
    for (w, g) in got {
        complete(vm, w, g);
    }
    for p in returned {
        (carrier().restore)(vm, p);
    }
    if collect {
        // Another isolate is about to fail for want of memory (between
        // slices here, so every value is rooted).
        super::driver::collect_for_others(vm);
    }
}

/// The isolate answers other isolates' requests to collect (vm/budget.rs)
/// from now on: it takes part in isolates.
pub fn answer_asks(vm: &mut Vm) {
    if vm.heap.share().is_none() {
        return;
    }
    let Ok(m) = mailbox(vm) else { return };
    if let Some(share) = vm.heap.share() {
        share.on_ask(Arc::new(move || m.ask_collect()));
    }
}

/// Has another isolate completed something not yet delivered?
pub(super) fn pending(vm: &Vm) -> bool {
    vm.sched.events.shared.mailbox.as_ref().is_some_and(|m| m.has.load(Ordering::Acquire))
}

/// Can another isolate wake a fiber here (so an idle wait must watch the reactor)?
pub(super) fn listening(vm: &Vm) -> bool {
    vm.sched.events.shared.mailbox.is_some()
}

/// Is a fiber here parked on a shared channel (so another isolate may wake
/// it)? Walks the fibers: for deciding a deadlock only.
pub(super) fn parked_here(vm: &Vm) -> bool {
    vm.sched.fibers.states().any(|(_, s)| s.extra.as_ref().is_some_and(|x| x.claim.is_some()))
}

/// How long an idle isolate watches its mailbox before it sleeps: another
/// isolate's answer often comes within it, and waking from a sleep costs
/// more than the answer (benches/isolates/chan_roundtrip.csp).
const SPIN: Duration = Duration::from_micros(50);

/// With fibers parked on shared channels, waits up to `SPIN` (never past
/// `limit`) for another isolate to complete one; delivers it. True if one came.
pub(super) fn spin(vm: &mut Vm, limit: Option<Duration>) -> bool {
    let Some(m) = &vm.sched.events.shared.mailbox else { return false };
    let until = Instant::now() + limit.map_or(SPIN, |l| l.min(SPIN));
    let mut spins = 0u32;
    loop {
        if m.has.load(Ordering::Acquire) {
            deliver(vm);
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        // Mostly not a busy spin: the isolate that answers may need this core.
        spins += 1;
        if spins.is_multiple_of(16) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The isolate is about to sleep (`on`) or awake again: while it sleeps,
/// deliveries wake it. False when one came meanwhile: it must not sleep.
pub(super) fn set_idle(vm: &Vm, on: bool) -> bool {
    let Some(m) = &vm.sched.events.shared.mailbox else { return true };
    m.idle.store(on, Ordering::SeqCst);
    !(on && m.has.load(Ordering::SeqCst))
}

/// Parks the running fiber on `wait` with a fresh claim.
fn park(vm: &mut Vm, wait: Wait) -> Res<(Waiter, Claim)> {
    let w = super::ops::park(vm, wait)?;
    let claim = Claim::default();
    vm.sched.fibers.cur().extra_mut().claim = Some(claim.clone());
    Ok((w, claim))
}

/// `ch <- v` on a shared channel: true when done, false after parking.
pub(super) fn send(vm: &mut Vm, h: Handle, sc: &SharedChan, v: Value) -> Res<bool> {
    if sc.signal_only {
        return chan::signal_only("send on");
    }
    let mut p = pack(vm, v)?;
    stamp(vm, &mut p);
    let to = mailbox(vm)?;
    let mut done = Vec::new();
    let mut st = lock(&sc.state);
    let p = match offer(&mut st, sc.cap, p, &mut done) {
        Err(()) => return err(ErrorKind::Closed, "send on closed channel"),
        Ok(None) => {
            drop(st);
            dispatch(vm, done);
            return Ok(true);
        }
        Ok(Some(p)) => p,
    };
    let (w, claim) = park(vm, Wait::Send(h))?;
    st.sendq.push_back((Remote { to, w, claim }, p));
    Ok(false)
}

/// A timer's send (`after`, `ticker`): dropped when the channel is full.
pub(super) fn offer_now(vm: &mut Vm, sc: &SharedChan, v: Value) {
    let Ok(p) = pack(vm, v) else { return };
    let mut done = Vec::new();
    let _ = offer(&mut lock(&sc.state), sc.cap, p, &mut done);
    dispatch(vm, done);
}

/// `<-ch` on a shared channel: Some((value, ok)) now, or None after parking.
pub(super) fn recv(vm: &mut Vm, h: Handle, sc: &SharedChan) -> Res<Option<(Value, bool)>> {
    let to = mailbox(vm)?;
    let mut done = Vec::new();
    let mut st = lock(&sc.state);
    if let Some(got) = take_value(&mut st, &mut done) {
        drop(st);
        dispatch(vm, done);
        return Ok(Some(match got {
            Some(p) => (take_now(vm, p)?, true),
            None => (Value::Nil, false),
        }));
    }
    let (w, claim) = park(vm, Wait::Recv(h))?;
    st.recvq.push_back(Remote { to, w, claim });
    Ok(None)
}

/// `close(ch)`: parked receivers get (nil, false), parked senders an error;
/// what is buffered can still be received.
pub(super) fn close(vm: &mut Vm, sc: &SharedChan) -> Res<()> {
    let mut st = lock(&sc.state);
    if st.closed {
        return err(ErrorKind::Closed, "close of closed channel");
    }
    st.closed = true;
    let mut done: Done = Vec::new();
    done.extend(st.recvq.drain(..).filter(|r| take(&r.claim)).map(|r| (r, Got::Received(None))));
    done.extend(st.sendq.drain(..).filter(|(r, _)| take(&r.claim)).map(|(r, _)| (r, Got::Closed)));
    drop(st);
    dispatch(vm, done);
    Ok(())
}

/// Takes fiber `fid` off the shared channel's queues (it was woken another
/// way); what it offered to send is its own again.
pub(super) fn remove(vm: &mut Vm, sc: &SharedChan, fid: u32) {
    let Some(me) = &vm.sched.events.shared.mailbox else { return };
    let is = |r: &Remote| r.w.fiber == fid && Arc::ptr_eq(&r.to, me);
    let mut st = lock(&sc.state);
    st.recvq.retain(|r| !is(r));
    let mut unsent = Vec::new();
    for (r, p) in std::mem::take(&mut st.sendq) {
        if is(&r) {
            unsent.push(p);
        } else {
            st.sendq.push_back((r, p));
        }
    }
    drop(st);
    for p in unsent {
        (carrier().restore)(vm, p);
    }
}

/// A parked fiber is to be woken another way (cancelled, interrupted): true
/// if nothing completed it first; false if a completion is on its way (it
/// stays parked and gets it).
pub(super) fn release(vm: &mut Vm, fid: u32) -> bool {
    let claim = vm.sched.fibers.state_mut(fid).extra.as_mut().and_then(|x| x.claim.take());
    claim.is_none_or(|c| take(&c))
}

/// For a local channel operation completing a `select` parked on shared
/// channels too: takes its claim (false: another case already has it).
/// Peeks only when `commit` is false.
pub(super) fn claim_select(sched: &super::Sched, w: Waiter, commit: bool) -> bool {
    let c = sched.fibers.state(w.fiber).extra.as_ref().and_then(|x| x.claim.as_ref());
    c.is_none_or(|c| if commit { take(c) } else { !taken(c) })
}

/// `select` with a shared channel among its cases: as select.rs's, with
/// each shared channel locked (in address order, so two selects cannot
/// deadlock) from the readiness check to the park, so no completion is
/// missed between them.
pub(super) fn select(vm: &mut Vm, cases: &[select::Case], has_default: bool) -> Res<Option<(i64, Value, bool)>> {
    let shared: Vec<Option<Arc<SharedChan>>> = cases.iter().map(|c| c.chan.and_then(|h| of(vm, h))).collect();
    // Values for shared channels are packed first: what cannot cross fails the select.
    let mut payloads = Vec::with_capacity(cases.len());
    for (c, s) in cases.iter().zip(&shared) {
        payloads.push(match (c.send, s) {
            (Some(_), Some(s)) if s.signal_only => return chan::signal_only("send on"),
            (Some(v), Some(_)) => Some(pack(vm, v)?),
            _ => None,
        });
    }
    let got = loop {
        match select_packed(vm, cases, has_default, &shared, &mut payloads) {
            Ok(Some(Chosen::Again)) => continue,
            Ok(Some(Chosen::Case(i, v, ok))) => break Ok(Some((i, v, ok))),
            Ok(None) => break Ok(None),
            Err(e) => break Err(e),
        }
    };
    // The cases not chosen did not send: their values' resources stay here.
    for p in payloads.into_iter().flatten() {
        (carrier().restore)(vm, p);
    }
    got
}

/// What `select_packed` chose.
enum Chosen {
    Case(i64, Value, bool),
    /// A local case's partner was claimed meanwhile: choose again.
    Again,
}

fn select_packed(
    vm: &mut Vm,
    cases: &[select::Case],
    has_default: bool,
    shared: &[Option<Arc<SharedChan>>],
    payloads: &mut [Option<Payload>],
) -> Res<Option<Chosen>> {
    let to = mailbox(vm)?;
    let mut order: Vec<&Arc<SharedChan>> = shared.iter().flatten().collect();
    order.sort_by_key(|s| Arc::as_ptr(s));
    order.dedup_by_key(|s| Arc::as_ptr(s));
    let mut guards: Vec<(*const SharedChan, MutexGuard<State>)> =
        order.iter().map(|s| (Arc::as_ptr(s), lock(&s.state))).collect();
    let at = |guards: &[(*const SharedChan, MutexGuard<State>)], s: &Arc<SharedChan>| {
        guards.iter().position(|(p, _)| *p == Arc::as_ptr(s)).expect("locked")
    };
    let mut ready: Vec<usize> = (0..cases.len())
        .filter(|&i| match &shared[i] {
            Some(s) => {
                let st = &guards[at(&guards, s)].1;
                if cases[i].send.is_some() {
                    can_send(st, s.cap)
                } else {
                    can_recv(st)
                }
            }
            None => select::case_ready(vm, &cases[i]),
        })
        .collect();
    let mut done = Vec::new();
    // A case found ready may be gone when taken (a fiber parked on it was
    // claimed elsewhere): the choice is made again among the rest.
    while !ready.is_empty() {
        let rng = &mut vm.select_rng;
        let r = vm.sched.policy.choose(|| rng.next_u64());
        let k = (r % ready.len() as u64) as usize;
        let i = ready[k];
        let c = &cases[i];
        let got = match &shared[i] {
            None => {
                // Unlocked first: the local case may wake a fiber whose own
                // select waits on these shared channels, and take it off them.
                drop(guards);
                return match select::run_case(vm, c)? {
                    Some((v, ok)) => Ok(Some(Chosen::Case(i as i64, v, ok))),
                    // Its partner was claimed meanwhile: the select starts over.
                    None => Ok(Some(Chosen::Again)),
                };
            }
            Some(s) => {
                let g = at(&guards, s);
                let p = payloads[i].take().map(|mut p| {
                    stamp(vm, &mut p);
                    p
                });
                let st = &mut guards[g].1;
                match p {
                    Some(p) => match offer(st, s.cap, p, &mut done) {
                        Err(()) => return err(ErrorKind::Closed, "send on closed channel"),
                        Ok(None) => Some((Value::Nil, true)),
                        Ok(Some(p)) => {
                            payloads[i] = Some(p);
                            None
                        }
                    },
                    None => match take_value(st, &mut done) {
                        Some(got) => {
                            drop(guards);
                            dispatch(vm, done);
                            return Ok(Some(match got {
                                Some(p) => Chosen::Case(i as i64, take_now(vm, p)?, true),
                                None => Chosen::Case(i as i64, Value::Nil, false),
                            }));
                        }
                        None => None,
                    },
                }
            }
        };
        if let Some((v, ok)) = got {
            drop(guards);
            dispatch(vm, done);
            return Ok(Some(Chosen::Case(i as i64, v, ok)));
        }
        ready.swap_remove(k);
    }
    if has_default {
        return Ok(Some(Chosen::Case(-1, Value::Nil, false)));
    }
    super::ops::check_interrupt(vm)?;
    let base = select::park_local(vm, cases, |i| shared[i].is_none());
    let claim = Claim::default();
    vm.sched.fibers.cur().extra_mut().claim = Some(claim.clone());
    for i in 0..cases.len() {
        let Some(s) = &shared[i] else { continue };
        let g = at(&guards, s);
        let r = Remote { to: to.clone(), w: Waiter { case: Some(i as u16), ..base }, claim: claim.clone() };
        match payloads[i].take() {
            Some(mut p) => {
                stamp(vm, &mut p);
                guards[g].1.sendq.push_back((r, p));
            }
            None => guards[g].1.recvq.push_back(r),
        }
    }
    Ok(None)
}

/// Promotes local channel `h` to a shared one (done once; then the same):
/// what it buffers is packed, the fibers parked on it wait here. Fails,
/// changing nothing, with what it holds that cannot cross.
pub fn share(vm: &mut Vm, h: Handle) -> Result<Arc<SharedChan>, String> {
    let c = chan::chan_mut(vm, h);
    if let Some(s) = &c.shared {
        return Ok(s.clone());
    }
    let sc = Arc::new(SharedChan { cap: c.cap(), signal_only: c.signal_only, state: Mutex::default() });
    // Seen as shared while its values are packed (one may be this channel).
    c.shared = Some(sc.clone());
    c.special = true;
    let values: Vec<Value> = c.buf.iter().copied().collect();
    let senders: Vec<(Waiter, Value)> = c.sendq.iter().map(|s| (s.w, s.value)).collect();
    let receivers: Vec<Waiter> = c.recvq.iter().copied().collect();
    let closed = c.closed;
    let senders: Vec<(Waiter, Value)> = senders.into_iter().filter(|(w, _)| live(vm, *w)).collect();
    let receivers: Vec<Waiter> = receivers.into_iter().filter(|&w| live(vm, w)).collect();
    let undo = |vm: &mut Vm, what: String| {
        let c = chan::chan_mut(vm, h);
        c.shared = None;
        c.special = c.signal_only;
        Err(format!("a channel buffering {what}"))
    };
    let mut buf = VecDeque::with_capacity(values.len());
    for v in values {
        match (carrier().pack)(vm, v) {
            Ok(p) => buf.push_back(p),
            Err((what, _)) => return undo(vm, what),
        }
    }
    let mut sends = Vec::new();
    for (w, v) in senders {
        match (carrier().pack)(vm, v) {
            Ok(p) => sends.push((w, p)),
            Err((what, _)) => return undo(vm, what),
        }
    }
    let to = match mailbox(vm) {
        Ok(m) => m,
        Err(_) => return undo(vm, "nothing: this isolate is out of descriptors".into()),
    };
    let remote = |vm: &mut Vm, w: Waiter| Remote { to: to.clone(), w, claim: claim_of(vm, w) };
    let recvq = receivers.into_iter().map(|w| remote(vm, w)).collect();
    let sendq = sends.into_iter().map(|(w, p)| (remote(vm, w), p)).collect();
    *lock(&sc.state) = State { buf, closed, recvq, sendq };
    let c = chan::chan_mut(vm, h);
    c.buf.clear();
    c.recvq.clear();
    c.sendq.clear();
    Ok(sc)
}

/// Is this waiter still parked and unclaimed?
fn live(vm: &Vm, w: Waiter) -> bool {
    vm.sched.fibers.is_parked(w) && claim_select(&vm.sched, w, false)
}

/// The claim of parked waiter `w` (made now if it has none).
fn claim_of(vm: &mut Vm, w: Waiter) -> Claim {
    vm.sched.fibers.state_mut(w.fiber).extra_mut().claim.get_or_insert_with(Claim::default).clone()
}

/// This isolate's handle on a shared channel that crossed to it.
pub fn adopt(vm: &mut Vm, sc: Arc<SharedChan>) -> Value {
    Value::Obj(vm.heap.alloc(Obj::Chan(Box::new(Chan::of_shared(sc)))))
}
