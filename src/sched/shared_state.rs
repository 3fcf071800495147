//! The data of channels shared between isolates (shared.rs has what parks
//! and wakes fibers on them): the state behind each one's lock, the parked
//! fibers of any isolate, claims, and each isolate's mailbox. Threads and
//! locks only, no fibers.

use super::Waiter;
use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A value on its way between isolates (a packet of the isolate layer).
pub type Payload = Box<dyn Any + Send>;

pub struct SharedChan {
    pub(super) cap: usize,
    pub(super) signal_only: bool,
    pub(super) state: Mutex<State>,
}

impl std::fmt::Debug for SharedChan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedChan(cap {})", self.cap)
    }
}

#[derive(Default)]
pub(super) struct State {
    pub(super) buf: VecDeque<Payload>,
    pub(super) closed: bool,
    pub(super) recvq: VecDeque<Remote>,
    pub(super) sendq: VecDeque<(Remote, Payload)>,
}

/// A fiber of some isolate parked on the channel.
pub(super) struct Remote {
    pub(super) to: Arc<Mailbox>,
    pub(super) w: Waiter,
    pub(super) claim: Claim,
}

/// Taken by whoever completes a park first.
pub(super) type Claim = Arc<AtomicBool>;

pub(super) fn take(c: &Claim) -> bool {
    !c.swap(true, Ordering::AcqRel)
}

pub(super) fn taken(c: &Claim) -> bool {
    c.load(Ordering::Acquire)
}

/// Where other isolates post what completes this isolate's parked fibers.
pub struct Mailbox {
    pub(super) queue: Mutex<Vec<(Waiter, Got)>>,
    /// Values this isolate packed that were never delivered (`give_back`).
    pub(super) returned: Mutex<Vec<Payload>>,
    pub(super) has: AtomicBool,
    /// The isolate is about to sleep or sleeps: a delivery must wake it.
    /// (It sets this, then looks at `has`; a poster sets `has`, then looks
    /// at this: with both sequentially consistent, one of them sees the other.)
    pub(super) idle: AtomicBool,
    /// Another isolate asks this one to collect (vm/budget.rs).
    pub(super) collect: AtomicBool,
    pub(super) waker: Arc<mio::Waker>,
    pub(super) hook: Option<Hook>,
}

impl std::fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mailbox")
    }
}

/// Also run on each delivery (a worker's: its inbox, which may be asleep).
pub type Hook = Arc<dyn Fn() + Send + Sync>;

/// This isolate's side of shared channels.
#[derive(Default)]
pub(crate) struct Local {
    pub(super) mailbox: Option<Arc<Mailbox>>,
    pub(super) hook: Option<Hook>,
}

/// What completed a parked operation.
pub(super) enum Got {
    /// A receive: the value, or None when the channel was closed.
    Received(Option<Payload>),
    Sent,
    /// A send found the channel closed.
    Closed,
}

pub(super) type Done = Vec<(Remote, Got)>;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change under these locks is whole when made: a panic elsewhere
    // leaves nothing half done.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SharedChan {
    pub fn cap(&self) -> usize {
        self.cap
    }

    pub fn signal_only(&self) -> bool {
        self.signal_only
    }

    /// Values buffered now.
    pub fn len(&self) -> usize {
        lock(&self.state).buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Mailbox {
    pub(super) fn post(&self, w: Waiter, got: Got) {
        lock(&self.queue).push((w, got));
        self.wake();
    }

    /// A payload this isolate packed comes back undelivered (from any
    /// thread): the resources it carries are restored here (`Carrier::restore`).
    pub fn give_back(&self, p: Payload) {
        lock(&self.returned).push(p);
        self.wake();
    }

    /// Asks the isolate to collect at its next look (from any thread).
    pub(super) fn ask_collect(&self) {
        self.collect.store(true, Ordering::SeqCst);
        self.wake();
    }

    fn wake(&self) {
        self.has.store(true, Ordering::SeqCst);
        if self.idle.load(Ordering::SeqCst) {
            let _ = self.waker.wake();
            if let Some(h) = &self.hook {
                h();
            }
        }
    }
}

/// Hands `p` to a parked receiver or the buffer; gives it back when the
/// sender must wait. Err: the channel is closed.
pub(super) fn offer(st: &mut State, cap: usize, p: Payload, done: &mut Done) -> Result<Option<Payload>, ()> {
    if st.closed {
        return Err(());
    }
    while let Some(r) = st.recvq.pop_front() {
        if take(&r.claim) {
            done.push((r, Got::Received(Some(p))));
            return Ok(None);
        }
    }
    if st.buf.len() < cap {
        st.buf.push_back(p);
        return Ok(None);
    }
    Ok(Some(p))
}

/// Takes a value: Some(None) once closed and drained, None when the
/// receiver must wait. A parked sender's value moves into a freed slot.
pub(super) fn take_value(st: &mut State, done: &mut Done) -> Option<Option<Payload>> {
    if let Some(p) = st.buf.pop_front() {
        if let Some((r, sp)) = pop_sender(st) {
            st.buf.push_back(sp);
            done.push((r, Got::Sent));
        }
        return Some(Some(p));
    }
    if let Some((r, sp)) = pop_sender(st) {
        done.push((r, Got::Sent));
        return Some(Some(sp));
    }
    st.closed.then_some(None)
}

pub(super) fn pop_sender(st: &mut State) -> Option<(Remote, Payload)> {
    while let Some((r, p)) = st.sendq.pop_front() {
        if take(&r.claim) {
            return Some((r, p));
        }
    }
    None
}

pub(super) fn can_send(st: &State, cap: usize) -> bool {
    st.closed || st.buf.len() < cap || st.recvq.iter().any(|r| !taken(&r.claim))
}

pub(super) fn can_recv(st: &State) -> bool {
    !st.buf.is_empty() || st.closed || st.sendq.iter().any(|(r, _)| !taken(&r.claim))
}
