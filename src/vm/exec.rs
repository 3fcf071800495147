//! The dispatch loop, as threaded handlers: one function per kind of
//! instruction, each ending in a tail call of the next instruction's handler
//! (`TABLE`, indexed by `Op::tag`). The interpreter's state travels in four
//! argument registers (`ip`, `regs`, the `Vm`, the `Cx` with the rest), so
//! each handler's registers are its own: in one `match` loop, LLVM spilled
//! the register base and more to the stack for the sake of the rarest arms,
//! and every instruction reloaded them (benches/README.md, "Threaded
//! handlers"). A handler's fast path (`h_*`) makes no call: where its body
//! says `cold!`, it tail-calls its slow half (`s_*`), which runs the whole
//! body again from the start, so nothing is written before a `cold!`. It
//! never recurses into itself and never blocks: script calls push a `Frame`
//! onto the fiber, and `dispatch` returns a `Halt` when the fiber finishes,
//! spends its budget, or fails.
//!
//! A tail call is LLVM's choice, not a guarantee of Rust's: optimised builds
//! make the handlers' `next!` a jump, which tests/code_layout.rs checks in
//! the x86-64 binary. The slow halves of the general call do call on (a
//! builtin's result is live across the call), so a slow half's `tick!` (every
//! back-edge and call) hands back to `dispatch` once the machine stack has
//! grown by `STACK_SLACK`; on other targets, where nothing checks the binary,
//! every `tick!` does. Builds with debug assertions (unoptimised) return to
//! `dispatch` after every instruction instead.

use super::arith::{arith_slow, compare_slow};
use super::builtin::NativeFn;
use super::call::{call_value, Called};
pub use super::entry::run;
pub use super::error::{capped_trace, new_error, throw};
use super::exec_conc::{concurrency_op, Step};
use super::exec_iter::IterStep;
pub use super::fiber::Halt;
use super::fiber::{Fiber, Frame, Handler};
use super::object::{Obj, QuickFn};
use super::object_ops::{
    concat, get_upval, index, invoke, iter_next, iter_start, new_closure, new_map_from, set_field, set_index, set_upval,
};
use super::value::{
    cached_get, cached_get_mut, cached_hit, cached_hit_mut, copy_value, int_payload, load_value, set_int_payload, Name,
    Value,
};
use super::{arith, coroutine, err, Fault, Res, Vm};
use crate::bytecode::{Cmp, Op, ProtoRef};
use crate::vm::ErrorKind;

/// The loop's state that is not in argument registers: the running frame's
/// proto, register base and code, and what the loop stops with.
pub(super) struct Cx {
    /// The running fiber (`dispatch`'s, which does not touch it while
    /// handlers run).
    fiber: *mut Fiber,
    proto: ProtoRef,
    /// `proto.names`' start: a field read's cache one load nearer.
    names: *const Name,
    base: usize,
    code: *const Op,
    /// The budget left: back-edges and calls until the fiber's slice ends.
    left: u32,
    /// Set when the loop stops: what `dispatch` returns.
    out: Option<Res<Halt>>,
    /// Where the next handler starts when a handler returns without stopping.
    ip: *const Op,
    regs: *mut Value,
    /// Below this the machine stack has grown by `STACK_SLACK` since `dispatch`.
    #[cfg_attr(debug_assertions, allow(dead_code))]
    stack_floor: usize,
}

/// An instruction's handler: the instruction at `ip`, the frame's registers
/// at `regs`. Four arguments, so that five of x86-64's nine caller-saved
/// registers are left for the handler's own values (with six, the float
/// `Mul` saved and restored two callee-saved ones).
type OpFn = fn(*const Op, *mut Value, &mut Vm, &mut Cx);

/// How far the machine stack may grow below `dispatch` before `tick!` hands
/// back to it (only if a handler's tail call was compiled as a call).
const STACK_SLACK: usize = 256 * 1024;

/// The handler of every kind of instruction, by `Op::tag`.
static TABLE: [OpFn; Op::COUNT] = {
    let mut table: [OpFn; Op::COUNT] = [h_trap; Op::COUNT];
    let mut tag = 0;
    while tag < Op::COUNT {
        // An instruction of each kind: every operand byte 1, a valid value of
        // each operand type (`Cmp::Lt`, `BitOp::Or`, `true`, numbers).
        // SAFETY: `Op` is `repr(u8)` and 8 bytes; the first byte is below COUNT.
        let op: Op = unsafe { std::mem::transmute::<[u8; 8], Op>([tag as u8, 1, 1, 1, 1, 1, 1, 1]) };
        table[tag] = handler_of(&op);
        tag += 1;
    }
    table
};

const _: () = assert!(std::mem::size_of::<Op>() == 8);

/// `TABLE`, copied into each `Vm` (`Vm::handlers`): the handlers reach it
/// through the `Vm` they hold in a register, where the static table needs its
/// address made first in position-independent code (a `lea` per instruction
/// run).
pub(crate) struct Handlers([OpFn; Op::COUNT]);

impl Default for Handlers {
    fn default() -> Handlers {
        Handlers(TABLE)
    }
}

#[inline(always)]
fn handler_at(vm: &Vm, ip: *const Op) -> OpFn {
    // SAFETY: ip points at an instruction, whose tag is below COUNT.
    unsafe { *vm.handlers.0.get_unchecked((*ip).tag() as usize) }
}

/// The machine stack's current depth (a stack address).
#[inline(always)]
fn stack_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let sp: usize;
        // SAFETY: reads the stack pointer register.
        unsafe { std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
        sp
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let here = 0u8;
        std::hint::black_box(&here) as *const u8 as usize
    }
}

/// Runs the fiber's top frame until it finishes, spends `budget`, blocks or
/// fails. The register file of the running frame is `stack[base..]` through a
/// raw pointer, valid until the stack is resized, which only calls do;
/// `reload!` refreshes it. The compiler guarantees every register operand is
/// below the Proto's `nregs`, and `call_value` sizes the stack for that.
pub(super) fn dispatch(vm: &mut Vm, fiber: &mut Fiber, budget: &mut u32) -> Res<Halt> {
    let frame = fiber.frames.last().expect("a frame to run");
    let proto = frame.proto;
    let base = frame.base as usize;
    let code: *const Op = proto.code.as_ptr();
    // SAFETY: a saved pc is within its Proto's code.
    let ip = unsafe { code.add(frame.pc as usize) };
    let regs = fiber.stack[base..].as_mut_ptr();
    let mut cx = Cx {
        fiber,
        proto,
        names: proto.names.as_ptr(),
        base,
        code,
        left: *budget,
        out: None,
        ip,
        regs,
        stack_floor: stack_pointer().saturating_sub(STACK_SLACK),
    };
    let out = loop {
        let (ip, regs) = (cx.ip, cx.regs);
        handler_at(vm, ip)(ip, regs, vm, &mut cx);
        if let Some(out) = cx.out.take() {
            break out;
        }
    };
    *budget = cx.left;
    out
}

/// Defines the handlers' macros (`reg!`, `t!`, `next!`, `call!`, ...) over
/// the handlers' parameters and locals, which the caller names: a macro
/// written out here cannot name a function's locals itself (hygiene). `$d` is
/// `$`, for the inner macros' own arguments.
macro_rules! loop_helpers {
    ($d:tt, $vm:ident, $fiber:ident, $cx:ident, $proto:ident, $base:ident, $ip:ident, $regs:ident) => {
        macro_rules! reg {
                            ($d r:expr) => {
                                // SAFETY: see the function's doc comment.
                                *unsafe { &mut *$regs.add($d r as usize) }
                            };
                        }
        // Field name `i` of the running Proto (`Proto::name`, through `Cx::names`).
        macro_rules! name {
            ($d i:expr) => {
                // SAFETY: the compiler emits only indices of names it added.
                unsafe { &*$cx.names.add($d i as usize) }
            };
        }
        // The running frame.
        macro_rules! frame {
            () => {
                // SAFETY: a running fiber has a frame.
                unsafe { $fiber.frames.last().unwrap_unchecked() }
            };
        }
        // The running frame's pc: where an error, a call or a stop resumes
        // or reports from.
        macro_rules! save_pc {
            () => {{
                // SAFETY: a running fiber has a frame.
                unsafe { $fiber.frames.last_mut().unwrap_unchecked() }.pc = pc!();
            }};
        }
        // A global's slot. The compiler takes indices from `Vm::global_slot`, and
        // `globals` never shrinks, so no bounds check.
        macro_rules! global {
                            ($d idx:expr) => {{
                                debug_assert!(($d idx as usize) < $vm.globals.len());
                                // SAFETY: see above.
                                unsafe { $vm.globals.as_mut_ptr().add($d idx as usize) }
                            }};
                        }
        // The index of the next instruction (what a Frame saves).
        macro_rules! pc {
            () => {
                // SAFETY: ip points into `code`, at or past its start.
                unsafe { $ip.offset_from($cx.code) as u32 }
            };
        }
        macro_rules! jump {
                            ($d target:expr) => {
                                // SAFETY: the compiler emits jump targets within the Proto's code.
                                $ip = unsafe { $cx.code.add($d target as usize) }
                            };
                        }
        // A jump of `Op::relative_target`'s: from the next instruction.
        macro_rules! jump_by {
                            ($d offset:expr) => {
                                // SAFETY: the compiler emits jump targets within the Proto's code.
                                $ip = unsafe { $ip.offset($d offset as i32 as isize) }
                            };
                        }
        // A forward conditional jump (see `keep_branch`).
        macro_rules! branch_by {
                            ($d offset:expr) => {{
                                keep_branch();
                                jump_by!($d offset);
                            }};
                        }
        macro_rules! t {
                            ($d e:expr) => {
                                match $d e {
                                    Ok(v) => v,
                                    Err(f) => {
                                        save_pc!();
                                        stop!(Err(f));
                                    }
                                }
                            };
                        }
        // `?`: the pc is already saved.
        macro_rules! q {
                            ($d e:expr) => {
                                match $d e {
                                    Ok(v) => v,
                                    Err(f) => stop!(Err(f)),
                                }
                            };
                        }
        // Ends the loop: `dispatch` returns `r`.
        macro_rules! stop {
                            ($d r:expr) => {{
                                // `out` is None while handlers run (`dispatch` takes it):
                                // written without a drop, which would be a call.
                                // SAFETY: a valid place.
                                let r = $d r;
                                unsafe { std::ptr::write(&mut $cx.out, Some(r)) };
                                return;
                            }};
                        }
        // Hands the position back to `dispatch`, which runs on from it.
        macro_rules! park {
            () => {{
                $cx.ip = $ip;
                $cx.regs = $regs;
                return;
            }};
        }
        // On to the next instruction: a tail call of its handler (a return to
        // `dispatch` in unoptimised builds, which make no tail calls).
        macro_rules! next {
            () => {{
                #[cfg(not(debug_assertions))]
                return handler_at($vm, $ip)($ip, $regs, $vm, $cx);
                #[cfg(debug_assertions)]
                park!();
            }};
        }
        // Runs on in frame `f` (a `&Frame`), whose registers are on the
        // stack at `stack` (`call_value` and `enter_closure!` size it before
        // pushing a frame).
        macro_rules! resume_frame {
            ($d f:expr, $d stack:expr) => {{
                let f: &Frame = $d f;
                $proto = f.proto;
                $base = f.base as usize;
                $cx.proto = $proto;
                $cx.names = $proto.names.as_ptr();
                $cx.base = $base;
                $cx.code = $proto.code.as_ptr();
                jump!(f.pc);
                // SAFETY: see above.
                $regs = unsafe { $d stack.add($base) };
            }};
        }
        macro_rules! reload {
            () => {{
                // SAFETY: a running fiber has a frame.
                let f = unsafe { $fiber.frames.last().unwrap_unchecked() };
                resume_frame!(f, $fiber.stack.as_mut_ptr());
            }};
        }
        macro_rules! tick {
            () => {
                $cx.left -= 1;
                if $cx.left == 0 {
                    save_pc!();
                    stop!(Ok(Halt::Preempted));
                }
                guard_stack!();
            };
        }
        // The common call: a closure given exactly its parameters gets a frame
        // here, without `call_value`'s general checks; anything else falls through.
        // `$d then`: a statement run once the call is sure to be made here
        // (after the cold steps, whose slow half runs the instruction again
        // from its start).
        macro_rules! enter_closure {
                            ($d callee:expr, $d args:expr, $d argc:expr, $d ret:expr $d(; $d then:expr)?) => {
                                if let Value::Obj(h) = $d callee {
                                    if let Obj::Closure(c) = $vm.heap.get(h) {
                                        let p = c.proto;
                                        let args = $d args;
                                        if p.exact_argc == $d argc {
                                            let need = args + p.nregs as usize;
                                            if $fiber.stack.len() < need {
                                                cold! {
                                                    $fiber.grow_stack(need, &mut $vm.heap);
                                                    // The stack moved, this frame's registers with it.
                                                    // SAFETY: they are on the stack.
                                                    $regs = unsafe { $fiber.stack.as_mut_ptr().add($base) };
                                                }
                                            }
                                            // Full only at the depth limit once grown
                                            // (`Frames`): then `call_value` says so.
                                            if $fiber.frames.len() == $fiber.frames.capacity() {
                                                cold! { $fiber.frames.grow() }
                                            }
                                        }
                                        if p.exact_argc == $d argc && $fiber.frames.len() != $fiber.frames.capacity() {
                                            $d($d then;)?
                                            let frame = Frame {
                                                proto: p,
                                                closure: Some(h),
                                                pc: 0,
                                                base: args as u32,
                                                ret: $d ret as u32,
                                                argc: $d argc,
                                            };
                                            // SAFETY: below the capacity (just checked); a
                                            // push would keep its own growing call here.
                                            unsafe {
                                                let n = $fiber.frames.len();
                                                $fiber.frames.as_mut_ptr().add(n).write(frame);
                                                $fiber.frames.set_len(n + 1);
                                            }
                                            $proto = p;
                                            $base = args;
                                            $cx.proto = p;
                                            $cx.names = p.names.as_ptr();
                                            $cx.base = args;
                                            $cx.code = p.code.as_ptr();
                                            $ip = $cx.code;
                                            // SAFETY: the stack was sized above.
                                            $regs = unsafe { $fiber.stack.as_mut_ptr().add($base) };
                                            tick!();
                                            next!();
                                        }
                                    }
                                }
                            };
                        }
        // A return to the caller's frame, below: `$d put` stores the result
        // in its `slot`. What it needs is read before that store, which LLVM
        // would otherwise have to assume overwrote it.
        macro_rules! return_to {
                            (|$d slot:ident| $d put:expr) => {{
                                let n = $fiber.frames.len();
                                let frames = $fiber.frames.as_mut_ptr();
                                let stack = $fiber.stack.as_mut_ptr();
                                // SAFETY: two frames at least (the caller checked), and
                                // frames are plain data (no drop to run).
                                let (ret, caller) = unsafe { ((*frames.add(n - 1)).ret, frames.add(n - 2)) };
                                unsafe { $fiber.frames.set_len(n - 1) };
                                // SAFETY: the return slot is on the stack.
                                let $d slot: *mut Value = unsafe { stack.add(ret as usize) };
                                $d put;
                                // SAFETY: the caller's frame is live.
                                resume_frame!(unsafe { &*caller }, stack);
                            }};
                        }
        // After a call made out of line: a frame to run, a value in place, or a wait.
        macro_rules! called {
                            ($d called:expr) => {{
                                match $d called {
                                    Called::Frame => reload!(),
                                    Called::Value => made_big!(),
                                    Called::Blocked => stop!(Ok(Halt::Blocked)),
                                }
                                tick!();
                            }};
                        }
        // A return from the fiber's first frame: the fiber's result, or a
        // coroutine's (which goes on in its caller).
        macro_rules! return_out {
                            ($d v:expr) => {{
                                let v = $d v;
                                $fiber.frames.pop();
                                if $fiber.in_coroutine() {
                                    coroutine::finish($vm, $fiber, v);
                                    reload!();
                                    next!();
                                }
                                stop!(Ok(Halt::Done(v)));
                            }};
                        }
        // After a builtin: one that made a big object past the collector's
        // trigger ends the slice at the next `tick!` (see `Heap::end_slice`).
        macro_rules! made_big {
            () => {
                if $vm.heap.end_slice {
                    $vm.heap.end_slice = false;
                    $cx.left = 1;
                }
            };
        }
        // `base = base(base+1 .. base+argc)`, the callee already in `base`.
        macro_rules! call {
                            ($d b:expr, $d argc:expr) => {{
                                let (b, argc) = ($d b, $d argc);
                                save_pc!();
                                let slot = $base + b as usize;
                                // SAFETY: slot is a register of this frame.
                                let callee = unsafe { load_value($regs.add(b as usize)) };
                                enter_closure!(callee, slot + 1, argc, slot);
                                call_other!(b, argc);
                            }};
                        }
        // The rest of `call!`, past a closure given exactly its parameters: the
        // callee in `base`, the pc saved.
        macro_rules! call_other {
                            ($d b:expr, $d argc:expr) => {{
                                let (b, argc) = ($d b, $d argc);
                                // A builtin with a fast path (`sqrt(x)`, `len(xs)`), in the
                                // fast half only: the slow half is where it falls back to.
                                hot! {
                                    if argc == 1 {
                                        // SAFETY: slot is a register of this frame.
                                        if let Value::Obj(h) = unsafe { load_value($regs.add(b as usize)) } {
                                            if let Obj::Native(n) = $vm.heap.get(h) {
                                                if let Some(f) = n.quick {
                                                    return call_quick($ip, $regs, $vm, $cx, f, b);
                                                }
                                            }
                                        }
                                    }
                                }
                                cold! {
                                let slot = $base + b as usize;
                                // Read again rather than kept: fewer values live across the fast path.
                                // SAFETY: slot is a register of this frame.
                                let callee = unsafe { load_value($regs.add(b as usize)) };
                                // A builtin that only computes a value (`sqrt`, `len`, `abs`).
                                if let Value::Obj(h) = callee {
                                    if let Obj::Native(n) = $vm.heap.get(h) {
                                        if let NativeFn::Value(f) = n.func {
                                            let args = slot + 1;
                                            let v = q!(call_native(f, $vm, $fiber, args, argc as usize));
                                            reg!(b) = v;
                                            made_big!();
                                            tick!();
                                            next!();
                                        }
                                    }
                                }
                                called!(q!(call_value($vm, $fiber, callee, slot + 1, argc as usize, slot)));
                            } }};
                        }
        // `key + off` as a list index when `key` is an int (a negative one
        // becomes an index past any list: `as u64`).
        macro_rules! int_at {
                            ($d key:expr, $d off:expr) => {
                                match reg!($d key) {
                                    Value::Int(i) => Some(i.wrapping_add($d off as i64) as u64 as usize),
                                    _ => None,
                                }
                            };
                        }
        // `list[at] = v` in place, when `obj` is a list with `at` in range:
        // without the collector's barrier while it does not mark (the
        // barrier may call), with it in the slow half.
        macro_rules! set_item {
                            ($d obj:expr, $d at:expr, $d v:expr) => {
                                if let (Value::Obj(h), Some(at)) = (reg!($d obj), $d at) {
                                    if !$vm.heap.marking() {
                                        if let Some(item) = $vm.heap.get_mut_items(h).list_item_mut(at) {
                                            *item = $d v;
                                            next!();
                                        }
                                    }
                                    cold! {
                                        if let Some(item) = $vm.heap.get_mut_items(h).list_item_mut(at) {
                                            let old = std::mem::replace(item, $d v);
                                            $vm.heap.overwritten(old);
                                            next!();
                                        }
                                    }
                                }
                            };
                        }
        macro_rules! arith {
                            ($d op:expr, $d dst:expr, $d a:expr, $d b:expr, $d fast:ident, $d fop:tt) => {{
                                // Matching on references reads the tag and payload in place
                                // instead of copying whole values through the stack.
                                match (&reg!($d a), &reg!($d b)) {
                                    (Value::Int(i), Value::Int(j)) => {
                                        if let Some(r) = i.$d fast(*j) {
                                            reg!($d dst) = Value::Int(r);
                                            next!();
                                        }
                                    }
                                    (Value::Float(x), Value::Float(y)) => {
                                        reg!($d dst) = Value::Float(x $d fop y);
                                        next!();
                                    }
                                    _ => {}
                                }
                                cold! {
                                    let (x, y) = (reg!($d a), reg!($d b));
                                    let v = t!(arith_slow($vm, $d op, x, y));
                                    reg!($d dst) = v;
                                }
                            }};
                        }
        // `dst = a <op> imm` for a small int immediate: ints in line,
        // anything else (an overflow too) by the general path.
        macro_rules! arith_i {
            ($d op:expr, $d dst:expr, $d a:expr, $d imm:expr, $d fast:ident) => {{
                if let Value::Int(i) = &reg!($d a) {
                    if let Some(r) = i.$d fast($d imm as i64) {
                        reg!($d dst) = Value::Int(r);
                        next!();
                    }
                }
                cold! {
                    let x = reg!($d a);
                    let v = t!(arith_slow($vm, $d op, x, Value::Int($d imm as i64)));
                    reg!($d dst) = v;
                }
            }};
        }
        // `dst = a <op> k` for a float constant k: an int `a` counts as a float,
        // as in `arith::add`; anything else takes the general path. The
        // constant is a float (the compiler's rule, which bytecode/verify.rs
        // checks), so its tag is not read again.
        macro_rules! arith_k {
                            ($d op:expr, $d dst:expr, $d a:expr, $d k:expr, |$d x:ident, $d y:ident| $d e:expr) => {{
                                let kp: *const Value = $proto.konst($d k as u16);
                                // SAFETY: a constant; a float's payload (see above).
                                debug_assert!(matches!(unsafe { *kp }, Value::Float(_)));
                                let $d y = f64::from_bits(unsafe { int_payload(kp) } as u64);
                                let x = match &reg!($d a) {
                                    Value::Float(x) => Some(*x),
                                    Value::Int(i) => Some(*i as f64),
                                    _ => None,
                                };
                                if let Some($d x) = x {
                                    reg!($d dst) = Value::Float($d e);
                                    next!();
                                }
                                cold! {
                                    let (x, k) = (reg!($d a), *$proto.konst($d k as u16));
                                    let v = t!(arith::arith_k_slow($vm, $d op, x, k));
                                    reg!($d dst) = v;
                                }
                            }};
                        }
        // `x <cmp> y`, two places (registers or a constant).
        macro_rules! compare {
                            ($d cmp:expr, $d x:expr, $d y:expr) => {{
                                let (x, y): (&Value, &Value) = (&$d x, &$d y);
                                match (x, y) {
                                    (Value::Int(i), Value::Int(j)) => $d cmp.ints(*i, *j),
                                    (Value::Float(x), Value::Float(y)) => $d cmp.floats(*x, *y),
                                    // `x == nil`, `x != nil`: nil equals only nil.
                                    (Value::Nil, v) | (v, Value::Nil) if $d cmp.is_equality() => {
                                        matches!(v, Value::Nil) == ($d cmp == Cmp::Eq)
                                    }
                                    // Two strings (`c == "{"`): the same object, lengths that
                                    // differ or two interned strings answer without reading them.
                                    (Value::Obj(a), Value::Obj(b)) if $d cmp.is_equality() => {
                                        match arith::str_eq_quick(&$vm.heap, *a, *b) {
                                            Some(same) => same == ($d cmp == Cmp::Eq),
                                            None => cold! {
                                                let (x, y) = (*x, *y);
                                                t!(compare_slow($vm, $d cmp, x, y))
                                            },
                                        }
                                    }
                                    _ => cold! {
                                        let (x, y) = (*x, *y);
                                        t!(compare_slow($vm, $d cmp, x, y))
                                    },
                                }
                            }};
                        }

        // `a <cmp> imm`, for an integer literal.
        macro_rules! compare_imm {
                            ($d cmp:expr, $d a:expr, $d imm:expr) => {
                                match &reg!($d a) {
                                    Value::Int(i) => $d cmp.ints(*i, $d imm as i64),
                                    _ => cold! {
                                        let x = reg!($d a);
                                        t!(compare_slow($vm, $d cmp, x, Value::Int($d imm as i64)))
                                    },
                                }
                            };
                        }
    };
}

/// Keeps a conditional jump of the program a branch. LLVM otherwise turns
/// some (`if n < 2`, `x == nil`) into a conditional move of `ip`, and then
/// every later instruction waits for the compare instead of running ahead on
/// the branch predictor's guess. An asm statement cannot be speculated.
#[inline(always)]
fn keep_branch() {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: an empty asm statement does nothing.
    unsafe {
        std::arch::asm!("", options(nomem, nostack, preserves_flags))
    }
}

/// A point the compiler cannot move loads across (an asm statement that may
/// read memory): the tests before it stay before it.
#[inline(always)]
fn keep_order() {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: an empty asm statement does nothing.
    unsafe {
        std::arch::asm!("", options(nostack, preserves_flags))
    }
}

/// Calls builtin `f` on `argc` arguments at `stack[args..]`. Out of line,
/// like the helpers below: a handler that keeps a value on its stack while
/// it calls (the result of a call through a function pointer, a map being
/// filled) calls the next handler instead of jumping to it
/// (tests/code_layout.rs).
#[inline(never)]
fn call_native(f: super::builtin::ValueFn, vm: &mut Vm, fiber: &mut Fiber, args: usize, argc: usize) -> Res<Value> {
    f(vm, &fiber.stack[args..args + argc]).map_err(|e| super::call::moved(vm, fiber, args, argc, e))
}

/// A call of a builtin's fast path (`Native::quick`) on the argument in
/// `b + 1`, the builtin in `b`; the call instruction's slow half when the
/// fast path declines (its error, or a case it leaves to the builtin).
#[inline(never)]
fn call_quick(ip: *const Op, regs: *mut Value, vm: &mut Vm, cx: &mut Cx, f: QuickFn, b: u8) {
    // SAFETY: b and b + 1 are registers of this frame (the builtin and the
    // call's argument).
    let (out, arg) = unsafe { (&mut *regs.add(b as usize), &*regs.add(b as usize + 1)) };
    match f(&vm.heap, arg, out) {
        true => {
            #[cfg(not(debug_assertions))]
            return handler_at(vm, ip)(ip, regs, vm, cx);
            #[cfg(debug_assertions)]
            {
                cx.ip = ip;
                cx.regs = regs;
            }
        }
        false => {
            // SAFETY: ip is past the call instruction.
            let op = unsafe { ip.sub(1) };
            match unsafe { &*op } {
                Op::CallGlobal { .. } => s_call_global(op, regs, vm, cx),
                _ => s_call(op, regs, vm, cx),
            }
        }
    }
}

#[inline(never)]
fn concurrency(vm: &mut Vm, fiber: &mut Fiber, op: Op, base: usize) -> Res<Step> {
    concurrency_op(vm, fiber, op, base)
}

/// A map of `pairs`' keys and values (`NewMap`).
#[inline(never)]
fn new_map_of(vm: &mut Vm, pairs: &[Value]) -> Res<Value> {
    let mut m = crate::vm::value::new_map(pairs.len() / 2);
    for kv in pairs.chunks_exact(2) {
        m.insert(arith::to_key(&vm.heap, kv[0])?, kv[1]);
    }
    Ok(Value::Obj(vm.heap.alloc(Obj::Map(m))))
}

/// Defines a handler per arm (`name / slow(pattern) => body`), both its
/// halves (`handler_half!`), and `handler_of`, whose `match` lists every kind
/// of instruction once (the compiler checks that none is missing).
macro_rules! handlers {
    ([$d:tt, $vm:ident, $fiber:ident, $cx:ident, $proto:ident, $base:ident, $ip:ident, $regs:ident, $op:ident]
     $($name:ident / $slow:ident ($($pat:pat_param)|+) => $body:block)*) => {
        $(
            handler_half! {
                [$d, $vm, $fiber, $cx, $proto, $base, $ip, $regs, $op]
                $name / $slow (false) ($($pat)|+) => $body
            }
            handler_half! {
                [$d, $vm, $fiber, $cx, $proto, $base, $ip, $regs, $op]
                /// The whole instruction, its `cold!` parts included.
                #[inline(never)]
                $slow / $slow (true) ($($pat)|+) => $body
            }
        )*

        /// The handler of `op`'s kind of instruction.
        #[allow(unused_variables)]
        const fn handler_of(op: &Op) -> OpFn {
            match *op {
                $($($pat)|+ => $name as OpFn,)*
            }
        }
    };
}

/// One half of a handler, `name`: the fast half (`SLOW` false), whose
/// `cold!` tail-calls the slow half `slow`, or the slow half, which runs the
/// `cold!` parts in line. Either reads its instruction, steps `ip` past it,
/// runs the body and goes on to the next one; a body leaves early with
/// `next!()` or `stop!`. The half's parts are chosen by a constant, so the
/// other half's code is compiled away.
macro_rules! handler_half {
    ([$d:tt, $vm:ident, $fiber:ident, $cx:ident, $proto:ident, $base:ident, $ip:ident, $regs:ident, $op:ident]
     $(#[$attr:meta])* $name:ident / $slow:ident ($is_slow:literal) ($($pat:pat_param)|+) => $body:block) => {
        $(#[$attr])*
        #[allow(unused_mut, unused_variables, unused_assignments, unused_macros, unreachable_code, clippy::needless_return, dead_code)]
        fn $name(mut $ip: *const Op, mut $regs: *mut Value, $vm: &mut Vm, $cx: &mut Cx) {
            const SLOW: bool = $is_slow;
            // SAFETY: `TABLE` sends an instruction only to its own handler.
            let $op: &Op = unsafe { &*$ip };
            // SAFETY: every code path of a Proto ends in a return, so ip stays in bounds.
            $ip = unsafe { $ip.add(1) };
            let mut $proto = $cx.proto;
            let mut $base = $cx.base;
            // SAFETY: `Cx::fiber`.
            let $fiber: &mut Fiber = unsafe { &mut *$cx.fiber };
            loop_helpers!($d, $vm, $fiber, $cx, $proto, $base, $ip, $regs);
            // The rest of the instruction: in the other function from the
            // fast half.
            macro_rules! cold {
                ($d($d t:tt)*) => {{
                    if !SLOW {
                        return $slow($op, $regs, $vm, $cx);
                    }
                    $d($d t)*
                }};
            }
            // A shortcut the slow half goes without.
            macro_rules! hot {
                ($d($d t:tt)*) => {
                    if !SLOW {
                        $d($d t)*
                    }
                };
            }
            // A fast half always jumps on, which tests/code_layout.rs checks
            // on x86-64: only a slow half's call can grow the machine stack
            // there.
            macro_rules! guard_stack {
                () => {
                    #[cfg(not(debug_assertions))]
                    if (SLOW || !cfg!(target_arch = "x86_64")) && stack_pointer() < $cx.stack_floor {
                        park!();
                    }
                };
            }
            match *$op {
                $($pat)|+ => $body,
                // SAFETY: as above.
                _ => unsafe { std::hint::unreachable_unchecked() },
            }
            next!();
        }
    };
}

handlers! {
    [$, vm, fiber, cx, proto, base, ip, regs, op]
            // SAFETY: registers are in bounds (see above).
            h_move / s_move(Op::Move { dst, src }) => { unsafe { copy_value(regs.add(dst as usize), regs.add(src as usize)) } }
            // SAFETY (both): registers of this frame, the destinations above the sources.
            h_move2 / s_move2(Op::Move2 { dst, a, b }) => {
                unsafe {
                    copy_value(regs.add(dst as usize), regs.add(a as usize));
                    copy_value(regs.add(dst as usize + 1), regs.add(b as usize));
                }
            }
            h_move3 / s_move3(Op::Move3 { dst, a, b, c }) => {
                unsafe {
                    copy_value(regs.add(dst as usize), regs.add(a as usize));
                    copy_value(regs.add(dst as usize + 1), regs.add(b as usize));
                    copy_value(regs.add(dst as usize + 2), regs.add(c as usize));
                }
            }
            h_load_nil / s_load_nil(Op::LoadNil { dst }) => { reg!(dst) = Value::Nil }
            h_load_bool / s_load_bool(Op::LoadBool { dst, val }) => { reg!(dst) = Value::Bool(val) }
            h_load_int / s_load_int(Op::LoadInt { dst, val }) => { reg!(dst) = Value::Int(val as i64) }
            h_load_k / s_load_k(Op::LoadK { dst, k }) => { reg!(dst) = *proto.konst(k) }
            h_get_global / s_get_global(Op::GetGlobal { dst, idx }) => {
                let slot: *const Value = global!(idx);
                // SAFETY: both point at live values.
                unsafe { copy_value(regs.add(dst as usize), slot) }
            }
            h_set_global / s_set_global(Op::SetGlobal { src, idx }) => {
                let slot: *mut Value = global!(idx);
                // SAFETY: both point at live values.
                unsafe { copy_value(slot, regs.add(src as usize)) }
            }
            h_get_upval / s_get_upval(Op::GetUpval { dst, idx }) => { reg!(dst) = get_upval(vm, frame!().closure, idx) }
            h_set_upval / s_set_upval(Op::SetUpval { src, idx }) => { set_upval(vm, frame!().closure, idx, reg!(src)) }
            h_new_cell / s_new_cell(Op::NewCell { reg }) => {
                let h = vm.heap.alloc(Obj::Cell(reg!(reg)));
                reg!(reg) = Value::Obj(h);
            }
            h_get_cell / s_get_cell(Op::GetCell { dst, cell }) => {
                reg!(dst) = match reg!(cell) {
                    Value::Obj(h) => match vm.heap.get(h) {
                        Obj::Cell(v) => *v,
                        _ => Value::Nil,
                    },
                    _ => Value::Nil,
                };
            }
            h_set_cell / s_set_cell(Op::SetCell { cell, src }) => {
                if let Value::Obj(h) = reg!(cell) {
                    let v = reg!(src);
                    *vm.heap.get_mut(h) = Obj::Cell(v);
                }
            }
            h_add / s_add(Op::Add { dst, a, b }) => { arith!(*op, dst, a, b, checked_add, +) }
            h_sub / s_sub(Op::Sub { dst, a, b }) => { arith!(*op, dst, a, b, checked_sub, -) }
            h_mul / s_mul(Op::Mul { dst, a, b }) => {
                // Floats first: products are mostly of floats (NBody,
                // Mandelbrot), while int code mostly adds.
                if let (Value::Float(x), Value::Float(y)) = (&reg!(a), &reg!(b)) {
                    reg!(dst) = Value::Float(x * y);
                    next!();
                }
                // Keeps the test above first: LLVM otherwise merges it into
                // `arith!`'s, ints first.
                keep_order();
                arith!(*op, dst, a, b, checked_mul, *)
            }
            h_div / s_div(Op::Div { dst, a, b }) => {
                if let (Value::Float(x), Value::Float(y)) = (&reg!(a), &reg!(b)) {
                    reg!(dst) = Value::Float(x / y);
                    next!();
                }
                cold! {
                    let v = t!(arith::div(&vm.heap, reg!(a), reg!(b)));
                    reg!(dst) = v;
                }
            }
            // Float addition and multiplication commute exactly, so `rev` matters
            // only to the slow path's error message.
            h_add_k / s_add_k(Op::AddK { dst, a, k, .. }) => { arith_k!(*op, dst, a, k, |x, y| x + y) }
            h_mul_k / s_mul_k(Op::MulK { dst, a, k, .. }) => { arith_k!(*op, dst, a, k, |x, y| x * y) }
            h_sub_k / s_sub_k(Op::SubK { dst, a, k, rev }) => { arith_k!(*op, dst, a, k, |x, y| if rev { y - x } else { x - y }) }
            h_div_k / s_div_k(Op::DivK { dst, a, k, rev }) => { arith_k!(*op, dst, a, k, |x, y| if rev { y / x } else { x / y }) }
            h_mod / s_mod(Op::Mod { dst, a, b }) => {
                if let (Value::Int(i), Value::Int(j)) = (&reg!(a), &reg!(b)) {
                    if *j > 0 {
                        reg!(dst) = Value::Int(i % j);
                        next!();
                    }
                }
                cold! {
                    let (x, y) = (reg!(a), reg!(b));
                    let v = t!(arith_slow(vm, *op, x, y));
                    reg!(dst) = v;
                }
            }
            h_add_i / s_add_i(Op::AddI { dst, a, imm }) => { arith_i!(*op, dst, a, imm, checked_add) }
            h_mul_i / s_mul_i(Op::MulI { dst, a, imm }) => { arith_i!(*op, dst, a, imm, checked_mul) }
            h_mod_i / s_mod_i(Op::ModI { dst, a, imm }) => {
                if let Value::Int(i) = &reg!(a) {
                    if imm > 0 {
                        reg!(dst) = Value::Int(i % imm as i64);
                        next!();
                    }
                }
                cold! {
                    let x = reg!(a);
                    let v = t!(arith_slow(vm, *op, x, Value::Int(imm as i64)));
                    reg!(dst) = v;
                }
            }
            h_compare / s_compare(Op::Compare { cmp, dst, a, b }) => {
                let r = compare!(cmp, reg!(a), reg!(b));
                reg!(dst) = Value::Bool(r);
            }
            h_compare_k / s_compare_k(Op::CompareK { cmp, dst, a, k }) => {
                let r = compare!(cmp, reg!(a), *proto.konst(k));
                reg!(dst) = Value::Bool(r);
            }
            h_in / s_in(Op::In { dst, a, b }) => {
                // Out of line, but not through `rare_op`: `word in line` runs once
                // a line in grep-like loops.
                let r = t!(super::exec_rare::contains(vm, reg!(a), reg!(b)));
                reg!(dst) = Value::Bool(r);
            }
            h_rare / s_rare(Op::Is { .. } | Op::Bitwise { .. } | Op::Pow { .. } | Op::BitNot { .. } | Op::Unpack { .. } | Op::IterPair { .. } | Op::Shield | Op::Unshield | Op::Count { .. } | Op::Range { .. }) => {
                save_pc!();
                t!(super::exec_rare::rare_op(vm, fiber, *op, base));
            }
            h_neg / s_neg(Op::Neg { dst, src }) => {
                let v = t!(arith::neg(&vm.heap, reg!(src)));
                reg!(dst) = v;
            }
            h_not / s_not(Op::Not { dst, src }) => { reg!(dst) = Value::Bool(!reg!(src).truthy()) }
            h_jmp / s_jmp(Op::Jmp { target }) => {
                jump_by!(target);
                if (target as i32) < 0 {
                    tick!();
                }
            }
            h_jmp_if / s_jmp_if(Op::JmpIf { src, target }) => {
                if !matches!(&reg!(src), Value::Nil | Value::Bool(false)) {
                    branch_by!(target);
                }
            }
            h_jmp_if_not / s_jmp_if_not(Op::JmpIfNot { src, target }) => {
                if matches!(&reg!(src), Value::Nil | Value::Bool(false)) {
                    branch_by!(target);
                }
            }
            h_jmp_unless / s_jmp_unless(Op::JmpUnless { cmp, a, b, target }) => {
                if !compare!(cmp, reg!(a), reg!(b)) {
                    branch_by!(target);
                }
            }
            h_jmp_unless_i / s_jmp_unless_i(Op::JmpUnlessI { cmp, a, imm, target }) => {
                if !compare_imm!(cmp, a, imm) {
                    branch_by!(target);
                }
            }
            h_jmp_unless_k / s_jmp_unless_k(Op::JmpUnlessK { cmp, a, k, target }) => {
                // A float against a float literal first (`d > 4.0`): the
                // constant's kind is the compiler's, so the test is all but
                // always right or all but always wrong at one site.
                if let (Value::Float(x), Value::Float(y)) = (&reg!(a), proto.konst(k as u16)) {
                    if !cmp.floats(*x, *y) {
                        branch_by!(target);
                    }
                    next!();
                }
                keep_order();
                if !compare!(cmp, reg!(a), *proto.konst(k as u16)) {
                    branch_by!(target);
                }
            }
            h_jmp_unless_nil / s_jmp_unless_nil(Op::JmpUnlessNil { a, nil, target }) => {
                if matches!(reg!(a), Value::Nil) != nil {
                    branch_by!(target);
                }
            }
            h_loop_if / s_loop_if(Op::LoopIf { src, target }) => {
                if !matches!(&reg!(src), Value::Nil | Value::Bool(false)) {
                    jump_by!(target);
                    tick!();
                }
            }
            h_loop_when / s_loop_when(Op::LoopWhen { cmp, a, b, target }) => {
                if compare!(cmp, reg!(a), reg!(b)) {
                    jump_by!(target);
                    tick!();
                }
            }
            h_loop_when_i / s_loop_when_i(Op::LoopWhenI { cmp, a, imm, target }) => {
                if compare_imm!(cmp, a, imm) {
                    jump_by!(target);
                    tick!();
                }
            }
            h_loop_when_k / s_loop_when_k(Op::LoopWhenK { cmp, a, k, target }) => {
                if compare!(cmp, reg!(a), *proto.konst(k as u16)) {
                    jump_by!(target);
                    tick!();
                }
            }
            h_jmp_if_arg / s_jmp_if_arg(Op::JmpIfArg { idx, target }) => {
                if idx < frame!().argc {
                    jump!(target);
                }
            }
            h_call / s_call(Op::Call { base: b, argc }) => { call!(b, argc) }
            h_call_global / s_call_global(Op::CallGlobal { base: b, argc, idx }) => {
                let slot: *const Value = global!(idx);
                save_pc!();
                // SAFETY: a global's slot holds a live value.
                let callee = unsafe { load_value(slot) };
                // What `base` held before (last round's result) must not stay
                // reachable through the call (binary_trees' peak +30 % when it
                // did): nil there, the tag alone (the frame holds the callee).
                let at = base + b as usize;
                // SAFETY: `b` is a register of this frame; nil's payload is padding.
                enter_closure!(callee, at + 1, argc, at; unsafe { *(regs.add(b as usize) as *mut u64) = 0 });
                reg!(b) = callee;
                call_other!(b, argc)
            }
            h_invoke / s_invoke(Op::Invoke { base: b, argc, name }) => {
                save_pc!();
                let slot = base + b as usize;
                // SAFETY: slot + 1 is a register of this frame.
                let recv = unsafe { load_value(regs.add(b as usize + 1)) };
                let name = name!(name);
                if let Value::Obj(h) = recv {
                    match vm.heap.get(h) {
                        // A map's field holding a function (an object's method, a
                        // module's function): called without the receiver.
                        Obj::Map(m) => {
                            if let Some(&f) = cached_hit(m, name) {
                                enter_closure!(f, slot + 2, argc, slot; reg!(b + 1) = f);
                            }
                        }
                        // `xs.push(v)` with room in the list: the common case
                        // of list building, a third of `invoke`'s cost.
                        o if argc == 1
                            && o.list_vec().is_some_and(|l| l.len() < l.capacity())
                            && name.key().is_str("push") =>
                        {
                            let v = reg!(b as usize + 2);
                            if let Some(l) = vm.heap.get_mut_items(h).list_vec_mut() {
                                // SAFETY: below the capacity (checked above);
                                // a push would keep its growing call here.
                                unsafe {
                                    let n = l.len();
                                    l.as_mut_ptr().add(n).write(v);
                                    l.set_len(n + 1);
                                }
                            }
                            vm.heap.note_growth(16);
                            reg!(b) = Value::Nil;
                            next!();
                        }
                        _ => {}
                    }
                }
                cold! {
                // A method not cached yet, a host object's, a builtin type's.
                if let Value::Obj(h) = recv {
                    if let Obj::Map(m) = vm.heap.get(h) {
                        if let Some(&f) = cached_get(m, name) {
                            reg!(b as usize + 1) = f;
                            enter_closure!(f, slot + 2, argc, slot);
                        }
                    }
                }
                called!(q!(invoke(vm, fiber, recv, name, slot, argc as usize)));
                }
            }
            h_return / s_return(Op::Return { src }) => {
                if fiber.frames.len() == 1 {
                    cold! { return_out!(reg!(src)) }
                }
                // SAFETY: the return slot is below the callee's registers, both live.
                return_to!(|slot| unsafe { copy_value(slot, regs.add(src as usize)) })
            }
            h_return_nil / s_return_nil(Op::ReturnNil) => {
                if fiber.frames.len() == 1 {
                    cold! { return_out!(Value::Nil) }
                }
                // SAFETY: as for `Return`.
                return_to!(|slot| unsafe { *slot = Value::Nil })
            }
            h_closure / s_closure(Op::Closure { dst, proto: idx }) => {
                let p: ProtoRef = proto.protos[idx as usize];
                let v = new_closure(vm, p, &fiber.stack[base..], frame!().closure);
                reg!(dst) = v;
            }
            h_new_list / s_new_list(Op::NewList { dst, start, count }) => {
                let s = base + start as usize;
                reg!(dst) = vm.heap.list_of(&fiber.stack[s..s + count as usize]);
            }
            h_list_push / s_list_push(Op::ListPush { list, src }) => {
                let v = reg!(src);
                if let Value::Obj(h) = reg!(list) {
                    t!(super::seq_ops::push(&mut vm.heap, h, v));
                }
            }
            h_new_map / s_new_map(Op::NewMap { dst, start, count }) => {
                let s = base + start as usize;
                let v = t!(new_map_of(vm, &fiber.stack[s..s + 2 * count as usize]));
                reg!(dst) = v;
            }
            h_new_map_k / s_new_map_k(Op::NewMapK { dst, start, keys }) => {
                let s = base + start as usize;
                reg!(dst) = new_map_from(vm, proto.template(keys), &fiber.stack[s..]);
            }
            h_index / s_index(Op::Index { dst, obj, key }) => {
                // A list at a non-negative index in range: inline.
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    if let Some(v) = vm.heap.get(*h).list_item(*i as u64 as usize) {
                        reg!(dst) = *v;
                        next!();
                    }
                }
                cold! {
                    let v = t!(index(vm, reg!(obj), reg!(key)));
                    reg!(dst) = v;
                }
            }
            h_index_i / s_index_i(Op::IndexI { dst, obj, idx }) => {
                if let Value::Obj(h) = &reg!(obj) {
                    if let Some(v) = vm.heap.get(*h).list_item(idx as usize) {
                        reg!(dst) = *v;
                        next!();
                    }
                }
                cold! {
                    let v = t!(index(vm, reg!(obj), Value::Int(idx as i64)));
                    reg!(dst) = v;
                }
            }
            h_set_index / s_set_index(Op::SetIndex { obj, key, src }) => {
                set_item!(obj, int_at!(key, 0), reg!(src));
                cold! { t!(set_index(vm, reg!(obj), reg!(key), reg!(src))) }
            }
            h_set_index_k / s_set_index_k(Op::SetIndexK { obj, key, k }) => {
                set_item!(obj, int_at!(key, 0), *proto.konst(k));
                cold! { t!(set_index(vm, reg!(obj), reg!(key), *proto.konst(k))) }
            }
            h_index_add / s_index_add(Op::IndexAdd { dst, obj, key, off }) => {
                // An int key's sum cannot wrap into a list's range.
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    if let Some(v) = vm.heap.get(*h).list_item(i.wrapping_add(off as i64) as u64 as usize) {
                        reg!(dst) = *v;
                        next!();
                    }
                }
                cold! {
                    let v = t!(super::exec_rare::index_add(vm, reg!(obj), reg!(key), off));
                    reg!(dst) = v;
                }
            }
            h_set_index_add / s_set_index_add(Op::SetIndexAdd { obj, key, off, src }) => {
                set_item!(obj, int_at!(key, off), reg!(src));
                cold! { t!(super::exec_rare::set_index_add(vm, reg!(obj), reg!(key), off, reg!(src))) }
            }
            h_set_index_k_add / s_set_index_k_add(Op::SetIndexKAdd { obj, key, off, k }) => {
                set_item!(obj, int_at!(key, off), *proto.konst(k));
                cold! { t!(super::exec_rare::set_index_add(vm, reg!(obj), reg!(key), off, *proto.konst(k))) }
            }
            h_field / s_field(Op::Field { dst, obj, name }) => {
                if let Value::Obj(h) = reg!(obj) {
                    if let Obj::Map(m) = vm.heap.get(h) {
                        if let Some(v) = cached_hit(m, name!(name)) {
                            reg!(dst) = *v;
                            next!();
                        }
                    }
                }
                cold! {
                    let v = t!(super::exec_rare::field_of(vm, reg!(obj), proto.name(name)));
                    reg!(dst) = v;
                }
            }
            h_field_index / s_field_index(Op::FieldIndex { dst, obj, name, key, off }) => {
                if let Value::Obj(h) = reg!(obj) {
                    if let Obj::Map(m) = vm.heap.get(h) {
                        if let Some(Value::Obj(l)) = cached_hit(m, name!(name)) {
                            if let Some(at) = int_at!(key, off) {
                                if let Some(v) = vm.heap.get(*l).list_item(at) {
                                    reg!(dst) = *v;
                                    next!();
                                }
                            }
                        }
                    }
                }
                cold! {
                    let v = t!(super::exec_rare::field_index(vm, reg!(obj), proto.name(name), reg!(key), off));
                    reg!(dst) = v;
                }
            }
            h_field_set_index / s_field_set_index(Op::FieldSetIndex { obj, name, key, off, src }) => {
                if !vm.heap.marking() {
                    if let Value::Obj(h) = reg!(obj) {
                        if let Obj::Map(m) = vm.heap.get(h) {
                            if let Some(&Value::Obj(l)) = cached_hit(m, name!(name)) {
                                if let Some(at) = int_at!(key, off) {
                                    if let Some(item) = vm.heap.get_mut_items(l).list_item_mut(at) {
                                        *item = reg!(src);
                                        next!();
                                    }
                                }
                            }
                        }
                    }
                }
                cold! {
                    t!(super::exec_rare::field_set_index(vm, reg!(obj), proto.name(name), reg!(key), off, reg!(src)))
                }
            }
            h_set_field / s_set_field(Op::SetField { obj, name, src }) => {
                if !vm.heap.marking() {
                    if let Value::Obj(h) = reg!(obj) {
                        if let Obj::Map(m) = vm.heap.get_mut_items(h) {
                            if let Some(v) = cached_hit_mut(m, name!(name)) {
                                // Word by word: `src` was most often just written so,
                                // by the arithmetic before (see `copy_value`).
                                // SAFETY: `src` is a register of this frame.
                                unsafe { copy_value(v, regs.add(src as usize)) }
                                next!();
                            }
                        }
                    }
                }
                cold! {
                    let name = proto.name(name);
                    if let Value::Obj(h) = reg!(obj) {
                        if let Obj::Map(m) = vm.heap.get_mut_items(h) {
                            if let Some(v) = cached_get_mut(m, name) {
                                let old = std::mem::replace(v, reg!(src));
                                vm.heap.overwritten(old);
                                next!();
                            }
                        }
                    }
                    t!(set_field(vm, reg!(obj), name.key(), reg!(src)));
                }
            }
            h_for_prep / s_for_prep(Op::ForPrep { base: b, inclusive, target }) => {
                let (lo, hi) = match (reg!(b), reg!(b as usize + 1)) {
                    (Value::Int(l), Value::Int(h)) => (l, h),
                    (l, h) => cold! {
                        t!(err(
                            ErrorKind::Type,
                            format!("range bounds must be ints, not {} and {}", vm.heap.type_name(l), vm.heap.type_name(h))
                        ))
                    },
                };
                let hi = if inclusive { hi.saturating_add(1) } else { hi };
                reg!(b as usize + 1) = Value::Int(hi);
                reg!(b as usize + 2) = Value::Int(lo);
                if lo >= hi {
                    jump!(target);
                }
            }
            h_for_loop / s_for_loop(Op::ForLoop { base: b, target }) => {
                // Registers b and b+1 are the loop's own (no name reaches
                // them) and only ForPrep writes them, always ints; their tags
                // are not checked again. The counter is below the end here,
                // so adding one cannot overflow.
                debug_assert!(matches!((reg!(b), reg!(b as usize + 1)), (Value::Int(_), Value::Int(_))));
                // SAFETY: registers of this frame, both ints (see above).
                let (i, end) = unsafe { (int_payload(regs.add(b as usize)), int_payload(regs.add(b as usize + 1))) };
                let next = i + 1;
                if next < end {
                    // SAFETY: as above.
                    unsafe { set_int_payload(regs.add(b as usize), next) };
                    reg!(b as usize + 2) = Value::Int(next);
                    jump_by!(target);
                    tick!();
                }
            }
            h_iter_init / s_iter_init(Op::IterInit { base: b }) => {
                let it = reg!(b);
                let start = t!(iter_start(vm, it));
                reg!(b as usize + 1) = start;
            }
            h_iter_next / s_iter_next(Op::IterNext { base: b, dst, target }) => {
                let (it, state) = (reg!(b), reg!(b as usize + 1));
                if let Value::Obj(h) = it {
                    if matches!(vm.heap.get(h), Obj::Coroutine(_) | Obj::Chan(_) | Obj::Host(_)) {
                        save_pc!();
                        match t!(super::exec_iter::next_of_source(vm, fiber, h, base + dst as usize, target)) {
                            IterStep::Item => {}
                            IterStep::End => jump!(target),
                            IterStep::Entered => reload!(),
                            IterStep::Blocked => stop!(Ok(Halt::Blocked)),
                        }
                        next!();
                    }
                }
                match iter_next(vm, it, state) {
                    Some((v, next)) => {
                        reg!(dst) = v;
                        reg!(b as usize + 1) = next;
                    }
                    None => jump!(target),
                }
            }
            h_try_begin / s_try_begin(Op::TryBegin { reg, target }) => {
                fiber.handlers.push(Handler { depth: fiber.frames.len() as u32, target, reg, shield: fiber.shield })
            }
            h_try_end / s_try_end(Op::TryEnd) => {
                fiber.handlers.pop();
            }
            h_throw / s_throw(Op::Throw { src }) => {
                save_pc!();
                stop!(Err(Fault::Throw(reg!(src))));
            }
            h_concat / s_concat(Op::Concat { dst, start, count }) => {
                let s = base + start as usize;
                let v = t!(concat(vm, &fiber.stack[s..s + count as usize]));
                reg!(dst) = v;
            }
            h_concurrency / s_concurrency(Op::Go { .. } | Op::Recv { .. } | Op::Recv2 { .. } | Op::Send { .. } | Op::Select { .. } | Op::WaitOn { .. } | Op::ScopeBegin | Op::ScopeEnd | Op::ScopeAbort { .. } | Op::Lock { .. } | Op::Unlock { .. } | Op::Yield { .. }) => {
                save_pc!();
                match t!(concurrency(vm, fiber, *op, base)) {
                    Step::Next => {}
                    Step::Reload => reload!(),
                    Step::Halt(h) => stop!(Ok(h)),
                }
            }
            // A debugger's trap: leave with the pc on it (entry.rs hands it to the debugger).
            h_trap / s_trap(Op::Trap) => {
                ip = unsafe { ip.sub(1) };
                save_pc!();
                stop!(Err(Fault::Trap));
            }
}
