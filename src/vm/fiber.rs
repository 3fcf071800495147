//! A fiber: its own value stack, heap-allocated call frames and handler stack.

use super::value::{Handle, Value};
use crate::bytecode::Proto;
use crate::syntax::ast::Span;
use std::rc::Rc;

/// A pointer to a Proto. Sound because the VM keeps every Proto it compiled in
/// `Vm::protos` for its whole life; frames then need no reference counting.
#[derive(Clone, Copy)]
pub struct ProtoRef(std::ptr::NonNull<Proto>);

impl ProtoRef {
    pub fn new(p: &Rc<Proto>) -> ProtoRef {
        ProtoRef(std::ptr::NonNull::from(&**p))
    }

    /// The proto's address: its identity.
    pub fn as_ptr(&self) -> *const Proto {
        self.0.as_ptr()
    }
}

impl std::ops::Deref for ProtoRef {
    type Target = Proto;
    #[inline(always)]
    fn deref(&self) -> &Proto {
        // SAFETY: see the type's invariant.
        unsafe { self.0.as_ref() }
    }
}

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

/// An active `try`: where to go and which register gets the thrown value.
pub struct Handler {
    /// `frames.len()` when the handler was pushed.
    pub depth: u32,
    pub target: u32,
    pub reg: u8,
}

/// Where an uncaught error was thrown, for the report.
pub struct Uncaught {
    pub value: Value,
    pub span: Span,
    pub file: Rc<crate::source::SourceFile>,
    pub trace: Vec<Rc<str>>,
}

#[derive(Default)]
pub struct Fiber {
    pub stack: Vec<Value>,
    pub frames: Vec<Frame>,
    pub handlers: Vec<Handler>,
    /// Scheduler bookkeeping: identity, parking, cancellation, held locks.
    pub sched: crate::sched::FiberState,
}

impl Fiber {
    /// A fiber about to run `proto` (a file's top level) with no closure.
    pub fn for_main(proto: Rc<Proto>) -> Fiber {
        let mut f = Fiber::default();
        f.stack.resize(proto.nregs as usize + 1, Value::Nil);
        f.frames.push(Frame { proto: ProtoRef::new(&proto), closure: None, pc: 0, base: 1, ret: 0, argc: 0 });
        f
    }

    /// Highest stack slot in use, for the collector.
    pub fn live_top(&self) -> usize {
        self.frames.last().map_or(0, |f| f.base as usize + f.proto.nregs as usize).min(self.stack.len())
    }

    /// `"name (file:line:col)"` for each frame, innermost first.
    pub fn trace(&self) -> Vec<Rc<str>> {
        self.frames
            .iter()
            .rev()
            .map(|f| {
                let pc = (f.pc as usize).saturating_sub(1).min(f.proto.spans.len().saturating_sub(1));
                let span = f.proto.spans.get(pc).copied().unwrap_or(f.proto.span);
                Rc::from(format!("{} ({})", f.proto.display_name(), f.proto.file.location(span)))
            })
            .collect()
    }
}
