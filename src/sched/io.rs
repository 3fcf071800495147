//! Blocking file and stdin I/O on a small thread pool: the calling fiber parks,
//! a worker thread does the work, and the completion is posted back to the
//! scheduler, so only that fiber waits.

use super::{Resume, Waiter};
use crate::vm::{ErrorKind, Value, Vm};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A blocking operation for a worker thread.
#[derive(Debug)]
pub enum IoJob {
    ReadFile(String),
    /// A file's lines, without their line endings.
    Lines(String),
    WriteFile(String, String),
    Exists(String),
    ReadLine,
}

/// What a worker produced.
enum IoOut {
    Nil,
    Text(String),
    Lines(Vec<String>),
    Bool(bool),
}

/// A worker's result, or an error message.
type IoResult = Result<IoOut, String>;

const WORKERS: usize = 2;

pub struct IoPool {
    jobs: Sender<(Waiter, IoJob)>,
    done: Receiver<(Waiter, IoResult)>,
    /// Jobs submitted and not yet completed.
    pub pending: usize,
}

impl IoPool {
    fn start() -> IoPool {
        let (jobs, job_rx) = channel::<(Waiter, IoJob)>();
        let (done_tx, done) = channel();
        let job_rx = Arc::new(Mutex::new(job_rx));
        for _ in 0..WORKERS {
            let rx = job_rx.clone();
            let tx = done_tx.clone();
            std::thread::spawn(move || loop {
                let next = rx.lock().map(|r| r.recv());
                let Ok(Ok((w, job))) = next else { return };
                if tx.send((w, perform(job))).is_err() {
                    return;
                }
            });
        }
        IoPool { jobs, done, pending: 0 }
    }
}

fn perform(job: IoJob) -> IoResult {
    match job {
        IoJob::ReadFile(p) => read(&p).map(IoOut::Text),
        IoJob::Lines(p) => read(&p).map(|text| IoOut::Lines(text.lines().map(str::to_string).collect())),
        IoJob::WriteFile(p, data) => {
            std::fs::write(&p, data).map(|_| IoOut::Nil).map_err(|e| format!("cannot write {p}: {e}"))
        }
        IoJob::Exists(p) => Ok(IoOut::Bool(std::path::Path::new(&p).exists())),
        IoJob::ReadLine => {
            let mut line = String::new();
            match std::io::stdin().read_line(&mut line) {
                Ok(0) => Ok(IoOut::Nil),
                Ok(_) => {
                    if line.ends_with('\n') {
                        line.pop();
                        if line.ends_with('\r') {
                            line.pop();
                        }
                    }
                    Ok(IoOut::Text(line))
                }
                Err(e) => Err(format!("cannot read stdin: {e}")),
            }
        }
    }
}

fn read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
}

/// Hands a job to the pool (started on first use).
pub fn submit(vm: &mut Vm, w: Waiter, job: IoJob) {
    let pool = vm.sched.io.get_or_insert_with(IoPool::start);
    pool.pending += 1;
    let _ = pool.jobs.send((w, job));
}

pub fn pending(vm: &Vm) -> bool {
    vm.sched.io.as_ref().is_some_and(|p| p.pending > 0)
}

/// Delivers finished jobs; with `wait`, blocks up to that long for the first one.
pub fn poll(vm: &mut Vm, wait: Option<Duration>) {
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
    pool.pending -= done.len();
    for (w, r) in done {
        let resume = match r {
            Ok(IoOut::Text(s)) => Resume::Value(vm.heap.string(s)),
            Ok(IoOut::Lines(ls)) => {
                let items = ls.into_iter().map(|l| vm.heap.string(l)).collect();
                Resume::Value(vm.heap.list(items))
            }
            Ok(IoOut::Bool(b)) => Resume::Value(Value::Bool(b)),
            Ok(IoOut::Nil) => Resume::Value(Value::Nil),
            Err(msg) => Resume::Throw(super::new_error_value(vm, &msg, ErrorKind::Io)),
        };
        vm.sched.wake(w, resume);
    }
}
