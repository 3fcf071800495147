//! The run queue. Fibers woken by another fiber, a timer or I/O run first, in
//! the order they were woken; new fibers (in start order) and preempted ones wait
//! in a FIFO behind them. Running the woken first is Go's "runnext" made FIFO: a
//! fiber handed a value usually has work to pass on at once, and running it then
//! keeps a tree of fibers (benches/conc/skynet.csp) from parking most of its
//! leaves behind a million new ones. A run of woken fibers shares one time slice;
//! past it they go to the back, so fibers that keep waking each other cannot
//! starve the rest.

use crate::vm::Handle;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What the run queue hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Runnable {
    /// A fiber that exists (new, preempted or woken).
    Fiber(u32),
    /// A task started by `go` whose fiber is built when it first runs.
    Task(Handle),
    /// The oldest record of a dropped `go` (see unstarted.rs).
    Record,
}

/// Queue entries are 4 bytes (a program may queue a million): a fiber id, a
/// task handle tagged with `TASK`, or `RECORD`.
const TASK: u32 = 1 << 31;
const RECORD: u32 = u32::MAX;

fn encode(r: Runnable) -> u32 {
    match r {
        Runnable::Fiber(id) => id,
        Runnable::Task(h) => {
            debug_assert!(h.0 < TASK, "heap handle too large to tag");
            h.0 | TASK
        }
        Runnable::Record => RECORD,
    }
}

fn decode(e: u32) -> Runnable {
    match e {
        RECORD => Runnable::Record,
        e if e & TASK != 0 => Runnable::Task(Handle(e & !TASK)),
        id => Runnable::Fiber(id),
    }
}

#[derive(Default)]
pub(super) struct RunQueue {
    woken: VecDeque<u32>,
    fifo: VecDeque<u32>,
    /// The length of each run of `RECORD` entries in `fifo`, in order: a run
    /// is one entry, so a million queued records cost the queue nothing.
    runs: VecDeque<u32>,
    /// Entries taken from `fifo` so far: when it stalls, only woken fibers run.
    fifo_turns: u64,
    /// `fifo_turns` when a stall was first seen, and when.
    stall: Option<(u64, Instant)>,
}

impl RunQueue {
    /// A new fiber (or one not built yet) or a preempted one: to the back.
    pub fn push(&mut self, r: Runnable) {
        if r == Runnable::Record {
            if self.fifo.back() == Some(&RECORD) {
                match self.runs.back_mut() {
                    Some(n) if *n < u32::MAX => return *n += 1,
                    _ => {}
                }
            }
            self.runs.push_back(1);
        }
        self.fifo.push_back(encode(r));
    }

    /// A fiber woken from a wait queue, a timer or I/O.
    pub fn push_woken(&mut self, fiber: u32) {
        self.woken.push_back(fiber);
    }

    pub fn pop(&mut self) -> Option<Runnable> {
        if let Some(f) = self.woken.pop_front() {
            return Some(Runnable::Fiber(f));
        }
        let e = *self.fifo.front()?;
        self.fifo_turns += 1;
        if e == RECORD {
            let n = self.runs.front_mut().expect("a run of records");
            *n -= 1;
            if *n > 0 {
                return Some(Runnable::Record);
            }
            self.runs.pop_front();
        }
        self.fifo.pop_front();
        Some(decode(e))
    }

    /// Bytes its tables hold (for `--max-memory`).
    pub fn bytes(&self) -> usize {
        (self.woken.capacity() + self.fifo.capacity() + self.runs.capacity()) * 4
    }

    /// Bytes a push of `r` allocates: a table doubling when it is full.
    pub fn growth(&self, r: Runnable) -> usize {
        let full = |q: &VecDeque<u32>| if q.len() == q.capacity() { q.capacity().max(4) * 4 } else { 0 };
        match r {
            Runnable::Record if self.fifo.back() == Some(&RECORD) => 0,
            Runnable::Record => full(&self.fifo) + full(&self.runs),
            _ => full(&self.fifo),
        }
    }

    /// How many woken fibers wait (a mark for `demote_woken`).
    #[inline]
    pub fn woken_len(&self) -> usize {
        self.woken.len()
    }

    /// Schedule exploration: each woken fiber from the `from`th on stays
    /// among the woken or, when `demote()` says so, goes to the back.
    pub fn demote_woken(&mut self, from: usize, mut demote: impl FnMut() -> bool) {
        let from = from.min(self.woken.len());
        let mut kept = self.woken.split_off(from);
        kept.retain(|&f| {
            let back = demote();
            if back {
                self.fifo.push_back(f);
            }
            !back
        });
        self.woken.append(&mut kept);
    }

    pub fn is_empty(&self) -> bool {
        self.woken.is_empty() && self.fifo.is_empty()
    }

    /// Tasks queued whose fibers are not built yet.
    pub fn pending_tasks(&self) -> impl Iterator<Item = Handle> + '_ {
        self.fifo.iter().filter_map(|&e| match decode(e) {
            Runnable::Task(h) => Some(h),
            _ => None,
        })
    }

    /// Called whenever the scheduler reads the clock: once woken fibers alone
    /// have run for a whole `slice` while others waited, they go to the back.
    pub fn share_slice(&mut self, slice: Duration) {
        if self.woken.is_empty() || self.fifo.is_empty() {
            self.stall = None;
            return;
        }
        match self.stall {
            Some((turns, since)) if turns == self.fifo_turns => {
                if since.elapsed() >= slice {
                    self.fifo.extend(self.woken.drain(..));
                    self.stall = None;
                }
            }
            _ => self.stall = Some((self.fifo_turns, Instant::now())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn woken_run_first_in_wake_order() {
        let mut q = RunQueue::default();
        q.push(Runnable::Fiber(1));
        q.push(Runnable::Task(Handle(9)));
        q.push(Runnable::Record);
        q.push(Runnable::Record);
        q.push_woken(7);
        q.push_woken(5);
        let order = std::iter::from_fn(|| q.pop()).collect::<Vec<_>>();
        use Runnable::*;
        assert_eq!(order, [Fiber(7), Fiber(5), Fiber(1), Task(Handle(9)), Record, Record]);
    }

    /// A run of records is one entry: a fiber bomb's queue stays small.
    #[test]
    fn runs_of_records_take_one_entry() {
        let mut q = RunQueue::default();
        q.push(Runnable::Fiber(1));
        for _ in 0..100_000 {
            q.push(Runnable::Record);
        }
        q.push(Runnable::Fiber(2));
        q.push(Runnable::Record);
        assert_eq!(q.fifo.len(), 4);
        assert_eq!(q.growth(Runnable::Record), 0);
        let order = std::iter::from_fn(|| q.pop()).collect::<Vec<_>>();
        assert_eq!(order.len(), 100_003);
        assert_eq!(order[0], Runnable::Fiber(1));
        assert!(order[1..=100_000].iter().all(|&r| r == Runnable::Record));
        assert_eq!(order[100_001..], [Runnable::Fiber(2), Runnable::Record]);
        assert!(q.is_empty() && q.runs.is_empty());
    }

    #[test]
    fn exploring_moves_some_woken_behind_the_queued() {
        let mut q = RunQueue::default();
        q.push(Runnable::Fiber(1));
        q.push_woken(7);
        q.push_woken(5);
        q.push_woken(3);
        // 7 was placed before; of 5 and 3, 5 is sent back.
        let mut draws = [true, false].into_iter();
        q.demote_woken(1, || draws.next().unwrap());
        let order = std::iter::from_fn(|| q.pop()).collect::<Vec<_>>();
        use Runnable::*;
        assert_eq!(order, [Fiber(7), Fiber(3), Fiber(1), Fiber(5)]);
    }

    #[test]
    fn woken_go_to_the_back_after_a_slice() {
        let mut q = RunQueue::default();
        q.push(Runnable::Fiber(1));
        q.push_woken(7);
        q.share_slice(Duration::ZERO); // the stall is first seen
        q.share_slice(Duration::ZERO); // and has lasted a slice
        let order = std::iter::from_fn(|| q.pop()).collect::<Vec<_>>();
        assert_eq!(order, [Runnable::Fiber(1), Runnable::Fiber(7)]);
    }
}
