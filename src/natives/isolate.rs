//! The hidden builtins under `std/isolate` (std/isolate.csp; docs/isolates.md).
//! On the sending side, a job: packed in the caller's fiber (so what cannot
//! cross fails at the call), sent to a worker when its fiber first runs,
//! waited for, opened, and ended (cancelled remotely, and waited for, when
//! its fiber was cancelled). On a worker, what its driver (isolate/driver.csp)
//! needs: the next messages, unpacked, a call, and the answer.

use super::args::arity;
use crate::isolate::clone::{self, Packet};
use crate::isolate::pool::{Answer, Msg, Pool};
use crate::sched::Crossing;
use crate::vm::builtin::{Blocking, Ret};
use crate::vm::host::{Class, HostObject};
use crate::vm::{err, ErrorKind, Fault, Fiber, NativeFn, Obj, Res, Value, Vm};
use std::sync::Arc;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("isolate.count", NativeFn::Value(count));
    vm.define_hidden("isolate.pack", NativeFn::Full(pack));
    vm.define_hidden("isolate.result", NativeFn::Full(result));
    vm.define_hidden("isolate.open", NativeFn::Full(open));
    vm.define_hidden("isolate.end", NativeFn::Full(end));
    vm.define_hidden("isolate.next", NativeFn::Full(next));
    vm.define_hidden("isolate.take", NativeFn::Value(take));
    vm.define_hidden("isolate.call", NativeFn::Full(call));
    vm.define_hidden("isolate.reply", NativeFn::Value(reply));
    vm.define_hidden("isolate.arrived", NativeFn::Value(arrived));
}

static CLASS: Class = Class { name: "isolate job", methods: &[], next: None, field: None };

/// A function and its arguments on their way to a worker, and its answer.
struct Job {
    call: Option<Packet>,
    answer: Arc<Answer>,
    /// The pool, the worker and the job's id there, once sent.
    sent: Option<(Arc<Pool>, usize, u64)>,
}

impl HostObject for Job {
    fn class(&self) -> &'static Class {
        &CLASS
    }
}

fn job(vm: &mut Vm, v: Value) -> Res<&mut Job> {
    let Value::Obj(h) = v else { return err(ErrorKind::Type, "not an isolate job") };
    match vm.heap.host_mut::<Job>(h) {
        Some(j) => Ok(j),
        None => err(ErrorKind::Type, "not an isolate job"),
    }
}

/// `__isolate_count()`: the pool's size (not starting it).
fn count(vm: &mut Vm, _: &[Value]) -> Res<Value> {
    Ok(Value::Int(crate::isolate::count(vm) as i64))
}

/// `__isolate_pack(name, f, args)`: the job of `f(...args)`, packed now.
fn pack(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("isolate.pack", args, 3, 3)?;
    let name = vm.heap.as_str(args[0]).map_or(String::new(), |s| s.s.to_string());
    let f = args[1];
    let callable = matches!(f, Value::Obj(h) if matches!(vm.heap.get(h), Obj::Closure(_) | Obj::Native(_)));
    if !callable {
        return err(ErrorKind::Type, format!("{name}() needs a function, not {}", vm.heap.type_name(f)));
    }
    let mut values = vec![f];
    values.extend(vm.heap.as_list(args[2]).map(|l| l.to_vec()).unwrap_or_default());
    let crossing = || {
        let at = fiber.raise_site().map_or(String::new(), |s| format!(" at {}", s.location()));
        format!("passed to {name}{at}")
    };
    let call = clone::pack(vm, &values, &crossing).or_else(|c| {
        // The function is argument 0 of what was packed; say so as people count.
        let c = clone::CannotCross { path: c.path.replace("argument 1", "the function"), ..c };
        let c = renumber(c);
        err(ErrorKind::Type, format!("{name}(): {}", c.message()))
    })?;
    let job = Job { call: Some(call), answer: Arc::default(), sent: None };
    Ok(Ret::Value(vm.heap.host_object(job)))
}

/// Arguments were packed after the function: "argument 3" is the caller's 2.
fn renumber(mut c: clone::CannotCross) -> clone::CannotCross {
    if let Some(rest) = c.path.strip_prefix("argument ") {
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse::<usize>() {
            c.path = format!("argument {}{}", n - 1, &rest[digits.len()..]);
        }
    }
    c
}

/// `__isolate_result(job)`: sends the job (the first time) and waits for its
/// answer; cancelling the waiting fiber cancels the job.
fn result(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("isolate.result", args, 1, 1)?;
    if job(vm, args[0])?.sent.is_none() {
        let pool = crate::isolate::pool(vm).or_else(|m| err(ErrorKind::Internal, m))?;
        let flow = crate::sched::ops::trace_out(vm, Crossing::Job);
        let j = job(vm, args[0])?;
        let mut call = j.call.take().unwrap_or_default();
        call.flow = flow;
        let (worker, id) = pool.submit(call, j.answer.clone());
        j.sent = Some((pool, worker, id));
    }
    let j = job(vm, args[0])?;
    if j.answer.is_in() {
        return Ok(Ret::Value(Value::Nil));
    }
    let answer = j.answer.clone();
    let (pool, worker, id) = j.sent.clone().expect("sent above");
    let start = Box::new(move |reply| answer.wait_with(reply));
    let cancel = Box::new(move || pool.cancel(worker, id));
    Ok(Ret::Block(Blocking::Isolate(start, cancel)))
}

/// `__isolate_open(job)`: the job's result, or its error thrown here with
/// both stacks: where it failed, then where it was run from.
fn open(vm: &mut Vm, fiber: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("isolate.open", args, 1, 1)?;
    let j = job(vm, args[0])?;
    let worker = j.sent.as_ref().map_or(0, |s| s.1);
    let Some(outcome) = j.answer.take() else { return err(ErrorKind::Internal, "the job has no answer yet") };
    let (mut packet, failed) = match outcome {
        Ok(p) => (p, false),
        Err(p) => (p, true),
    };
    crate::sched::ops::trace_in(vm, packet.flow, Crossing::Answer);
    let unpacked = clone::unpack(vm, &mut packet).or_else(|m| err(ErrorKind::Value, m))?;
    let v = unpacked.values.first().copied().unwrap_or(Value::Nil);
    if !failed {
        return Ok(Ret::Value(v));
    }
    if let Value::Obj(h) = v {
        let mut local = crate::vm::error::capped_trace(fiber);
        let here = fiber.raise_site();
        if let Obj::Error(e) = vm.heap.get_mut(h) {
            e.trace.push(format!("worker isolate {}, for the fiber below", worker + 1).into());
            e.trace.append(&mut local);
            e.origin = e.origin.or(here);
        }
    }
    Err(Fault::Throw(v))
}

/// `__isolate_end(job)` (in a `finally`): if the job is still running (its
/// fiber was cancelled), cancels it and waits until it has ended there.
fn end(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("isolate.end", args, 1, 1)?;
    let j = job(vm, args[0])?;
    let Some((pool, worker, id)) = j.sent.clone() else { return Ok(Ret::Value(Value::Nil)) };
    if j.answer.is_in() {
        return Ok(Ret::Value(Value::Nil));
    }
    pool.cancel(worker, id);
    let answer = j.answer.clone();
    let start = Box::new(move |reply| answer.wait_with(reply));
    Ok(Ret::Block(Blocking::Isolate(start, Box::new(|| {}))))
}

/// The worker's inbox (only a worker's driver calls these).
fn inbox(vm: &mut Vm) -> Res<Arc<crate::isolate::pool::Inbox>> {
    let local = crate::isolate::local(vm);
    match (&local.pool, local.worker) {
        (Some(p), Some(i)) => Ok(p.inboxes[i].clone()),
        _ => err(ErrorKind::Internal, "only a worker isolate has an inbox"),
    }
}

/// `__isolate_next()`: waits until messages are in the inbox.
fn next(vm: &mut Vm, _: &Fiber, _: &[Value]) -> Res<Ret> {
    let inbox = inbox(vm)?;
    let start = Box::new(move |reply| inbox.wait_with(reply));
    Ok(Ret::Block(Blocking::Isolate(start, Box::new(|| {}))))
}

/// `__isolate_take()`: the inbox's messages: `[id, inits, f, args, flow]`
/// for a job (`flow`: its `--trace` flow), `[id]` for a cancellation, `[]` for the program's end. A job whose call cannot be unpacked here
/// is answered with the error at once.
fn take(vm: &mut Vm, _: &[Value]) -> Res<Value> {
    let inbox = inbox(vm)?;
    let mut out = Vec::new();
    for m in inbox.take() {
        match m {
            Msg::Cancel(id) => out.push(vm.heap.list(vec![Value::Int(id as i64)])),
            Msg::End => out.push(vm.heap.list(Vec::new())),
            Msg::Dump => eprint!("{}", crate::isolate::worker::fiber_dump(vm)),
            Msg::Job { id, mut call, answer } => match clone::unpack(vm, &mut call) {
                Ok(u) => {
                    // Its fiber here and its stand-in there count as one.
                    crate::sched::ops::exempt_fibers(vm, 1);
                    crate::isolate::units::mark_ran(vm, &u.inits);
                    let inits = u.inits.iter().map(|&p| entry_closure(vm, p)).collect();
                    let inits = vm.heap.list(inits);
                    let args = vm.heap.list(u.values[1..].to_vec());
                    let flow = Value::Int(call.flow as i64);
                    out.push(vm.heap.list(vec![Value::Int(id as i64), inits, u.values[0], args, flow]));
                }
                Err(m) => {
                    let e = crate::vm::error::bare_error(vm, ErrorKind::Value, &m);
                    let packed = clone::pack(vm, &[e], &String::new).expect("an error always crosses");
                    // Out of the load before the sender hears (see `reply`).
                    inbox.finished(id);
                    answer.give(Err(packed));
                }
            },
        }
    }
    Ok(vm.heap.list(out))
}

/// A function of an entry's top level (no captured variables), to call.
fn entry_closure(vm: &mut Vm, proto: crate::bytecode::ProtoRef) -> Value {
    let c = crate::vm::object::Closure { proto, upvals: Box::new([]) };
    Value::Obj(vm.heap.alloc(Obj::Closure(c)))
}

/// `__isolate_call(f, args)`: `f(...args)`.
fn call(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("isolate.call", args, 2, 2)?;
    let list = vm.heap.as_list(args[1]).map(|l| l.to_vec()).unwrap_or_default();
    Ok(Ret::Call(args[0], list))
}

/// `__isolate_reply(id, value, error)`: answers the job with its result or
/// its error (nil: none); output printed so far goes out first, so it comes
/// before anything the sender prints after.
fn reply(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("isolate.reply", args, 3, 3)?;
    let Value::Int(id) = args[0] else { return err(ErrorKind::Type, "a job id is an int") };
    let (id, failed) = (id as u64, !matches!(args[2], Value::Nil));
    let v = if failed { args[2] } else { args[1] };
    if failed {
        strip_driver(vm, v);
    }
    let mut packed = clone::pack(vm, &[v], &|| "returned by isolate.run's function".into()).or_else(|c| {
        err(
            ErrorKind::Type,
            format!("the result of isolate.run's function: {}", c.message().replace("argument 1", "the result")),
        )
    })?;
    packed.flow = crate::sched::ops::trace_out(vm, Crossing::Answer);
    vm.out.flush();
    let inbox = inbox(vm)?;
    let answer = inbox.answer(id);
    // The job leaves this worker's load before its sender hears: a sender
    // woken by the answer may send its next job at once, and must see this
    // worker free (else it can pile two jobs on one worker while the other
    // idles, as isolate.map's parts did).
    if inbox.finished(id) {
        crate::sched::ops::exempt_fibers(vm, -1);
    }
    if let Some(answer) = answer {
        answer.give(if failed { Err(packed) } else { Ok(packed) });
    }
    Ok(Value::Nil)
}

/// `__isolate_arrived(flow)`: the job's fiber begins (`--trace`: the job's
/// flow from the fiber that sent it ends here).
fn arrived(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    if let Some(&Value::Int(flow)) = args.first() {
        crate::sched::ops::trace_in(vm, flow as u64, Crossing::Job);
    }
    Ok(Value::Nil)
}

/// The driver's frames are not the program's: left out of an error's trace.
fn strip_driver(vm: &mut Vm, v: Value) {
    let Value::Obj(h) = v else { return };
    if let Obj::Error(e) = vm.heap.get_mut(h) {
        e.trace.retain(|l| !l.contains(crate::isolate::worker::DRIVER_NAME) && &**l != "main fiber");
    }
}
