//! The concurrency instructions of the dispatch loop (`go`, channel operations,
//! `select`, `wait`, `lock`, `yield`): each asks the scheduler (through its one
//! seam, `sched::ops`) and completes at once, parks the fiber, or switches
//! coroutine context. What a parked fiber is woken with is delivered by
//! `vm::resume`, which reads the instruction it blocked in.

use super::fiber::Fiber;
use super::fiber::Halt;
use super::value::load_value;
use super::{coroutine, Res, Value, Vm};
use crate::bytecode::Op;
use crate::sched::ops::{self, Waited};

/// What the dispatch loop does after a concurrency instruction.
pub(super) enum Step {
    /// Go on with the next instruction.
    Next,
    /// Another frame (a coroutine's context) is now on top: reload it.
    Reload,
    /// Leave the loop (the fiber parked or yields to the scheduler).
    Halt(Halt),
}

/// A constant, not a local: a local `Halt` not returned would be dropped
/// through its (out-of-line) drop glue on every channel operation.
const BLOCKED: Step = Step::Halt(Halt::Blocked);

/// Runs `op` for the frame whose registers start at `base`. The frame's saved pc
/// already points past `op` (one that runs again when woken, `wait`, is stepped
/// back by `resume`).
/// Channel operations, locks and yields are inlined in the loop; the rest are called.
#[inline(always)]
pub(super) fn concurrency_op(vm: &mut Vm, fiber: &mut Fiber, op: Op, base: usize) -> Res<Step> {
    // SAFETY: the compiler keeps register operands below the frame's register
    // count, and the stack holds them all (as for the dispatch loop's `reg!`).
    let reg = |fiber: &Fiber, r: u8| unsafe { load_value(fiber.stack.as_ptr().add(base + r as usize)) };
    super::debug::refuse_while_evaluating(vm)?;
    match op {
        Op::Recv { dst, ch } | Op::Recv2 { dst, ch } => match ops::recv(vm, reg(fiber, ch))? {
            Some((v, ok)) => {
                fiber.put(base + dst as usize, &v);
                if let Op::Recv2 { .. } = op {
                    fiber.stack[base + dst as usize + 1] = Value::Bool(ok);
                }
            }
            None => return Ok(BLOCKED),
        },
        Op::Send { ch, src } => {
            if !ops::send(vm, reg(fiber, ch), reg(fiber, src))? {
                return Ok(BLOCKED);
            }
        }
        Op::Lock { m } => {
            if !ops::lock(vm, reg(fiber, m))? {
                return Ok(BLOCKED);
            }
        }
        Op::Unlock { m } => ops::unlock(vm, reg(fiber, m))?,
        Op::Yield { dst } => {
            if fiber.in_coroutine() {
                coroutine::yield_out(vm, fiber, reg(fiber, dst), base + dst as usize);
                return Ok(Step::Reload);
            }
            fiber.stack[base + dst as usize] = Value::Nil;
            ops::yield_now(vm)?;
            return Ok(Step::Halt(Halt::Yielded));
        }
        _ => return other_op(vm, fiber, op, base),
    }
    Ok(Step::Next)
}

#[inline(never)]
fn other_op(vm: &mut Vm, fiber: &mut Fiber, op: Op, base: usize) -> Res<Step> {
    // SAFETY: the compiler keeps register operands below the frame's register
    // count, and the stack holds them all (as for the dispatch loop's `reg!`).
    let reg = |fiber: &Fiber, r: u8| unsafe { load_value(fiber.stack.as_ptr().add(base + r as usize)) };
    let site = |fiber: &Fiber| fiber.frames.last().unwrap().current_site();
    super::debug::refuse_while_evaluating(vm)?;
    match op {
        Op::Go { base: b, argc, method, dropped } => {
            let slot = base + b as usize;
            let call = &fiber.stack[slot..=slot + argc as usize + method as usize];
            // Started inside the standard library (`isolate.run`, `async.pmap`):
            // its trace and reports name the user's call instead.
            let mut at = site(fiber);
            if at.proto.file.std {
                at = fiber.raise_site().unwrap_or(at);
            }
            fiber.stack[slot] = ops::go(vm, call, method, at, dropped)?;
        }
        Op::Select { base: b, desc } => {
            let proto = fiber.frames.last().unwrap().proto;
            let (kinds, has_default) = &proto.selects[desc as usize];
            let at = base + b as usize;
            let cases: Vec<(Value, Option<Value>)> = kinds
                .iter()
                .enumerate()
                .map(|(i, &is_send)| (fiber.stack[at + 2 * i], is_send.then(|| fiber.stack[at + 2 * i + 1])))
                .collect();
            match ops::select(vm, &cases, *has_default)? {
                Some((i, v, ok)) => fiber.stack[at..at + 3].copy_from_slice(&[Value::Int(i), v, Value::Bool(ok)]),
                None => return Ok(BLOCKED),
            }
        }
        Op::WaitOn { dst, src } => match ops::wait_on(vm, reg(fiber, src), site(fiber))? {
            Waited::Ready(r) => fiber.stack[base + dst as usize] = r,
            Waited::Parked => return Ok(BLOCKED),
            Waited::OnItself(report) => return Ok(Step::Halt(Halt::Deadlock(report))),
        },
        Op::ScopeBegin => ops::scope_begin(vm),
        Op::ScopeEnd | Op::ScopeAbort { .. } => {
            let abort = match op {
                Op::ScopeAbort { err } => Some(reg(fiber, err)),
                _ => None,
            };
            if !ops::scope_end(vm, abort)? {
                return Ok(BLOCKED);
            }
        }
        _ => unreachable!("not a concurrency instruction"),
    }
    Ok(Step::Next)
}
