//! The scheduler: fibers, the FIFO run queue, time slices, timers, parking and
//! waking, task completion, error propagation, cancellation and deadlock reports.

pub mod chan;
pub mod io;
pub mod lock;
mod report;
pub mod select;
pub mod task;
pub mod timer;

use crate::vm::exec::{self, Halt};
use crate::vm::fiber::Uncaught;
use crate::vm::object::ErrorObj;
use crate::vm::{gc, Fault, Fiber, Handle, Obj, Value, Vm};
use report::{add_spawn_chain, deadlock_report, uncaught_at_top};
use std::collections::{BinaryHeap, VecDeque};
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
    Pair(Value, Value),
    /// Case index, value and ok flag of a `select`.
    Select(i64, Value, Value),
    /// Thrown where the fiber was blocked.
    Throw(Value),
    /// Run the blocked instruction again (its pc was left on it).
    Retry,
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
    /// An error propagated from a child, thrown at the next suspension point.
    pub pending: Option<Value>,
    /// Mutexes held, innermost last.
    pub locks: Vec<Handle>,
    pub scopes: Vec<Scope>,
    /// The channels of the `select` it is parked in.
    pub select_chans: Option<Vec<Handle>>,
    /// Parked in a `for v in ch` loop: where to jump when the channel closes.
    pub iter_exit: Option<u32>,
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
    pub ready: VecDeque<u32>,
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
}

impl Default for Sched {
    fn default() -> Self {
        Sched {
            fibers: Vec::new(),
            free: Vec::new(),
            ready: VecDeque::new(),
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
            fiber.sched.select_chans = Some(chans.clone());
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
        self.ready.push_back(w.fiber);
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

/// An error value; `cancelled` marks the `Cancelled` error.
pub fn new_error_value(vm: &mut Vm, message: &str, cancelled: bool) -> Value {
    let e = ErrorObj { message: Rc::from(message), trace: Vec::new(), others: Vec::new(), cancelled };
    Value::Obj(vm.heap.alloc(Obj::Error(Box::new(e))))
}

pub fn cancelled_error(vm: &mut Vm) -> Value {
    new_error_value(vm, "cancelled", true)
}

pub fn is_cancelled_error(vm: &Vm, v: Value) -> bool {
    matches!(v, Value::Obj(h) if matches!(vm.heap.get(h), Obj::Error(e) if e.cancelled))
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

/// Starts a fiber running `callee(args)`, owned by the running fiber (or its
/// innermost `wait { }` block); returns its task.
pub fn spawn(
    vm: &mut Vm,
    parent: &mut Fiber,
    callee: Value,
    args: &[Value],
    site: task::Site,
    dropped: bool,
) -> crate::vm::Res<Value> {
    let mut f = Fiber::default();
    f.stack.push(callee);
    f.stack.extend_from_slice(args);
    match crate::vm::call::call_value(vm, &mut f, callee, 1, args.len(), 0)? {
        crate::vm::call::Called::Frame => {}
        crate::vm::call::Called::Value | crate::vm::call::Called::Blocked => {
            // A builtin ran at once: its task is already done.
            let t = new_task(vm, None, TaskState::Done(f.stack[0]), parent.sched.task, None, dropped, Some(site));
            return Ok(Value::Obj(t));
        }
    }
    let id = vm.sched.alloc_id();
    let scope = parent.sched.scopes.len().checked_sub(1);
    let th = new_task(vm, Some(id), TaskState::Running, parent.sched.task, scope, dropped, Some(site));
    if let Some(owner) = parent.sched.task {
        let mut children = std::mem::take(&mut task_mut(vm, owner).children);
        compact(vm, &mut children);
        children.push(th);
        task_mut(vm, owner).children = children;
    }
    if let Some(s) = parent.sched.scopes.last_mut() {
        compact(vm, &mut s.children);
        s.children.push(th);
    }
    start(vm, f, id, th);
    Ok(Value::Obj(th))
}

/// A new task object, numbered in start order.
fn new_task(
    vm: &mut Vm,
    fiber: Option<u32>,
    state: TaskState,
    owner: Option<Handle>,
    scope: Option<usize>,
    dropped: bool,
    site: Option<task::Site>,
) -> Handle {
    let number = vm.sched.next_number;
    vm.sched.next_number += 1;
    let t = Task {
        number,
        fiber,
        state,
        owner,
        scope,
        children: Vec::new(),
        waiters: Vec::new(),
        done_chan: None,
        observed: false,
        dropped,
        site,
    };
    vm.heap.alloc(Obj::Task(Box::new(t)))
}

/// Gives fiber `f` its id and task and queues it to run.
fn start(vm: &mut Vm, mut f: Fiber, id: u32, th: Handle) {
    f.sched.id = id;
    f.sched.task = Some(th);
    vm.sched.fibers[id as usize] = Some(Box::new(f));
    vm.sched.ready.push_back(id);
    vm.sched.live += 1;
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
            if !vm.sched.timers.is_empty() {
                timer::fire_due(vm);
            }
            if io::pending(vm) {
                io::poll(vm, None);
            }
            if last_flush.elapsed() > Duration::from_millis(5) {
                vm.out.flush_if_stdout(vm.capture);
                last_flush = Instant::now();
            }
        }
        if let Some(id) = vm.sched.ready.pop_front() {
            let Some(mut f) = vm.sched.fibers[id as usize].take() else { continue };
            vm.sched.current = id;
            let halt = run_slice(vm, &mut f);
            match halt {
                Halt::Yield | Halt::Switch => {
                    vm.sched.fibers[id as usize] = Some(f);
                    vm.sched.ready.push_back(id);
                }
                Halt::Blocked => vm.sched.fibers[id as usize] = Some(f),
                Halt::Done(v) => {
                    if let Some(u) = finish(vm, f, Ok(v)) {
                        return Outcome::Error(u);
                    }
                }
                Halt::Error(u) => {
                    if let Some(u) = finish(vm, f, Err(u)) {
                        return Outcome::Error(u);
                    }
                }
            }
            if let Some(report) = vm.sched.self_wait.take() {
                return Outcome::Deadlock(report);
            }
            if vm.heap.should_collect() {
                collect(vm);
            }
            continue;
        }
        timer::prune(vm);
        let next_timer = vm.sched.timers.peek().map(|t| t.at).filter(|_| timer::pending(vm));
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

/// Runs a fiber for one time slice, delivering its resume value first and
/// throwing pending cancellation at preemption points outside `lock` blocks.
fn run_slice(vm: &mut Vm, f: &mut Fiber) -> Halt {
    if let Some(r) = f.sched.resume.take() {
        let slot = f.sched.ret_slot as usize;
        if r.writes() && f.sched.ret_slot == crate::vm::conc::NO_SLOT {
            return run_slice_from(vm, f);
        }
        match r {
            Resume::Value(v) => f.stack[slot] = v,
            Resume::Pair(a, b) => match f.sched.iter_exit.take() {
                // A `for v in ch` loop: a closed channel ends the loop.
                Some(exit) if !b.truthy() => f.frames.last_mut().unwrap().pc = exit,
                Some(_) => f.stack[slot] = a,
                None => {
                    f.stack[slot] = a;
                    f.stack[slot + 1] = b;
                }
            },
            Resume::Select(i, v, ok) => {
                f.stack[slot] = Value::Int(i);
                f.stack[slot + 1] = v;
                f.stack[slot + 2] = ok;
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
                if f.sched.locks.is_empty() {
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
    if let Some(e) = f.sched.pending.take() {
        return Some(e);
    }
    if f.sched.cancelled {
        return Some(cancelled_error(vm));
    }
    None
}

/// A fiber ended: record its outcome in its task, wake waiters, close `done()`,
/// and propagate an unobserved failure. Returns an error that ends the program.
fn finish(vm: &mut Vm, f: Box<Fiber>, result: Result<Value, Box<Uncaught>>) -> Option<Box<Uncaught>> {
    let id = f.sched.id;
    vm.sched.free.push(id);
    vm.sched.live -= 1;
    let th = f.sched.task.expect("fiber without task");
    let is_main = Some(th) == vm.sched.main_task;
    let cancelled = f.sched.cancelled;
    let mut result = result;
    // A child that failed unobserved fails its owner when the owner ends.
    if result.is_ok() {
        let children = task(vm, th).children.clone();
        for c in children {
            let t = task(vm, c);
            if let TaskState::Failed(e) = t.state {
                if !t.observed && t.scope.is_none() {
                    task_mut(vm, c).observed = true;
                    result = Err(Box::new(uncaught_at_top(vm, e)));
                    break;
                }
            }
        }
    }
    let state = match &result {
        // `wait` on a cancelled task throws `Cancelled`, even if it caught it.
        Ok(_) if cancelled => TaskState::Cancelled(cancelled_error(vm)),
        Ok(v) => TaskState::Done(*v),
        Err(u) if cancelled && is_cancelled_error(vm, u.value) => TaskState::Cancelled(u.value),
        Err(u) => TaskState::Failed(u.value),
    };
    if is_main && result.is_err() && !matches!(state, TaskState::Cancelled(_)) {
        return result.err();
    }
    let failed = matches!(state, TaskState::Failed(_));
    if let TaskState::Failed(e) = state {
        add_spawn_chain(vm, e, th);
    }
    let t = task_mut(vm, th);
    t.state = state;
    t.fiber = None;
    let waiters = std::mem::take(&mut t.waiters);
    let done = t.done_chan;
    let (owner, scope, dropped) = (t.owner, t.scope, t.dropped);
    for (fid, gen) in waiters {
        vm.sched.wake(Waiter { fiber: fid, gen, case: None, two: false }, Resume::Retry);
    }
    if let Some(ch) = done {
        let _ = chan::close(vm, ch);
    }
    wake_scope_waiters(vm, owner);
    if let (Some(owner), Some(scope)) = (owner, scope) {
        scope_child_done(vm, owner, scope, th, failed);
    } else if failed && dropped {
        let e = task(vm, th).result();
        task_mut(vm, th).observed = true;
        propagate(vm, owner, e);
    }
    if let Err(u) = result {
        if failed && owner.is_none() {
            return Some(u);
        }
    }
    None
}

/// Drops children whose whole tree is done and whose outcome needs nobody's
/// attention, so a long-lived fiber starting many short ones stays small. Runs
/// when the list doubles, so the cost is amortised.
fn compact(vm: &Vm, children: &mut Vec<Handle>) {
    let n = children.len();
    if n < 64 || !n.is_power_of_two() {
        return;
    }
    children.retain(|&c| {
        let t = task(vm, c);
        let unobserved_failure = matches!(t.state, TaskState::Failed(_)) && !t.observed;
        unobserved_failure || !tree_done(vm, c)
    });
}

/// Has the task and every task started under it finished?
pub fn tree_done(vm: &Vm, th: Handle) -> bool {
    let mut work = vec![th];
    while let Some(t) = work.pop() {
        let tk = task(vm, t);
        if !tk.finished() {
            return false;
        }
        work.extend(tk.children.iter().copied());
    }
    true
}

/// Wakes every ancestor waiting at the end of a `wait { }` block, so it can
/// recheck whether its whole tree of fibers is done.
fn wake_scope_waiters(vm: &mut Vm, owner: Option<Handle>) {
    let mut owner = owner;
    while let Some(o) = owner {
        if let Some(fid) = task(vm, o).fiber {
            if let Some(Some(f)) = vm.sched.fibers.get(fid as usize) {
                if matches!(f.sched.parked, Some(Wait::Scope)) {
                    let w = Waiter { fiber: fid, gen: f.sched.gen, case: None, two: false };
                    vm.sched.wake(w, Resume::Retry);
                }
            }
        }
        owner = task(vm, o).owner;
    }
}

/// A child of a `wait { }` block ended: on failure record it, cancel the
/// siblings and interrupt the owner; wake the owner when it waits at the block end.
fn scope_child_done(vm: &mut Vm, owner: Handle, scope: usize, child: Handle, failed: bool) {
    if !failed {
        return;
    }
    let Some(fid) = task(vm, owner).fiber else { return };
    let err = task(vm, child).result();
    task_mut(vm, child).observed = true;
    let Some(Some(of)) = vm.sched.fibers.get_mut(fid as usize) else { return };
    let Some(s) = of.sched.scopes.get_mut(scope) else { return };
    s.errors.push(err);
    let siblings = s.children.clone();
    // Interrupt the block's body if it is blocked inside the block, so it can end.
    let interrupt = of.sched.parked.is_some()
        && !matches!(of.sched.parked, Some(Wait::Scope))
        && of.sched.scopes.len() == scope + 1;
    for s in siblings.into_iter().filter(|&s| s != child) {
        cancel_task(vm, s);
    }
    if interrupt {
        let e = cancelled_error(vm);
        unpark(vm, fid);
        vm.sched.wake_forced(fid, Resume::Throw(e));
    }
}

/// Sends a child's failure to its owner fiber: thrown where the owner is blocked,
/// or at its next suspension point; past a finished owner, further up.
fn propagate(vm: &mut Vm, owner: Option<Handle>, e: Value) {
    let mut owner = owner;
    while let Some(o) = owner {
        if let Some(fid) = task(vm, o).fiber {
            let parked = vm.sched.fibers[fid as usize]
                .as_ref()
                .is_some_and(|f| f.sched.parked.is_some() && !matches!(f.sched.parked, Some(Wait::Scope)));
            if parked {
                unpark(vm, fid);
                vm.sched.wake_forced(fid, Resume::Throw(e));
            } else if let Some(Some(f)) = vm.sched.fibers.get_mut(fid as usize) {
                f.sched.pending = Some(e);
            }
            return;
        }
        owner = task(vm, o).owner;
    }
    vm.sched.top_error.get_or_insert(e);
}

impl Sched {
    /// Wakes a fiber that `unpark` just took off its queues.
    fn wake_forced(&mut self, fid: u32, resume: Resume) {
        if let Some(Some(f)) = self.fibers.get_mut(fid as usize) {
            f.sched.parked = None;
            f.sched.resume = Some(resume);
            self.ready.push_back(fid);
        }
    }
}

/// Takes a parked fiber off the wait queues it is on (channels keep no stale
/// entries; other queues recognise stale ones by generation).
pub fn unpark(vm: &mut Vm, fid: u32) {
    let Some(Some(f)) = vm.sched.fibers.get(fid as usize) else { return };
    let wait = f.sched.parked.clone();
    let w = Waiter { fiber: fid, gen: f.sched.gen, case: None, two: false };
    match wait {
        Some(Wait::Recv(h)) | Some(Wait::Send(h)) => select::remove_from(vm, h, w),
        Some(Wait::Select(hs)) => {
            for h in hs {
                select::remove_from(vm, h, w);
            }
        }
        _ => {}
    }
    if let Some(Some(f)) = vm.sched.fibers.get_mut(fid as usize) {
        f.sched.gen = f.sched.gen.wrapping_add(0x8000_0000);
    }
}

/// `t.cancel()`: cancels the task's fiber and, recursively, its children.
pub fn cancel_task(vm: &mut Vm, th: Handle) {
    let mut work = vec![th];
    while let Some(t) = work.pop() {
        let tk = task(vm, t);
        work.extend(tk.children.iter().copied());
        if let Some(fid) = tk.fiber {
            cancel_fiber(vm, fid);
        }
    }
}

/// Marks a fiber cancelled; a parked one gets `Cancelled` thrown at once.
pub fn cancel_fiber(vm: &mut Vm, fid: u32) {
    if fid == vm.sched.current && matches!(vm.sched.fibers.get(fid as usize), Some(None)) {
        // The running fiber cancelled itself: it notices at its next suspension.
        vm.sched.cancel_self = true;
        return;
    }
    let Some(Some(f)) = vm.sched.fibers.get_mut(fid as usize) else { return };
    f.sched.cancelled = true;
    // At the end of a `wait { }` block the fiber keeps waiting for its (now
    // cancelled) children; the block then throws `Cancelled` itself.
    if f.sched.parked.is_some() && !matches!(f.sched.parked, Some(Wait::Scope)) {
        unpark(vm, fid);
        let e = cancelled_error(vm);
        vm.sched.wake_forced(fid, Resume::Throw(e));
    }
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
