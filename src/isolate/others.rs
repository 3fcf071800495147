//! The worker pool as the main isolate's scheduler sees it
//! (`sched::others`): whether a worker can still make progress, and the
//! workers run on the main isolate's thread, a slice at a time between the
//! main isolate's slices and while it has nothing to run: the one worker of
//! `--isolates 1`, or every worker when schedules are explored.

use super::pool::Pool;
use super::worker::Worker;
use crate::sched::others::{Others, Stepped};
use crate::sched::session;
use crate::vm::rng::Rng;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Workers on threads of their own.
pub struct Away(pub Arc<Pool>);

impl Others for Away {
    fn active(&self) -> bool {
        self.0.active()
    }
    fn dump(&mut self) {
        self.0.dump();
    }
}

/// The workers on this thread: the one of `--isolates 1`, or, exploring
/// schedules, every worker (isolates interleaved as the schedule decides).
pub struct Here {
    workers: Vec<Stepping>,
    /// Exploring: the order the workers take their turns in.
    order: Option<Rng>,
}

/// A worker on this thread.
struct Stepping {
    worker: Worker,
    /// It was stuck after its last step.
    stuck: bool,
    /// Its driver has stopped (the program's end).
    stopped: bool,
}

impl Here {
    /// `seed`: exploring, the seed of the order of their turns.
    pub fn new(workers: Vec<Worker>, seed: Option<u64>) -> Here {
        let workers = workers.into_iter().map(|worker| Stepping { worker, stuck: false, stopped: false }).collect();
        Here { workers, order: seed.map(Rng::new) }
    }

    /// The workers in the order of this turn.
    fn turn_order(&mut self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.workers.len()).collect();
        if let Some(rng) = &mut self.order {
            for i in (1..order.len()).rev() {
                order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
        }
        order
    }
}

impl Others for Here {
    fn active(&self) -> bool {
        self.workers.iter().any(|w| !w.stuck && !w.stopped)
    }

    fn here(&self) -> bool {
        self.workers.iter().any(|w| !w.stopped)
    }

    fn dump(&mut self) {
        for w in self.workers.iter().filter(|w| !w.stopped) {
            eprint!("{}", super::worker::fiber_dump(&w.worker.vm));
        }
    }

    /// Each worker takes a turn; how they stand together: busy if one is,
    /// else waiting for the earliest timer if one waits, else stuck.
    fn step(&mut self, allowance: Duration) -> Stepped {
        let mut all = Stepped::Stuck;
        for i in self.turn_order() {
            match (self.workers[i].step(allowance), &all) {
                (s @ (Stepped::Exit(_) | Stepped::Fatal(..)), _) => return s,
                (_, Stepped::Busy) | (Stepped::Stuck, _) => {}
                (Stepped::Busy, _) => all = Stepped::Busy,
                (Stepped::Waits(a), Stepped::Waits(b)) => all = Stepped::Waits(earlier(a, *b)),
                (s, _) => all = s,
            }
        }
        all
    }

    fn collect(&mut self) {
        for w in self.workers.iter_mut().filter(|w| !w.stopped) {
            session::collect_for_others(&mut w.worker.vm);
        }
    }

    /// Runs the workers until their drivers stop (they were sent `End`),
    /// then ends their fibers, as a worker's thread does.
    fn end(&mut self, grace: Duration) {
        for w in &mut self.workers {
            w.end(grace);
        }
    }
}

/// The earlier of two deadlines (None: no timer, I/O only).
fn earlier(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl Stepping {
    fn step(&mut self, allowance: Duration) -> Stepped {
        if self.stopped {
            return Stepped::Stuck;
        }
        session::set_idle(&self.worker.vm, false);
        let Some(stepped) = self.worker.step(allowance) else {
            self.stopped = true;
            return Stepped::Stuck;
        };
        self.stuck = false;
        // Its turns are too short for its scheduler's own flushing.
        self.worker.vm.out.flush();
        if let Stepped::Stuck = stepped {
            // As a worker's thread does before it sleeps: from now on a
            // completion on a shared channel pokes its inbox (un-stalling its
            // jobs), unless one came meanwhile.
            if !session::set_idle(&self.worker.vm, true) || !self.worker.inbox.mark_stuck(&self.worker.stuck_report()) {
                return Stepped::Busy;
            }
            self.stuck = true;
        }
        stepped
    }

    fn end(&mut self, grace: Duration) {
        let until = Instant::now() + grace + Duration::from_millis(100);
        while !self.stopped && Instant::now() < until {
            match self.step(Duration::from_millis(20)) {
                Stepped::Waits(next) => session::wait(&mut self.worker.vm, next),
                Stepped::Exit(code) => self.worker.exit(code),
                Stepped::Fatal(text, code) => {
                    eprint!("{text}");
                    self.worker.exit(code);
                }
                _ => {}
            }
        }
        if self.stopped {
            self.worker.end_fibers();
        }
    }
}
