//! Throwing: turning faults into values, unwinding to the innermost handler, and
//! the stack traces errors carry.

use super::exec::Halt;
use super::fiber::{Fiber, Handler, Uncaught};
use super::object::{ErrorObj, Obj};
use super::value::Value;
use super::{ErrorKind, Fault, Vm};
use std::rc::Rc;

/// Turns a fault into a thrown value and unwinds to the innermost handler; returns
/// a halt when no handler is left.
pub fn throw(vm: &mut Vm, fiber: &mut Fiber, fault: Fault) -> Option<Halt> {
    let value = match fault {
        Fault::Throw(v) => v,
        Fault::Error(kind, msg) => new_error(vm, fiber, kind, Rc::from(msg)),
        Fault::Block(_) => {
            new_error(vm, fiber, ErrorKind::Internal, Rc::from("internal: a blocking builtin escaped its call"))
        }
    };
    let mut value = value;
    // Out of a coroutine's body the error continues in its resumer.
    while fiber.handlers.is_empty() && fiber.sched.in_coroutine() {
        value = super::coroutine::die(vm, fiber, value)?;
    }
    if let Some(Handler { depth, target, reg }) = fiber.handlers.pop() {
        fiber.frames.truncate(depth as usize);
        let frame = fiber.frames.last_mut().expect("handler frame");
        frame.pc = target;
        let slot = frame.base as usize + reg as usize;
        fiber.stack[slot] = value;
        return None;
    }
    // An error value reports where it was raised (possibly in another fiber);
    // any other thrown value, where it was thrown.
    let (trace, origin) = match value {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Error(e) => (e.trace.clone(), e.origin),
            _ => (capped_trace(fiber), None),
        },
        _ => (capped_trace(fiber), None),
    };
    let site = origin.or_else(|| current_site(fiber)).expect("a frame");
    Some(Halt::Error(Box::new(Uncaught { value, span: site.span(), file: site.proto.file.clone(), trace })))
}

/// Most frames listed in a trace; deep recursion shows its ends.
const TRACE_KEEP: usize = 40;

/// An error value of `kind` carrying the fiber's current stack trace.
pub fn new_error(vm: &mut Vm, fiber: &Fiber, kind: ErrorKind, message: Rc<str>) -> Value {
    let trace = capped_trace(fiber);
    let origin = current_site(fiber);
    let e = ErrorObj { message, trace, others: Vec::new(), kind, origin };
    Value::Obj(vm.heap.alloc(Obj::Error(Box::new(e))))
}

/// The instruction the fiber is executing (its pc was saved past it).
pub fn current_site(fiber: &Fiber) -> Option<crate::sched::task::Site> {
    let f = fiber.frames.last()?;
    Some(crate::sched::task::Site { proto: f.proto, pc: f.pc.saturating_sub(1) })
}

/// The fiber's trace with the middle of a very deep stack elided.
pub fn capped_trace(fiber: &Fiber) -> Vec<Rc<str>> {
    let mut trace = fiber.trace();
    if trace.len() > TRACE_KEEP {
        let omitted = trace.len() - TRACE_KEEP;
        let tail = trace.split_off(trace.len() - 5);
        trace.truncate(TRACE_KEEP - 5);
        trace.push(Rc::from(format!("... {omitted} more frames")));
        trace.extend(tail);
    }
    trace
}
