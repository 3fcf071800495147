//! The concurrency instructions of the dispatch loop (`go`, channel operations,
//! `select`, `wait`, `lock`, `yield`): each completes at once, parks the fiber or
//! switches coroutine context. Kept apart from `exec.rs`, whose loop handles the
//! instructions that only compute.

use super::exec::Halt;
use super::fiber::Fiber;
use super::{conc, coroutine, Res, Value, Vm};
use crate::bytecode::Op;

/// What the dispatch loop does after a concurrency instruction.
pub(super) enum Step {
    /// Go on with the next instruction.
    Next,
    /// Another frame (a coroutine's context) is now on top: reload it.
    Reload,
    /// Leave the loop (the fiber parked or yields to the scheduler).
    Halt(Halt),
}

/// Runs `op` for the frame whose registers start at `base`. The frame's saved pc
/// already points past `op`; an instruction that reruns when woken steps it back.
#[inline(always)] // as when these arms were written in the loop itself
pub(super) fn concurrency_op(vm: &mut Vm, fiber: &mut Fiber, op: Op, base: usize) -> Res<Step> {
    let reg = |fiber: &Fiber, r: u8| fiber.stack[base + r as usize];
    let rerun = |fiber: &mut Fiber| fiber.frames.last_mut().unwrap().pc -= 1;
    let blocked = Step::Halt(Halt::Blocked);
    match op {
        Op::Go { base: b, argc, dropped } => {
            let slot = base + b as usize;
            let frame = fiber.frames.last().unwrap();
            let site = crate::sched::task::Site { proto: frame.proto, pc: frame.pc - 1 };
            fiber.stack[slot] = crate::sched::spawn(vm, fiber, slot, argc as usize, site, dropped)?;
        }
        Op::Recv { dst, ch } => match conc::recv(vm, fiber, reg(fiber, ch), false, base + dst as usize)? {
            Some((v, _)) => fiber.stack[base + dst as usize] = v,
            None => return Ok(blocked),
        },
        Op::Recv2 { dst, ch } => match conc::recv(vm, fiber, reg(fiber, ch), true, base + dst as usize)? {
            Some((v, ok)) => {
                fiber.stack[base + dst as usize] = v;
                fiber.stack[base + dst as usize + 1] = Value::Bool(ok);
            }
            None => return Ok(blocked),
        },
        Op::Send { ch, src } => {
            if !conc::send(vm, fiber, reg(fiber, ch), reg(fiber, src))? {
                return Ok(blocked);
            }
        }
        Op::Select { base: b, desc } => {
            let proto = fiber.frames.last().unwrap().proto;
            let at = base + b as usize;
            match conc::select(vm, fiber, at, &proto.selects[desc as usize])? {
                Some((i, v, ok)) => fiber.stack[at..at + 3].copy_from_slice(&[Value::Int(i), v, ok]),
                None => return Ok(blocked),
            }
        }
        Op::WaitOn { dst, src } => match conc::wait_on(vm, fiber, reg(fiber, src))? {
            Some(r) => fiber.stack[base + dst as usize] = r,
            None => {
                rerun(fiber);
                return Ok(blocked);
            }
        },
        Op::ScopeBegin => conc::scope_begin(fiber),
        Op::ScopeEnd | Op::ScopeAbort { .. } => {
            let abort = match op {
                Op::ScopeAbort { err } => Some(reg(fiber, err)),
                _ => None,
            };
            if !conc::scope_end(vm, fiber, abort)? {
                rerun(fiber);
                return Ok(blocked);
            }
        }
        Op::Lock { m } => {
            if !conc::lock(vm, fiber, reg(fiber, m))? {
                return Ok(blocked);
            }
        }
        Op::Unlock { m } => conc::unlock(vm, fiber, reg(fiber, m))?,
        Op::Yield { dst } => {
            if fiber.sched.in_coroutine() {
                coroutine::yield_out(vm, fiber, reg(fiber, dst), base + dst as usize);
                return Ok(Step::Reload);
            }
            fiber.stack[base + dst as usize] = Value::Nil;
            conc::yield_now(vm, fiber)?;
            return Ok(Step::Halt(Halt::Switch));
        }
        _ => unreachable!("not a concurrency instruction"),
    }
    Ok(Step::Next)
}
