//! Stackful coroutines. A coroutine owns a context (value stack, frames, handlers);
//! resuming swaps it with the running fiber's, yielding swaps back. Frames stay on
//! the heap and nothing is copied, so `yield` works from any depth — nested calls,
//! recursion, callbacks of `map` or `sort` — and a coroutine that blocks blocks the
//! fiber that resumed it.

use super::call::{call_value, Called};
use super::fiber::{CoState, Context, Coroutine, Fiber};
use super::object::Obj;
use super::NativeFn;
use super::{err, Fault, Handle, Res, Value, Vm};
use crate::limits::MAX_FRAMES;
use crate::vm::ErrorKind;
use std::rc::Rc;

/// Message of the error `close()` raises at the suspended `yield`.
const CLOSED: &str = "coroutine closed";

/// How a coroutine is entered.
pub enum Entry {
    Resume(Value),
    Throw(Value),
    Close,
}

fn co_mut(vm: &mut Vm, h: Handle) -> &mut Coroutine {
    match vm.heap.get_mut(h) {
        Obj::Coroutine(c) => c,
        _ => unreachable!("not a coroutine"),
    }
}

fn swap(fiber: &mut Fiber, ctx: &mut Context) {
    std::mem::swap(&mut fiber.stack, &mut ctx.stack);
    std::mem::swap(&mut fiber.frames, &mut ctx.frames);
    std::mem::swap(&mut fiber.handlers, &mut ctx.handlers);
    std::mem::swap(&mut fiber.shield, &mut ctx.shield);
}

/// After a switch of context: a coroutine resumed inside a `finally` block
/// runs shielded too (`outer_shield`), and the scheduler learns the result.
fn reshield(vm: &mut Vm, fiber: &mut Fiber, before: bool) {
    if before != fiber.shielded() {
        crate::sched::ops::set_shielded(vm, fiber.shielded());
    }
}

/// Enters coroutine `h` from the running fiber; what `resume` returns goes to
/// `ret`. Returns `Called::Frame` when execution continues inside the coroutine.
pub fn enter(
    vm: &mut Vm,
    fiber: &mut Fiber,
    h: Handle,
    entry: Entry,
    ret: usize,
    iter_exit: Option<u32>,
) -> Res<Called> {
    let co = co_mut(vm, h);
    match (co.state, &entry) {
        (CoState::Running, _) => return err(ErrorKind::Coroutine, "cannot resume a running coroutine"),
        (CoState::Done, Entry::Close) | (CoState::Fresh, Entry::Close) => {
            co.state = CoState::Done;
            fiber.stack[ret] = Value::Nil;
            return Ok(Called::Value);
        }
        (CoState::Done, _) => return err(ErrorKind::Coroutine, "cannot resume a finished coroutine"),
        (CoState::Fresh, Entry::Throw(e)) => {
            co.state = CoState::Done;
            return Err(Fault::Throw(*e));
        }
        _ => {}
    }
    if let (CoState::Fresh, Entry::Resume(v), func) = (co.state, &entry, co.func) {
        if !matches!(func, Value::Obj(f) if matches!(vm.heap.get(f), Obj::Closure(_))) {
            return builtin_body(vm, fiber, h, *v, ret, iter_exit);
        }
    }
    // The resumers' frames are swapped out but still held: nested resumes count
    // them, so a coroutine resuming coroutines cannot grow without bound.
    let outer = fiber.co_stack.as_ref().and_then(|c| c.last()).map_or(0, |&(_, n)| n) + fiber.frames.len();
    if outer >= MAX_FRAMES {
        return err(ErrorKind::StackOverflow, format!("stack overflow ({MAX_FRAMES} nested calls)"));
    }
    let co = co_mut(vm, h);
    let fresh = co.state == CoState::Fresh;
    co.ret = ret as u32;
    co.iter_exit = iter_exit;
    co.state = CoState::Running;
    let before = fiber.shielded();
    swap(fiber, &mut co.ctx);
    fiber.outer_shield += co.ctx.shield;
    let func = co.func;
    let yield_slot = co.yield_slot as usize;
    reshield(vm, fiber, before);
    fiber.co_stack.get_or_insert_with(Default::default).push((h, outer));
    match entry {
        Entry::Resume(v) if fresh => {
            // The argument fills the first parameter; further required ones get nil.
            let (wants_arg, required) = match func {
                Value::Obj(f) => match vm.heap.get(f) {
                    Obj::Closure(c) => (c.proto.nparams > 0 || c.proto.has_rest, c.proto.nrequired as usize),
                    _ => (true, 1),
                },
                _ => (true, 1),
            };
            fiber.stack.clear();
            fiber.stack.push(func);
            if wants_arg {
                fiber.stack.push(v);
            }
            while fiber.stack.len() < required + 1 {
                fiber.stack.push(Value::Nil);
            }
            let argc = fiber.stack.len() - 1;
            match call_value(vm, fiber, func, 1, argc, 0) {
                Ok(Called::Frame) => Ok(Called::Frame),
                Ok(_) => {
                    // A builtin body ran at once: the coroutine is finished.
                    let v = fiber.stack[0];
                    finish(vm, fiber, v);
                    Ok(Called::Value)
                }
                Err(e) => {
                    leave(vm, fiber);
                    Err(e)
                }
            }
        }
        Entry::Resume(v) => {
            fiber.stack[yield_slot] = v;
            Ok(Called::Frame)
        }
        Entry::Throw(e) => Err(Fault::Throw(e)),
        Entry::Close => {
            co_mut(vm, h).closing = true;
            Err(Fault::Throw(super::error::bare_error(vm, ErrorKind::CoroutineClosed, CLOSED)))
        }
    }
}

/// A builtin as a coroutine's body cannot yield: it is called in the resumer,
/// where it may block like any call, and the coroutine is finished. The
/// argument is passed from here, not the stack: growing the stack would move
/// the registers under the running instruction. `resume()` (a nil argument)
/// calls it with none, so builtins that take no argument work too.
fn builtin_body(vm: &mut Vm, fiber: &mut Fiber, h: Handle, arg: Value, ret: usize, exit: Option<u32>) -> Res<Called> {
    let co = co_mut(vm, h);
    co.state = CoState::Done;
    let func = co.func;
    let native = match func {
        Value::Obj(f) => match vm.heap.get(f) {
            Obj::Native(n) => Some(n.func),
            _ => None,
        },
        _ => None,
    };
    let args: &[Value] = if matches!(arg, Value::Nil) { &[] } else { &[arg] };
    let called = match native {
        Some(NativeFn::Value(f)) => {
            let v = f(vm, args)?;
            fiber.put(ret, &v);
            Called::Value
        }
        Some(NativeFn::Full(f)) => {
            let r = f(vm, fiber, args)?;
            super::call::builtin_ret(vm, fiber, r, ret)?
        }
        Some(NativeFn::Host(i)) => {
            let r = vm.host_fns[i as usize].clone()(vm, fiber, args)?;
            super::call::builtin_ret(vm, fiber, r, ret)?
        }
        None => return err(ErrorKind::Type, format!("cannot call {}", vm.heap.type_name(func))),
    };
    // A `for` loop over it gets no value: it ends.
    if let (Called::Value, Some(pc)) = (&called, exit) {
        fiber.frames.last_mut().expect("a for loop's frame").pc = pc;
    }
    Ok(called)
}

/// Swaps the resumer's context back in; returns the coroutine left.
fn leave(vm: &mut Vm, fiber: &mut Fiber) -> Handle {
    let (h, _) = fiber.co_stack.as_mut().and_then(|c| c.pop()).expect("inside a coroutine");
    let co = co_mut(vm, h);
    let before = fiber.shielded();
    fiber.outer_shield -= co.ctx.shield;
    swap(fiber, &mut co.ctx);
    reshield(vm, fiber, before);
    h
}

/// `yield v` inside a coroutine: back to the resumer, which gets `v`.
pub fn yield_out(vm: &mut Vm, fiber: &mut Fiber, v: Value, yield_slot: usize) {
    let h = leave(vm, fiber);
    let co = co_mut(vm, h);
    co.yield_slot = yield_slot as u32;
    co.state = if co.closing { CoState::Done } else { CoState::Suspended };
    let ret = co.ret as usize;
    fiber.stack[ret] = if co.closing { Value::Nil } else { v };
}

/// The body returned `v`: the coroutine is finished and the resumer gets `v`
/// (a `for` loop over it ends instead).
pub fn finish(vm: &mut Vm, fiber: &mut Fiber, v: Value) {
    let h = leave(vm, fiber);
    let co = co_mut(vm, h);
    co.state = CoState::Done;
    co.ctx = Context::default();
    let (ret, exit, closing) = (co.ret as usize, co.iter_exit, co.closing);
    match exit {
        Some(pc) => fiber.frames.last_mut().unwrap().pc = pc,
        None => fiber.stack[ret] = if closing { Value::Nil } else { v },
    }
}

/// An error left the coroutine's body: it is finished, and the error continues in
/// the resumer (with the resumer's frames added to its trace) — unless it was the
/// error of `close()`, which ends there. Returns the error still to throw.
pub fn die(vm: &mut Vm, fiber: &mut Fiber, e: Value) -> Option<Value> {
    let h = leave(vm, fiber);
    let co = co_mut(vm, h);
    co.state = CoState::Done;
    co.ctx = Context::default();
    let (ret, closing) = (co.ret as usize, co.closing);
    // The error `close()` raised ends here; any other (from a finally) goes on.
    let close_error = super::error::is_kind(vm, e, ErrorKind::CoroutineClosed);
    if closing && close_error {
        fiber.stack[ret] = Value::Nil;
        return None;
    }
    if let Value::Obj(eh) = e {
        let more: Vec<Rc<str>> = fiber.trace();
        if let Obj::Error(er) = vm.heap.get_mut(eh) {
            if er.trace.len() < 200 {
                er.trace.extend(more.into_iter().take(40));
            }
        }
    }
    Some(e)
}

/// `co.done`
pub fn is_done(vm: &Vm, h: Handle) -> bool {
    matches!(vm.heap.get(h), Obj::Coroutine(c) if c.state == CoState::Done)
}
