//! The scheduler: fibers and their scheduling state, the run queue, parking and
//! waking, timers, I/O completions, task lifecycles and the program's end.
//!
//! The seam with the VM: the VM reaches the scheduler only through `ops.rs`; the
//! scheduler reaches a fiber only by running it (`exec::run`), handing it what it
//! was woken with (`vm::resume`), or starting it on a call (`Fiber::for_call`).
//! It never writes a fiber's registers or program counter.

mod chan;
mod deadline;
pub mod debug;
mod driver;
mod events;
use events::Events;
mod explore;
mod fiber_count;
pub mod io;
mod lifecycle;
mod lock;
pub mod ops;
pub mod others;
mod policy;
pub(crate) mod pool;
mod profile;
mod profile_clock;
mod queue;
mod reactor;
mod report;
mod select;
pub mod session;
pub mod shared;
mod shared_state;
mod signal;
mod start;
pub(crate) mod task;
mod timer;
mod trace;
mod trace_out;
mod unstarted;
pub(crate) mod values;

#[cfg(test)]
mod tests;

use crate::vm::fiber::{Fiber, Resume};
use crate::vm::value::{Handle, Value};
pub use driver::{run_main, Outcome};
pub use fiber_count::FiberCount;
pub use profile::ProfileFile;
pub use signal::install_default as install_signal_handlers;
use std::sync::Arc;
use std::time::{Duration, Instant};
pub use task::Task;
pub use trace::{Crossing, TraceFile, TraceShare};

/// A parked fiber as a wait queue holds it: the park generation makes stale
/// entries (the fiber was woken another way, or cancelled) recognisable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Waiter {
    pub fiber: u32,
    pub gen: u32,
    /// For a `select`, the index of the case this entry belongs to.
    pub case: Option<u16>,
}

impl Waiter {
    /// What a receiver gets: the value and whether the channel was open.
    pub fn received(self, v: Value, ok: bool) -> Resume {
        match self.case {
            Some(i) => Resume::Select(i as u32, v, ok),
            None => Resume::Recv(v, ok),
        }
    }

    /// What a sender gets once its value is taken.
    pub fn sent(self) -> Resume {
        match self.case {
            Some(i) => Resume::Select(i as u32, Value::Nil, true),
            None => Resume::Value(Value::Nil),
        }
    }
}

/// What a parked fiber waits for (deadlock reports and cancellation).
#[derive(Debug, Clone)]
pub(crate) enum Wait {
    Recv(Handle),
    Send(Handle),
    /// A `select` (its channels are in `FiberExtra::select`), or an operation
    /// on a nil channel (none).
    Select,
    Lock(Handle),
    Task,
    Group,
    Scope,
    Sleep,
    Io,
    /// A descriptor (a pipe, a child's pidfd) to become ready.
    Fd(std::os::fd::RawFd),
}

impl Wait {
    /// Its kind as a small number (the profiler's `WAITS` names them).
    #[inline]
    fn index(&self) -> u8 {
        match self {
            Wait::Recv(_) => 0,
            Wait::Send(_) => 1,
            Wait::Select => 2,
            Wait::Lock(_) => 3,
            Wait::Task => 4,
            Wait::Group => 5,
            Wait::Scope => 6,
            Wait::Sleep => 7,
            Wait::Io | Wait::Fd(_) => 8,
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Wait::Recv(_) => "receive from channel",
            Wait::Send(_) => "send to channel",
            Wait::Select => "select",
            Wait::Lock(_) => "lock",
            Wait::Task => "wait on task",
            Wait::Group => "wait on waitgroup",
            Wait::Scope => "end of wait block",
            Wait::Sleep => "sleep",
            Wait::Io | Wait::Fd(_) => "I/O",
        }
    }
}

/// A `wait { }` block in progress.
#[derive(Default)]
pub(crate) struct Scope {
    pub children: Vec<Handle>,
    /// Failures of its fibers, first first.
    pub errors: Vec<Value>,
    /// A fiber failed while the body was runnable: interrupt the body at its next
    /// suspension point inside the block.
    pub interrupt: bool,
}

/// The scheduler's state of one fiber.
#[derive(Default)]
pub(crate) struct FiberState {
    /// Park generation; waiters carrying another one are stale.
    pub gen: u32,
    pub task: Option<Handle>,
    /// Some while parked.
    pub parked: Option<Wait>,
    /// What it was woken with, handed to the VM when it next runs.
    pub resume: Option<Resume>,
    pub cancelled: bool,
    /// It started cancelled (at its `go`, or before it first ran): the `go`s
    /// it makes start stillborn (`task::Born`).
    pub born_cancelled: bool,
    /// A `finally` block of the fiber runs: interruptions are held back
    /// (`lifecycle::holds_back`). Mirrors `Fiber::shielded`.
    pub shielded: bool,
    /// Its last slice ran until preempted: the next one reads the clock from
    /// its start (driver.rs's `run_slice`).
    pub cpu_bound: bool,
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

    pub fn scopes(&self) -> &[Scope] {
        self.extra.as_ref().map_or(&[], |x| &x.scopes)
    }
}

/// The per-fiber state few fibers use.
#[derive(Default)]
pub(crate) struct FiberExtra {
    /// An error propagated from a child, thrown at the next suspension point.
    pub pending: Option<Value>,
    /// Mutexes held, innermost last.
    pub locks: Vec<Handle>,
    pub scopes: Vec<Scope>,
    /// The channels of the `select` it is parked in.
    pub select: Vec<Handle>,
    /// The end of its grace time, set when cancellation first reaches it: past
    /// it, `finally` blocks no longer hold cancellation back.
    pub grace_until: Option<Instant>,
    /// Parked on a shared channel: taken by whoever completes the park (shared.rs).
    pub claim: Option<shared_state::Claim>,
}

/// A fiber id's slot: the fiber (taken out while it runs) and its state.
#[derive(Default)]
struct Slot {
    fiber: Option<Box<Fiber>>,
    state: FiberState,
}

/// The fibers: their slots (by id), which one runs, park generations, task
/// numbers and the count of live ones.
pub(crate) struct Fibers {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The fiber running now (its state stays in `slots`).
    current: u32,
    next_gen: u32,
    next_number: u32,
    /// Fibers started and not yet finished.
    live: usize,
    /// `--max-fibers`: the most fibers started and not finished.
    max_fibers: usize,
    /// With `--max-fibers`, the count every isolate of the runtime shares.
    count: Option<Arc<FiberCount>>,
}

/// The scheduler of one program: its fibers, the run queue, the events that
/// wake fibers, the scheduling policy, and how the program is ending.
pub struct Sched {
    fibers: Fibers,
    ready: queue::RunQueue,
    /// Dropped `go`s' fibers not started yet (see unstarted.rs).
    unstarted: unstarted::Unstarted,
    events: Events,
    /// Real time, or schedule exploration's seeded choices and virtual clock.
    policy: policy::Policy,
    start: Instant,
    slice: Duration,
    /// Instructions (back-edges and calls) run so far: a cheap clock.
    ticks: u64,
    /// A timer may have come due (seen as a slice ended, or after a
    /// collection): deliver before the next slice.
    timer_due: bool,
    /// The main fiber's (or the REPL entry's) task.
    main_task: Option<Handle>,
    /// An error that reached the top with no fiber left to take it; reported
    /// when nothing else can run.
    orphan_error: Option<Value>,
    /// `--trace FILE`: events written as they happen (see trace.rs).
    trace: Option<Box<trace::Trace>>,
    /// `--profile FILE`: samples charged as slices run (see profile.rs).
    profile: Option<Box<profile::Profile>>,
    /// Resources bound to the task that made them (child processes not yet
    /// known to be reaped), with that task: an ending owner releases its
    /// own, the program's end releases the rest (`ops::release_adopted`).
    adopted: Vec<(Handle, Option<Handle>)>,
    /// Threads reaping children killed with their owner: the program's end
    /// waits for them.
    reapers: Vec<std::thread::JoinHandle<()>>,
    /// `exit(code)` was called, or a second SIGINT/SIGTERM came: the program
    /// ends with this status.
    exit: Option<i32>,
    /// A collection found the heap over `--max-memory`: the error the next
    /// fiber to go on computing gets (see `driver::out_of_memory`).
    out_of_memory: Option<String>,
    /// The last collection found the heap over `--max-memory` (its message):
    /// until one finds it under, every `go` throws (a tree of fibers each in
    /// a `wait { }` block would otherwise grow on past one error).
    over_limit: Option<String>,
    /// Whether a `go` finding `over_limit` set asks for a whole collection
    /// to decide first (once per collection that came due on its own, so
    /// what a caught `memory` error dropped does not fail the next `go`).
    limit_check: LimitCheck,
    /// The last "cancelled with fiber N, ..." line made, for fiber N
    /// (`lifecycle::cancelled_error`).
    cancel_line: Option<(u32, std::rc::Rc<str>)>,
    /// `--grace`: how long a cancelled fiber's `finally` blocks may wait, and a
    /// cancelled program's cleanup may take.
    grace: Duration,
    /// The whole program is being cancelled (SIGINT, SIGTERM, `--timeout`, or
    /// its end with fibers left parked): it ends at this time whatever runs.
    ending: Option<Instant>,
    /// Running untrusted programs (fuzzing): where the program is stopped.
    budget: Option<Budget>,
    /// Run when the program ends in order (its end, a signal, `--timeout`),
    /// with the grace time: worker isolates end their own fibers then.
    at_end: Option<Box<dyn FnOnce(Duration)>>,
}

/// See `Sched::limit_check`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum LimitCheck {
    /// The next `go` over the limit asks for a collection.
    May,
    /// One asked; the collection it asked for decides.
    Asked,
    /// That collection found the heap over: `go` throws until the next.
    Decided,
}

/// A limit on a program's run (`Sched::set_budget`): once it has run `ticks`
/// back-edges and calls, or `time` has passed since it started (sleeping
/// included), it ends with `Outcome::OutOfBudget` at the next slice boundary.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub ticks: u64,
    pub time: Duration,
}

impl Default for Fibers {
    fn default() -> Self {
        Fibers {
            slots: Vec::new(),
            free: Vec::new(),
            current: 0,
            next_gen: 1,
            next_number: 0,
            live: 0,
            max_fibers: usize::MAX,
            count: None,
        }
    }
}

impl Default for Sched {
    fn default() -> Self {
        Sched {
            fibers: Fibers::default(),
            ready: queue::RunQueue::default(),
            unstarted: unstarted::Unstarted::default(),
            events: Events::default(),
            policy: policy::Policy::RealTime,
            start: Instant::now(),
            slice: Duration::from_micros(1000),
            ticks: 0,
            timer_due: false,
            main_task: None,
            orphan_error: None,
            trace: None,
            profile: None,
            adopted: Vec::new(),
            reapers: Vec::new(),
            exit: None,
            out_of_memory: None,
            over_limit: None,
            limit_check: LimitCheck::May,
            cancel_line: None,
            grace: Duration::from_secs(5),
            ending: None,
            budget: None,
            at_end: None,
        }
    }
}

impl Fibers {
    fn state(&self, id: u32) -> &FiberState {
        &self.slots[id as usize].state
    }

    fn state_mut(&mut self, id: u32) -> &mut FiberState {
        &mut self.slots[id as usize].state
    }

    /// The running fiber's state.
    fn cur(&mut self) -> &mut FiberState {
        let id = self.current;
        self.state_mut(id)
    }

    /// Does fiber `fid` still run task `th` (ids are reused)?
    fn runs_task(&self, fid: u32, th: Handle) -> bool {
        self.slots.get(fid as usize).is_some_and(|s| s.state.task == Some(th))
    }

    /// Ids and states of every fiber that exists.
    fn states(&self) -> impl Iterator<Item = (u32, &FiberState)> + '_ {
        self.slots.iter().enumerate().filter(|(_, s)| s.state.task.is_some()).map(|(i, s)| (i as u32, &s.state))
    }

    /// Is the fiber still parked as this waiter says?
    fn is_parked(&self, w: Waiter) -> bool {
        self.slots.get(w.fiber as usize).is_some_and(|s| s.state.parked.is_some() && s.state.gen == w.gen)
    }

    /// Parks the running fiber on `wait`; returns its waiter.
    #[inline]
    fn park(&mut self, wait: Wait) -> Waiter {
        self.next_gen = self.next_gen.wrapping_add(1);
        let gen = self.next_gen;
        let s = self.cur();
        s.gen = gen;
        s.parked = Some(wait);
        Waiter { fiber: self.current, gen, case: None }
    }

    fn alloc_id(&mut self) -> u32 {
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Bytes `alloc_id` allocates next: the slots' table doubling when full,
    /// counted first so it grows inside the --max-memory count.
    fn id_growth(&self) -> usize {
        let full = self.free.is_empty() && self.slots.len() == self.slots.capacity();
        if full {
            self.slots.capacity().max(4) * std::mem::size_of::<Slot>()
        } else {
            0
        }
    }

    fn take_number(&mut self) -> u32 {
        self.next_number += 1;
        self.next_number - 1
    }
}

impl Sched {
    /// The id of the fiber running now (or last run).
    pub fn running(&self) -> u32 {
        self.fibers.current
    }

    /// Sets the preemption time slice (`--slice-us`).
    pub fn set_slice(&mut self, slice: Duration) {
        self.slice = slice;
    }

    /// Stops the program once it has used up `budget` (fuzzing, replaying
    /// fuzz inputs; see docs/fuzzing.md).
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget = Some(budget);
    }

    /// Has the program used up its budget?
    #[inline]
    fn over_budget(&self) -> bool {
        self.budget.is_some_and(|b| self.ticks >= b.ticks || self.start.elapsed() >= b.time)
    }

    /// The earliest time a waiting scheduler must wake to stop the program:
    /// `--timeout`'s deadline or the end of a budget's time.
    fn stop_at(&self) -> Option<Instant> {
        let budget = self.budget.map(|b| self.start + b.time);
        [self.events.deadline.as_ref().and_then(|d| d.at()), budget, self.ending].into_iter().flatten().min()
    }

    /// Bytes the fibers hold outside the heap's objects: their stacks, frames
    /// and handlers, and the records of `go`s not started yet. Counted against
    /// `--max-memory` at each collection.
    fn fiber_bytes(&self) -> usize {
        use crate::limits::malloc_size;
        let slots = self.fibers.slots.capacity() * std::mem::size_of::<Slot>() + self.fibers.free.capacity() * 4;
        let fibers: usize = self.fibers.slots.iter().filter_map(|s| s.fiber.as_deref()).map(Fiber::bytes).sum();
        let extras = self.fibers.slots.iter().filter(|s| s.state.extra.is_some()).count();
        let extras = extras * malloc_size(std::mem::size_of::<FiberExtra>());
        slots + fibers + extras + self.unstarted.bytes() + self.ready.bytes()
    }

    /// Sets `--grace` (docs/concurrency.md, "Cancellation").
    pub fn set_grace(&mut self, grace: Duration) {
        self.grace = grace;
    }

    /// The whole program is being cancelled: it ends when the grace time has
    /// passed, even if cleanup still runs (the first cancellation decides).
    fn begin_ending(&mut self) {
        if self.ending.is_none() {
            self.ending = Some(self.now() + self.grace);
        }
    }

    /// `f` runs when the program ends in order (docs/isolates.md: worker
    /// isolates cancel the fibers their modules started).
    pub fn on_end(&mut self, f: Box<dyn FnOnce(Duration)>) {
        self.at_end = Some(f);
    }

    /// Sets `--max-fibers`.
    pub fn set_max_fibers(&mut self, n: usize) {
        self.fibers.max_fibers = n;
    }

    /// Sets `--timeout` for `run`: the program is cancelled after `limit`.
    /// Counted from now; an embedding host sets one per run, so it also ends
    /// the grace time an earlier run's timeout began.
    pub fn set_deadline(&mut self, limit: Duration) {
        self.events.deadline = Some(events::Deadline::new(limit));
        self.ending = None;
    }

    /// Is the schedule being explored (`--explore`)?
    pub fn exploring(&self) -> bool {
        self.policy.exploring()
    }

    /// Runs the program under the schedule numbered `seed`, on a virtual
    /// clock (`--explore-seed`; see explore.rs).
    pub fn set_explore(&mut self, seed: u64) {
        self.policy = policy::Policy::Explore(Box::new(policy::Explore::new(seed)));
    }

    /// The scheduler's clock: real, or virtual when exploring schedules.
    fn now(&self) -> Instant {
        self.policy.now(self.start, self.ticks)
    }

    /// Milliseconds since the program started.
    pub fn now_ms(&self) -> f64 {
        self.now().duration_since(self.start).as_secs_f64() * 1000.0
    }

    /// Makes a parked fiber ready with `resume`, if the waiter is current.
    #[inline(always)]
    fn wake(&mut self, w: Waiter, resume: Resume) -> bool {
        if !self.fibers.is_parked(w) {
            return false;
        }
        self.wake_forced(w.fiber, resume);
        true
    }

    /// Makes a parked fiber ready with `resume`, whatever it waits on (the caller
    /// has taken it off its wait queues).
    #[inline(always)]
    fn wake_forced(&mut self, fid: u32, resume: Resume) {
        let s = self.fibers.state_mut(fid);
        s.parked = None;
        s.resume = Some(resume);
        self.ready.push_woken(fid);
        if let Some(t) = self.trace.as_deref_mut() {
            t.woke(fid);
        }
    }

    /// Every value the scheduler holds (GC roots): its fibers, their states and
    /// tasks, fibers not started yet, timers' channels and an unreported error.
    pub fn roots(&self, out: &mut Vec<Handle>) {
        let mut push = |v: Value| {
            if let Value::Obj(h) = v {
                out.push(h);
            }
        };
        for slot in &self.fibers.slots {
            if let Some(f) = &slot.fiber {
                f.roots(&mut push);
            }
            let s = &slot.state;
            s.task.map(Value::Obj).map(&mut push);
            if let Some(r) = &s.resume {
                r.roots(&mut push);
            }
            if let Some(x) = &s.extra {
                x.locks.iter().chain(&x.select).for_each(|&h| push(Value::Obj(h)));
                for sc in &x.scopes {
                    sc.children.iter().for_each(|&h| push(Value::Obj(h)));
                    sc.errors.iter().for_each(|&v| push(v));
                }
                x.pending.map(&mut push);
            }
        }
        self.events.timers.roots(&mut push);
        for &(h, owner) in &self.adopted {
            push(Value::Obj(h));
            owner.map(Value::Obj).map(&mut push);
        }
        self.main_task.map(Value::Obj).map(&mut push);
        self.ready.pending_tasks().for_each(|h| push(Value::Obj(h)));
        self.unstarted.roots().for_each(&mut push);
        self.orphan_error.map(&mut push);
        self.events.signals.iter().flat_map(|s| s.roots()).for_each(|h| push(Value::Obj(h)));
    }
}

#[cfg(test)]
mod size_tests {
    /// A program may park a million fibers (benches/conc/skynet.csp): each pays
    /// for a slot here besides its `Fiber`.
    #[test]
    fn a_fiber_slot_is_one_cache_line() {
        let slot = std::mem::size_of::<super::Slot>();
        assert!(slot <= 64, "Slot is {slot} bytes");
    }
}
