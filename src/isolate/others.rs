//! The worker pool as the main isolate's scheduler sees it
//! (`sched::others`): whether a worker can still make progress, and, with
//! `--isolates 1`, the one worker run on the main isolate's thread, a slice
//! at a time between the main isolate's slices and while it has nothing to
//! run.

use super::pool::Pool;
use super::worker::Worker;
use crate::sched::others::{Others, Stepped};
use crate::sched::session;
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

/// A worker on this thread.
pub struct Here {
    worker: Worker,
    /// It was stuck after its last step.
    stuck: bool,
    /// Its driver has stopped (the program's end).
    stopped: bool,
}

impl Here {
    pub fn new(worker: Worker) -> Here {
        Here { worker, stuck: false, stopped: false }
    }
}

impl Others for Here {
    fn active(&self) -> bool {
        !self.stuck && !self.stopped
    }

    fn here(&self) -> bool {
        !self.stopped
    }

    fn dump(&mut self) {
        if !self.stopped {
            eprint!("{}", super::worker::fiber_dump(&self.worker.vm));
        }
    }

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

    fn collect(&mut self) {
        if !self.stopped {
            session::collect_for_others(&mut self.worker.vm);
        }
    }

    /// Runs the worker until its driver stops (it was sent `End`), then
    /// ends its fibers, as a worker's thread does.
    fn end(&mut self, grace: Duration) {
        let until = Instant::now() + grace + Duration::from_millis(100);
        while !self.stopped && Instant::now() < until {
            match self.step(Duration::from_millis(20)) {
                Stepped::Waits(next) => session::wait(&mut self.worker.vm, next),
                Stepped::Exit(code) => std::process::exit(code),
                Stepped::Fatal(text, code) => {
                    eprint!("{text}");
                    std::process::exit(code);
                }
                _ => {}
            }
        }
        if self.stopped {
            self.worker.end_fibers();
        }
    }
}
