//! The instruction set. Operands named `dst`, `a`, `b`, `src`, `base` are registers
//! of the current frame (`stack[frame.base + r]`); `k` indexes the Proto's constants;
//! `target` is an absolute instruction index while compiling; in a `Proto`, the
//! jumps `relative_target` lists hold theirs relative to the next instruction
//! (see there). Calls use a window of consecutive
//! registers: callee at `base`, arguments from `base + 1`, the result lands in `base`.

pub use super::operand::{BitOp, Cmp};

/// `repr(u8)`: the first byte is the variant's index, which the dispatch
/// loop reads to find the instruction's handler (vm/exec.rs, `Op::tag`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(u8)]
pub enum Op {
    /// dst = src
    Move {
        dst: u8,
        src: u8,
    },
    /// dst, dst + 1 = a, b: a call's arguments that are locals, two at a time
    /// (`f(x, y)`); `dst` is above every source.
    Move2 {
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst, dst + 1, dst + 2 = a, b, c (`f(x, y, z)`)
    Move3 {
        dst: u8,
        a: u8,
        b: u8,
        c: u8,
    },
    /// dst = nil
    LoadNil {
        dst: u8,
    },
    /// dst = val
    LoadBool {
        dst: u8,
        val: bool,
    },
    /// dst = val (small integer literal)
    LoadInt {
        dst: u8,
        val: i32,
    },
    /// dst = consts[k]
    LoadK {
        dst: u8,
        k: u16,
    },
    /// dst = globals[idx]
    GetGlobal {
        dst: u8,
        idx: u16,
    },
    /// globals[idx] = src
    SetGlobal {
        src: u8,
        idx: u16,
    },
    /// dst = value of the closure's captured cell `idx`
    GetUpval {
        dst: u8,
        idx: u8,
    },
    /// captured cell `idx` = src
    SetUpval {
        src: u8,
        idx: u8,
    },
    /// reg = a fresh cell holding reg's current value (a captured local's binding)
    NewCell {
        reg: u8,
    },
    /// dst = value in the cell held by register `cell`
    GetCell {
        dst: u8,
        cell: u8,
    },
    /// the cell held by register `cell` = src
    SetCell {
        cell: u8,
        src: u8,
    },
    /// dst = a + b (numbers, strings, lists)
    Add {
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = a + imm
    AddI {
        dst: u8,
        a: u8,
        imm: i16,
    },
    Sub {
        dst: u8,
        a: u8,
        b: u8,
    },
    Mul {
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = a * imm
    MulI {
        dst: u8,
        a: u8,
        imm: i16,
    },
    /// dst = a % imm
    ModI {
        dst: u8,
        a: u8,
        imm: i16,
    },
    /// dst = a + consts[k], a float literal (consts[k] + a when `rev`: the
    /// order only an error message shows); so `SubK`, `MulK`, `DivK`
    AddK {
        dst: u8,
        a: u8,
        k: u8,
        rev: bool,
    },
    SubK {
        dst: u8,
        a: u8,
        k: u8,
        rev: bool,
    },
    MulK {
        dst: u8,
        a: u8,
        k: u8,
        rev: bool,
    },
    DivK {
        dst: u8,
        a: u8,
        k: u8,
        rev: bool,
    },

    Div {
        dst: u8,
        a: u8,
        b: u8,
    },
    Mod {
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = (a <cmp> b) as bool
    Compare {
        cmp: Cmp,
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = (a <cmp> consts[k]) as bool; `==` and `!=` against a literal
    /// (see `JmpUnlessK`)
    CompareK {
        cmp: Cmp,
        dst: u8,
        a: u8,
        k: u16,
    },
    /// dst = a in b: b is a list holding an item == a, a map with key a, a string
    /// containing the string a, or a range containing the int a
    In {
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = a is b: the same object; on nil, bools and numbers a == b
    Is {
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = a <op> b on two ints (`& | ^ << >>`)
    Bitwise {
        op: BitOp,
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = a ** b: an int for ints with b >= 0 (overflow is an error), else a float
    Pow {
        dst: u8,
        a: u8,
        b: u8,
    },
    /// dst = ~src (an int)
    BitNot {
        dst: u8,
        src: u8,
    },
    /// dst = -src
    Neg {
        dst: u8,
        src: u8,
    },
    /// dst = !src
    Not {
        dst: u8,
        src: u8,
    },
    /// pc = target (a backward jump spends budget)
    Jmp {
        target: u32,
    },
    /// if src is truthy, pc = target
    JmpIf {
        src: u8,
        target: u32,
    },
    /// if src is falsy, pc = target
    JmpIfNot {
        src: u8,
        target: u32,
    },
    /// unless (a <cmp> b), pc = target
    JmpUnless {
        cmp: Cmp,
        a: u8,
        b: u8,
        target: u32,
    },
    /// unless (a <cmp> imm), pc = target
    JmpUnlessI {
        cmp: Cmp,
        a: u8,
        imm: i8,
        target: u32,
    },
    /// unless (a <cmp> consts[k]), pc = target: `==` and `!=` against a
    /// literal other than a small int and nil (`c == "{"`, `x == true`), an
    /// ordering against a float literal (`x * x > 4.0`)
    JmpUnlessK {
        cmp: Cmp,
        a: u8,
        k: u8,
        target: u32,
    },
    /// unless (a is nil) == nil, pc = target: `x == nil`, `x != nil`
    JmpUnlessNil {
        a: u8,
        nil: bool,
        target: u32,
    },
    /// A `while` loop's test, at its bottom (the loop is entered by a jump to
    /// it): if src is truthy, pc = target, backwards (a back-edge: it counts
    /// towards preemption).
    LoopIf {
        src: u8,
        target: u32,
    },
    /// if (a <cmp> b), pc = target, backwards (see `LoopIf`)
    LoopWhen {
        cmp: Cmp,
        a: u8,
        b: u8,
        target: u32,
    },
    /// if (a <cmp> imm), pc = target, backwards (see `LoopIf`)
    LoopWhenI {
        cmp: Cmp,
        a: u8,
        imm: i8,
        target: u32,
    },
    /// if (a <cmp> consts[k]), pc = target, backwards (see `LoopIf`, `JmpUnlessK`)
    LoopWhenK {
        cmp: Cmp,
        a: u8,
        k: u8,
        target: u32,
    },
    /// if argument `idx` was passed by the caller, pc = target (skips a default)
    JmpIfArg {
        idx: u8,
        target: u32,
    },
    /// base = base(base+1 .. base+argc)
    Call {
        base: u8,
        argc: u8,
    },
    /// base = globals[idx]; then as Call (a call of a global function whose
    /// arguments cannot change that global: see the compiler's `call`)
    CallGlobal {
        base: u8,
        argc: u8,
        idx: u16,
    },
    /// base = (base+1).name(base+2 .. base+2+argc); map fields holding functions are
    /// called without the receiver, builtin methods with it
    Invoke {
        base: u8,
        argc: u8,
        name: u16,
    },
    /// return src to the caller
    Return {
        src: u8,
    },
    ReturnNil,
    /// dst = a closure of protos[proto], capturing cells per its UpvalDesc list
    Closure {
        dst: u8,
        proto: u16,
    },
    /// dst = [start .. start+count]
    NewList {
        dst: u8,
        start: u8,
        count: u8,
    },
    /// list.push(src) (list literals and comprehensions)
    ListPush {
        list: u8,
        src: u8,
    },
    /// dst = {start: start+1, ...} over `count` key/value pairs
    NewMap {
        dst: u8,
        start: u8,
        count: u8,
    },
    /// dst = a copy of the Proto's map template `keys` (its keys are a
    /// literal's constant strings) with values start, start+1, ...
    NewMapK {
        dst: u8,
        start: u8,
        keys: u16,
    },
    /// dst = obj[key]
    Index {
        dst: u8,
        obj: u8,
        key: u8,
    },
    /// dst = obj[idx], an int literal index (`node[0]`)
    IndexI {
        dst: u8,
        obj: u8,
        idx: u8,
    },
    /// obj[key] = src
    SetIndex {
        obj: u8,
        key: u8,
        src: u8,
    },
    /// obj[key] = consts[k] (a literal: `flags[i] = false`)
    SetIndexK {
        obj: u8,
        key: u8,
        k: u16,
    },
    /// dst = obj[key + off]: an index such as `a[i - 1]` in one instruction
    /// (`off` < 0 from `key - n`, else from `key + n`).
    IndexAdd {
        dst: u8,
        obj: u8,
        key: u8,
        off: i8,
    },
    /// dst = obj.name[key + off] (`self.items[i - 1]`, `self.items[i]` with
    /// `off` 0): a field and an index read in one instruction, for a local
    /// `obj` and `key` (nothing runs between the two reads).
    FieldIndex {
        dst: u8,
        obj: u8,
        name: u16,
        key: u8,
        off: i8,
    },
    /// obj.name[key + off] = src (`off` 0: obj.name[key] = src), for locals
    /// `obj`, `key` and `src`.
    FieldSetIndex {
        obj: u8,
        name: u16,
        key: u8,
        off: i8,
        src: u8,
    },
    /// obj[key + off] = src
    SetIndexAdd {
        obj: u8,
        key: u8,
        off: i8,
        src: u8,
    },
    /// obj[key + off] = consts[k] (`flags[i - 2] = false`)
    SetIndexKAdd {
        obj: u8,
        key: u8,
        off: i8,
        k: u16,
    },
    /// dst = obj.name (map key, or a property such as `e.message`)
    Field {
        dst: u8,
        obj: u8,
        name: u16,
    },
    /// obj.name = src
    SetField {
        obj: u8,
        name: u16,
        src: u8,
    },
    /// dst = lo..hi (or lo..=hi)
    Range {
        dst: u8,
        lo: u8,
        hi: u8,
        inclusive: bool,
    },
    /// Numeric for: base holds the counter, base+1 the end (exclusive after this op).
    /// Checks both are ints; jumps to target when the range is empty, else sets the
    /// loop variable base+2 to the first value.
    ForPrep {
        base: u8,
        inclusive: bool,
        target: u32,
    },
    /// base += 1; if base < base+1, base+2 = base and pc = target (a back-edge)
    ForLoop {
        base: u8,
        target: u32,
    },
    /// base holds an iterable; base+1 becomes the iteration state
    IterInit {
        base: u8,
    },
    /// dst = next item of the iteration at base, or pc = target when exhausted
    IterNext {
        base: u8,
        dst: u8,
        target: u32,
    },
    /// Pushes an exception handler: a throw in this frame or deeper jumps to target
    /// with the thrown value in reg.
    TryBegin {
        reg: u8,
        target: u32,
    },
    /// Pops the innermost exception handler.
    TryEnd,
    /// A `finally` block begins: cancellation is held back until the outermost
    /// one ends (or the fiber's grace time passes).
    Shield,
    /// A `finally` block ends; leaving the outermost delivers a held-back
    /// cancellation (throws it).
    Unshield,
    /// throw src
    Throw {
        src: u8,
    },
    /// dst = concatenation of str() of start .. start+count (string interpolation)
    Concat {
        dst: u8,
        start: u8,
        count: u8,
    },
    /// dst .. dst+count = src[0] .. src[count-1]; src must be a list of exactly
    /// `count` items
    Unpack {
        dst: u8,
        src: u8,
        count: u8,
    },
    /// After `IterNext { base, dst: dst+1 }` of a two-variable `for`: over a map,
    /// dst = the key (moved from dst+1) and dst+1 = its value; over anything else,
    /// dst = the counter in base+2, which is then incremented
    IterPair {
        base: u8,
        dst: u8,
    },
    /// base = task of a new fiber running base(base+1 .. base+argc), or with
    /// `method`, the method call (base+1).<base: its name>(base+2 .. base+2+argc)
    /// made as by Invoke; `dropped` when the task is discarded (a `go`
    /// statement), so failures propagate at once
    Go {
        base: u8,
        argc: u8,
        method: bool,
        dropped: bool,
    },
    /// dst = <-ch (blocks)
    Recv {
        dst: u8,
        ch: u8,
    },
    /// dst, dst+1 = value, ok of <-ch (blocks)
    Recv2 {
        dst: u8,
        ch: u8,
    },
    /// ch <- src (blocks)
    Send {
        ch: u8,
        src: u8,
    },
    /// select over the cases described by selects[desc], with channels (and send
    /// values) in base+2i (base+2i+1); base, base+1, base+2 = case (-1: default), value, ok
    Select {
        base: u8,
        desc: u16,
    },
    /// dst = wait src: a task's result, a list of tasks' results, or a waitgroup (blocks)
    WaitOn {
        dst: u8,
        src: u8,
    },
    /// Starts a `wait { }` block: fibers started until ScopeEnd belong to it.
    ScopeBegin,
    /// Ends a `wait { }` block: blocks until its fibers are done, rethrows the first failure.
    ScopeEnd,
    /// A `wait { }` block's body threw err: cancel its fibers, wait for them, rethrow.
    ScopeAbort {
        err: u8,
    },
    /// Acquires the mutex in m (blocks; FIFO).
    Lock {
        m: u8,
    },
    /// Releases the mutex in m.
    Unlock {
        m: u8,
    },
    /// Inside a coroutine: yield dst to the resumer; dst = the next resume's value.
    /// Outside one: a voluntary yield to the scheduler; dst = nil.
    Yield {
        dst: u8,
    },
    /// Coverage (docs/coverage.md): `vm.coverage`'s counter `id` += 1. Emitted
    /// only when coverage is on, so a normal run never meets it.
    Count {
        id: u32,
    },
    /// A debugger's breakpoint or step (never compiled; dap/ patches it in, keeping the original).
    /// Stays the last variant: `Op::COUNT` is its index plus one.
    Trap,
}

impl Op {
    /// How many kinds of instruction there are (`Trap` is the last).
    pub const COUNT: usize = Op::Trap.tag() as usize + 1;

    /// The variant's index: its first byte (`repr(u8)`).
    #[inline(always)]
    pub const fn tag(&self) -> u8 {
        // SAFETY: a `repr(u8)` enum starts with its discriminant.
        unsafe { *(self as *const Op as *const u8) }
    }
}

#[cfg(test)]
#[path = "op_tests.rs"]
mod tests;
