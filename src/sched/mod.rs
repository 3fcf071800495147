//! The scheduler: fibers, the run queue (queue.rs), time slices, timers, parking and
//! waking, task completion, error propagation, cancellation and deadlock reports.

pub mod chan;
pub mod io;
mod lifecycle;
pub mod lock;
mod queue;
mod report;
pub mod select;
pub mod session;
mod spawn;
pub mod task;
pub mod timer;
mod unstarted;

use crate::vm::exec::{self, Halt};
use crate::vm::fiber::Uncaught;
use crate::vm::object::ErrorObj;
use crate::vm::{gc, ErrorKind, Fault, Fiber, Handle, Obj, Value, Vm};
use lifecycle::finish;
pub use lifecycle::{cancel_fiber, cancel_task, tree_done, unpark};
pub use report::trace_json;
use report::{deadlock_report, trace_slice, uncaught_at_top};
pub use spawn::spawn;
use spawn::{begin, new_task, start};
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::time::{Duration, Instant};
use task::{Task, TaskState};

/// Back-edges and calls between clock checks.
pub const SLICE_BUDGET: u32 = 1024;

/// A parked fiber as a wait queue holds it: the park generation makes stale
/// entries (the fiber was woken another way, or cancelled) recognisable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    pub fiber: u32,
    pub gen: u32,
    /// For a `select`, the index of the case this entry belongs to.
    pub case: Option<u16>,
    /// A receive that wants `(value, ok)`.
    pub two: bool,
}

/// What a woken fiber receives.
#[derive(Debug)]
pub enum Resume {
    /// Written to the blocked instruction's destination register.
    Value(Value),
    /// Written to the destination and the next register (`let v, ok = <-ch`).
    Pair(Value, bool),
    /// Case index, value and ok flag of a `select`.
    Select(u32, Value, bool),
    /// Thrown where the fiber was blocked.
    Throw(Value),
    /// Run the blocked instruction again (its pc was left on it).
    Retry,
}

impl Resume {
    /// Whether this resume writes into the fiber's slot.
    pub fn writes(&self) -> bool {
        !matches!(self, Resume::Throw(_) | Resume::Retry)
    }
}

/// What a parked fiber waits for (deadlock reports and cancellation).
#[derive(Debug, Clone)]
pub enum Wait {
    Recv(Handle),
    Send(Handle),
    Select(Vec<Handle>),
    Lock(Handle),
    Task(Handle),
    Group(Handle),
    Scope,
    Sleep,
    Io,
}

impl Wait {
    fn describe(&self) -> &'static str {
        match self {
            Wait::Recv(_) => "receive from channel",
            Wait::Send(_) => "send to channel",
            Wait::Select(_) => "select",
            Wait::Lock(_) => "lock",
            Wait::Task(_) => "wait on task",
            Wait::Group(_) => "wait on waitgroup",
            Wait::Scope => "end of wait block",
            Wait::Sleep => "sleep",
            Wait::Io => "I/O",
        }
    }
}

/// A `wait { }` block in progress.
#[derive(Default)]
pub struct Scope {
    pub children: Vec<Handle>,
    /// Failures of its fibers, first first.
    pub errors: Vec<Value>,
    /// A fiber failed while the body was runnable: interrupt the body at its next
    /// suspension point inside the block.
    pub interrupt: bool,
}

/// Per-fiber scheduler state.
#[derive(Default)]
pub struct FiberState {
    pub id: u32,
    /// Park generation; waiters carrying another one are stale.
    pub gen: u32,
    pub task: Option<Handle>,
    /// Some while parked.
    pub parked: Option<Wait>,
    pub resume: Option<Resume>,
    /// Stack slot that receives a resume value.
    pub ret_slot: u32,
    pub cancelled: bool,
    /// Boxed apart, so the million fibers a program may park stay small.
    pub extra: Option<Box<FiberExtra>>,
}

impl FiberState {
    pub fn extra_mut(&mut self) -> &mut FiberExtra {
        self.extra.get_or_insert_with(Default::default)
    }

    pub fn holds_locks(&self) -> bool {
        self.extra.as_ref().is_some_and(|x| !x.locks.is_empty())
    }

    pub fn in_coroutine(&self) -> bool {
        self.extra.as_ref().is_some_and(|x| !x.co_stack.is_empty())
    }

    pub fn scopes(&self) -> &[Scope] {
        self.extra.as_ref().map_or(&[], |x| &x.scopes)
    }
}

/// The per-fiber state few fibers use.
#[derive(Default)]
pub struct FiberExtra {
    /// An error propagated from a child, thrown at the next suspension point.
    pub pending: Option<Value>,
    /// Mutexes held, innermost last.
    pub locks: Vec<Handle>,
    pub scopes: Vec<Scope>,
    /// The channels of the `select` it is parked in.
    pub select_chans: Option<Vec<Handle>>,
    /// Parked in a `for v in ch` loop: where to jump when the channel closes.
    pub iter_exit: Option<u32>,
    /// Coroutines running in this fiber, innermost last (each holds its resumer's context).
    pub co_stack: Vec<Handle>,
}

/// A timer in the heap: what to do at `at`.
pub struct Timer {
    pub at: Instant,
    pub seq: u64,
    pub kind: timer::TimerKind,
}

impl PartialEq for Timer {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timer {
    /// Reversed, so the BinaryHeap pops the earliest deadline first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

pub struct Sched {
    /// Fibers by id; the running one is taken out while it runs.
    pub fibers: Vec<Option<Box<Fiber>>>,
    free: Vec<u32>,
    /// Fiber ids, pending tasks' handles tagged with `PENDING`, and `NEXT_RECORD`
    /// for the oldest unstarted record (see spawn.rs).
    pub ready: queue::RunQueue,
    /// Dropped `go`s' fibers not started yet (see unstarted.rs).
    pub unstarted: unstarted::Unstarted,
    pub current: u32,
    next_gen: u32,
    next_number: u32,
    pub timers: BinaryHeap<Timer>,
    pub timer_seq: u64,
    pub start: Instant,
    pub slice: Duration,
    /// Fibers started and not yet finished.
    pub live: usize,
    /// The main fiber's task.
    pub main_task: Option<Handle>,
    /// An error that reached the top after the main script ended.
    pub top_error: Option<Value>,
    /// A fiber waited on its own task.
    pub self_wait: Option<String>,
    /// The running fiber cancelled its own task.
    pub cancel_self: bool,
    /// Instructions (back-edges and calls) run so far: a cheap clock.
    pub ticks: u64,
    /// The blocking-I/O pool, once used.
    pub io: Option<io::IoPool>,
    /// `--trace FILE`: Chrome trace events of every slice, written at exit.
    pub trace: Option<Vec<String>>,
}

impl Default for Sched {
    fn default() -> Self {
        Sched {
            fibers: Vec::new(),
            free: Vec::new(),
            ready: queue::RunQueue::default(),
            unstarted: unstarted::Unstarted::default(),
            current: 0,
            next_gen: 1,
            next_number: 0,
            timers: BinaryHeap::new(),
            timer_seq: 0,
            start: Instant::now(),
            slice: Duration::from_micros(1000),
            live: 0,
            main_task: None,
            top_error: None,
            self_wait: None,
            cancel_self: false,
            ticks: 0,
            io: None,
            trace: None,
        }
    }
}

impl Sched {
    /// Is the fiber still parked as this waiter says?
    pub fn is_parked(&self, w: Waiter) -> bool {
        match self.fibers.get(w.fiber as usize) {
            Some(Some(f)) => f.sched.parked.is_some() && f.sched.gen == w.gen,
            _ => false,
        }
    }

    /// Parks the running fiber on `wait`; returns its waiter.
    pub fn park(&mut self, fiber: &mut Fiber, wait: Wait) -> Waiter {
        self.next_gen = self.next_gen.wrapping_add(1);
        fiber.sched.gen = self.next_gen;
        if let Wait::Select(chans) = &wait {
            fiber.sched.extra_mut().select_chans = Some(chans.clone());
        }
        fiber.sched.parked = Some(wait);
        Waiter { fiber: fiber.sched.id, gen: self.next_gen, case: None, two: false }
    }

    /// Makes a parked fiber ready with `resume`, if the waiter is current.
    pub fn wake(&mut self, w: Waiter, resume: Resume) -> bool {
        if !self.is_parked(w) {
            return false;
        }
        let f = self.fibers[w.fiber as usize].as_mut().unwrap();
        f.sched.parked = None;
        f.sched.resume = Some(resume);
        self.ready.push_woken(w.fiber);
        true
    }

    /// Milliseconds since the program started.
    pub fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }

    fn alloc_id(&mut self) -> u32 {
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.fibers.push(None);
                (self.fibers.len() - 1) as u32
            }
        }
    }
}

/// An error value of `kind` (without a trace).
pub fn new_error_value(vm: &mut Vm, message: &str, kind: ErrorKind) -> Value {
    let e = ErrorObj { message: Rc::from(message), trace: Vec::new(), others: Vec::new(), kind, origin: None };
    Value::Obj(vm.heap.alloc(Obj::Error(Box::new(e))))
}

pub fn cancelled_error(vm: &mut Vm) -> Value {
    new_error_value(vm, "cancelled", ErrorKind::Cancelled)
}

pub fn is_cancelled_error(vm: &Vm, v: Value) -> bool {
    matches!(v, Value::Obj(h) if matches!(vm.heap.get(h), Obj::Error(e) if e.kind == ErrorKind::Cancelled))
}

pub fn task(vm: &Vm, h: Handle) -> &Task {
    match vm.heap.get(h) {
        Obj::Task(t) => t,
        _ => unreachable!("not a task"),
    }
}

pub fn task_mut(vm: &mut Vm, h: Handle) -> &mut Task {
    match vm.heap.get_mut(h) {
        Obj::Task(t) => t,
        _ => unreachable!("not a task"),
    }
}

/// How the program ended.
pub enum Outcome {
    Ok,
    Error(Box<Uncaught>),
    /// The deadlock report (exit code 3).
    Deadlock(String),
}

/// Runs `proto` as the main fiber until the program ends: the main script is done
/// and no fiber can make progress (leftover blocked fibers are cancelled first).
pub fn run_main(vm: &mut Vm, proto: Rc<crate::bytecode::Proto>) -> Outcome {
    let id = vm.sched.alloc_id();
    let th = new_task(vm, Some(id), TaskState::Running, None, None, false, None);
    vm.sched.main_task = Some(th);
    start(vm, Fiber::for_main(proto), id, th);
    let outcome = run_loop(vm, th);
    vm.sched.main_task = None;
    outcome
}

fn main_done(vm: &Vm, main: Handle) -> bool {
    task(vm, main).finished()
}

/// Instructions run between looks at the clock for timers and output flushing.
const CLOCK_TICKS: u64 = 4096;

fn run_loop(vm: &mut Vm, main: Handle) -> Outcome {
    let mut last_flush = Instant::now();
    let mut clock_at = 0u64;
    loop {
        // Reading the clock can cost more than a fiber switch: do it only when
        // idle or after a few thousand instructions.
        if vm.sched.ready.is_empty() || vm.sched.ticks - clock_at >= CLOCK_TICKS {
            clock_at = vm.sched.ticks;
            deliver_events(vm);
            if last_flush.elapsed() > Duration::from_millis(5) {
                vm.out.flush_if_stdout(vm.capture);
                last_flush = Instant::now();
            }
        }
        if let Some(entry) = vm.sched.ready.pop() {
            if let Some(u) = run_fiber(vm, entry) {
                return Outcome::Error(u);
            }
            if let Some(report) = vm.sched.self_wait.take() {
                return Outcome::Deadlock(report);
            }
            continue;
        }
        let next_timer = timer::next_deadline(vm);
        if next_timer.is_some() || io::pending(vm) {
            // Idle until the next timer or I/O completion: no polling loop.
            vm.out.flush_if_stdout(vm.capture);
            let wait = next_timer.map(|t| t.saturating_duration_since(Instant::now()));
            if io::pending(vm) {
                io::poll(vm, Some(wait.unwrap_or(Duration::from_secs(3600))));
            } else if let Some(d) = wait {
                std::thread::sleep(d);
            }
            timer::fire_due(vm);
            continue;
        }
        // Nothing can run and nothing is pending.
        if let Some(e) = vm.sched.top_error.take() {
            return Outcome::Error(Box::new(uncaught_at_top(vm, e)));
        }
        if !main_done(vm, main) {
            return Outcome::Deadlock(deadlock_report(vm));
        }
        if vm.sched.live == 0 {
            return Outcome::Ok;
        }
        // The script is done; fibers still parked can never wake: cancel them so
        // their finally blocks run.
        let parked: Vec<u32> =
            vm.sched.fibers.iter().flatten().filter(|f| f.sched.parked.is_some()).map(|f| f.sched.id).collect();
        if parked.is_empty() {
            return Outcome::Ok;
        }
        for id in parked {
            cancel_fiber(vm, id);
        }
        if vm.sched.ready.is_empty() {
            // Only fibers waiting for their wait-block children, which cannot end.
            return Outcome::Ok;
        }
    }
}

/// Fires due timers and delivers finished I/O, without waiting.
fn deliver_events(vm: &mut Vm) {
    vm.sched.ready.share_slice(vm.sched.slice);
    if !vm.sched.timers.is_empty() {
        timer::fire_due(vm);
    }
    if io::pending(vm) {
        io::poll(vm, None);
    }
}

/// Runs the ready-queue entry (a fiber, or a task whose fiber is built now) for one slice and deals with how it stopped; returns an
/// error that reached the top (the main fiber's, or one with no owner to take it).
fn run_fiber(vm: &mut Vm, entry: u32) -> Option<Box<Uncaught>> {
    let mut f = if spawn::not_started(entry) { begin(vm, entry) } else { vm.sched.fibers[entry as usize].take()? };
    let id = f.sched.id;
    vm.sched.current = id;
    let began = vm.sched.trace.as_ref().map(|_| Instant::now());
    let halt = run_slice(vm, &mut f);
    if let Some(began) = began {
        trace_slice(vm, &f, began, &halt);
    }
    let top = match halt {
        Halt::Yield | Halt::Switch => {
            vm.sched.fibers[id as usize] = Some(f);
            vm.sched.ready.push(id);
            None
        }
        Halt::Blocked => {
            vm.sched.fibers[id as usize] = Some(f);
            None
        }
        Halt::Done(v) => finish(vm, &f, Ok(v)),
        Halt::Error(u) => finish(vm, &f, Err(u)),
    };
    // Not while an error is on its way out: nothing roots it.
    if top.is_none() && vm.heap.should_collect() {
        collect(vm);
    }
    top
}

/// Runs a fiber for one time slice, delivering its resume value first and
/// throwing pending cancellation at preemption points outside `lock` blocks.
fn run_slice(vm: &mut Vm, f: &mut Fiber) -> Halt {
    if let Some(r) = f.sched.resume.take() {
        let slot = f.sched.ret_slot as usize;
        // Taken whatever the resume is, so a cancelled `for v in ch` leaves none behind.
        let iter_exit = f.sched.extra.as_mut().and_then(|x| x.iter_exit.take());
        if r.writes() && f.sched.ret_slot == crate::vm::conc::NO_SLOT {
            return run_slice_from(vm, f);
        }
        match r {
            Resume::Value(v) => f.stack[slot] = v,
            Resume::Pair(a, ok) => match iter_exit {
                // A `for v in ch` loop: a closed channel ends the loop.
                Some(exit) if !ok => f.frames.last_mut().unwrap().pc = exit,
                Some(_) => f.stack[slot] = a,
                None => {
                    f.stack[slot] = a;
                    f.stack[slot + 1] = Value::Bool(ok);
                }
            },
            Resume::Select(i, v, ok) => {
                f.stack[slot] = Value::Int(i as i64);
                f.stack[slot + 1] = v;
                f.stack[slot + 2] = Value::Bool(ok);
            }
            Resume::Throw(e) => {
                if let Some(h) = exec::throw(vm, f, Fault::Throw(e)) {
                    return h;
                }
            }
            Resume::Retry => {}
        }
    }
    run_slice_from(vm, f)
}

fn run_slice_from(vm: &mut Vm, f: &mut Fiber) -> Halt {
    // The clock is read only once the countdown first runs out, so the many
    // fibers that block within a few instructions never pay for it.
    let mut started: Option<Instant> = None;
    loop {
        match exec::run(vm, f, SLICE_BUDGET) {
            Halt::Switch => return Halt::Yield,
            Halt::Yield => {
                // A preemption point: deliver cancellation or a child's failure,
                // but never inside a critical section.
                if std::mem::take(&mut vm.sched.cancel_self) {
                    f.sched.cancelled = true;
                }
                if !f.sched.holds_locks() {
                    if let Some(e) = interrupt(vm, f) {
                        if let Some(h) = exec::throw(vm, f, Fault::Throw(e)) {
                            return h;
                        }
                    }
                }
                match started {
                    None => started = Some(Instant::now()),
                    Some(t) if t.elapsed() >= vm.sched.slice => return Halt::Yield,
                    Some(_) => {}
                }
            }
            h => return h,
        }
    }
}

/// The error to throw into a fiber at a suspension point: a propagated child
/// failure first, else `Cancelled` if it was cancelled (level-triggered).
pub fn interrupt(vm: &mut Vm, f: &mut Fiber) -> Option<Value> {
    if let Some(e) = f.sched.extra.as_mut().and_then(|x| x.pending.take()) {
        return Some(e);
    }
    if let Some(s) = f.sched.extra.as_mut().and_then(|x| x.scopes.last_mut()) {
        if std::mem::take(&mut s.interrupt) {
            return Some(cancelled_error(vm));
        }
    }
    if f.sched.cancelled {
        return Some(cancelled_error(vm));
    }
    None
}

/// Collects garbage with every fiber as a root.
fn collect(vm: &mut Vm) {
    let fibers: Vec<Box<Fiber>> = vm.sched.fibers.iter_mut().filter_map(|f| f.take()).collect();
    let ids: Vec<u32> = fibers.iter().map(|f| f.sched.id).collect();
    {
        let refs: Vec<&Fiber> = fibers.iter().map(|b| &**b).collect();
        gc::collect(vm, &refs);
    }
    for (id, f) in ids.into_iter().zip(fibers) {
        vm.sched.fibers[id as usize] = Some(f);
    }
}
