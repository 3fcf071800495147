//! Human-readable bytecode listing for `csp disasm`.

use super::proto::Proto;
use std::fmt::Write;

/// Lists `proto` and every function nested in it.
pub fn disasm(proto: &Proto, heap: &crate::vm::Heap) -> String {
    let mut out = String::new();
    list(proto, heap, &mut out);
    out
}

fn list(p: &Proto, heap: &crate::vm::Heap, out: &mut String) {
    let _ = writeln!(
        out,
        "fn {} (params {}, required {}, rest {}, registers {}, upvalues {})",
        p.display_name(),
        p.nparams,
        p.nrequired,
        p.has_rest,
        p.nregs,
        p.upvals.len()
    );
    for (i, k) in p.consts.iter().enumerate() {
        let _ = writeln!(out, "  const {i}: {}", crate::display::repr(heap, *k));
    }
    for (i, k) in p.names.iter().enumerate() {
        let _ = writeln!(out, "  name {i}: {:?}", k.key());
    }
    for (pc, op) in p.code.iter().enumerate() {
        let (line, _) = p.file.line_col(p.span_at(pc as u32).start);
        let op = super::jumps::with_absolute_target(*op, pc);
        let note = if p.reuses.contains(&(pc as u32)) { "  (each item made over the last)" } else { "" };
        let _ = writeln!(out, "  {pc:04}  line {line:<4} {op:?}{note}");
    }
    out.push('\n');
    for child in &p.protos {
        list(child, heap, out);
    }
}
