//! Calling a value: closures get a new heap frame; builtins run at once and
//! their `Ret` is acted on here, the one path for builtin functions and methods.

use super::builtin::{NativeFn, Ret};
use super::fiber::{Fiber, Frame};
use super::object::Obj;
use super::value::Value;
use super::{err, Res, Vm};
use crate::limits::MAX_FRAMES;
use crate::vm::ErrorKind;

/// What a call did.
pub enum Called {
    /// A new frame was pushed; the dispatch loop continues in it.
    Frame,
    /// The result is already in the return slot.
    Value,
    /// A builtin parked the fiber (`sleep`); its result is delivered when it wakes.
    Blocked,
}

/// Calls `callee` with the `argc` arguments at `stack[args..]`; the result goes to
/// `stack[ret]` (now for natives, when the frame returns for closures).
pub fn call_value(vm: &mut Vm, fiber: &mut Fiber, callee: Value, args: usize, argc: usize, ret: usize) -> Res<Called> {
    let Value::Obj(h) = callee else {
        return err(ErrorKind::Type, format!("cannot call {}", vm.heap.type_name(callee)));
    };
    match vm.heap.get(h) {
        Obj::Closure(c) => {
            let proto = c.proto;
            let np = proto.nparams as usize;
            check_arity(&proto, argc)?;
            if fiber.frames.len() >= MAX_FRAMES {
                return err(ErrorKind::StackOverflow, format!("stack overflow ({MAX_FRAMES} nested calls)"));
            }
            let need = args + proto.nregs as usize;
            if fiber.stack.len() < need {
                fiber.grow_stack(need, &mut vm.heap);
            }
            if proto.has_rest {
                let extra = if argc > np { fiber.stack[args + np..args + argc].to_vec() } else { Vec::new() };
                fiber.stack[args + np] = vm.heap.list(extra);
            }
            for slot in &mut fiber.stack[args + argc.min(np)..args + np] {
                *slot = Value::Nil;
            }
            fiber.frames.push(Frame {
                proto,
                closure: Some(h),
                pc: 0,
                base: args as u32,
                ret: ret as u32,
                argc: argc.min(255) as u8,
            });
            Ok(Called::Frame)
        }
        Obj::Native(n) => match n.func {
            // Most builtins only compute a value: the short way, without a `Ret`.
            NativeFn::Value(f) => {
                let v = f(vm, &fiber.stack[args..args + argc]).map_err(|e| moved(vm, fiber, args, argc, e))?;
                fiber.put(ret, &v);
                Ok(Called::Value)
            }
            NativeFn::Full(f) => {
                let r = f(vm, fiber, &fiber.stack[args..args + argc]).map_err(|e| moved(vm, fiber, args, argc, e))?;
                builtin_ret(vm, fiber, r, ret)
            }
            NativeFn::Host(i) => {
                let f = vm.host_fns[i as usize].clone();
                let r = f(vm, fiber, &fiber.stack[args..args + argc]).map_err(|e| moved(vm, fiber, args, argc, e))?;
                builtin_ret(vm, fiber, r, ret)
            }
        },
        o => err(ErrorKind::Type, format!("cannot call {}", o.type_name())),
    }
}

/// A builtin's error, naming the crossing if it refused a resource that moved.
#[cold]
pub(super) fn moved(vm: &Vm, fiber: &Fiber, args: usize, argc: usize, e: super::Fault) -> super::Fault {
    super::object_ops::moved_argument(vm, &fiber.stack[args..args + argc], e)
}

/// Acts on what a builtin returned; its result goes to `stack[ret]`.
pub fn builtin_ret(vm: &mut Vm, fiber: &mut Fiber, r: Ret, ret: usize) -> Res<Called> {
    match r {
        Ret::Value(v) => {
            if let Some((kind, msg)) = vm.heap.take_oversize() {
                return err(kind, msg);
            }
            fiber.put(ret, &v);
            Ok(Called::Value)
        }
        Ret::Call(f, args) => {
            // The arguments go above every live register; the result to `ret`.
            let at = fiber.live_top().max(ret + 1);
            if fiber.stack.len() < at + args.len() {
                fiber.stack.resize(at + args.len(), Value::Nil);
            }
            fiber.stack[at..at + args.len()].copy_from_slice(&args);
            call_value(vm, fiber, f, at, args.len(), ret)
        }
        Ret::Block(b) => {
            super::debug::refuse_while_evaluating(vm)?;
            crate::sched::ops::block(vm, b)?;
            Ok(Called::Blocked)
        }
    }
}

/// Errors unless `proto` accepts `argc` arguments.
pub fn check_arity(proto: &crate::bytecode::Proto, argc: usize) -> Res<()> {
    if argc < proto.nrequired as usize || (argc > proto.nparams as usize && !proto.has_rest) {
        return err(ErrorKind::Type, arity_message(proto, argc));
    }
    Ok(())
}

fn arity_message(proto: &crate::bytecode::Proto, argc: usize) -> String {
    let (nr, np) = (proto.nrequired as usize, proto.nparams as usize);
    arity_text(proto.display_name(), nr, np, proto.has_rest, argc)
}

/// "f expects 2 arguments, got 3" (also what `csp check` says before running).
pub fn arity_text(name: &str, nrequired: usize, nparams: usize, has_rest: bool, argc: usize) -> String {
    let expected = if has_rest {
        format!("at least {nrequired}")
    } else if nrequired == nparams {
        format!("{nparams}")
    } else {
        format!("{nrequired} to {nparams}")
    };
    let s = if expected == "1" || expected == "at least 1" { "" } else { "s" };
    format!("{name} expects {expected} argument{s}, got {argc}")
}
