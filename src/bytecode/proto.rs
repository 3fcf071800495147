//! Function prototypes: the compiled form of one function body.

use super::op::Op;
use crate::source::SourceFile;
use crate::source::Span;
use crate::vm::Value;
use std::rc::Rc;

/// Where a closure's captured cell comes from when the closure is created.
#[derive(Clone, Copy, Debug)]
pub enum UpvalDesc {
    /// A register of the enclosing frame: a cell, or the value of a variable
    /// that never changes.
    Local(u8),
    /// An upvalue of the enclosing closure.
    Upval(u8),
}

/// A named local for debuggers: its register and the pcs `from..to` where
/// the name is bound (`to` is `u32::MAX` to the function's end).
#[derive(Clone, Debug)]
pub struct LocalVar {
    pub name: String,
    pub reg: u8,
    /// The register holds a cell (a captured variable that changes).
    pub cell: bool,
    pub from: u32,
    pub to: u32,
}

pub struct Proto {
    /// Function name; empty for anonymous functions, `<main>` for a file's top level.
    pub name: String,
    pub code: Vec<Op>,
    /// Source span of each instruction (parallel to `code`).
    pub spans: Vec<Span>,
    pub consts: Vec<Value>,
    /// Case kinds of each `select` (true: send), and whether it has a default.
    pub selects: Vec<(Vec<bool>, bool)>,
    /// The read-combine-write runs of compound assignments (first and last pc):
    /// an instruction in one that must run again after a collection restarts
    /// from the read, so no other fiber's update is lost (`rerun_from`).
    pub rereads: Box<[(u32, u32)]>,
    /// The pcs, in order, of the `IterNext`s whose loops let no item out
    /// (reuse.rs): a stream may make each line over the last.
    pub reuses: Box<[u32]>,
    /// Field and method names (operands of Field, SetField, Invoke), each
    /// with its inline cache.
    pub names: Box<[crate::vm::value::Name]>,
    /// The layouts of map literals with constant string keys (operands of
    /// NewMapK): the keys, hashed once, shared by every map the literal makes.
    pub templates: Box<[std::rc::Rc<crate::vm::value::Layout>]>,
    /// Nested functions (all owned by `Vm::protos`, like every proto).
    pub protos: Vec<ProtoRef>,
    pub upvals: Vec<UpvalDesc>,
    /// The names of `upvals`, and the named locals (debuggers only).
    pub upval_names: Box<[String]>,
    pub locals: Box<[LocalVar]>,
    /// Declared parameters, not counting `...rest`.
    pub nparams: u8,
    /// Parameters without a default value.
    pub nrequired: u8,
    pub has_rest: bool,
    /// The argument count the dispatch loop's call binds without
    /// `call_value`: `nparams`, or 255 with a rest parameter, a count no call
    /// has (its callee and arguments would need 256 registers). One compare
    /// instead of two per call.
    pub exact_argc: u8,
    /// Registers the frame needs.
    pub nregs: u8,
    pub file: Rc<SourceFile>,
    pub span: Span,
    /// Stack-trace lines already made, by pc: a million fibers cancelled at
    /// the same place each carry the same lines (see `trace_line`).
    pub trace_lines: std::cell::RefCell<foldhash::HashMap<u32, Rc<str>>>,
}

/// `Proto::exact_argc` of a function with these parameters.
pub fn exact_argc(nparams: u8, has_rest: bool) -> u8 {
    if has_rest {
        u8::MAX
    } else {
        nparams
    }
}

impl Proto {
    /// The stack-trace line of a frame of this function at `pc`, made by
    /// `make` the first time and shared after.
    pub fn trace_line(&self, pc: u32, make: impl FnOnce() -> String) -> Rc<str> {
        if let Some(line) = self.trace_lines.borrow().get(&pc) {
            return line.clone();
        }
        let line: Rc<str> = Rc::from(make());
        self.trace_lines.borrow_mut().insert(pc, line.clone());
        line
    }

    /// The source span of instruction `pc` (clamped: a frame's saved pc may be
    /// one past its last instruction).
    pub fn span_at(&self, pc: u32) -> Span {
        let last = self.spans.len().saturating_sub(1);
        self.spans.get((pc as usize).min(last)).copied().unwrap_or(self.span)
    }

    /// Where instruction `pc` runs again after a collection: the read of the
    /// compound assignment it belongs to, else itself.
    pub fn rerun_from(&self, pc: u32) -> u32 {
        self.rereads.iter().find(|&&(a, b)| a <= pc && pc <= b).map_or(pc, |&(a, _)| a)
    }

    /// Field or method name `i` (an operand of Field, SetField or Invoke).
    /// Unchecked, like `konst`: the compiler emits only indices of names it added.
    #[inline]
    pub fn name(&self, i: u16) -> &crate::vm::value::Name {
        debug_assert!((i as usize) < self.names.len());
        // SAFETY: see above.
        unsafe { self.names.get_unchecked(i as usize) }
    }

    /// Map template `i` (the operand of NewMapK). Unchecked, like `name`.
    #[inline]
    pub fn template(&self, i: u16) -> &std::rc::Rc<crate::vm::value::Layout> {
        debug_assert!((i as usize) < self.templates.len());
        // SAFETY: see above.
        unsafe { self.templates.get_unchecked(i as usize) }
    }

    /// Constant `k` (an operand of LoadK, SetIndexK and the compares with a constant). Unchecked: the
    /// compiler emits only indices of constants it added. The bounds checks
    /// of these two were about 5 instructions per field access.
    #[inline]
    pub fn konst(&self, k: u16) -> &Value {
        debug_assert!((k as usize) < self.consts.len());
        // SAFETY: see above.
        unsafe { self.consts.get_unchecked(k as usize) }
    }

    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            "<fn>"
        } else {
            &self.name
        }
    }
}

/// A pointer to a Proto. Every Proto is owned by `Vm::protos` (boxed, so it never
/// moves) for the VM's whole life: that is the one way a proto is kept alive, and
/// closures, frames and sites then need no reference counting.
#[derive(Clone, Copy)]
pub struct ProtoRef(std::ptr::NonNull<Proto>);

impl ProtoRef {
    /// A reference to `p`.
    ///
    /// # Safety
    /// `p` must be owned by `Vm::protos` (boxed, never dropped while the VM
    /// lives): every `ProtoRef` is dereferenced without a lifetime.
    pub(crate) unsafe fn new(p: &Proto) -> ProtoRef {
        ProtoRef(std::ptr::NonNull::from(p))
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

/// A source position as a function and instruction index, turned into a span or
/// `file:line:col` only when a report needs it.
#[derive(Clone, Copy)]
pub struct Site {
    pub proto: ProtoRef,
    pub pc: u32,
}

impl Site {
    pub fn span(&self) -> Span {
        self.proto.span_at(self.pc)
    }

    pub fn file(&self) -> &Rc<SourceFile> {
        &self.proto.file
    }

    pub fn location(&self) -> String {
        self.proto.file.location(self.span())
    }
}
