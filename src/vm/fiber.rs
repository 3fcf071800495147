//! A fiber: its own value stack, heap-allocated call frames and handler stack.
//! Its scheduling state (parking, cancellation, its task) is the scheduler's.

use super::value::{Handle, Value};
use crate::bytecode::{ProtoRef, Site};
use crate::limits::MAX_FRAMES;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

pub struct Frame {
    pub proto: ProtoRef,
    /// The running closure (its upvalues); `None` for a file's top level.
    pub closure: Option<Handle>,
    /// Next instruction to execute.
    pub pc: u32,
    /// Stack index of register 0.
    pub base: u32,
    /// Stack index that receives the return value.
    pub ret: u32,
    /// Arguments the caller passed (for default parameters).
    pub argc: u8,
}

impl Frame {
    /// The instruction executing (the saved pc is past it).
    pub fn current_site(&self) -> Site {
        Site { proto: self.proto, pc: self.pc.saturating_sub(1) }
    }

    /// Its stack-trace line, `"name (file:line:col)"`.
    pub fn trace_line(&self) -> Rc<str> {
        let site = self.current_site();
        self.proto.trace_line(site.pc, || format!("{} ({})", self.proto.display_name(), site.location()))
    }
}

/// A context's call frames: a vector whose capacity never passes
/// `MAX_FRAMES`, so the call's fast path tests one thing, `len != capacity`,
/// for both room for the frame and the depth limit.
#[derive(Default)]
pub struct Frames(Vec<Frame>);

impl Frames {
    /// Pushes `frame`; the caller has checked the depth (`len() < MAX_FRAMES`).
    pub fn push(&mut self, frame: Frame) {
        debug_assert!(self.0.len() < MAX_FRAMES);
        if self.0.len() == self.0.capacity() {
            self.grow();
        }
        self.0.push(frame)
    }

    /// Room for one more frame unless `MAX_FRAMES` are there: doubling, but
    /// never past the limit (`reserve_exact`, so the capacity is what is asked).
    #[cold]
    pub fn grow(&mut self) {
        let cap = self.0.capacity();
        if self.0.len() == cap {
            self.0.reserve_exact(next_capacity(cap) - cap);
        }
    }

    pub fn pop(&mut self) -> Option<Frame> {
        self.0.pop()
    }

    pub fn truncate(&mut self, len: usize) {
        self.0.truncate(len)
    }

    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// # Safety
    /// As `Vec::set_len`: the frames below `len` are written, `len` is at
    /// most the capacity.
    #[inline(always)]
    pub unsafe fn set_len(&mut self, len: usize) {
        self.0.set_len(len)
    }
}

/// The capacity after `cap`: doubled (4 at least), `MAX_FRAMES` at most.
fn next_capacity(cap: usize) -> usize {
    cap + cap.max(4).min(MAX_FRAMES - cap)
}

impl Deref for Frames {
    type Target = [Frame];
    fn deref(&self) -> &[Frame] {
        &self.0
    }
}

impl DerefMut for Frames {
    fn deref_mut(&mut self) -> &mut [Frame] {
        &mut self.0
    }
}

/// An active `try`: where to go and which register gets the thrown value.
pub struct Handler {
    /// `frames.len()` when the handler was pushed.
    pub depth: u32,
    pub target: u32,
    pub reg: u8,
    /// `Fiber::shield` when the handler was pushed (restored when it catches).
    pub shield: u16,
}

/// The active `try`s of a context, boxed apart: most fibers never enter one,
/// and a million parked fibers each pay for this field (tests/sizes.rs).
#[derive(Default)]
#[allow(clippy::box_collection)] // one word in every Fiber, not a Vec's three
pub struct Handlers(Option<Box<Vec<Handler>>>);

impl Handlers {
    #[inline]
    pub fn push(&mut self, h: Handler) {
        self.0.get_or_insert_with(Default::default).push(h)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Handler> {
        self.0.as_mut()?.pop()
    }

    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|v| v.is_empty())
    }

    /// Bytes held, for the memory limit.
    pub fn bytes(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |v| std::mem::size_of::<Vec<Handler>>() + v.capacity() * std::mem::size_of::<Handler>())
    }
}

/// Where an uncaught error was thrown, for the report.
pub struct Uncaught {
    pub value: Value,
    pub span: crate::source::Span,
    pub file: Rc<crate::source::SourceFile>,
    pub trace: Vec<Rc<str>>,
}

/// What a parked fiber is woken with; `vm::resume` delivers it to the
/// instruction (or builtin call) the fiber blocked in.
#[derive(Debug)]
pub enum Resume {
    /// The operation's result: a builtin's value (a send or a lock has none).
    Value(Value),
    /// A receive's value and whether the channel was still open.
    Recv(Value, bool),
    /// The `select` case that ran, with its value and ok flag.
    Select(u32, Value, bool),
    /// Thrown where the fiber blocked.
    Throw(Value),
    /// Run the blocked instruction again (its pc was left on it).
    Retry,
}

impl Resume {
    /// The value it carries, for the collector.
    pub fn roots(&self, mut push: impl FnMut(Value)) {
        match *self {
            Resume::Value(v) | Resume::Recv(v, _) | Resume::Select(_, v, _) | Resume::Throw(v) => push(v),
            Resume::Retry => {}
        }
    }
}

/// How a fiber started by `go` begins: the call its `go` expression makes,
/// through the same path as that call (see `Fiber::for_call`). 16 bytes: a
/// program may park a million fibers.
#[derive(Clone, Copy)]
pub struct Start {
    /// Where the `go` is (with `pc`): the position of errors raised before any
    /// frame exists.
    proto: ProtoRef,
    pc: u32,
    pub argc: u8,
    /// A method call: the stack holds the method's name, the receiver, the arguments.
    pub method: bool,
    /// The first call has been made.
    pub done: bool,
    /// Its `go` ran in a fiber that itself started cancelled: the first
    /// call is not made, the cancellation is delivered there (so fibers that
    /// keep starting fibers cannot outlive their cancellation).
    pub stillborn: bool,
}

impl Start {
    pub fn site(&self) -> Site {
        Site { proto: self.proto, pc: self.pc }
    }
}

#[derive(Default)]
pub struct Fiber {
    pub stack: Vec<Value>,
    pub frames: Frames,
    pub handlers: Handlers,
    /// Coroutines running in this fiber, innermost last (each holds its
    /// resumer's context), with the frames of all the resumers' contexts so far,
    /// which count towards the frame limit; boxed apart, as few fibers run
    /// coroutines.
    pub co_stack: Option<Box<Vec<(Handle, usize)>>>,
    /// For a fiber started by `go`: its first call (made when it first runs).
    pub start: Option<Start>,
    /// `finally` blocks running in this context (nested ones counted).
    pub shield: u16,
    /// The `shield` of the resumers of the coroutines running in this fiber.
    pub outer_shield: u16,
    /// `--profile`: when this fiber parked and on what, 0 while it is not
    /// parked (sched/profile.rs). In what was the struct's padding.
    pub parked_at: u32,
}

impl Fiber {
    /// Is cancellation held back: does any `finally` of the fiber run?
    pub fn shielded(&self) -> bool {
        self.shield > 0 || self.outer_shield > 0
    }

    /// A fiber about to run `proto` (a file's top level) with no closure.
    pub fn for_main(proto: ProtoRef) -> Fiber {
        let mut f = Fiber::default();
        f.stack.resize(proto.nregs as usize + 1, Value::Nil);
        f.frames.push(Frame { proto, closure: None, pc: 0, base: 1, ret: 0, argc: 0 });
        f
    }

    /// A fiber whose first step is a call: `call[0](call[1..])`, or with `method`,
    /// `call[1].NAME(call[2..])` where `call[0]` is NAME as a string. `regs` is
    /// the callee's register count when known, to size the stack exactly.
    pub fn for_call(call: &[Value], method: bool, site: Site, regs: usize, stillborn: bool) -> Fiber {
        let mut f = Fiber::default();
        let argc = call.len() - 1 - method as usize;
        f.stack.reserve_exact(call.len().max(1 + regs));
        f.stack.extend_from_slice(call);
        f.start = Some(Start { proto: site.proto, pc: site.pc, argc: argc as u8, method, done: false, stillborn });
        f
    }

    /// Writes `v` into stack slot `i` word by word: `v` was usually just
    /// returned by a call, written as separate words (see `copy_value`).
    #[inline(always)]
    pub fn put(&mut self, i: usize, v: &Value) {
        let slot: *mut Value = &mut self.stack[i];
        // SAFETY: both point at live values.
        unsafe { super::value::copy_value(slot, v) }
    }

    pub fn in_coroutine(&self) -> bool {
        self.co_stack.as_ref().is_some_and(|c| !c.is_empty())
    }

    /// Has its first call still to be made?
    #[inline]
    pub fn unstarted(&self) -> bool {
        self.start.is_some_and(|s| !s.done)
    }

    /// Makes the stack `need` values long (a call deeper than any before),
    /// counting the growth towards the collector's pacing and the memory limit.
    /// Out of line: the call paths of the dispatch loop stay small.
    #[cold]
    #[inline(never)]
    pub fn grow_stack(&mut self, need: usize, heap: &mut super::Heap) {
        heap.note_growth((need - self.stack.len()) * std::mem::size_of::<Value>());
        self.stack.resize(need, Value::Nil);
    }

    /// Bytes it holds, for the memory limit.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Fiber>()
            + self.stack.capacity() * std::mem::size_of::<Value>()
            + self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.handlers.bytes()
    }

    /// Highest stack slot in use, for the collector.
    pub fn live_top(&self) -> usize {
        match self.frames.last() {
            Some(f) => (f.base as usize + f.proto.nregs as usize).min(self.stack.len()),
            None => self.stack.len(),
        }
    }

    /// The values it holds (GC roots): live registers, running closures and coroutines.
    pub fn roots(&self, mut push: impl FnMut(Value)) {
        self.stack[..self.live_top()].iter().for_each(|&v| push(v));
        self.frames.iter().filter_map(|f| f.closure).for_each(|h| push(Value::Obj(h)));
        self.co_stack.iter().flat_map(|c| c.iter()).for_each(|&(h, _)| push(Value::Obj(h)));
    }

    /// Does it hold object `h` in a live register, or in a variable its running
    /// closures captured? (Deeper references are not followed: for reports.)
    pub fn holds(&self, heap: &super::Heap, h: Handle) -> bool {
        use super::Obj;
        let is = |v: &Value| matches!(v, Value::Obj(x) if *x == h);
        let in_cell = |c: Handle| matches!(heap.get(c), Obj::Cell(v) if is(v));
        // A register or an upvalue: `h` itself, or a cell holding it.
        let has = |v: &Value| is(v) || matches!(v, Value::Obj(c) if in_cell(*c));
        let live = &self.stack[..self.live_top()];
        if live.iter().any(has) {
            return true;
        }
        self.frames.iter().filter_map(|fr| fr.closure).any(|c| match heap.get(c) {
            Obj::Closure(cl) => cl.upvals.iter().any(has),
            _ => false,
        })
    }

    /// The instruction executing or blocked in (else where its `go` is).
    pub fn current_site(&self) -> Option<Site> {
        match self.frames.last() {
            Some(f) => Some(f.current_site()),
            None => self.start.map(|s| s.site()),
        }
    }

    /// Where an error raised now is reported: the instruction executing, or,
    /// inside the standard library, the user's call into it (the library's
    /// frames stay in the trace).
    pub fn raise_site(&self) -> Option<Site> {
        self.frames.iter().rev().map(Frame::current_site).find(|s| !s.file().std).or_else(|| self.current_site())
    }

    /// The next instruction (an operation that reruns when woken is left there).
    pub fn next_site(&self) -> Option<Site> {
        match self.frames.last() {
            Some(f) => Some(Site { proto: f.proto, pc: f.pc }),
            None => self.start.map(|s| s.site()),
        }
    }

    /// `"name (file:line:col)"` for each frame, innermost first.
    pub fn trace(&self) -> Vec<Rc<str>> {
        self.shown_frames().map(Frame::trace_line).collect()
    }

    /// The frames a trace shows, innermost first: not the prelude's (the csp
    /// half of builtin methods such as `map`).
    pub fn shown_frames(&self) -> impl Iterator<Item = &Frame> + Clone {
        self.frames.iter().rev().filter(|f| f.proto.file.name != crate::source::PRELUDE_NAME)
    }
}

/// An execution context that is not running.
#[derive(Default)]
pub struct Context {
    pub stack: Vec<Value>,
    pub frames: Frames,
    pub handlers: Handlers,
    /// `Fiber::shield` of the context.
    pub shield: u16,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CoState {
    Fresh,
    Suspended,
    Running,
    Done,
}

pub struct Coroutine {
    pub func: Value,
    pub state: CoState,
    /// Suspended: the coroutine's own context. Running: its resumer's.
    pub ctx: Context,
    /// Slot in the resumer's stack for what `resume` returns.
    pub ret: u32,
    /// Slot in the coroutine's stack for the value of the pending `yield`.
    pub yield_slot: u32,
    /// Resumed by `for x in co`: where the resumer goes when the body returns.
    pub iter_exit: Option<u32>,
    /// `close()` is unwinding it.
    pub closing: bool,
}

impl Coroutine {
    /// The values it holds, for the collector: its function and its context.
    pub fn trace(&self, mut push: impl FnMut(Value)) {
        push(self.func);
        self.ctx.stack.iter().for_each(|&v| push(v));
        self.ctx.frames.iter().filter_map(|f| f.closure).for_each(|h| push(Value::Obj(h)));
    }

    pub fn new(func: Value) -> Coroutine {
        Coroutine {
            func,
            state: CoState::Fresh,
            ctx: Context::default(),
            ret: 0,
            yield_slot: 0,
            iter_exit: None,
            closing: false,
        }
    }
}

/// Why `run` returned.
pub enum Halt {
    /// The fiber's outermost frame (or first call) returned this value.
    Done(Value),
    /// The budget ran out at a back-edge or call; call `run` again to continue.
    Preempted,
    /// The fiber yielded voluntarily: it goes to the back of the run queue.
    Yielded,
    /// The fiber parked; the scheduler wakes it with a `Resume`.
    Blocked,
    /// The fiber waits on its own task: the deadlock report.
    Deadlock(String),
    /// An error nobody caught.
    Error(Box<Uncaught>),
}

#[cfg(test)]
mod frames_tests {
    use super::*;

    #[test]
    fn capacity_doubles_up_to_the_limit() {
        let mut cap = 0;
        let mut steps = 0;
        while cap < MAX_FRAMES {
            let next = next_capacity(cap);
            assert!(next > cap && next <= MAX_FRAMES && next <= (2 * cap).max(4));
            cap = next;
            steps += 1;
        }
        assert_eq!(cap, MAX_FRAMES);
        assert_eq!(next_capacity(MAX_FRAMES), MAX_FRAMES);
        assert!(steps < 20);
    }

    #[test]
    fn push_grows_by_steps() {
        let mut f = Frames::default();
        f.grow();
        assert_eq!(f.capacity(), 4);
        f.grow();
        assert_eq!(f.capacity(), 4, "room left: no growth");
    }
}
