//! The concurrency instructions' work, called from the dispatch loop: each either
//! completes at once or parks the running fiber (after checking cancellation,
//! which is level-triggered: a cancelled fiber never parks again).

use super::fiber::Fiber;
use super::{err, ErrorKind, Fault, Obj, Res, Value, Vm};
use crate::sched::{self, chan, lock, select, task::TaskState, Scope, Wait};

/// Slot value meaning "discard the resume value".
pub const NO_SLOT: u32 = u32::MAX;

/// Throws a pending interruption instead of parking.
fn check_interrupt(vm: &mut Vm, fiber: &mut Fiber) -> Res<()> {
    match sched::interrupt(vm, fiber) {
        Some(e) => Err(Fault::Throw(e)),
        None => Ok(()),
    }
}

/// `<-ch`: Some((value, ok)) now, or None after parking with the result due in `slot`.
pub fn recv(vm: &mut Vm, fiber: &mut Fiber, ch: Value, two: bool, slot: usize) -> Res<Option<(Value, bool)>> {
    let Some(h) = chan::as_chan(vm, ch, "receive")? else {
        check_interrupt(vm, fiber)?;
        vm.sched.park(fiber, Wait::Select(Vec::new()));
        return Ok(None);
    };
    if let Some(r) = chan::try_recv(vm, h) {
        return Ok(Some(r));
    }
    check_interrupt(vm, fiber)?;
    let mut w = vm.sched.park(fiber, Wait::Recv(h));
    w.two = two;
    chan::chan_mut(vm, h).recvq.push_back(w);
    fiber.sched.ret_slot = slot as u32;
    Ok(None)
}

/// `ch <- v`: true when done, false after parking.
pub fn send(vm: &mut Vm, fiber: &mut Fiber, ch: Value, v: Value) -> Res<bool> {
    let Some(h) = chan::as_chan(vm, ch, "send")? else {
        check_interrupt(vm, fiber)?;
        vm.sched.park(fiber, Wait::Select(Vec::new()));
        return Ok(false);
    };
    if chan::try_send(vm, h, v)? {
        return Ok(true);
    }
    check_interrupt(vm, fiber)?;
    let w = vm.sched.park(fiber, Wait::Send(h));
    chan::chan_mut(vm, h).sendq.push_back(chan::SendWaiter { w, value: v });
    fiber.sched.ret_slot = NO_SLOT;
    Ok(false)
}

/// `select`: reads its cases from registers at `base`; Some(result) or None after parking.
pub fn select(
    vm: &mut Vm,
    fiber: &mut Fiber,
    base: usize,
    desc: &(Vec<bool>, bool),
) -> Res<Option<(i64, Value, Value)>> {
    let mut cases = Vec::with_capacity(desc.0.len());
    for (i, &is_send) in desc.0.iter().enumerate() {
        let ch = fiber.stack[base + 2 * i];
        let chan = chan::as_chan(vm, ch, "select")?;
        let send = is_send.then(|| fiber.stack[base + 2 * i + 1]);
        cases.push(select::Case { chan, send });
    }
    let r = select::select(vm, fiber, &cases, desc.1)?;
    if r.is_none() {
        fiber.sched.ret_slot = base as u32;
    }
    Ok(r)
}

/// `wait v`: Some(result) now, or None after parking (the instruction reruns on wake).
pub fn wait_on(vm: &mut Vm, fiber: &mut Fiber, v: Value) -> Res<Option<Value>> {
    let Value::Obj(h) = v else { return err(ErrorKind::Type, format!("cannot wait on {}", vm.heap.type_name(v))) };
    match vm.heap.get(h) {
        Obj::Task(_) => {
            if let Some(r) = task_outcome(vm, h)? {
                return Ok(Some(r));
            }
            if sched::task(vm, h).fiber == Some(fiber.sched.id) {
                vm.sched.self_wait = Some(self_wait_report(vm, fiber));
                vm.sched.park(fiber, Wait::Task(h));
                return Ok(None);
            }
            check_interrupt(vm, fiber)?;
            let w = vm.sched.park(fiber, Wait::Task(h));
            sched::task_mut(vm, h).extra_mut().waiters.push((w.fiber, w.gen));
            Ok(None)
        }
        Obj::List(items) => {
            let items = items.clone();
            for &t in &items {
                match t {
                    Value::Obj(th) if matches!(vm.heap.get(th), Obj::Task(_)) => {
                        if !sched::task(vm, th).finished() {
                            return wait_on(vm, fiber, t).map(|_| None);
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
                out.push(task_outcome(vm, th)?.unwrap_or(Value::Nil));
            }
            Ok(Some(vm.heap.list(out)))
        }
        Obj::WaitGroup(g) => {
            if g.count == 0 {
                return Ok(Some(Value::Nil));
            }
            check_interrupt(vm, fiber)?;
            let w = vm.sched.park(fiber, Wait::Group(h));
            lock::group_mut(vm, h).waiters.push(w);
            Ok(None)
        }
        o => err(ErrorKind::Type, format!("cannot wait on {}", o.type_name())),
    }
}

/// A finished task's result, or its error thrown; None while it runs.
fn task_outcome(vm: &mut Vm, h: super::Handle) -> Res<Option<Value>> {
    let t = sched::task_mut(vm, h);
    match t.state {
        TaskState::Pending(_) | TaskState::Running => Ok(None),
        TaskState::Done(v) => Ok(Some(v)),
        TaskState::Failed(e) | TaskState::Cancelled(e) => {
            t.observed = true;
            Err(Fault::Throw(e))
        }
    }
}

fn self_wait_report(vm: &Vm, fiber: &Fiber) -> String {
    let at = fiber.frames.last().map_or(String::new(), |fr| {
        let pc = (fr.pc as usize).saturating_sub(1).min(fr.proto.spans.len().saturating_sub(1));
        fr.proto.file.location(fr.proto.spans.get(pc).copied().unwrap_or(fr.proto.span))
    });
    let number = fiber.sched.task.map_or(0, |t| sched::task(vm, t).number);
    format!("deadlock: fiber {number} waits on its own task at {at}\n")
}

pub fn scope_begin(fiber: &mut Fiber) {
    fiber.sched.extra_mut().scopes.push(Scope::default());
}

/// End of a `wait { }` block: true when it may continue (after rethrowing a
/// failure), false after parking until its fibers are done.
pub fn scope_end(vm: &mut Vm, fiber: &mut Fiber, abort: Option<Value>) -> Res<bool> {
    let Some(scope) = fiber.sched.scopes().last() else { return Ok(true) };
    let children = scope.children.clone();
    if abort.is_some() {
        for &c in &children {
            sched::cancel_task(vm, c);
        }
    }
    if !children.iter().all(|&c| sched::tree_done(vm, c)) {
        vm.sched.park(fiber, Wait::Scope);
        return Ok(false);
    }
    let scope = fiber.sched.extra_mut().scopes.pop().unwrap();
    if let Some(&first) = scope.errors.first() {
        if let Value::Obj(h) = first {
            if let Obj::Error(e) = vm.heap.get_mut(h) {
                e.others = scope.errors[1..].to_vec();
            }
        }
        return Err(Fault::Throw(first));
    }
    if let Some(e) = abort {
        return Err(Fault::Throw(e));
    }
    if fiber.sched.cancelled {
        return Err(Fault::Throw(sched::cancelled_error(vm)));
    }
    Ok(true)
}

/// `lock m`: true when held, false after parking (ownership is handed over).
pub fn lock(vm: &mut Vm, fiber: &mut Fiber, m: Value) -> Res<bool> {
    let h = lock::as_mutex(vm, m)?;
    if lock::try_lock(vm, fiber, h)? {
        return Ok(true);
    }
    check_interrupt(vm, fiber)?;
    let w = vm.sched.park(fiber, Wait::Lock(h));
    lock::enqueue(vm, h, w);
    fiber.sched.ret_slot = NO_SLOT;
    Ok(false)
}

pub fn unlock(vm: &mut Vm, fiber: &mut Fiber, m: Value) -> Res<()> {
    let h = lock::as_mutex(vm, m)?;
    lock::unlock(vm, fiber, h);
    Ok(())
}

/// A `for v in ch` step: Some(Some(v)) next value, Some(None) closed, None parked.
pub fn iter_recv(
    vm: &mut Vm,
    fiber: &mut Fiber,
    h: super::Handle,
    slot: usize,
    exit: u32,
) -> Res<Option<Option<Value>>> {
    if let Some((v, ok)) = chan::try_recv(vm, h) {
        return Ok(Some(ok.then_some(v)));
    }
    check_interrupt(vm, fiber)?;
    let mut w = vm.sched.park(fiber, Wait::Recv(h));
    w.two = true;
    chan::chan_mut(vm, h).recvq.push_back(w);
    fiber.sched.ret_slot = slot as u32;
    fiber.sched.extra_mut().iter_exit = Some(exit);
    Ok(None)
}

/// `yield` outside a coroutine: a voluntary switch (and a suspension point).
pub fn yield_now(vm: &mut Vm, fiber: &mut Fiber) -> Res<()> {
    check_interrupt(vm, fiber)
}

/// A parked sleep for a builtin that returned `Fault::Block`.
pub fn block_builtin(vm: &mut Vm, fiber: &mut Fiber, b: super::Block, ret: usize) -> Res<()> {
    check_interrupt(vm, fiber)?;
    match b {
        super::Block::Sleep(ms) => {
            let w = vm.sched.park(fiber, Wait::Sleep);
            sched::timer::add(vm, sched::timer::deadline(ms), sched::timer::TimerKind::Wake(w));
        }
        super::Block::Io(job) => {
            if matches!(job, sched::io::IoJob::ReadLine) {
                // Whatever was printed (a prompt) shows before we wait for input.
                vm.out.flush_if_stdout(vm.capture);
            }
            let w = vm.sched.park(fiber, Wait::Io);
            sched::io::submit(vm, w, job);
        }
    }
    fiber.sched.ret_slot = ret as u32;
    Ok(())
}
