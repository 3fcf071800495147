//! The bytecode verifier: checks what the dispatch loop's unchecked accessors
//! and `SAFETY` comments assume of a `Proto` — every register operand (call
//! windows included) below `nregs`, every jump target inside the code, every
//! constant, name, template, nested proto, upvalue and select index in range,
//! and code that cannot run off its end. Debug builds run it on every proto
//! the compiler makes for a file without errors (`compile/mod.rs`), so every
//! debug test and fuzz run checks the compiler's output; release builds trust it.

use super::jumps::with_absolute_target;
use super::op::Op;
use super::proto::{Proto, UpvalDesc};
use std::cell::Cell;

/// The first broken assumption of `p`, as "pc N: what" (None: all hold).
pub fn verify(p: &Proto) -> Option<String> {
    if !matches!(p.code.last(), Some(Op::Return { .. } | Op::ReturnNil | Op::Jmp { .. } | Op::Throw { .. })) {
        return Some(format!("{}: the code can run off its end", p.display_name()));
    }
    if p.spans.len() != p.code.len() {
        return Some(format!("{}: {} spans for {} instructions", p.display_name(), p.spans.len(), p.code.len()));
    }
    for (pc, op) in p.code.iter().enumerate() {
        if let Err(what) = check(p, with_absolute_target(*op, pc)) {
            return Some(format!("{} pc {pc} ({op:?}): {what}", p.display_name()));
        }
    }
    None
}

/// Does `op` (its target absolute) name register `r`, alone, in a window or
/// as a closure's capture? Code the verifier refuses names every register.
pub fn names_register(p: &Proto, op: Op, r: u8) -> bool {
    let v = Verifier { p, probe: Some(r), hit: Cell::new(false) };
    check_with(&v, op).is_err() || v.hit.get()
}

/// Checks the registers one instruction names and the indices it uses in the
/// proto's tables (its target absolute).
fn check(p: &Proto, op: Op) -> Result<(), String> {
    check_with(&Verifier { p, probe: None, hit: Cell::new(false) }, op)
}

/// The one list of every instruction's operands, for checking and for
/// `names_register`.
fn check_with(v: &Verifier, op: Op) -> Result<(), String> {
    use Op::*;
    let p = v.p;
    match op {
        LoadNil { dst } | LoadBool { dst, .. } | LoadInt { dst, .. } => v.reg(dst),
        Move2 { dst, a, b } => v.window(dst, 2).and(v.regs(&[a, b])),
        Move3 { dst, a, b, c } => v.window(dst, 3).and(v.regs(&[a, b, c])),
        Move { dst, src } | BitNot { dst, src } | Neg { dst, src } | Not { dst, src } => v.regs(&[dst, src]),
        LoadK { dst, k } => v.reg(dst).and(v.konst(k as usize)),
        GetGlobal { dst: r, .. } | SetGlobal { src: r, .. } | NewCell { reg: r } | Return { src: r } => v.reg(r),
        Throw { src } => v.reg(src),
        IterInit { base } => v.window(base, 2),
        GetUpval { dst: r, idx } | SetUpval { src: r, idx } => v.reg(r).and(v.upval(idx)),
        GetCell { dst, cell } => v.regs(&[dst, cell]),
        SetCell { cell, src } => v.regs(&[cell, src]),
        Add { dst, a, b }
        | Sub { dst, a, b }
        | Mul { dst, a, b }
        | Div { dst, a, b }
        | Mod { dst, a, b }
        | Pow { dst, a, b }
        | In { dst, a, b }
        | Is { dst, a, b }
        | Compare { dst, a, b, .. }
        | Bitwise { dst, a, b, .. } => v.regs(&[dst, a, b]),
        AddI { dst, a, .. } | MulI { dst, a, .. } | ModI { dst, a, .. } => v.regs(&[dst, a]),
        AddK { dst, a, k, .. } | SubK { dst, a, k, .. } | MulK { dst, a, k, .. } | DivK { dst, a, k, .. } => {
            v.regs(&[dst, a]).and(v.float(k as usize))
        }
        CompareK { dst, a, k, .. } => v.regs(&[dst, a]).and(v.konst(k as usize)),
        Jmp { target } => v.target(target),
        JmpIf { src, target } | JmpIfNot { src, target } | LoopIf { src, target } => v.reg(src).and(v.target(target)),
        JmpUnless { a, b, target, .. } | LoopWhen { a, b, target, .. } => v.regs(&[a, b]).and(v.target(target)),
        JmpUnlessI { a, target, .. } | LoopWhenI { a, target, .. } | JmpUnlessNil { a, target, .. } => {
            v.reg(a).and(v.target(target))
        }
        JmpUnlessK { a, k, target, .. } | LoopWhenK { a, k, target, .. } => {
            v.reg(a).and(v.konst(k as usize)).and(v.target(target))
        }
        JmpIfArg { target, .. } => v.target(target),
        Call { base, argc } | CallGlobal { base, argc, .. } => v.window(base, argc as usize + 1),
        Invoke { base, argc, name } => v.window(base, argc as usize + 2).and(v.name(name)),
        Go { base, argc, method, .. } => v.window(base, argc as usize + 1 + method as usize),
        ReturnNil | TryEnd | Shield | Unshield | ScopeBegin | ScopeEnd => Ok(()),
        Trap => Err("a trap in compiled code (only a debugger patches traps in)".into()),
        Closure { dst, proto } => {
            v.index(proto as usize, p.protos.len(), "nested proto")?;
            let mut captured = p.protos[proto as usize].upvals.iter().filter_map(|d| match *d {
                UpvalDesc::Local(r) => Some(r),
                UpvalDesc::Upval(_) => None,
            });
            v.reg(dst).and(captured.try_for_each(|r| v.reg(r)))
        }
        NewList { dst, start, count } | Concat { dst, start, count } => v.reg(dst).and(v.window(start, count as usize)),
        NewMap { dst, start, count } => v.reg(dst).and(v.window(start, 2 * count as usize)),
        NewMapK { dst, start, keys } => {
            v.index(keys as usize, p.templates.len(), "map template")?;
            v.reg(dst).and(v.window(start, p.template(keys).len()))
        }
        ListPush { list, src } => v.regs(&[list, src]),
        Index { dst, obj, key } => v.regs(&[dst, obj, key]),
        IndexI { dst, obj, .. } => v.regs(&[dst, obj]),
        SetIndex { obj, key, src } => v.regs(&[obj, key, src]),
        SetIndexK { obj, key, k } => v.regs(&[obj, key]).and(v.konst(k as usize)),
        IndexAdd { dst, obj, key, .. } => v.regs(&[dst, obj, key]),
        SetIndexAdd { obj, key, src, .. } => v.regs(&[obj, key, src]),
        SetIndexKAdd { obj, key, k, .. } => v.regs(&[obj, key]).and(v.konst(k as usize)),
        Field { dst, obj, name } => v.regs(&[dst, obj]).and(v.name(name)),
        FieldIndex { dst, obj, name, key, .. } => v.regs(&[dst, obj, key]).and(v.name(name)),
        FieldSetIndex { obj, name, key, src, .. } => v.regs(&[obj, key, src]).and(v.name(name)),
        SetField { obj, name, src } => v.regs(&[obj, src]).and(v.name(name)),
        Range { dst, lo, hi, .. } => v.regs(&[dst, lo, hi]),
        ForPrep { base, target, .. } | ForLoop { base, target } => v.window(base, 3).and(v.target(target)),
        IterNext { base, dst, target } => v.window(base, 2).and(v.reg(dst)).and(v.target(target)),
        IterPair { base, dst } => v.window(base, 3).and(v.window(dst, 2)),
        TryBegin { reg, target } => v.reg(reg).and(v.target(target)),
        Unpack { dst, src, count } => v.reg(src).and(v.window(dst, count as usize)),
        Recv { dst, ch } => v.regs(&[dst, ch]),
        Recv2 { dst, ch } => v.reg(ch).and(v.window(dst, 2)),
        Send { ch, src } => v.regs(&[ch, src]),
        Select { base, desc } => {
            v.index(desc as usize, p.selects.len(), "select description")?;
            v.window(base, (2 * p.selects[desc as usize].0.len()).max(3))
        }
        WaitOn { dst, src } => v.regs(&[dst, src]),
        ScopeAbort { err } => v.reg(err),
        Lock { m } | Unlock { m } => v.reg(m),
        Yield { dst } => v.reg(dst),
        Count { .. } => Ok(()),
    }
}

struct Verifier<'a> {
    p: &'a Proto,
    /// `names_register`'s register: windows only record whether they hold it.
    probe: Option<u8>,
    hit: Cell<bool>,
}

impl Verifier<'_> {
    fn reg(&self, r: u8) -> Result<(), String> {
        self.window(r, 1)
    }

    fn regs(&self, rs: &[u8]) -> Result<(), String> {
        rs.iter().try_for_each(|&r| self.reg(r))
    }

    /// Registers `start .. start + n` (a call's or a literal's window).
    fn window(&self, start: u8, n: usize) -> Result<(), String> {
        let end = start as usize + n;
        if let Some(r) = self.probe {
            self.hit.set(self.hit.get() || (start as usize..end).contains(&(r as usize)));
            return Ok(());
        }
        if end > self.p.nregs as usize {
            return Err(format!("registers {start}..{end} pass the frame's {}", self.p.nregs));
        }
        Ok(())
    }

    fn target(&self, t: u32) -> Result<(), String> {
        self.index(t as usize, self.p.code.len(), "jump target")
    }

    fn konst(&self, k: usize) -> Result<(), String> {
        self.index(k, self.p.consts.len(), "constant")
    }

    /// A float constant (the operand of the arithmetic `...K` forms).
    fn float(&self, k: usize) -> Result<(), String> {
        self.konst(k)?;
        match self.p.consts[k] {
            crate::vm::value::Value::Float(_) => Ok(()),
            other => Err(format!("constant {k} is {other:?}, not a float")),
        }
    }

    fn name(&self, i: u16) -> Result<(), String> {
        self.index(i as usize, self.p.names.len(), "name")
    }

    fn upval(&self, i: u8) -> Result<(), String> {
        self.index(i as usize, self.p.upvals.len(), "upvalue")
    }

    fn index(&self, i: usize, len: usize, what: &str) -> Result<(), String> {
        if i >= len {
            return Err(format!("{what} {i} out of range (there are {len})"));
        }
        Ok(())
    }
}
