//! The scheduler's values as the heap holds them: channels (buffer and wait
//! queues), mutexes and waitgroups. They are data, traced and sized by the
//! collector; what parks and wakes fibers on them is in chan.rs and lock.rs.

use super::shared_state::SharedChan;
use super::Waiter;
use crate::vm::value::Value;
use std::collections::VecDeque;
use std::sync::Arc;

pub struct Chan {
    /// At most `limits::MAX_LIST`: 32 bits keep a channel in 112 bytes.
    pub(super) cap: u32,
    pub(super) buf: VecDeque<Value>,
    pub(super) closed: bool,
    /// A task's `done()` channel: closed when the task ends, and nothing else.
    pub(super) signal_only: bool,
    /// Shared with other isolates (shared.rs): its state is there, and the
    /// fields here stay empty.
    pub(super) shared: Option<Arc<SharedChan>>,
    /// `signal_only` or `shared`: one test keeps both off a send's fast path.
    pub(super) special: bool,
    pub(super) recvq: VecDeque<Waiter>,
    pub(super) sendq: VecDeque<SendWaiter>,
}

/// A parked sender and the value it offers.
pub(super) struct SendWaiter {
    pub w: Waiter,
    pub value: Value,
}

impl Chan {
    pub fn new(cap: usize) -> Chan {
        Chan {
            cap: cap as u32,
            buf: VecDeque::new(),
            closed: false,
            signal_only: false,
            shared: None,
            special: false,
            recvq: VecDeque::new(),
            sendq: VecDeque::new(),
        }
    }

    /// This isolate's handle on a channel shared with others.
    pub fn of_shared(shared: Arc<SharedChan>) -> Chan {
        let mut c = Chan::new(shared.cap());
        c.signal_only = shared.signal_only();
        c.shared = Some(shared);
        c.special = true;
        c
    }

    /// Is `other` this channel (a shared one can have two handles here)?
    pub fn same(&self, other: &Chan) -> bool {
        matches!((&self.shared, &other.shared), (Some(a), Some(b)) if Arc::ptr_eq(a, b))
    }

    /// The channel shared with other isolates, if this one is.
    pub fn shared(&self) -> Option<&Arc<SharedChan>> {
        self.shared.as_ref()
    }

    /// Values buffered now.
    pub fn len(&self) -> usize {
        match &self.shared {
            Some(s) => s.len(),
            None => self.buf.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn cap(&self) -> usize {
        self.cap as usize
    }

    /// Rough byte size, to pace the collector.
    pub fn size(&self) -> usize {
        std::mem::size_of::<Chan>() + self.buf.capacity() * 16
    }

    /// The values it holds (buffered and offered by parked senders), for the collector.
    pub fn trace(&self, mut push: impl FnMut(Value)) {
        self.buf.iter().for_each(|&v| push(v));
        self.sendq.iter().for_each(|s| push(s.value));
    }
}

#[derive(Default)]
pub struct Mutex {
    /// The fiber holding it.
    pub(super) owner: Option<u32>,
    pub(super) waiters: VecDeque<Waiter>,
}

#[derive(Default)]
pub struct WaitGroup {
    pub(super) count: i64,
    pub(super) waiters: Vec<Waiter>,
}

impl Mutex {
    /// The fiber holding it.
    pub(super) fn holder(&self) -> Option<u32> {
        self.owner
    }
}

// Channels are many (one per fiber in a fan-out): sharing must not grow them.
const _: () = assert!(std::mem::size_of::<Chan>() <= 112);
