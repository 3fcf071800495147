//! Function prototypes: the compiled form of one function body.

use super::op::Op;
use crate::source::SourceFile;
use crate::syntax::ast::Span;
use crate::vm::Value;
use std::rc::Rc;

/// Where a closure's captured cell comes from when the closure is created.
#[derive(Clone, Copy, Debug)]
pub enum UpvalDesc {
    /// A register of the enclosing frame that holds a cell.
    Local(u8),
    /// An upvalue of the enclosing closure.
    Upval(u8),
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
    /// Field and method names (operands of Field, SetField, Invoke), as ready map keys.
    pub names: Vec<crate::vm::Key>,
    pub protos: Vec<Rc<Proto>>,
    pub upvals: Vec<UpvalDesc>,
    /// Declared parameters, not counting `...rest`.
    pub nparams: u8,
    /// Parameters without a default value.
    pub nrequired: u8,
    pub has_rest: bool,
    /// Registers the frame needs.
    pub nregs: u8,
    pub file: Rc<SourceFile>,
    pub span: Span,
}

impl Proto {
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            "<fn>"
        } else {
            &self.name
        }
    }
}
