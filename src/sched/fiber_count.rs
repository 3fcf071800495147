//! `--max-fibers` over every isolate of a runtime (docs/isolates.md,
//! "Limits"): with the limit set, the isolates share one count.

use super::{Fibers, Sched};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Fibers counted over every isolate of a runtime, for `--max-fibers`
/// (docs/isolates.md: an `isolate.run` counts as one fiber).
#[derive(Default)]
pub struct FiberCount {
    live: AtomicUsize,
    /// Fibers that do not count: a worker's driver, and one of the two
    /// fibers (its stand-in, the job's own) of each job under way.
    exempt: AtomicUsize,
}

impl FiberCount {
    pub(super) fn exempt(&self, n: isize) {
        if n >= 0 {
            self.exempt.fetch_add(n as usize, Ordering::Relaxed);
        } else {
            self.exempt.fetch_sub(n.unsigned_abs(), Ordering::Relaxed);
        }
    }
}

impl Fibers {
    #[inline]
    pub(super) fn started(&mut self) {
        self.live += 1;
        if let Some(c) = &self.count {
            c.live.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[inline]
    pub(super) fn ended(&mut self) {
        self.live -= 1;
        if let Some(c) = &self.count {
            c.live.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The fibers `--max-fibers` counts: this isolate's, or every isolate's.
    pub(super) fn counted(&self) -> usize {
        match &self.count {
            Some(c) => c.live.load(Ordering::Relaxed).saturating_sub(c.exempt.load(Ordering::Relaxed)),
            None => self.live,
        }
    }
}

impl Sched {
    /// `--max-fibers` counts the fibers of every isolate sharing `count`.
    pub fn share_fiber_count(&mut self, count: Arc<FiberCount>) {
        count.live.fetch_add(self.fibers.live, Ordering::Relaxed);
        if let Some(old) = self.fibers.count.replace(count) {
            old.live.fetch_sub(self.fibers.live, Ordering::Relaxed);
        }
    }
}
