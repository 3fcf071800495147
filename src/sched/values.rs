//! The scheduler's values as the heap holds them: channels (buffer and wait
//! queues), mutexes and waitgroups. They are data, traced and sized by the
//! collector; what parks and wakes fibers on them is in chan.rs and lock.rs.

use super::Waiter;
use crate::vm::value::Value;
use std::collections::VecDeque;

pub struct Chan {
    pub(super) cap: usize,
    pub(super) buf: VecDeque<Value>,
    pub(super) closed: bool,
    /// A task's `done()` channel: closed when the task ends, and nothing else.
    pub(super) signal_only: bool,
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
            cap,
            buf: VecDeque::new(),
            closed: false,
            signal_only: false,
            recvq: VecDeque::new(),
            sendq: VecDeque::new(),
        }
    }

    /// Values buffered now.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn cap(&self) -> usize {
        self.cap
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
