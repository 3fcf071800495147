//! The heap's memory limit (`--max-memory`): asking before big allocations,
//! deciding after collections, the messages, and the limit's share of a
//! budget shared by a runtime's isolates (budget.rs).

use super::heap::{Heap, BIG, CYCLE_ALLOC_PERCENT, GC_MIN, GROWTH_PERCENT};
use super::kind::{ErrorKind, Fault};
use super::{err, Res};

impl Heap {
    /// Sets `--max-memory`.
    pub fn set_limit(&mut self, bytes: usize) {
        self.limit = bytes;
    }

    /// The `memory` error unless `bytes` more fit under the limit. Code about to
    /// make a big object (a repeat, a range, a file's contents) asks first,
    /// before any effect, so a program past its limit gets a catchable error,
    /// never the allocator's abort. When it would fit only if what was made
    /// or dropped since the last collection is garbage, the answer is
    /// `Fault::Collect`: the instruction runs again after a collection, and
    /// then the answer is certain.
    pub fn reserve(&self, bytes: usize) -> Res<()> {
        if bytes < BIG {
            return Ok(());
        }
        if (self.live + self.outside + self.allocated).saturating_add(bytes) <= self.limit {
            self.asked.set(None);
            return Ok(());
        }
        match self.asked.get() {
            Some(n) if n < self.collections => {
                self.asked.set(None);
                err(ErrorKind::Memory, self.over_message(bytes))
            }
            // Never fits, even were every isolate's heap empty.
            _ if bytes > self.shown_limit().saturating_sub(self.outside) => {
                err(ErrorKind::Memory, self.over_message(bytes))
            }
            _ => {
                self.wanted.set(bytes);
                self.ask_full();
                Err(Fault::Collect)
            }
        }
    }

    /// What may still be made before the limit, counting what was made since
    /// the last collection as garbage (as `check_size` does): the bound for
    /// output a builtin makes piece by piece outside the heap (decompression).
    pub fn headroom(&self) -> usize {
        self.limit.saturating_sub(self.live + self.outside)
    }

    /// The most bytes a read from outside (a stream, a file, stdin) may gather
    /// into one value: a value's limit, or less when `--max-memory` has less
    /// room. Reads check it as data arrives, so input past it fails before
    /// it is buffered whole.
    /// Asked as a big allocation is (`reserve`), so that garbage outside
    /// the heap's count (the buffer of a dropped stream whose read failed)
    /// is collected before another read begins.
    pub fn read_cap(&self) -> Res<super::read_cap::ReadCap> {
        self.reserve(BIG)?;
        let room = self.headroom();
        Ok(super::read_cap::ReadCap {
            bytes: room.min(crate::limits::MAX_STRING),
            room,
            limit: self.shown_limit(),
            used: self.in_use(),
        })
    }

    fn live_over(&self, held: usize) -> String {
        format!(
            "out of memory: {} live after collection, over the {} limit (see --max-memory)",
            crate::limits::show_bytes(held + self.shown_limit().saturating_sub(self.limit)),
            crate::limits::show_bytes(self.shown_limit())
        )
    }

    pub(crate) fn over_message(&self, bytes: usize) -> String {
        format!(
            "out of memory: {} more would pass the {} limit ({} in use; see --max-memory)",
            crate::limits::show_bytes(bytes),
            crate::limits::show_bytes(self.shown_limit()),
            crate::limits::show_bytes(self.in_use())
        )
    }

    /// After a collection: what the fibers hold (`outside`); paces the next
    /// collection to come before the limit. The `memory` error when what is
    /// live is over the limit.
    pub fn after_collection(&mut self, outside: usize) -> Option<String> {
        self.gc.done = false;
        self.asked_others = false;
        self.outside = outside;
        self.collections += 1;
        let held = self.live + outside;
        if let Some(share) = &self.share {
            self.limit = share.publish(held);
            // A `memory` error is due (what is live is over, or what this
            // collection was asked for before does not fit): the other
            // isolates' garbage may be what fills the budget.
            let deciding = self.asked.get().is_some_and(|n| n < self.collections);
            if held.saturating_add(if deciding { self.wanted.take() } else { 0 }) > self.limit {
                self.limit = share.ask_others();
                self.asked_others = true;
            }
        }
        let room = self.limit.saturating_sub(held);
        // Collect before the limit, but not after less than an eighth of what
        // is live: near its limit a program collects more often, never in a
        // loop that does nothing else (the limit may be passed by that eighth).
        let start_at = held * (GROWTH_PERCENT - CYCLE_ALLOC_PERCENT) / 100;
        self.threshold = start_at.max(GC_MIN).min(room.max(held / 8).max(GC_MIN / 2));
        (held > self.limit).then(|| self.live_over(held))
    }

    /// Did the last collection ask the other isolates to collect?
    pub fn asked_others(&self) -> bool {
        self.asked_others
    }

    /// The isolates on this thread have collected (they could not while
    /// this one asked): the limit again, and the `memory` error if what is
    /// live is still over it.
    pub fn others_collected(&mut self) -> Option<String> {
        self.limit = self.share.as_ref()?.limit_now();
        let held = self.live + self.outside;
        (held > self.limit).then(|| self.live_over(held))
    }

    /// `--max-memory` is `share`'s budget, for every isolate of the runtime.
    pub fn share_limit(&mut self, share: super::budget::Share) {
        self.limit = share.publish(self.live + self.outside);
        self.share = Some(share);
    }

    pub fn share(&self) -> Option<&super::budget::Share> {
        self.share.as_ref()
    }

    /// `--max-memory` as the user gave it (all isolates together).
    pub(super) fn shown_limit(&self) -> usize {
        self.share.as_ref().map_or(self.limit, |s| s.total())
    }

    /// What is in use under it: this heap's, and what the others hold.
    pub(super) fn in_use(&self) -> usize {
        let others = self.shown_limit().saturating_sub(self.limit);
        others + self.live + self.outside + self.allocated
    }
}
