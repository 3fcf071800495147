//! The scheduling policy: what differs between running a program in real time
//! and exploring its schedules (`--explore-seed`, explore.rs), injected at one
//! point (`Sched::set_explore`). The driver has one slice loop, one event
//! delivery and one idle wait; each asks the policy where they differ: a
//! slice's length and whether the clock ends it, the clock itself, the order
//! of things that happen together (woken fibers, equal timers, I/O
//! completions, `select`'s ready cases), and how to wait when nothing runs.

use super::explore::Explore;
use std::time::Instant;

/// Back-edges and calls between clock checks in real time.
pub(super) const SLICE_BUDGET: u32 = 1024;

pub(crate) enum Policy {
    /// Time-sliced by the clock; things that happen together keep their order.
    RealTime,
    /// Seeded choices and a virtual clock.
    Explore(Box<Explore>),
}

impl Policy {
    pub fn exploring(&self) -> bool {
        matches!(self, Policy::Explore(_))
    }

    /// The budget of the next slice, and whether the clock ends it (real
    /// time) or the budget alone does (exploring).
    pub fn slice(&mut self) -> (u32, bool) {
        match self {
            Policy::RealTime => (SLICE_BUDGET, true),
            Policy::Explore(x) => (x.slice(), false),
        }
    }

    /// The scheduler's clock.
    pub fn now(&self, start: Instant, ticks: u64) -> Instant {
        match self {
            Policy::RealTime => Instant::now(),
            Policy::Explore(x) => x.now(start, ticks),
        }
    }

    /// A choice among `n` things the language leaves open (a ready `select`
    /// case, the order of equal timers); `fallback` in real time.
    pub fn choose(&mut self, fallback: impl FnOnce() -> u64) -> u64 {
        match self {
            Policy::RealTime => fallback(),
            Policy::Explore(x) => x.next(),
        }
    }

    /// Puts things that happened together in the order they are delivered in.
    pub fn order<T>(&mut self, items: &mut [T]) {
        if let Policy::Explore(x) = self {
            x.shuffle(items);
        }
    }

    /// Should a woken fiber go behind the queued ones (exploring, at random)?
    pub fn demote(&mut self) -> bool {
        match self {
            Policy::RealTime => false,
            Policy::Explore(x) => x.coin(),
        }
    }

    pub fn explore_mut(&mut self) -> Option<&mut Explore> {
        match self {
            Policy::RealTime => None,
            Policy::Explore(x) => Some(x),
        }
    }
}
