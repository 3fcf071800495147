//! Bytecode: register-based instructions, function prototypes, disassembly, the
//! verifier debug builds run on every proto.

pub mod disasm;
pub mod jumps;
pub mod op;
pub mod operand;
pub mod proto;
pub mod reuse;
pub mod verify;

pub use op::{BitOp, Cmp, Op};
pub use proto::{LocalVar, Proto, ProtoRef, Site, UpvalDesc};
