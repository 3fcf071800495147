//! The scheduling policy: what differs between running a program in real time
//! and exploring its schedules (`--explore-seed`, explore.rs), injected at one
//! point (`Sched::set_explore`). The driver has one slice loop, one event
//! delivery and one idle wait; each asks the policy where they differ: a
//! slice's length and whether the clock ends it, the clock itself, the order
//! of things that happen together (woken fibers, equal timers, I/O
//! completions, `select`'s ready cases), and how to wait when nothing runs.

use crate::vm::rng::Rng;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

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

/// Virtual time one back-edge or call takes.
const TICK_NS: u64 = 100;
/// Schedule exploration's state (explore.rs): the seeded generator and the
/// virtual clock.
pub(super) struct Explore {
    rng: Rng,
    /// The virtual clock, shared by the isolates explored on this thread.
    clock: Rc<Clock>,
    /// This isolate's ticks already added to the clock.
    seen: Cell<u64>,
    /// Explored with other isolates on this thread, which take turns
    /// between this one's runs.
    pub(super) alongside: bool,
    /// False once pool work outlasted `PATIENCE`: until the pool is empty again,
    /// completions are delivered as they come (replay is then best-effort).
    pub(super) patient: bool,
}

/// Virtual time since the program started: the instructions every isolate
/// ran, plus the waits skipped while every fiber waited on a timer.
#[derive(Default)]
pub(super) struct Clock {
    ns: Cell<u64>,
}

impl Explore {
    pub fn new(seed: u64) -> Explore {
        // Neighbouring seeds must give unrelated schedules: mix first (splitmix64).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let rng = Rng::new(z ^ (z >> 31));
        Explore { rng, clock: Rc::default(), seen: Cell::new(0), alongside: false, patient: true }
    }

    /// Another isolate's exploration, on this one's thread and clock (its
    /// ticks so far, `ticks`, not counted): seeded from this one's generator.
    pub fn alongside(&mut self, ticks: u64) -> Explore {
        let mut x = Explore::new(self.next());
        x.clock = self.clock.clone();
        x.seen.set(ticks);
        (x.alongside, self.alongside) = (true, true);
        x
    }

    pub fn next(&mut self) -> u64 {
        self.rng.next_u64()
    }

    pub fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }

    /// A slice's length in back-edges and calls: about log-uniform in 1..=512,
    /// so two slices in five end within 4 and the window between a read and a
    /// write is often hit.
    pub fn slice(&mut self) -> u32 {
        let r = self.next();
        let bits = (r % 10) as u32;
        1 + ((r >> 8) % (1u64 << bits)) as u32
    }

    /// The virtual clock: the program's start, plus the instructions run, plus
    /// the waits skipped.
    pub fn now(&self, start: Instant, ticks: u64) -> Instant {
        let ran = ticks.saturating_sub(self.seen.replace(ticks));
        let ns = self.clock.ns.get().saturating_add(ran.saturating_mul(TICK_NS));
        self.clock.ns.set(ns);
        start + Duration::from_nanos(ns)
    }

    /// Moves the virtual clock on by `d` (a wait skipped).
    pub fn jump(&mut self, d: Duration) {
        let ns = self.clock.ns.get().saturating_add(d.as_nanos() as u64);
        self.clock.ns.set(ns);
    }

    /// Randomises the order of things that happened together.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Explore;

    #[test]
    fn a_seed_gives_one_sequence_and_neighbours_differ() {
        let run = |seed| {
            let mut x = Explore::new(seed);
            (0..32).map(|_| x.next()).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert_ne!(run(0), run(1));
    }

    #[test]
    fn slices_are_short_often_and_long_sometimes() {
        let mut x = Explore::new(1);
        let slices: Vec<u32> = (0..10_000).map(|_| x.slice()).collect();
        assert!(slices.iter().all(|&s| (1..=512).contains(&s)));
        let short = slices.iter().filter(|&&s| s <= 4).count();
        assert!((3_500..4_500).contains(&short), "{short} of 10000 within 4");
        assert!(slices.iter().any(|&s| s > 256));
    }

    #[test]
    fn shuffles_are_permutations() {
        let mut x = Explore::new(3);
        let mut v: Vec<u32> = (0..50).collect();
        x.shuffle(&mut v);
        assert_ne!(v, (0..50).collect::<Vec<_>>());
        v.sort();
        assert_eq!(v, (0..50).collect::<Vec<_>>());
    }
}
