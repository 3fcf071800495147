//! Bytecode: register-based instructions, function prototypes, disassembly.

pub mod disasm;
pub mod op;
pub mod proto;

pub use op::{BitOp, Cmp, Op};
pub use proto::{Proto, ProtoRef, Site, UpvalDesc};
