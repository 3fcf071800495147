//! The seam: everything the VM and the builtins ask of the scheduler. Each
//! operation of the running fiber completes at once or parks it (after checking
//! cancellation, which is level-triggered: a cancelled fiber never parks again);
//! a parked fiber gets its result later as a `Resume`, which the VM delivers.

use super::reactor::Pending;
use super::task::Born;
use super::{chan, lock, select, start, task, timer, Wait};
use crate::bytecode::Site;
use crate::vm::builtin::Ready;
use crate::vm::ErrorKind;
use crate::vm::{err, Blocking, Fault, Handle, Obj, Res, Resume, Value, Vm};

pub use super::pool::Reply;
pub use super::task::Task;
pub use super::values::Chan;
pub use super::values::{Mutex, WaitGroup};
pub use super::Sched;

/// The running fiber's pending interruption (a child's failure, or `Cancelled`),
/// thrown instead of parking.
pub fn check_interrupt(vm: &mut Vm) -> Res<()> {
    match super::lifecycle::interrupt(vm) {
        Some(e) => Err(Fault::Throw(e)),
        None => Ok(()),
    }
}

/// The running fiber entered its outermost `finally` block (`on`), or left it:
/// interruptions wait while it runs (within the fiber's grace time).
pub fn set_shielded(vm: &mut Vm, on: bool) {
    let s = vm.sched.fibers.cur();
    s.shielded = on;
    if on && s.cancelled {
        let fid = vm.sched.fibers.current;
        super::lifecycle::start_grace(vm, fid);
    }
}

/// Parks the running fiber on `wait` unless an interruption is due (thrown then).
#[inline(always)]
pub(super) fn park(vm: &mut Vm, wait: Wait) -> Res<super::Waiter> {
    let s = vm.sched.fibers.cur();
    // Only a fiber with extra state or cancelled can have one due.
    if s.extra.is_some() || s.cancelled {
        check_interrupt(vm)?;
    }
    Ok(vm.sched.fibers.park(wait))
}

/// `go`: starts a fiber whose first step is `call[0](call[1..])`, or with
/// `method`, the method call `call[1].<name call[0]>(call[2..])`. Returns its task
/// (nil for a dropped `go` outside `wait { }`, which gets only a record).
pub fn go(vm: &mut Vm, call: &[Value], method: bool, site: Site, dropped: bool) -> Res<Value> {
    let born = start::born(vm);
    // A stillborn fiber is not made (at most its task): no limit to pass (a
    // cancelled fiber bomb ends cancelled, not with a memory error).
    if born != Born::Stillborn {
        fiber_room(vm)?;
        within_memory(vm)?;
    }
    Ok(start::spawn(vm, call, method, site, dropped, born))
}

/// Past --max-memory, a `go` gets the error before it adds a fiber (the
/// fibers a spawning loop starts end before any preemption point).
fn within_memory(vm: &mut Vm) -> Res<()> {
    let Some(msg) = vm.sched.over_limit.as_deref() else { return Ok(()) };
    // What was dropped since (a caught error's data) may leave room: a
    // whole collection decides, once; then every `go` throws until the
    // next collection (a tree of `wait { }` blocks must stop growing).
    if vm.sched.limit_check == super::LimitCheck::May {
        vm.sched.limit_check = super::LimitCheck::Asked;
        vm.heap.ask_full();
        return Err(Fault::Collect);
    }
    let e = err(ErrorKind::Memory, msg);
    vm.sched.out_of_memory = None;
    e
}

/// The `fibers` error when `--max-fibers` fibers are already live.
fn fiber_room(vm: &Vm) -> Res<()> {
    if vm.sched.fibers.counted() < vm.sched.fibers.max_fibers {
        return Ok(());
    }
    let max = vm.sched.fibers.max_fibers;
    err(ErrorKind::Fibers, format!("too many fibers: {max} are running or waiting (see --max-fibers)"))
}

/// `n` more (or fewer) fibers of every isolate's that `--max-fibers` does
/// not count: a worker's driver, a job under way (its two fibers count as one).
pub fn exempt_fibers(vm: &Vm, n: isize) {
    if let Some(c) = &vm.sched.fibers.count {
        c.exempt(n);
    }
}

/// `--trace`: something leaves this isolate from the running fiber (a job,
/// its answer): the id of the flow it carries (0: not traced).
pub fn trace_out(vm: &mut Vm, what: super::Crossing) -> u64 {
    super::trace::cross_out(vm, what)
}

/// `--trace`: what flow `id` carried arrived in the running fiber.
pub fn trace_in(vm: &mut Vm, id: u64, what: super::Crossing) {
    super::trace::cross_in(vm, id, what);
}

/// `--trace`: this isolate's events go out now (it ends); with `closing`,
/// the document is closed too (the process ends at once).
pub fn trace_flush(vm: &mut Vm, closing: bool) {
    match closing {
        true => super::trace::end_now(vm),
        false => super::trace::flush(vm),
    }
}

/// Starts `call[0](call[1..])` in a fiber owned by the program, not by the
/// running fiber (see `start::spawn_detached`); returns its task.
pub fn go_detached(vm: &mut Vm, call: &[Value], site: Site) -> Res<Value> {
    fiber_room(vm)?;
    Ok(start::spawn_detached(vm, call, site))
}

/// `<-ch`: Some((value, ok)) now, or None after parking (woken with `Resume::Recv`).
pub fn recv(vm: &mut Vm, ch: Value) -> Res<Option<(Value, bool)>> {
    let Some(h) = chan::as_chan(vm, ch, "receive")? else {
        check_interrupt(vm)?;
        select::park_on_all(vm, &[]);
        return Ok(None);
    };
    if let Some(r) = chan::try_recv(vm, h) {
        return Ok(Some(r));
    }
    if let Some(sc) = super::shared::of(vm, h) {
        return super::shared::recv(vm, h, &sc);
    }
    let w = park(vm, Wait::Recv(h))?;
    chan::chan_mut(vm, h).recvq.push_back(w);
    Ok(None)
}

/// `ch <- v`: true when done, false after parking.
pub fn send(vm: &mut Vm, ch: Value, v: Value) -> Res<bool> {
    let Some(h) = chan::as_chan(vm, ch, "send")? else {
        check_interrupt(vm)?;
        select::park_on_all(vm, &[]);
        return Ok(false);
    };
    if chan::try_send(vm, h, v)? {
        return Ok(true);
    }
    if let Some(sc) = super::shared::of(vm, h) {
        return super::shared::send(vm, h, &sc, v);
    }
    let w = park(vm, Wait::Send(h))?;
    chan::chan_mut(vm, h).sendq.push_back(super::values::SendWaiter { w, value: v });
    Ok(false)
}

/// `select` over `(channel, value to send)` cases: Some((case or -1 for
/// default, value, ok)) now, or None after parking (woken with `Resume::Select`).
pub fn select(vm: &mut Vm, cases: &[(Value, Option<Value>)], has_default: bool) -> Res<Option<(i64, Value, bool)>> {
    let mut cs = Vec::with_capacity(cases.len());
    let mut shared = false;
    for &(ch, send) in cases {
        let chan = chan::as_chan(vm, ch, "select")?;
        shared |= chan.is_some_and(|h| matches!(vm.heap.get(h), Obj::Chan(c) if c.shared.is_some()));
        cs.push(select::Case { chan, send });
    }
    if shared {
        return super::shared::select(vm, &cs, has_default);
    }
    if let Some(r) = select::try_select(vm, &cs, has_default)? {
        return Ok(Some(r));
    }
    check_interrupt(vm)?;
    select::park_on_all(vm, &cs);
    Ok(None)
}

/// What `wait v` did.
pub enum Waited {
    Ready(Value),
    Parked,
    /// The fiber waits on its own task: the deadlock report.
    OnItself(String),
}

/// `wait v`: the result now, or parked (the instruction reruns when woken).
/// `at` is where the `wait` is, for the report of a fiber waiting on itself.
pub fn wait_on(vm: &mut Vm, v: Value, at: Site) -> Res<Waited> {
    let Value::Obj(h) = v else { return err(ErrorKind::Type, format!("cannot wait on {}", vm.heap.type_name(v))) };
    match vm.heap.get(h) {
        Obj::Task(_) => {
            if let Some(r) = task::outcome(&mut vm.heap, h)? {
                return Ok(Waited::Ready(r));
            }
            if task::get(&vm.heap, h).fiber == Some(vm.sched.fibers.current) {
                vm.sched.fibers.park(Wait::Task);
                return Ok(Waited::OnItself(super::report::self_wait(vm, at)));
            }
            let w = park(vm, Wait::Task)?;
            task::extra_of(&mut vm.heap, h).waiters.push((w.fiber, w.gen));
            Ok(Waited::Parked)
        }
        Obj::List(items) => {
            let items = items.to_vec();
            for &t in &items {
                match t {
                    Value::Obj(th) if matches!(vm.heap.get(th), Obj::Task(_)) => {
                        if !task::get(&vm.heap, th).finished() {
                            // Parks on the first unfinished task; the `wait` reruns when it ends.
                            return wait_on(vm, t, at);
                        }
                    }
                    _ => {
                        return err(
                            ErrorKind::Type,
                            format!("wait on a list needs tasks, not {}", vm.heap.type_name(t)),
                        )
                    }
                }
            }
            let mut out = Vec::with_capacity(items.len());
            for t in items {
                let Value::Obj(th) = t else { unreachable!() };
                out.push(task::outcome(&mut vm.heap, th)?.unwrap_or(Value::Nil));
            }
            Ok(Waited::Ready(vm.heap.list(out)))
        }
        Obj::WaitGroup(g) => {
            if g.count == 0 {
                return Ok(Waited::Ready(Value::Nil));
            }
            let w = park(vm, Wait::Group)?;
            lock::group_mut(vm, h).waiters.push(w);
            Ok(Waited::Parked)
        }
        o => err(ErrorKind::Type, format!("cannot wait on {}", o.type_name())),
    }
}

/// Start of a `wait { }` block.
pub fn scope_begin(vm: &mut Vm) {
    vm.sched.fibers.cur().extra_mut().scopes.push(Default::default());
}

/// End of a `wait { }` block (`abort`: its body threw): true when it may go on
/// (after rethrowing a failure), false after parking until its fibers are done.
pub fn scope_end(vm: &mut Vm, abort: Option<Value>) -> Res<bool> {
    super::lifecycle::scope_end(vm, abort)
}

/// `lock m`: true when held, false after parking (ownership is handed over).
pub fn lock(vm: &mut Vm, m: Value) -> Res<bool> {
    let h = lock::as_mutex(vm, m)?;
    if lock::try_lock(vm, h)? {
        return Ok(true);
    }
    let w = park(vm, Wait::Lock(h))?;
    lock::enqueue(vm, h, w);
    Ok(false)
}

pub fn unlock(vm: &mut Vm, m: Value) -> Res<()> {
    let h = lock::as_mutex(vm, m)?;
    lock::unlock(vm, h);
    Ok(())
}

/// `yield` outside a coroutine: a voluntary switch, and a suspension point.
pub fn yield_now(vm: &mut Vm) -> Res<()> {
    check_interrupt(vm)
}

/// Parks the running fiber on a builtin's blocking operation.
pub fn block(vm: &mut Vm, b: Blocking) -> Res<()> {
    let retry = matches!(b, Blocking::IoThenRetry(_));
    match b {
        Blocking::Sleep(ms) => {
            let w = park(vm, Wait::Sleep)?;
            timer::add(vm, timer::deadline(vm, ms), super::events::TimerKind::Wake(w));
        }
        Blocking::Io(work) | Blocking::IoThenRetry(work) => {
            let w = park(vm, Wait::Io)?;
            // Whatever was printed (a prompt) shows before the fiber waits.
            vm.out.flush();
            if let Err(e) = super::io::submit(vm, w, work, retry) {
                return unblock(vm, w, format!("cannot start I/O: {e}"));
            }
        }
        Blocking::Handoff(start, cancel) => return hand_off(vm, start, cancel, false),
        Blocking::Isolate(start, cancel) => return hand_off(vm, start, cancel, true),
        Blocking::Ready(fd, ready) => {
            let interest = match ready {
                Ready::Read => mio::Interest::READABLE,
                Ready::Write => mio::Interest::WRITABLE,
            };
            let w = park(vm, Wait::Fd(fd))?;
            vm.out.flush();
            if let Err(e) = vm.sched.events.reactor().and_then(|r| r.wait(fd, interest, w, None)) {
                return unblock(vm, w, format!("cannot wait for I/O: {e}"));
            }
        }
        Blocking::Write(fd, data, name) => return write_in_reactor(vm, fd, Pending::Bytes(data), name),
        Blocking::Drain(fd, drain, name) => return write_in_reactor(vm, fd, Pending::Drain(drain), name),
        // The fiber is left blocked on nothing; the driver ends the program.
        Blocking::Exit(code) => vm.sched.exit = Some(code),
    }
    Ok(())
}

/// Parks the running fiber on work handed to another thread (to another
/// isolate: `isolate`).
fn hand_off(
    vm: &mut Vm,
    start: Box<dyn FnOnce(super::pool::Reply)>,
    cancel: Box<dyn FnOnce()>,
    isolate: bool,
) -> Res<()> {
    let w = park(vm, Wait::Io)?;
    vm.out.flush();
    if let Err(e) = super::io::hand_off(vm, w, start, cancel, isolate) {
        return unblock(vm, w, format!("cannot start I/O: {e}"));
    }
    Ok(())
}

/// Parks the running fiber until the reactor has written `pending` to `fd`.
fn write_in_reactor(vm: &mut Vm, fd: std::os::fd::RawFd, pending: Pending, name: String) -> Res<()> {
    let w = park(vm, Wait::Fd(fd))?;
    if let Err(e) =
        vm.sched.events.reactor().and_then(|r| r.wait(fd, mio::Interest::WRITABLE, w, Some((pending, name))))
    {
        return unblock(vm, w, format!("cannot wait for I/O: {e}"));
    }
    Ok(())
}

/// A blocking operation that could not even start: the parked fiber gets an
/// `io` error thrown where it waits.
fn unblock(vm: &mut Vm, w: super::Waiter, msg: String) -> Res<()> {
    let e = crate::vm::error::bare_error(vm, ErrorKind::Io, &msg);
    vm.sched.wake(w, Resume::Throw(e));
    Ok(())
}

/// A resource the running fiber's task owns (a child process): released
/// (`HostObject::release`) when that task ends, or when the program ends.
pub fn adopt(vm: &mut Vm, h: Handle) {
    let owner = vm.sched.fibers.cur().task;
    adopt_by(vm, h, owner);
}

/// A resource that moved here from another isolate (a child process): this
/// isolate owns it, and releases it when the program ends.
pub fn adopt_here(vm: &mut Vm, h: Handle) {
    adopt_by(vm, h, None);
}

fn adopt_by(vm: &mut Vm, h: Handle, owner: Option<Handle>) {
    // Forget the ones that no longer need it (waited for), so the list stays short.
    let heap = &vm.heap;
    vm.sched.adopted.retain(|&(c, _)| matches!(heap.get(c), Obj::Host(o) if o.adopted()));
    vm.sched.adopted.push((h, owner));
}

/// Releases what `owner` adopted (`adopt`): a child process is killed with
/// its group. With None the program is ending: everything is released, and
/// what was stopped, now or before, is reaped before this returns, so the
/// process can exit leaving no child running and no zombie.
pub(super) fn release_adopted(vm: &mut Vm, owner: Option<Handle>) {
    if vm.sched.adopted.is_empty() && vm.sched.reapers.is_empty() {
        return;
    }
    let ending = owner.is_none();
    let mut close = Vec::new();
    let mut reapers = Vec::new();
    for &(c, o) in &vm.sched.adopted {
        if let Obj::Host(obj) = vm.heap.get_mut(c) {
            if (ending || o == owner) && obj.adopted() {
                let r = obj.release(ending);
                reapers.extend(r.reapers);
                close.extend(r.close);
            }
        }
    }
    vm.sched.reapers.extend(reapers);
    if ending {
        for r in vm.sched.reapers.drain(..) {
            let _ = r.join();
        }
    } else {
        vm.sched.reapers.retain(|r| !r.is_finished());
    }
    // What it held closes now, not when collected: no descriptor outlives it.
    for v in close {
        let Value::Obj(h) = v else { continue };
        let Obj::Host(o) = vm.heap.get(h) else { continue };
        if let Some(fd) = o.fd() {
            fd_closing(vm, fd);
        }
        if let Obj::Host(o) = vm.heap.get_mut(h) {
            o.close_now();
        }
    }
}

/// A stream is closing its descriptor: fibers waiting on it wake (a reader
/// retries and finds it closed, a pending write fails).
pub fn fd_closing(vm: &mut Vm, fd: std::os::fd::RawFd) {
    let woken = vm.sched.events.reactor.as_mut().map(|r| r.closing(fd)).unwrap_or_default();
    super::driver::wake_all(vm, woken);
}

/// `chan(cap)`.
pub fn new_chan(vm: &mut Vm, cap: usize) -> Value {
    Value::Obj(vm.heap.alloc(Obj::Chan(Box::new(Chan::new(cap)))))
}

/// `close(ch)`: parked receivers get (nil, false); parked senders an error.
pub fn close(vm: &mut Vm, ch: Value) -> Res<()> {
    match chan::as_chan(vm, ch, "close")? {
        Some(h) => chan::close_checked(vm, h),
        None => err(ErrorKind::Closed, "close of nil channel"),
    }
}

pub fn new_mutex(vm: &mut Vm) -> Value {
    Value::Obj(vm.heap.alloc(Obj::Mutex(Box::default())))
}

pub fn new_waitgroup(vm: &mut Vm) -> Value {
    Value::Obj(vm.heap.alloc(Obj::WaitGroup(Box::default())))
}

/// `wg.add(n)` (`wg.done()` is add(-1)); at zero every waiter wakes.
pub fn group_add(vm: &mut Vm, wg: Handle, n: i64) -> Res<()> {
    lock::group_add(vm, wg, n)
}

/// `t.cancel()` called at `site`: cancels the task's fiber and, recursively,
/// its children.
pub fn cancel(vm: &mut Vm, t: Handle, site: Option<Site>) {
    let by =
        vm.sched.fibers.cur().task.filter(|&h| Some(h) != vm.sched.main_task).map(|h| task::get(&vm.heap, h).number);
    super::lifecycle::cancel_task(vm, t, super::lifecycle::Cause::Call(by, site))
}

/// `t.done()`: one channel per task, closed when it finishes.
pub fn task_done(vm: &mut Vm, t: Handle) -> Value {
    let tk = task::get(&vm.heap, t);
    if let Some(c) = tk.done_chan() {
        return Value::Obj(c);
    }
    let finished = tk.finished();
    let c = new_chan(vm, 0);
    let Value::Obj(ch) = c else { unreachable!() };
    let done = chan::chan_mut(vm, ch);
    done.signal_only = true;
    done.special = true;
    if finished {
        let _ = chan::close(vm, ch);
    }
    task::extra_of(&mut vm.heap, t).done_chan = Some(ch);
    c
}

/// `after(ms)`: a channel that receives the time once, after ms.
pub fn after(vm: &mut Vm, ms: f64) -> Value {
    let c = new_chan(vm, 1);
    let Value::Obj(h) = c else { unreachable!() };
    timer::add(vm, timer::deadline(vm, ms), super::events::TimerKind::Send(h));
    c
}

/// `ticker(ms)`: a channel that receives the time every ms (ticks are dropped
/// while a previous one is unread).
pub fn ticker(vm: &mut Vm, ms: f64) -> Value {
    let c = new_chan(vm, 1);
    let Value::Obj(h) = c else { unreachable!() };
    let period = timer::period(ms);
    timer::add(vm, timer::deadline(vm, ms), super::events::TimerKind::Tick(h, period));
    c
}

/// `now()`: monotonic milliseconds since the program started.
pub fn now(vm: &Vm) -> f64 {
    vm.sched.now_ms()
}

/// The deadlock report if every other fiber is blocked where nothing can wake
/// it (no fiber ready, no timer, no I/O in flight) and at least one is blocked;
/// else None. For `csp test`, whose driver checks this while it waits for a
/// test, so a test that deadlocks is reported at once, not at its timeout.
pub fn others_deadlocked(vm: &mut Vm) -> Option<String> {
    let cur = vm.sched.fibers.current;
    let others_parked = vm.sched.fibers.states().filter(|&(id, _)| id != cur).all(|(_, s)| s.parked.is_some());
    let some_parked = vm.sched.fibers.states().any(|(id, s)| id != cur && s.parked.is_some());
    let idle = vm.sched.ready.is_empty() && !super::io::outside_pending(vm) && !timer::can_wake_a_fiber(vm);
    (idle && others_parked && some_parked).then(|| super::report::deadlock_report(vm))
}

/// Adds `n` back-edges and calls to the scheduler's instruction clock.
#[inline]
pub fn tick(vm: &mut Vm, n: u64) {
    vm.sched.ticks += n;
}

/// The signals `os.signals` accepts, by name.
pub fn signal_names() -> impl Iterator<Item = &'static str> {
    super::events::KNOWN.iter().map(|(n, _)| *n)
}

/// `os.signals(names)`: a channel receiving each named signal's name as it
/// arrives (those signals lose their default handling). The names are checked.
pub fn signal_channel(vm: &mut Vm, names: &[&str]) -> Res<Value> {
    let which: Vec<usize> = names.iter().filter_map(|n| super::signal::index_of(n)).collect();
    super::signal::notify(vm, &which)
        .or_else(|e| err(ErrorKind::Io, format!("cannot handle signals: {}", crate::os::io_reason(&e))))
}
