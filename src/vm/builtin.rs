//! The one protocol of builtins, functions and methods alike: a builtin returns a
//! value, asks for a csp function to be called (so callbacks run as ordinary
//! frames that may block), or blocks the calling fiber on an operation described
//! as data, which the scheduler performs. Builtins never call back into the VM.
//!
//! The rerun contract: a builtin may be called again, with the same arguments,
//! for one call in the program. It is run again from its start when it returns
//! `Block(Blocking::Ready)` or `Block(Blocking::IoThenRetry)` (after the wait),
//! and when `Heap::reserve` answers `Fault::Collect` (after a collection). So
//! until it returns a value, a `Call` or an error, a builtin must have done
//! nothing the program can see: no write to a value, no bytes taken from a
//! stream that are not kept where the next call finds them (the stream's own
//! buffer), no output. The dispatch loop reruns only the instruction (a
//! method's receiver and arguments stay in their registers), so the csp code
//! that computed them does not run twice (tests/lang/os/rerun_blocking_method.csp).

use super::fiber::Fiber;
use super::heap::Heap;
use super::{ErrorKind, Res, Value, Vm};
pub use crate::sched::pool::Reply;

/// What a builtin asks the VM to do.
pub enum Ret {
    /// The builtin's result.
    Value(Value),
    /// Call the function with these arguments; its result is the builtin's.
    Call(Value, Vec<Value>),
    /// Park the calling fiber until the operation completes; its result is the
    /// builtin's (or its error is thrown there).
    Block(Blocking),
}

/// A blocking operation, for the scheduler to perform and to cancel.
pub enum Blocking {
    /// Wake after this many milliseconds.
    Sleep(f64),
    /// Run `IoWork` on the I/O thread pool (cancelling only stops the wait).
    Io(IoWork),
    /// Run `IoWork` on the pool, then call the builtin again: the work left
    /// what it produced where the builtin finds it (a stream's buffer).
    IoThenRetry(IoWork),
    /// Wait until the descriptor is ready, then call the builtin again.
    Ready(std::os::fd::RawFd, Ready),
    /// Write these bytes to the non-blocking descriptor as it becomes
    /// writable; the builtin's result is nil (the string names the stream,
    /// for errors).
    Write(std::os::fd::RawFd, Vec<u8>, String),
    /// `Write` for bytes kept by their stream (TLS records, which must not
    /// interleave with later writes): the reactor calls this each time the
    /// descriptor is writable until it says all is sent.
    Drain(std::os::fd::RawFd, Drain, String),
    /// Work for a thread of the builtin's own (a database's connection
    /// thread): `start` runs at once on the VM's thread and sends the work
    /// there with the `Reply` it posts its result through (as pool work does);
    /// if the fiber is cancelled while it waits, `cancel` runs on the VM's
    /// thread (to interrupt the work) and the wait stops.
    Handoff(Box<dyn FnOnce(Reply)>, Box<dyn FnOnce()>),
    /// A `Handoff` to another isolate (a job's answer, a worker's inbox):
    /// exploring, it is not waited for as pool work is, since the isolates
    /// explored on this thread answer it only when they are stepped.
    Isolate(Box<dyn FnOnce(Reply)>, Box<dyn FnOnce()>),
    /// `exit(code)`: the fiber stops here and the program ends with this status
    /// as soon as the scheduler sees it; no other fiber runs, no `finally` runs.
    Exit(i32),
}

/// Sends what it can to the descriptor; true once all it waited for is sent.
pub type Drain = Box<dyn FnMut() -> std::io::Result<bool>>;

/// What a descriptor must be ready for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready {
    Read,
    Write,
}

/// Turns a finished job's output into a value, on the VM's thread; an `Err` is
/// thrown as an error of that kind with that message.
pub type IoDone = Box<dyn FnOnce(&mut Heap) -> Result<Value, (ErrorKind, String)> + Send>;
/// Blocking work for an I/O worker thread.
pub type IoWork = Box<dyn FnOnce() -> IoDone + Send>;

/// Blocks the calling fiber on `work`, run on an I/O thread; `done` turns its
/// output into the builtin's result on the VM's thread.
pub fn io<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
    done: fn(&mut Heap, T) -> Value,
) -> Ret {
    io_kind(move || work().map_err(|e| (ErrorKind::Io, e)), done)
}

/// `io` for work that can fail with another kind than `io` (a file that is not
/// UTF-8 is a `value` error).
pub fn io_kind<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, (ErrorKind, String)> + Send + 'static,
    done: fn(&mut Heap, T) -> Value,
) -> Ret {
    Ret::Block(Blocking::Io(Box::new(move || {
        let out = work();
        Box::new(move |heap: &mut Heap| out.map(|t| done(heap, t))) as IoDone
    })))
}

/// A builtin that only computes a value from its arguments.
pub type ValueFn = fn(&mut Vm, &[Value]) -> Res<Value>;
/// A builtin using the whole protocol; it sees the calling fiber (read-only), for
/// the position of `error(msg)` values.
pub type BuiltinFn = fn(&mut Vm, &Fiber, &[Value]) -> Res<Ret>;

#[derive(Clone, Copy)]
pub enum NativeFn {
    Value(ValueFn),
    Full(BuiltinFn),
    /// A host's closure (`Vm::host_fns[i]`), called as a `Full` builtin.
    Host(u32),
}
