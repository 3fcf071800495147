//! The run queue. Fibers woken by another fiber, a timer or I/O run first, in
//! the order they were woken; new fibers (in start order) and preempted ones wait
//! in a FIFO behind them. Running the woken first is Go's "runnext" made FIFO: a
//! fiber handed a value usually has work to pass on at once, and running it then
//! keeps a tree of fibers (benches/conc/skynet.csp) from parking most of its
//! leaves behind a million new ones. A run of woken fibers shares one time slice;
//! past it they go to the back, so fibers that keep waking each other cannot
//! starve the rest.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct RunQueue {
    woken: VecDeque<u32>,
    fifo: VecDeque<u32>,
    /// Entries taken from `fifo` so far: when it stalls, only woken fibers run.
    fifo_turns: u64,
    /// `fifo_turns` when a stall was first seen, and when.
    stall: Option<(u64, Instant)>,
}

impl RunQueue {
    /// A new fiber (or pending task) or a preempted one: to the back.
    pub fn push(&mut self, entry: u32) {
        self.fifo.push_back(entry);
    }

    /// A fiber woken from a wait queue, a timer or I/O.
    pub fn push_woken(&mut self, fiber: u32) {
        self.woken.push_back(fiber);
    }

    pub fn pop(&mut self) -> Option<u32> {
        if let Some(f) = self.woken.pop_front() {
            return Some(f);
        }
        let e = self.fifo.pop_front();
        self.fifo_turns += e.is_some() as u64;
        e
    }

    pub fn is_empty(&self) -> bool {
        self.woken.is_empty() && self.fifo.is_empty()
    }

    /// Every queued entry (the woken first).
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.woken.iter().chain(self.fifo.iter()).copied()
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
        q.push(1);
        q.push(2);
        q.push_woken(7);
        q.push_woken(5);
        assert_eq!(std::iter::from_fn(|| q.pop()).collect::<Vec<_>>(), [7, 5, 1, 2]);
    }

    #[test]
    fn woken_go_to_the_back_after_a_slice() {
        let mut q = RunQueue::default();
        q.push(1);
        q.push_woken(7);
        q.share_slice(Duration::ZERO); // the stall is first seen
        q.share_slice(Duration::ZERO); // and has lasted a slice
        assert_eq!(std::iter::from_fn(|| q.pop()).collect::<Vec<_>>(), [1, 7]);
    }
}
