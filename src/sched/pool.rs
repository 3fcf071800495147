//! The blocking-I/O thread pool and the `Reply` through which finished work
//! is posted back (see io.rs): threads and channels only, no fibers, so a
//! builtin can name a `Reply` without reaching the scheduler.

use super::Waiter;
use crate::vm::builtin::{IoDone, IoWork};
use crate::vm::heap::Heap;
use crate::vm::kind::ErrorKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

const WORKERS: usize = 2;

/// A job: who waits, the work, and whether the builtin runs again when it is
/// done (it buffered what the work produced) instead of taking its result.
type Job = (Waiter, IoWork, bool);

pub(super) struct IoPool {
    jobs: Sender<Job>,
    /// Until the first job: its threads start then (a `Reply` alone, as a
    /// worker isolate's driver waits with, needs none).
    unstarted: Option<Receiver<Job>>,
    pub(super) done: Receiver<Done>,
    /// The waiters of jobs submitted and not yet delivered. A job whose fiber
    /// stopped waiting (cancelled) still runs, but can wake nobody: it must not
    /// keep the program alive nor hide a deadlock.
    pub(super) waiting: Vec<Waiter>,
    /// What to do when the fiber of a handed-off job is cancelled while it
    /// waits (interrupt the work); dropped when the job is delivered.
    pub(super) cancels: Vec<(Waiter, Box<dyn FnOnce()>)>,
    /// Handed-off jobs that said their answer waits on something outside
    /// this process's reach (`Reply::stall`): they do not keep it alive.
    pub(super) stalls: Vec<(Waiter, Arc<Stall>)>,
    /// Handed-off jobs that wait on another isolate.
    pub(super) isolates: Vec<Waiter>,
    /// For `Reply`s: where finished work is posted, and what wakes the reactor.
    done_tx: Sender<Done>,
    waker: Arc<mio::Waker>,
}

impl IoPool {
    pub(super) fn start(waker: Arc<mio::Waker>) -> IoPool {
        let (jobs, job_rx) = channel::<Job>();
        let (done_tx, done) = channel();
        let unstarted = Some(job_rx);
        IoPool {
            jobs,
            unstarted,
            done,
            waiting: Vec::new(),
            cancels: Vec::new(),
            stalls: Vec::new(),
            isolates: Vec::new(),
            done_tx,
            waker,
        }
    }

    /// Runs `job` on the pool's threads (started now if they are not yet).
    pub(super) fn run(&mut self, job: Job) {
        if let Some(job_rx) = self.unstarted.take() {
            let job_rx = Arc::new(Mutex::new(job_rx));
            for _ in 0..WORKERS {
                let rx = job_rx.clone();
                let tx = self.done_tx.clone();
                let waker = self.waker.clone();
                std::thread::spawn(move || loop {
                    let next = rx.lock().map(|r| r.recv());
                    let Ok(Ok((w, work, retry))) = next else { return };
                    if tx.send((w, work(), retry)).is_err() {
                        return;
                    }
                    let _ = waker.wake();
                });
            }
        }
        let _ = self.jobs.send(job);
    }

    /// Where work for fiber `w` handed to another thread posts its result.
    pub(super) fn reply(&mut self, w: Waiter) -> Reply {
        let stall = Arc::new(Stall::default());
        self.stalls.push((w, stall.clone()));
        Reply { to: Some((w, self.done_tx.clone(), self.waker.clone())), stall }
    }

    /// Has the job of `w` said it is stalled?
    pub(super) fn stalled(&self, w: Waiter) -> bool {
        self.stalls.iter().any(|(x, s)| *x == w && s.on.load(Ordering::Acquire))
    }

    /// Why the job a fiber parked at generation `gen` waits on is stalled, if it is.
    pub(super) fn stall_reason(&self, gen: u32) -> Option<String> {
        let (_, s) = self.stalls.iter().find(|(x, s)| x.gen == gen && s.on.load(Ordering::Acquire))?;
        Some(s.why.lock().map(|w| w.clone()).unwrap_or_default())
    }
}

/// A hand-off's stall (`Reply::stall`): whether, and why, for a deadlock's report.
#[derive(Default)]
pub(super) struct Stall {
    on: AtomicBool,
    why: Mutex<String>,
}

/// Where a thread of a builtin's own posts the result of work handed to it
/// (`Blocking::Handoff`): the waiting fiber is woken as by the pool's work. A
/// reply dropped unsent (its thread stopped, or skipped work whose fiber was
/// cancelled) posts an error, so no job stays in flight for ever.
pub struct Reply {
    to: Option<(Waiter, Sender<Done>, Arc<mio::Waker>)>,
    stall: Arc<Stall>,
}

impl Reply {
    /// Posts the result (from any thread).
    pub fn send(mut self, done: IoDone) {
        if let Some((w, tx, waker)) = self.to.take() {
            if tx.send((w, done, false)).is_ok() {
                let _ = waker.wake();
            }
        }
    }

    /// Says whether the answer now waits only on something that cannot come
    /// unless this process sends it first (another isolate's fibers all
    /// blocked): a stalled job does not keep the program alive nor hide a
    /// deadlock. Setting it wakes the scheduler, to decide again.
    /// `why` says what it waits on, for a deadlock's report.
    pub fn stall(&self, why: Option<&str>) {
        let on = why.is_some();
        if let (Some(why), Ok(mut w)) = (why, self.stall.why.lock()) {
            why.clone_into(&mut w);
        }
        if self.stall.on.swap(on, Ordering::AcqRel) != on && on {
            if let Some((_, _, waker)) = &self.to {
                let _ = waker.wake();
            }
        }
    }

    /// Posts an error of this kind.
    pub fn fail(self, kind: ErrorKind, msg: String) {
        self.send(Box::new(move |_: &mut Heap| Err((kind, msg))));
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if self.to.is_some() {
            let r = Reply { to: self.to.take(), stall: self.stall.clone() };
            r.fail(ErrorKind::Internal, "the work was dropped unfinished".into());
        }
    }
}

/// A finished job: its waiter, the work's output, whether the builtin runs again.
pub(super) type Done = (Waiter, IoDone, bool);
