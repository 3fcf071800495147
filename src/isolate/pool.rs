//! The worker isolates every isolate of the process shares: one inbox per
//! worker thread, and one `Answer` per function sent to run there. Only
//! threads, locks and packets here; fibers are in worker.rs and the natives.

use super::clone::Packet;
use crate::vm::builtin::Reply;
use crate::vm::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Makes a worker isolate's VM (on the worker's own thread): the runtime's
/// options, as the main isolate got them.
pub type Factory = Arc<dyn Fn() -> crate::vm::Vm + Send + Sync>;

/// The pool: started on first use by whichever isolate uses it first.
pub struct Pool {
    pub inboxes: Vec<Arc<Inbox>>,
    /// How many workers run on threads of their own (the others are
    /// stepped on the main isolate's thread: `--isolates 1`).
    threads: usize,
    /// How many workers are stuck (only another isolate can wake them).
    stuck: Arc<AtomicUsize>,
    next_id: AtomicU64,
    /// How many workers have ended (at the program's end).
    ended: Mutex<usize>,
    all_ended: Condvar,
    /// `--trace`: the file each worker records into, as a process of its own.
    pub trace: Option<crate::sched::TraceShare>,
}

/// What a worker receives.
pub enum Msg {
    /// Run `call` (the function, then its arguments) and answer in `answer`.
    Job { id: u64, call: Box<Packet>, answer: Arc<Answer> },
    /// The job's task was cancelled where it was started.
    Cancel(u64),
    /// The program is ending: cancel every fiber, then stop.
    End,
    /// SIGQUIT: print every fiber on stderr.
    Dump,
}

/// A worker's inbox: messages, the worker's fiber waiting for them, and the
/// answers of the jobs it runs (which it marks stalled when it is stuck).
pub struct Inbox {
    state: Mutex<InboxState>,
    arrived: Condvar,
    /// Jobs sent and not answered: the pool sends a new one to the least loaded.
    load: AtomicUsize,
    /// The pool's count of stuck workers.
    stuck: Arc<AtomicUsize>,
}

#[derive(Default)]
pub(super) struct InboxState {
    pub msgs: Vec<Msg>,
    /// The worker's driver fiber, parked until a message comes.
    pub waiting: Option<Reply>,
    pub jobs: HashMap<u64, Arc<Answer>>,
    /// A shared channel completed one of the worker's fibers since it last
    /// looked: it is not stuck.
    pub poked: bool,
    /// The worker is stuck (counted in the pool's `stuck`).
    pub stuck: bool,
}

/// One job's outcome, handed from the worker's thread to the one that sent it.
#[derive(Default)]
pub struct Answer {
    state: Mutex<AnswerState>,
}

#[derive(Default)]
struct AnswerState {
    /// The result, or the error (both packed).
    outcome: Option<Result<Packet, Packet>>,
    /// The sender's fiber, parked until the outcome comes.
    waiting: Option<Reply>,
    /// The worker is stuck: the job waits on what only another isolate can
    /// do; what its fibers wait on.
    stalled: Option<String>,
    /// The outcome came (it may have been taken since).
    given: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic on another thread while it held the lock leaves data that is
    // still whole (every change is one assignment): carry on.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn wake(reply: Reply) {
    reply.send(Box::new(|_| Ok(Value::Nil)));
}

impl Pool {
    /// Starts `size` workers, each making its VM with `make`, on threads of
    /// their own (`threads`), or not: the caller steps them. With `trace`,
    /// each records into the file.
    pub fn start(size: usize, make: &Factory, threads: bool, trace: Option<crate::sched::TraceShare>) -> Arc<Pool> {
        let stuck = Arc::new(AtomicUsize::new(0));
        let inboxes = (0..size).map(|_| {
            let stuck = stuck.clone();
            Arc::new(Inbox { state: Default::default(), arrived: Condvar::new(), load: 0.into(), stuck })
        });
        let pool = Arc::new(Pool {
            inboxes: inboxes.collect(),
            threads: if threads { size } else { 0 },
            stuck,
            next_id: AtomicU64::new(1),
            ended: Mutex::new(0),
            all_ended: Condvar::new(),
            trace,
        });
        for i in 0..pool.threads {
            super::worker::spawn(pool.clone(), i, make.clone());
        }
        pool
    }

    /// Can a worker still make progress? Each worker that wakes another
    /// (a message, a shared channel) does so before it is stuck itself, so
    /// the count never passes through "all stuck" while one is not.
    pub fn active(&self) -> bool {
        self.stuck.load(Ordering::SeqCst) < self.inboxes.len()
    }

    pub fn size(&self) -> usize {
        self.inboxes.len()
    }

    /// Sends a job to the least loaded worker; its id and worker.
    pub fn submit(&self, call: Packet, answer: Arc<Answer>) -> (usize, u64) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let loads = self.inboxes.iter().map(|b| b.load.load(Ordering::Relaxed));
        let (w, _) = loads.enumerate().min_by_key(|&(_, l)| l).expect("a pool has workers");
        self.inboxes[w].load.fetch_add(1, Ordering::Relaxed);
        self.inboxes[w].post(Msg::Job { id, call: Box::new(call), answer });
        (w, id)
    }

    pub fn cancel(&self, worker: usize, id: u64) {
        self.inboxes[worker].post(Msg::Cancel(id));
    }

    /// The program ends in order: every worker cancels its fibers (those its
    /// modules started: the jobs are over) and stops; waits for them, for at
    /// most `grace` (their cleanup's time) and a little more.
    pub fn end(&self, grace: Duration) {
        for inbox in &self.inboxes {
            inbox.post(Msg::End);
        }
        let until = Instant::now() + grace + Duration::from_millis(100);
        let mut ended = lock(&self.ended);
        while *ended < self.threads {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            ended = self.all_ended.wait_timeout(ended, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// SIGQUIT: every worker lists its fibers as soon as it runs.
    pub fn dump(&self) {
        for inbox in &self.inboxes {
            inbox.post(Msg::Dump);
        }
    }

    /// A worker has ended.
    pub(super) fn worker_ended(&self) {
        *lock(&self.ended) += 1;
        self.all_ended.notify_all();
    }
}

impl Inbox {
    /// Delivers `msg` and wakes the worker. Its stuck jobs may move now.
    pub fn post(&self, msg: Msg) {
        let mut st = lock(&self.state);
        self.unstick(&mut st);
        if let Msg::Job { id, answer, .. } = &msg {
            st.jobs.insert(*id, answer.clone());
        }
        st.msgs.push(msg);
        if let Some(r) = st.waiting.take() {
            wake(r);
        }
        self.arrived.notify_one();
    }

    /// A shared channel completed one of the worker's fibers (from any
    /// thread): its stuck jobs may move now, and a sleeping worker wakes.
    pub fn poke(&self) {
        let mut st = lock(&self.state);
        self.unstick(&mut st);
        st.poked = true;
        self.arrived.notify_one();
    }

    /// The worker's driver waits for messages: `reply` is posted when there
    /// are some (at once if there are).
    pub fn wait_with(&self, reply: Reply) {
        // Waiting for a message alone never keeps the worker alive.
        reply.stall(Some("messages from other isolates"));
        let mut st = lock(&self.state);
        if st.msgs.is_empty() {
            st.waiting = Some(reply);
        } else {
            drop(st);
            wake(reply);
        }
    }

    /// The answer of job `id`, while it runs here.
    pub fn answer(&self, id: u64) -> Option<Arc<Answer>> {
        lock(&self.state).jobs.get(&id).cloned()
    }

    pub fn take(&self) -> Vec<Msg> {
        std::mem::take(&mut lock(&self.state).msgs)
    }

    /// The worker can move again: it is not stuck, nor are its jobs.
    fn unstick(&self, st: &mut InboxState) {
        for a in st.jobs.values() {
            a.stall(None);
        }
        if std::mem::take(&mut st.stuck) {
            self.stuck.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The worker is stuck, unless something came since it looked: marks
    /// its jobs stalled (so the isolates waiting on them can see a deadlock
    /// or the program's end) with `why` (its blocked fibers), and counts it
    /// in the pool. False if something came.
    pub(super) fn mark_stuck(&self, why: &str) -> bool {
        let mut st = lock(&self.state);
        self.mark(&mut st, why)
    }

    fn mark(&self, st: &mut InboxState, why: &str) -> bool {
        if !st.msgs.is_empty() || std::mem::take(&mut st.poked) {
            return false;
        }
        for a in st.jobs.values() {
            a.stall(Some(why));
        }
        if !std::mem::replace(&mut st.stuck, true) {
            self.stuck.fetch_add(1, Ordering::SeqCst);
        }
        true
    }

    /// The worker is stuck (`mark_stuck`): sleeps until a message comes.
    pub(super) fn sleep_stuck(&self, why: &str) {
        let mut st = lock(&self.state);
        if !self.mark(&mut st, why) {
            return;
        }
        while st.msgs.is_empty() && !st.poked {
            st = self.arrived.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.poked = false;
    }

    /// The job `id` answered (or ended unanswered): it leaves the load.
    /// False if it had already.
    pub fn finished(&self, id: u64) -> bool {
        let was = lock(&self.state).jobs.remove(&id).is_some();
        if was {
            self.load.fetch_sub(1, Ordering::Relaxed);
        }
        was
    }
}

impl Answer {
    /// The sender waits: `reply` is posted when the outcome is in (at once
    /// if it is).
    pub fn wait_with(&self, reply: Reply) {
        let mut st = lock(&self.state);
        if st.given {
            drop(st);
            wake(reply);
        } else {
            reply.stall(st.stalled.as_deref());
            st.waiting = Some(reply);
        }
    }

    /// Has the outcome come (taken or not)?
    pub fn is_in(&self) -> bool {
        lock(&self.state).given
    }

    /// The outcome, taken (once).
    pub fn take(&self) -> Option<Result<Packet, Packet>> {
        lock(&self.state).outcome.take()
    }

    /// The worker's outcome for the job (the first one given counts).
    pub fn give(&self, outcome: Result<Packet, Packet>) {
        let mut st = lock(&self.state);
        if st.given {
            return;
        }
        st.outcome = Some(outcome);
        st.given = true;
        if let Some(r) = st.waiting.take() {
            wake(r);
        }
    }

    fn stall(&self, why: Option<&str>) {
        let mut st = lock(&self.state);
        st.stalled = why.map(str::to_string);
        if let Some(r) = &st.waiting {
            r.stall(why);
        }
    }
}
