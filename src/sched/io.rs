//! Blocking work (files, stdin) on a small thread pool: the calling fiber parks,
//! a worker thread does the work, and the completion is posted back to the
//! scheduler, so only that fiber waits. What the work is belongs to the builtin
//! that asked for it (`vm::builtin::IoWork`); the pool only runs it.

use super::Waiter;
use crate::vm::{IoDone, IoWork, Resume, Vm};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const WORKERS: usize = 2;

pub(super) struct IoPool {
    jobs: Sender<(Waiter, IoWork)>,
    done: Receiver<(Waiter, IoDone)>,
    /// The waiters of jobs submitted and not yet delivered. A job whose fiber
    /// stopped waiting (cancelled) still runs, but can wake nobody: it must not
    /// keep the program alive nor hide a deadlock.
    waiting: Vec<Waiter>,
}

impl IoPool {
    fn start() -> IoPool {
        let (jobs, job_rx) = channel::<(Waiter, IoWork)>();
        let (done_tx, done) = channel();
        let job_rx = Arc::new(Mutex::new(job_rx));
        for _ in 0..WORKERS {
            let rx = job_rx.clone();
            let tx = done_tx.clone();
            std::thread::spawn(move || loop {
                let next = rx.lock().map(|r| r.recv());
                let Ok(Ok((w, work))) = next else { return };
                if tx.send((w, work())).is_err() {
                    return;
                }
            });
        }
        IoPool { jobs, done, waiting: Vec::new() }
    }
}

/// Hands work to the pool (started on first use).
pub(super) fn submit(vm: &mut Vm, w: Waiter, work: IoWork) {
    let pool = vm.sched.io.get_or_insert_with(IoPool::start);
    pool.waiting.push(w);
    let _ = pool.jobs.send((w, work));
}

/// Is a job in flight whose completion can still wake its fiber?
pub(super) fn pending(vm: &Vm) -> bool {
    vm.sched.io.as_ref().is_some_and(|p| p.waiting.iter().any(|&w| vm.sched.is_parked(w)))
}

/// Delivers finished work; with `wait`, blocks up to that long for the first one.
pub(super) fn poll(vm: &mut Vm, wait: Option<Duration>) {
    let Some(pool) = vm.sched.io.as_mut() else { return };
    let mut done = Vec::new();
    if let Some(d) = wait {
        if let Ok(x) = pool.done.recv_timeout(d) {
            done.push(x);
        }
    }
    while let Ok(x) = pool.done.try_recv() {
        done.push(x);
    }
    for (w, _) in &done {
        if let Some(i) = pool.waiting.iter().position(|x| x == w) {
            pool.waiting.swap_remove(i);
        }
    }
    for (w, finish) in done {
        let resume = match finish(&mut vm.heap) {
            Ok(v) => Resume::Value(v),
            Err((kind, msg)) => Resume::Throw(crate::vm::error::bare_error(vm, kind, &msg)),
        };
        vm.sched.wake(w, resume);
    }
}
