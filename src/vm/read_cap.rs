//! How much one read from outside may gather (`Heap::read_cap`), and the
//! error for passing it.

use super::kind::{ErrorKind, Fault};

/// A read's bound (`Heap::read_cap`) and the error for passing it.
#[derive(Clone, Copy, Debug)]
pub struct ReadCap {
    /// The most one read may gather.
    pub bytes: usize,
    /// The memory left under `--max-memory`, for what a read's value grows
    /// into (`lines` makes a list of strings).
    pub room: usize,
    pub(super) limit: usize,
    pub(super) used: usize,
}

impl ReadCap {
    /// The `memory` or `limit` error for a read of `what` that passed the cap.
    pub fn fault(&self, what: &str) -> Fault {
        Fault::Error(Box::new(self.error(what)))
    }

    pub fn error(&self, what: &str) -> (ErrorKind, String) {
        match self.bytes < crate::limits::MAX_STRING {
            true => self.memory_error(what),
            false => (
                ErrorKind::Limit,
                format!(
                    "cannot read {what}: longer than the {} MiB a value may hold (read it in parts)",
                    self.bytes >> 20
                ),
            ),
        }
    }

    pub fn memory_error(&self, what: &str) -> (ErrorKind, String) {
        use crate::limits::show_bytes;
        let (limit, used) = (show_bytes(self.limit), show_bytes(self.used));
        let msg =
            format!("out of memory: reading {what} would pass the {limit} limit ({used} in use; see --max-memory)");
        (ErrorKind::Memory, msg)
    }
}
