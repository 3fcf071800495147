//! A stream moving to another isolate (docs/isolates.md, "Resources that
//! move"): its descriptor, buffers and TLS session go whole; lines a
//! read-only file had buffered ahead go back into the buffer first.

use super::{Kind, Shared, Stream};
use std::rc::Rc;
use std::sync::{Arc, Mutex, TryLockError};

/// A stream between isolates: `Send`, unlike the `Stream` it came from.
pub struct MovingStream {
    name: String,
    kind: Kind,
    readable: bool,
    writable: bool,
    line_limit: Option<usize>,
    shared: Arc<Mutex<Shared>>,
}

impl Stream {
    /// Why it cannot move now (an I/O pool job is reading or writing it),
    /// or None.
    pub fn busy(&self) -> Option<String> {
        match self.shared.try_lock() {
            Err(TryLockError::WouldBlock) => Some("a read or write on it is in progress".to_string()),
            _ => None,
        }
    }

    /// Takes it to move (after `busy` said None); this handle is not used again.
    pub fn to_move(&self) -> MovingStream {
        // Taking the lock gives the read-ahead of `front` back to the buffer.
        drop(self.lock());
        MovingStream {
            name: self.name.to_string(),
            kind: self.kind,
            readable: self.readable,
            writable: self.writable,
            line_limit: self.line_limit,
            shared: self.shared.clone(),
        }
    }
}

impl MovingStream {
    /// The stream again, in the isolate it moved to.
    pub fn land(self) -> Stream {
        let MovingStream { name, kind, readable, writable, line_limit, shared } = self;
        Stream { name: Rc::from(name), kind, readable, writable, line_limit, shared, front: Rc::default() }
    }
}
