//! Schedule exploration (`--explore N`, `--explore-seed S`; docs/testing.md).
//! One generator, seeded by the schedule's number, decides everything the
//! language leaves open: where a fiber is preempted (a random number of
//! back-edges and calls, often just one), which ready `select` case runs, the
//! order of timers due at the same instant, whether a woken fiber runs before
//! the queued ones or behind them, and the order of I/O completions delivered
//! together. Time is virtual, so a run is a function of its seed: the clock
//! advances with instructions run and jumps to the next timer when every fiber
//! waits. The program's `random()` keeps its own generator (`--seed`).
//!
//! The driver asks for these decisions through `policy.rs`; off (the
//! default), it asks only where it already does rare work: a slice's end, a
//! `select` with a ready case, adding a timer, going idle.

use super::io::{self, outside_pending};
use crate::vm::{Rng, Vm};
use std::time::{Duration, Instant};

/// Virtual time one back-edge or call takes.
const TICK_NS: u64 = 100;
/// How long to wait for pool work in flight before giving up on delivering it
/// at a fixed point (a read of a terminal may never finish).
const PATIENCE: Duration = Duration::from_millis(200);

pub(super) struct Explore {
    rng: Rng,
    /// Virtual time skipped while every fiber waited on a timer.
    jumped: Duration,
    /// False once pool work outlasted `PATIENCE`: until the pool is empty again,
    /// completions are delivered as they come (replay is then best-effort).
    pub(super) patient: bool,
}

impl Explore {
    pub fn new(seed: u64) -> Explore {
        // Neighbouring seeds must give unrelated schedules: mix first (splitmix64).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Explore { rng: Rng::new(z ^ (z >> 31)), jumped: Duration::ZERO, patient: true }
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
        start + self.jumped + Duration::from_nanos(ticks.saturating_mul(TICK_NS))
    }

    /// Randomises the order of things that happened together.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

/// Exploring, pool work takes no virtual time: waits until every job in flight
/// is done (with patience), then delivers them all in a random order.
pub(super) fn deliver_io(vm: &mut Vm) {
    let in_flight = io::in_flight(vm);
    let x = vm.sched.policy.explore_mut().expect("exploring");
    if !in_flight {
        x.patient = true;
        return;
    }
    let patience = x.patient.then_some(PATIENCE);
    let mut done = io::take_done(vm, patience);
    if patience.is_some() && io::in_flight_after(vm, done.len()) {
        vm.sched.policy.explore_mut().expect("exploring").patient = false;
    }
    vm.sched.policy.order(&mut done);
    io::complete(vm, done);
}

/// Exploring, nothing is ready: waits in real time only for what runs in real
/// time (descriptors, slow pool work), at most the next timer's virtual wait,
/// then moves the virtual clock to the next timer.
pub(super) fn idle_wait(vm: &mut Vm, next_timer: Option<Instant>) {
    deliver_io(vm);
    if vm.sched.ready.is_empty() && outside_pending(vm) {
        // (Signals watched for Ctrl-C are only looked at: time jumps past them.)
        let wait = next_timer.map(|t| t.saturating_duration_since(vm.sched.now()));
        let began = Instant::now();
        super::driver::poll_outside(vm, wait);
        let waited = began.elapsed().min(wait.unwrap_or(Duration::MAX));
        vm.sched.policy.explore_mut().expect("exploring").jumped += waited;
    }
    if vm.sched.ready.is_empty() {
        if let Some(t) = next_timer {
            let skip = t.saturating_duration_since(vm.sched.now());
            vm.sched.policy.explore_mut().expect("exploring").jumped += skip;
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
