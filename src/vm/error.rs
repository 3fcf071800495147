//! Throwing: turning faults into values, unwinding to the innermost handler, and
//! the stack traces errors carry.

use super::fiber::Halt;
use super::fiber::{Fiber, Handler, Uncaught};
use super::object::{ErrorObj, Obj};
use super::value::Value;
use super::{ErrorKind, Fault, Vm};
use crate::bytecode::Site;
use std::rc::Rc;

/// Turns a fault into a thrown value and unwinds to the innermost handler; returns
/// a halt when no handler is left.
pub fn throw(vm: &mut Vm, fiber: &mut Fiber, fault: Fault) -> Option<Halt> {
    let mut value = match fault {
        Fault::Throw(v) => v,
        Fault::Error(e) => new_error(vm, fiber, e.0, Rc::from(e.1)),
        // Where an instruction cannot be run again (a builtin called back
        // from another), the request just fails.
        Fault::Collect => {
            let msg = vm.heap.over_message(0);
            new_error(vm, fiber, ErrorKind::Memory, Rc::from(msg))
        }
        Fault::Trap => unreachable!("a trap is the debugger's (entry.rs), never thrown"),
    };
    place_bare_error(vm, fiber, value);
    if vm.debug.is_some() {
        super::debug::on_throw(vm, fiber, value);
    }
    // Out of a coroutine's body the error continues in its resumer.
    while fiber.handlers.is_empty() && fiber.in_coroutine() {
        value = super::coroutine::die(vm, fiber, value)?;
    }
    if let Some(Handler { depth, target, reg, shield }) = fiber.handlers.pop() {
        if fiber.shield != shield {
            // Thrown out of a `finally` block: it no longer runs.
            let before = fiber.shielded();
            fiber.shield = shield;
            if before != fiber.shielded() {
                crate::sched::ops::set_shielded(vm, fiber.shielded());
            }
        }
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
    let site = origin.or_else(|| fiber.raise_site()).expect("a frame or a go site");
    Some(Halt::Error(Box::new(Uncaught { value, span: site.span(), file: site.file().clone(), trace })))
}

/// An error the scheduler raised (`bare_error`: cancellation, a closed channel,
/// failed I/O) takes the position of the fiber it is first thrown into: where
/// that fiber was blocked.
fn place_bare_error(vm: &mut Vm, fiber: &Fiber, v: Value) {
    let Value::Obj(h) = v else { return };
    let bare = matches!(vm.heap.get(h), Obj::Error(e) if e.origin.is_none());
    if bare {
        let (mut trace, origin) = (capped_trace(fiber), fiber.raise_site());
        if let Obj::Error(e) = vm.heap.get_mut(h) {
            // The stack goes before what the scheduler noted (why it was cancelled).
            trace.append(&mut e.trace);
            e.trace = trace;
            e.origin = origin;
        }
    }
}

/// Most frames listed in a trace; deep recursion shows its ends.
const TRACE_KEEP: usize = 40;

/// The one constructor of error objects.
fn error_object(vm: &mut Vm, kind: ErrorKind, message: Rc<str>, trace: Vec<Rc<str>>, origin: Option<Site>) -> Value {
    let e = ErrorObj { message, trace, others: Vec::new(), kind, origin };
    Value::Obj(vm.heap.alloc(Obj::Error(Box::new(e))))
}

/// An error value raised where the fiber is, carrying its stack trace.
pub fn new_error(vm: &mut Vm, fiber: &Fiber, kind: ErrorKind, message: Rc<str>) -> Value {
    error_object(vm, kind, message, capped_trace(fiber), fiber.raise_site())
}

/// An error value raised outside any fiber's code (by the scheduler: a closed
/// channel, cancellation, failed I/O); it is positioned where it is thrown.
pub fn bare_error(vm: &mut Vm, kind: ErrorKind, message: &str) -> Value {
    error_object(vm, kind, Rc::from(message), Vec::new(), None)
}

/// Is `v` an error of this kind?
pub fn is_kind(vm: &Vm, v: Value, kind: ErrorKind) -> bool {
    matches!(v, Value::Obj(h) if matches!(vm.heap.get(h), Obj::Error(e) if e.kind == kind))
}

/// The fiber's trace with the middle of a very deep stack elided.
pub fn capped_trace(fiber: &Fiber) -> Vec<Rc<str>> {
    let frames = fiber.shown_frames();
    ends_of(frames.clone().count(), frames, "frames", crate::vm::Frame::trace_line)
}

/// The lines of `n` items, the first `TRACE_KEEP - 5` and the last 5 of a
/// longer run with `... N more NOUN` between (a deep stack, a chain of a
/// million fibers): only the lines kept are made.
pub fn ends_of<T>(n: usize, items: impl Iterator<Item = T>, noun: &str, line: impl Fn(T) -> Rc<str>) -> Vec<Rc<str>> {
    let long = n > TRACE_KEEP;
    let mut lines = Vec::with_capacity(n.min(TRACE_KEEP + 1));
    for (i, item) in items.enumerate() {
        if long && i == TRACE_KEEP - 5 {
            lines.push(Rc::from(format!("... {} more {noun}", n - TRACE_KEEP)));
        }
        if !long || !(TRACE_KEEP - 5..n - 5).contains(&i) {
            lines.push(line(item));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        ends_of(n, 0..n, "frames", |i| Rc::from(i.to_string())).iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn a_long_run_keeps_its_ends() {
        assert_eq!(lines(TRACE_KEEP), (0..TRACE_KEEP).map(|i| i.to_string()).collect::<Vec<_>>());
        let l = lines(1000);
        assert_eq!(l.len(), TRACE_KEEP + 1);
        assert_eq!(l[TRACE_KEEP - 6], (TRACE_KEEP - 6).to_string());
        assert_eq!(l[TRACE_KEEP - 5], format!("... {} more frames", 1000 - TRACE_KEEP));
        assert_eq!(l[TRACE_KEEP - 4..], ["995", "996", "997", "998", "999"]);
    }
}
