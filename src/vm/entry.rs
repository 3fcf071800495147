//! How a fiber enters the dispatch loop: a fiber started by `go` first makes
//! its call, and a woken fiber first receives what it was woken with.

use super::call::{call_value, Called};
use super::debug;
use super::error::throw;
use super::fiber::{Fiber, Halt, Resume};
use super::object_ops::invoke;
use super::value::{Name, Value};
use super::{Fault, Res, Vm};
use crate::bytecode::{Op, Site};
use crate::sched::ops;

/// Runs `fiber` for about `budget` back-edges and calls (a fiber started by
/// `go` first makes its call).
pub fn run(vm: &mut Vm, fiber: &mut Fiber, budget: u32) -> Halt {
    if fiber.unstarted() {
        if let Some(halt) = start(vm, fiber) {
            return halt;
        }
    }
    let start = budget.max(1);
    let mut budget = start;
    let halt = loop {
        let mut r = super::exec::dispatch(vm, fiber, &mut budget);
        if let Err(Fault::Trap) = r {
            r = on_trap(vm, fiber, &mut budget);
        }
        match r {
            Ok(halt) => break halt,
            // The instruction runs again after the collection the slice's end
            // brings (a compound assignment's from its read).
            Err(Fault::Collect) => {
                let frame = fiber.frames.last_mut().expect("a frame");
                frame.pc = frame.proto.rerun_from(frame.pc - 1);
                break Halt::Preempted;
            }
            Err(fault) => {
                if let Some(halt) = throw(vm, fiber, fault) {
                    break halt;
                }
            }
        }
    };
    ops::tick(vm, (start - budget.min(start)) as u64);
    if vm.debug.is_some() {
        super::debug::on_slice_end(vm, fiber, &halt);
    }
    halt
}

/// Hands a woken fiber what it was woken with: the result of the instruction or
/// builtin call it blocked in (read from the instruction), or an error thrown
/// there. Returns a halt if that already ends the fiber's run.
#[inline(always)] // into the scheduler's loop, so `r` is not passed through memory
pub fn resume(vm: &mut Vm, fiber: &mut Fiber, r: Resume) -> Option<Halt> {
    let Some(frame) = fiber.frames.last_mut() else { return resume_unstarted(vm, fiber, r) };
    let base = frame.base as usize;
    // SAFETY: a fiber parks only after running an instruction, so pc >= 1.
    let mut op = unsafe { *frame.proto.code.get_unchecked(frame.pc as usize - 1) };
    if let Op::Trap = op {
        op = super::debug::original(vm, frame.proto, frame.pc - 1);
    }
    match r {
        Resume::Recv(v, ok) => match op {
            Op::Recv { dst, .. } => fiber.put(base + dst as usize, &v),
            Op::Recv2 { dst, .. } => {
                fiber.put(base + dst as usize, &v);
                fiber.stack[base + dst as usize + 1] = Value::Bool(ok);
            }
            // A `for v in ch` loop: a closed channel ends the loop.
            Op::IterNext { dst, target, .. } => match ok {
                true => fiber.put(base + dst as usize, &v),
                false => frame.pc = target,
            },
            _ => unreachable!("a receive resumes a receive"),
        },
        // The result of a blocked builtin; a send or a lock has none.
        Resume::Value(v) => {
            if let Op::Call { base: b, .. } | Op::CallGlobal { base: b, .. } | Op::Invoke { base: b, .. } = op {
                fiber.put(base + b as usize, &v);
            }
        }
        Resume::Select(i, v, ok) => {
            let Op::Select { base: b, .. } = op else { unreachable!("a select resumes a select") };
            let at = base + b as usize;
            fiber.stack[at..at + 3].copy_from_slice(&[Value::Int(i as i64), v, Value::Bool(ok)]);
        }
        Resume::Throw(e) => return throw(vm, fiber, Fault::Throw(e)),
        // `wait` and the end of a `wait { }` block run again; until then the
        // fiber's position stays on them (for reports and errors thrown in).
        Resume::Retry => frame.pc -= 1,
    }
    None
}

/// A fiber whose first call, a builtin, blocked: its result is the fiber's.
#[cold]
fn resume_unstarted(vm: &mut Vm, fiber: &mut Fiber, r: Resume) -> Option<Halt> {
    match r {
        Resume::Value(v) | Resume::Recv(v, _) | Resume::Select(_, v, _) => Some(Halt::Done(v)),
        Resume::Throw(e) => throw(vm, fiber, Fault::Throw(e)),
        // A builtin that waited for a descriptor runs again.
        Resume::Retry => start(vm, fiber),
    }
}

/// Makes a new fiber's first call; a halt if that already stopped it.
#[cold]
#[inline(never)]
pub(super) fn start(vm: &mut Vm, fiber: &mut Fiber) -> Option<Halt> {
    if let Some(s) = fiber.start.as_mut() {
        s.done = true;
        if s.stillborn {
            if let Err(fault) = crate::sched::ops::check_interrupt(vm) {
                return throw(vm, fiber, fault);
            }
        }
    }
    match first_call(vm, fiber) {
        Ok(Called::Frame) => None,
        Ok(Called::Value) => Some(Halt::Done(fiber.stack[0])),
        Ok(Called::Blocked) => Some(Halt::Blocked),
        Err(fault) => throw(vm, fiber, fault),
    }
}

/// The call a fiber started by `go` begins with, made as the `go` expression
/// would make it (see `Fiber::for_call`); its result goes to stack slot 0.
fn first_call(vm: &mut Vm, fiber: &mut Fiber) -> Res<Called> {
    let start = fiber.start.expect("a fiber to start");
    let argc = start.argc as usize;
    if start.method {
        let name = match vm.heap.as_str(fiber.stack[0]) {
            Some(s) => Name::new(s.s.clone()),
            None => unreachable!("a method name"),
        };
        return invoke(vm, fiber, fiber.stack[1], &name, 0, argc);
    }
    call_value(vm, fiber, fiber.stack[0], 1, argc, 0)
}

/// A fiber's dispatch stopped on a trap: the debugger sees it, then the
/// original instruction runs with the trap lifted until the next back-edge or
/// call (nothing before that can come back to the same pc), and the trap is
/// put back. Returns how the run continues, as `dispatch` would.
#[cold]
#[inline(never)]
fn on_trap(vm: &mut Vm, fiber: &mut Fiber, budget: &mut u32) -> Res<Halt> {
    loop {
        let frame = fiber.frames.last().expect("a trapped frame");
        let site = Site { proto: frame.proto, pc: frame.pc };
        debug::with_hook(vm, |h, vm| h.trapped(vm, fiber, site));
        let Some(op) = vm.debug.as_ref().and_then(|d| d.traps.get(&debug::key(site)).copied()) else {
            // The debugger took the trap away (or left): run on.
            match super::exec::dispatch(vm, fiber, budget) {
                Err(Fault::Trap) => continue,
                other => return other,
            }
        };
        debug::patch(site, op);
        let mut one = 1;
        let mut r = super::exec::dispatch(vm, fiber, &mut one);
        if vm.debug.as_ref().is_some_and(|d| d.traps.contains_key(&debug::key(site))) {
            debug::patch(site, Op::Trap);
        }
        if matches!(r, Ok(Halt::Preempted)) && one == 0 {
            if *budget <= 1 {
                *budget = 0;
                return r;
            }
            *budget -= 1;
            r = super::exec::dispatch(vm, fiber, budget);
        }
        match r {
            Err(Fault::Trap) => continue,
            other => return other,
        }
    }
}
