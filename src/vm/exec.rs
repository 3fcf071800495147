//! The dispatch loop. It never recurses into itself and never blocks: script calls
//! push a `Frame` onto the fiber, and `run` returns a `Halt` when the fiber finishes,
//! spends its budget, or fails.

use super::arith::{arith_slow, compare_slow};
use super::builtin::NativeFn;
use super::call::{call_value, Called};
pub use super::entry::run;
pub use super::error::{capped_trace, new_error, throw};
use super::exec_conc::{concurrency_op, Step};
use super::exec_iter::IterStep;
pub use super::fiber::Halt;
use super::fiber::{Fiber, Frame, Handler};
use super::object::Obj;
use super::object_ops::{
    concat, field, get_upval, index, invoke, iter_next, iter_start, new_closure, new_map_from, set_field, set_index,
    set_upval,
};
use super::value::{cached_get, cached_get_mut, copy_value, int_payload, load_value, set_int_payload, Value};
use super::{arith, coroutine, err, Fault, Res, Vm};
use crate::bytecode::{Cmp, Op, ProtoRef};
use crate::vm::ErrorKind;

// The loop's helper macros (`reg!`, `t!`, `call!`, `jump_by!`, ...), defined
// inside `dispatch` by `loop_helpers!` so that they work on the loop's own
// locals: the loop stays one function, whose register allocation decides its
// speed (benches/README.md, "Instruction counts").
/// Defines the dispatch loop's macros over its locals, which the caller names:
/// a macro written out here cannot name a function's locals itself (hygiene).
/// `$d` is `$`, for the inner macros' own arguments.
macro_rules! loop_helpers {
    ($d:tt, $vm:ident, $fiber:ident, $budget:ident, $proto:ident, $base:ident, $code:ident, $ip:ident, $regs:ident, $left:ident) => {
        macro_rules! reg {
            ($d r:expr) => {
                // SAFETY: see the function's doc comment.
                *unsafe { &mut *$regs.add($d r as usize) }
            };
        }
        // The running frame.
        macro_rules! frame {
            () => {
                // SAFETY: a running fiber has a frame.
                unsafe { $fiber.frames.last().unwrap_unchecked() }
            };
        }
        macro_rules! save_pc {
            () => {{
                save_pc_only!();
                *$budget = $left;
            }};
        }
        // The running frame's pc, for a call that continues in this loop.
        macro_rules! save_pc_only {
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
                unsafe { $ip.offset_from($code) as u32 }
            };
        }
        macro_rules! jump {
            ($d target:expr) => {
                // SAFETY: the compiler emits jump targets within the Proto's code.
                $ip = unsafe { $code.add($d target as usize) }
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
                        return Err(f);
                    }
                }
            };
        }
        macro_rules! reload {
            () => {{
                // SAFETY: a running fiber has a frame.
                let f = unsafe { $fiber.frames.last().unwrap_unchecked() };
                $proto = f.proto;
                $base = f.base as usize;
                $code = $proto.code.as_ptr();
                jump!(f.pc);
                // SAFETY: a frame's registers are on the stack (`call_value` and
                // `enter_closure!` size it before pushing the frame).
                $regs = unsafe { $fiber.stack.as_mut_ptr().add($base) };
            }};
        }
        macro_rules! tick {
            () => {
                $left -= 1;
                if $left == 0 {
                    save_pc!();
                    return Ok(Halt::Preempted);
                }
            };
        }
        // The common call: a closure given exactly its parameters gets a frame
        // here, without `call_value`'s general checks; anything else falls through.
        macro_rules! enter_closure {
            ($d callee:expr, $d args:expr, $d argc:expr, $d ret:expr) => {
                if let Value::Obj(h) = $d callee {
                    if let Obj::Closure(c) = $vm.heap.get(h) {
                        let p = c.proto;
                        if p.nparams == $d argc && !p.has_rest && $fiber.frames.len() < crate::limits::MAX_FRAMES {
                            let args = $d args;
                            let need = args + p.nregs as usize;
                            if $fiber.stack.len() < need {
                                $fiber.grow_stack(need, &mut $vm.heap);
                            }
                            $fiber.frames.push(Frame {
                                proto: p,
                                closure: Some(h),
                                pc: 0,
                                base: args as u32,
                                ret: $d ret as u32,
                                argc: $d argc,
                            });
                            $proto = p;
                            $base = args;
                            $code = p.code.as_ptr();
                            $ip = $code;
                            // SAFETY: the stack was sized above.
                            $regs = unsafe { $fiber.stack.as_mut_ptr().add($base) };
                            tick!();
                            continue;
                        }
                    }
                }
            };
        }
        // After a call made out of line: a frame to run, a value in place, or a wait.
        macro_rules! called {
            ($d called:expr) => {{
                match $d called {
                    Called::Frame => reload!(),
                    Called::Value => made_big!(),
                    Called::Blocked => return Ok(Halt::Blocked),
                }
                tick!();
            }};
        }
        // After a builtin: one that made a big object past the collector's
        // trigger ends the slice at the next `tick!` (see `Heap::end_slice`).
        macro_rules! made_big {
            () => {
                if $vm.heap.end_slice {
                    $vm.heap.end_slice = false;
                    $left = 1;
                }
            };
        }
        // `base = base(base+1 .. base+argc)`, the callee already in `base`.
        macro_rules! call {
            ($d b:expr, $d argc:expr) => {{
                let (b, argc) = ($d b, $d argc);
                save_pc_only!();
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
                let slot = $base + b as usize;
                // Leaving the loop from here on (an error, a builtin's call) needs it.
                *$budget = $left;
                // Read again rather than kept: fewer values live across the fast path.
                // SAFETY: slot is a register of this frame.
                let callee = unsafe { load_value($regs.add(b as usize)) };
                // A builtin that only computes a value (`sqrt`, `len`, `abs`).
                if let Value::Obj(h) = callee {
                    if let Obj::Native(n) = $vm.heap.get(h) {
                        if let NativeFn::Value(f) = n.func {
                            let args = slot + 1;
                            let v = f($vm, &$fiber.stack[args..args + argc as usize])
                                .map_err(|e| super::call::moved($vm, $fiber, args, argc as usize, e))?;
                            reg!(b) = v;
                            made_big!();
                            tick!();
                            continue;
                        }
                    }
                }
                called!(call_value($vm, $fiber, callee, slot + 1, argc as usize, slot)?);
            }};
        }
        macro_rules! arith {
            ($d op:expr, $d dst:expr, $d a:expr, $d b:expr, $d fast:ident, $d fop:tt) => {{
                // Matching on references reads the tag and payload in place
                // instead of copying whole values through the stack.
                match (&reg!($d a), &reg!($d b)) {
                    (Value::Int(i), Value::Int(j)) => {
                        if let Some(r) = i.$d fast(*j) {
                            reg!($d dst) = Value::Int(r);
                            continue;
                        }
                    }
                    (Value::Float(x), Value::Float(y)) => {
                        reg!($d dst) = Value::Float(x $d fop y);
                        continue;
                    }
                    _ => {}
                }
                let (x, y) = (reg!($d a), reg!($d b));
                let v = t!(arith_slow($vm, $d op, x, y));
                reg!($d dst) = v;
            }};
        }
        // `dst = a <op> k` for a float constant k: an int `a` counts as a float,
        // as in `arith::add`; anything else takes the general path.
        macro_rules! arith_k {
            ($d op:expr, $d dst:expr, $d a:expr, $d k:expr, |$d x:ident, $d y:ident| $d e:expr) => {{
                if let Value::Float($d y) = *$proto.konst($d k as u16) {
                    let x = match &reg!($d a) {
                        Value::Float(x) => Some(*x),
                        Value::Int(i) => Some(*i as f64),
                        _ => None,
                    };
                    if let Some($d x) = x {
                        reg!($d dst) = Value::Float($d e);
                        continue;
                    }
                }
                let (x, k) = (reg!($d a), *$proto.konst($d k as u16));
                let v = t!(arith::arith_k_slow($vm, $d op, x, k));
                reg!($d dst) = v;
            }};
        }
        // `x <cmp> y`, two places (registers or a constant).
        macro_rules! compare {
            ($d cmp:expr, $d x:expr, $d y:expr) => {{
                let eq = matches!($d cmp, Cmp::Eq | Cmp::Ne);
                let (x, y): (&Value, &Value) = (&$d x, &$d y);
                let fast = match (x, y) {
                    (Value::Int(i), Value::Int(j)) => Some($d cmp.ints(*i, *j)),
                    (Value::Float(x), Value::Float(y)) => Some($d cmp.floats(*x, *y)),
                    // `x == nil`, `x != nil`: nil equals only nil.
                    (Value::Nil, v) | (v, Value::Nil) if eq => Some(matches!(v, Value::Nil) == ($d cmp == Cmp::Eq)),
                    // Two strings (`c == "{"`): by content.
                    (Value::Obj(a), Value::Obj(b)) if eq => {
                        arith::str_eq(&$vm.heap, *a, *b).map(|same| same == ($d cmp == Cmp::Eq))
                    }
                    _ => None,
                };
                match fast {
                    Some(r) => r,
                    None => {
                        let (x, y) = (*x, *y);
                        t!(compare_slow($vm, $d cmp, x, y))
                    }
                }
            }};
        }

        // `a <cmp> imm`, for an integer literal.
        macro_rules! compare_imm {
            ($d cmp:expr, $d a:expr, $d imm:expr) => {
                match &reg!($d a) {
                    Value::Int(i) => $d cmp.ints(*i, $d imm as i64),
                    _ => {
                        let x = reg!($d a);
                        t!(compare_slow($vm, $d cmp, x, Value::Int($d imm as i64)))
                    }
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

/// The register file of the running frame: `stack[base..]` through a raw pointer.
/// Valid until the stack is resized, which only calls do; `reload!` refreshes it.
/// The compiler guarantees every register operand is below the Proto's `nregs`,
/// and `call_value` sizes the stack for that.
pub(super) fn dispatch(vm: &mut Vm, fiber: &mut Fiber, budget: &mut u32) -> Res<Halt> {
    let frame = fiber.frames.last().expect("a frame to run");
    let mut proto = frame.proto;
    let mut base = frame.base as usize;
    let mut code: *const Op = proto.code.as_ptr();
    // The next instruction, as a pointer rather than an index into `code`: one
    // register fewer in the loop, and no address arithmetic per dispatch.
    // SAFETY: a saved pc is within its Proto's code.
    let mut ip: *const Op = unsafe { code.add(frame.pc as usize) };
    let mut regs: *mut Value = fiber.stack[base..].as_mut_ptr();
    let mut left = *budget;

    loop_helpers!($, vm, fiber, budget, proto, base, code, ip, regs, left);

    loop {
        // SAFETY: every code path of a Proto ends in a return, so ip stays in bounds.
        // A reference, not a copy: a copied `Op` is split into all its operand
        // fields before the jump, and each arm's own loads are cheaper (5-7%
        // fewer instructions on every AWFY benchmark).
        let op: &Op = unsafe { &*ip };
        ip = unsafe { ip.add(1) };
        match *op {
            // SAFETY: registers are in bounds (see above).
            Op::Move { dst, src } => unsafe { copy_value(regs.add(dst as usize), regs.add(src as usize)) },
            Op::LoadNil { dst } => reg!(dst) = Value::Nil,
            Op::LoadBool { dst, val } => reg!(dst) = Value::Bool(val),
            Op::LoadInt { dst, val } => reg!(dst) = Value::Int(val as i64),
            Op::LoadK { dst, k } => reg!(dst) = *proto.konst(k),
            Op::GetGlobal { dst, idx } => {
                let slot: *const Value = global!(idx);
                // SAFETY: both point at live values.
                unsafe { copy_value(regs.add(dst as usize), slot) }
            }
            Op::SetGlobal { src, idx } => {
                let slot: *mut Value = global!(idx);
                // SAFETY: both point at live values.
                unsafe { copy_value(slot, regs.add(src as usize)) }
            }
            Op::GetUpval { dst, idx } => reg!(dst) = get_upval(vm, frame!().closure, idx),
            Op::SetUpval { src, idx } => set_upval(vm, frame!().closure, idx, reg!(src)),
            Op::NewCell { reg } => {
                let h = vm.heap.alloc(Obj::Cell(reg!(reg)));
                reg!(reg) = Value::Obj(h);
            }
            Op::GetCell { dst, cell } => {
                reg!(dst) = match reg!(cell) {
                    Value::Obj(h) => match vm.heap.get(h) {
                        Obj::Cell(v) => *v,
                        _ => Value::Nil,
                    },
                    _ => Value::Nil,
                };
            }
            Op::SetCell { cell, src } => {
                if let Value::Obj(h) = reg!(cell) {
                    let v = reg!(src);
                    *vm.heap.get_mut(h) = Obj::Cell(v);
                }
            }
            Op::Add { dst, a, b } => arith!(*op, dst, a, b, checked_add, +),
            Op::Sub { dst, a, b } => arith!(*op, dst, a, b, checked_sub, -),
            Op::Mul { dst, a, b } => arith!(*op, dst, a, b, checked_mul, *),
            Op::Div { dst, a, b } => {
                if let (Value::Float(x), Value::Float(y)) = (&reg!(a), &reg!(b)) {
                    reg!(dst) = Value::Float(x / y);
                    continue;
                }
                let v = t!(arith::div(&vm.heap, reg!(a), reg!(b)));
                reg!(dst) = v;
            }
            // Float addition and multiplication commute exactly, so `rev` matters
            // only to the slow path's error message.
            Op::AddK { dst, a, k, .. } => arith_k!(*op, dst, a, k, |x, y| x + y),
            Op::MulK { dst, a, k, .. } => arith_k!(*op, dst, a, k, |x, y| x * y),
            Op::SubK { dst, a, k, rev } => arith_k!(*op, dst, a, k, |x, y| if rev { y - x } else { x - y }),
            Op::DivK { dst, a, k, rev } => arith_k!(*op, dst, a, k, |x, y| if rev { y / x } else { x / y }),
            Op::Mod { dst, a, b } => {
                if let (Value::Int(i), Value::Int(j)) = (&reg!(a), &reg!(b)) {
                    if *j > 0 {
                        reg!(dst) = Value::Int(i % j);
                        continue;
                    }
                }
                let (x, y) = (reg!(a), reg!(b));
                let v = t!(arith_slow(vm, *op, x, y));
                reg!(dst) = v;
            }
            Op::AddI { dst, a, imm } => {
                if let Value::Int(i) = &reg!(a) {
                    if let Some(r) = i.checked_add(imm as i64) {
                        reg!(dst) = Value::Int(r);
                        continue;
                    }
                }
                let x = reg!(a);
                let v = t!(arith_slow(vm, *op, x, Value::Int(imm as i64)));
                reg!(dst) = v;
            }
            Op::MulI { dst, a, imm } => {
                if let Value::Int(i) = &reg!(a) {
                    if let Some(r) = i.checked_mul(imm as i64) {
                        reg!(dst) = Value::Int(r);
                        continue;
                    }
                }
                let x = reg!(a);
                let v = t!(arith_slow(vm, *op, x, Value::Int(imm as i64)));
                reg!(dst) = v;
            }
            Op::ModI { dst, a, imm } => {
                if let Value::Int(i) = &reg!(a) {
                    if imm > 0 {
                        reg!(dst) = Value::Int(i % imm as i64);
                        continue;
                    }
                }
                let x = reg!(a);
                let v = t!(arith_slow(vm, *op, x, Value::Int(imm as i64)));
                reg!(dst) = v;
            }
            Op::Compare { cmp, dst, a, b } => {
                let r = compare!(cmp, reg!(a), reg!(b));
                reg!(dst) = Value::Bool(r);
            }
            Op::CompareK { cmp, dst, a, k } => {
                let r = compare!(cmp, reg!(a), *proto.konst(k));
                reg!(dst) = Value::Bool(r);
            }
            Op::In { dst, a, b } => {
                // Out of line, but not through `rare_op`: `word in line` runs once
                // a line in grep-like loops.
                let r = t!(super::exec_rare::contains(vm, reg!(a), reg!(b)));
                reg!(dst) = Value::Bool(r);
            }
            Op::Is { .. }
            | Op::Bitwise { .. }
            | Op::Pow { .. }
            | Op::BitNot { .. }
            | Op::Unpack { .. }
            | Op::IterPair { .. }
            | Op::Shield
            | Op::Unshield
            | Op::Count { .. }
            | Op::Range { .. } => {
                save_pc!();
                t!(super::exec_rare::rare_op(vm, fiber, *op, base));
            }
            Op::Neg { dst, src } => {
                let v = t!(arith::neg(&vm.heap, reg!(src)));
                reg!(dst) = v;
            }
            Op::Not { dst, src } => reg!(dst) = Value::Bool(!reg!(src).truthy()),
            Op::Jmp { target } => {
                jump_by!(target);
                if (target as i32) < 0 {
                    tick!();
                }
            }
            Op::JmpIf { src, target } => {
                if !matches!(&reg!(src), Value::Nil | Value::Bool(false)) {
                    branch_by!(target);
                }
            }
            Op::JmpIfNot { src, target } => {
                if matches!(&reg!(src), Value::Nil | Value::Bool(false)) {
                    branch_by!(target);
                }
            }
            Op::JmpUnless { cmp, a, b, target } => {
                if !compare!(cmp, reg!(a), reg!(b)) {
                    branch_by!(target);
                }
            }
            Op::JmpUnlessI { cmp, a, imm, target } => {
                if !compare_imm!(cmp, a, imm) {
                    branch_by!(target);
                }
            }
            Op::JmpUnlessK { cmp, a, k, target } => {
                if !compare!(cmp, reg!(a), *proto.konst(k as u16)) {
                    branch_by!(target);
                }
            }
            Op::JmpUnlessNil { a, nil, target } => {
                if matches!(reg!(a), Value::Nil) != nil {
                    branch_by!(target);
                }
            }
            Op::LoopIf { src, target } => {
                if !matches!(&reg!(src), Value::Nil | Value::Bool(false)) {
                    jump_by!(target);
                    tick!();
                }
            }
            Op::LoopWhen { cmp, a, b, target } => {
                if compare!(cmp, reg!(a), reg!(b)) {
                    jump_by!(target);
                    tick!();
                }
            }
            Op::LoopWhenI { cmp, a, imm, target } => {
                if compare_imm!(cmp, a, imm) {
                    jump_by!(target);
                    tick!();
                }
            }
            Op::LoopWhenK { cmp, a, k, target } => {
                if compare!(cmp, reg!(a), *proto.konst(k as u16)) {
                    jump_by!(target);
                    tick!();
                }
            }
            Op::JmpIfArg { idx, target } => {
                if idx < frame!().argc {
                    jump!(target);
                }
            }
            Op::Call { base: b, argc } => call!(b, argc),
            Op::CallGlobal { base: b, argc, idx } => {
                let slot: *const Value = global!(idx);
                save_pc_only!();
                // SAFETY: a global's slot holds a live value.
                let callee = unsafe { load_value(slot) };
                // Into `base` as well, though the frame holds it: what `base`
                // held before (last round's result) must not stay reachable
                // through the call (binary_trees' peak +30 % when it did).
                reg!(b) = callee;
                let at = base + b as usize;
                enter_closure!(callee, at + 1, argc, at);
                call_other!(b, argc)
            }
            Op::Invoke { base: b, argc, name } => {
                save_pc_only!();
                let slot = base + b as usize;
                // SAFETY: slot + 1 is a register of this frame.
                let recv = unsafe { load_value(regs.add(b as usize + 1)) };
                let name = proto.name(name);
                if let Value::Obj(h) = recv {
                    match vm.heap.get(h) {
                        // A map's field holding a function (an object's method, a
                        // module's function): called without the receiver.
                        Obj::Map(m) => {
                            if let Some(&f) = cached_get(m, name) {
                                reg!(b + 1) = f;
                                enter_closure!(f, slot + 2, argc, slot);
                            }
                        }
                        // `xs.push(v)` with room in the list: the common case
                        // of list building, a third of `invoke`'s cost.
                        o if argc == 1
                            && o.list_vec().is_some_and(|l| l.len() < l.capacity())
                            && name.key().is_str("push") =>
                        {
                            let v = reg!(b + 2);
                            if let Some(l) = vm.heap.get_mut_items(h).list_vec_mut() {
                                l.push(v);
                            }
                            vm.heap.note_growth(16);
                            reg!(b) = Value::Nil;
                            continue;
                        }
                        _ => {}
                    }
                }
                *budget = left;
                called!(invoke(vm, fiber, recv, name, slot, argc as usize)?);
            }
            Op::Return { src } => {
                // SAFETY: a running fiber has a frame.
                let f = unsafe { fiber.frames.pop().unwrap_unchecked() };
                if fiber.frames.is_empty() {
                    let v = reg!(src);
                    if fiber.in_coroutine() {
                        coroutine::finish(vm, fiber, v);
                        reload!();
                        continue;
                    }
                    *budget = left;
                    return Ok(Halt::Done(v));
                }
                // SAFETY: the return slot is below the callee's registers, both live.
                let slot: *mut Value = unsafe { fiber.stack.as_mut_ptr().add(f.ret as usize) };
                unsafe { copy_value(slot, regs.add(src as usize)) }
                reload!();
            }
            Op::ReturnNil => {
                // SAFETY: a running fiber has a frame.
                let f = unsafe { fiber.frames.pop().unwrap_unchecked() };
                if fiber.frames.is_empty() {
                    if fiber.in_coroutine() {
                        coroutine::finish(vm, fiber, Value::Nil);
                        reload!();
                        continue;
                    }
                    *budget = left;
                    return Ok(Halt::Done(Value::Nil));
                }
                // SAFETY: as for `Return`.
                unsafe { *fiber.stack.as_mut_ptr().add(f.ret as usize) = Value::Nil };
                reload!();
            }
            Op::Closure { dst, proto: idx } => {
                let p: ProtoRef = proto.protos[idx as usize];
                let v = new_closure(vm, p, &fiber.stack[base..], frame!().closure);
                reg!(dst) = v;
            }
            Op::NewList { dst, start, count } => {
                let s = base + start as usize;
                reg!(dst) = vm.heap.list_of(&fiber.stack[s..s + count as usize]);
            }
            Op::ListPush { list, src } => {
                let v = reg!(src);
                if let Value::Obj(h) = reg!(list) {
                    t!(super::seq_ops::push(&mut vm.heap, h, v));
                }
            }
            Op::NewMap { dst, start, count } => {
                let mut m = crate::vm::value::new_map(count as usize);
                for i in 0..count as usize {
                    let k = t!(arith::to_key(&vm.heap, reg!(start as usize + 2 * i)));
                    m.insert(k, reg!(start as usize + 2 * i + 1));
                }
                reg!(dst) = Value::Obj(vm.heap.alloc(Obj::Map(m)));
            }
            Op::NewMapK { dst, start, keys } => {
                let s = base + start as usize;
                reg!(dst) = new_map_from(vm, proto.template(keys), &fiber.stack[s..]);
            }
            Op::Index { dst, obj, key } => {
                // A list at a non-negative index in range: inline.
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    if let Some(v) = vm.heap.get(*h).list_item(*i as u64 as usize) {
                        reg!(dst) = *v;
                        continue;
                    }
                }
                let v = t!(index(vm, reg!(obj), reg!(key)));
                reg!(dst) = v;
            }
            Op::IndexI { dst, obj, idx } => {
                if let Value::Obj(h) = &reg!(obj) {
                    if let Some(v) = vm.heap.get(*h).list_item(idx as usize) {
                        reg!(dst) = *v;
                        continue;
                    }
                }
                let v = t!(index(vm, reg!(obj), Value::Int(idx as i64)));
                reg!(dst) = v;
            }
            Op::SetIndex { obj, key, src } => {
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    if let Some(v) = vm.heap.get_mut_items(*h).list_item_mut(*i as u64 as usize) {
                        let old = std::mem::replace(v, reg!(src));
                        vm.heap.overwritten(old);
                        continue;
                    }
                }
                t!(set_index(vm, reg!(obj), reg!(key), reg!(src)));
            }
            Op::SetIndexK { obj, key, k } => {
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    if let Some(v) = vm.heap.get_mut_items(*h).list_item_mut(*i as u64 as usize) {
                        let old = std::mem::replace(v, *proto.konst(k));
                        vm.heap.overwritten(old);
                        continue;
                    }
                }
                t!(set_index(vm, reg!(obj), reg!(key), *proto.konst(k)));
            }
            Op::IndexAdd { dst, obj, key, off } => {
                // An int key's sum cannot wrap into a list's range.
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    if let Some(v) = vm.heap.get(*h).list_item(i.wrapping_add(off as i64) as u64 as usize) {
                        reg!(dst) = *v;
                        continue;
                    }
                }
                let v = t!(super::exec_rare::index_add(vm, reg!(obj), reg!(key), off));
                reg!(dst) = v;
            }
            Op::SetIndexAdd { obj, key, off, src } => {
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    let at = i.wrapping_add(off as i64) as u64 as usize;
                    if let Some(v) = vm.heap.get_mut_items(*h).list_item_mut(at) {
                        let old = std::mem::replace(v, reg!(src));
                        vm.heap.overwritten(old);
                        continue;
                    }
                }
                t!(super::exec_rare::set_index_add(vm, reg!(obj), reg!(key), off, reg!(src)));
            }
            Op::SetIndexKAdd { obj, key, off, k } => {
                if let (Value::Obj(h), Value::Int(i)) = (&reg!(obj), &reg!(key)) {
                    let at = i.wrapping_add(off as i64) as u64 as usize;
                    if let Some(v) = vm.heap.get_mut_items(*h).list_item_mut(at) {
                        let old = std::mem::replace(v, *proto.konst(k));
                        vm.heap.overwritten(old);
                        continue;
                    }
                }
                t!(super::exec_rare::set_index_add(vm, reg!(obj), reg!(key), off, *proto.konst(k)));
            }
            Op::Field { dst, obj, name } => {
                let name = proto.name(name);
                if let Value::Obj(h) = reg!(obj) {
                    if let Obj::Map(m) = vm.heap.get(h) {
                        reg!(dst) = cached_get(m, name).copied().unwrap_or(Value::Nil);
                        continue;
                    }
                }
                let v = t!(field(vm, reg!(obj), name.key()));
                reg!(dst) = v;
            }
            Op::SetField { obj, name, src } => {
                let name = proto.name(name);
                if let Value::Obj(h) = reg!(obj) {
                    if let Obj::Map(m) = vm.heap.get_mut_items(h) {
                        if let Some(v) = cached_get_mut(m, name) {
                            let old = std::mem::replace(v, reg!(src));
                            vm.heap.overwritten(old);
                            continue;
                        }
                    }
                }
                t!(set_field(vm, reg!(obj), name.key(), reg!(src)));
            }
            Op::ForPrep { base: b, inclusive, target } => {
                let (lo, hi) = match (reg!(b), reg!(b + 1)) {
                    (Value::Int(l), Value::Int(h)) => (l, h),
                    (l, h) => t!(err(
                        ErrorKind::Type,
                        format!("range bounds must be ints, not {} and {}", vm.heap.type_name(l), vm.heap.type_name(h))
                    )),
                };
                let hi = if inclusive { hi.saturating_add(1) } else { hi };
                reg!(b + 1) = Value::Int(hi);
                reg!(b + 2) = Value::Int(lo);
                if lo >= hi {
                    jump!(target);
                }
            }
            Op::ForLoop { base: b, target } => {
                // Registers b and b+1 are the loop's own (no name reaches
                // them) and only ForPrep writes them, always ints; their tags
                // are not checked again. The counter is below the end here,
                // so adding one cannot overflow.
                debug_assert!(matches!((reg!(b), reg!(b + 1)), (Value::Int(_), Value::Int(_))));
                // SAFETY: registers of this frame, both ints (see above).
                let (i, end) = unsafe { (int_payload(regs.add(b as usize)), int_payload(regs.add(b as usize + 1))) };
                let next = i + 1;
                if next < end {
                    // SAFETY: as above.
                    unsafe { set_int_payload(regs.add(b as usize), next) };
                    reg!(b + 2) = Value::Int(next);
                    jump_by!(target);
                    tick!();
                }
            }
            Op::IterInit { base: b } => {
                let it = reg!(b);
                let start = t!(iter_start(vm, it));
                reg!(b + 1) = start;
            }
            Op::IterNext { base: b, dst, target } => {
                let (it, state) = (reg!(b), reg!(b + 1));
                if let Value::Obj(h) = it {
                    if matches!(vm.heap.get(h), Obj::Coroutine(_) | Obj::Chan(_) | Obj::Host(_)) {
                        save_pc!();
                        match t!(super::exec_iter::next_of_source(vm, fiber, h, base + dst as usize, target)) {
                            IterStep::Item => {}
                            IterStep::End => jump!(target),
                            IterStep::Entered => reload!(),
                            IterStep::Blocked => return Ok(Halt::Blocked),
                        }
                        continue;
                    }
                }
                match iter_next(vm, it, state) {
                    Some((v, next)) => {
                        reg!(dst) = v;
                        reg!(b + 1) = next;
                    }
                    None => jump!(target),
                }
            }
            Op::TryBegin { reg, target } => {
                fiber.handlers.push(Handler { depth: fiber.frames.len() as u32, target, reg, shield: fiber.shield })
            }
            Op::TryEnd => drop(fiber.handlers.pop()),
            Op::Throw { src } => {
                save_pc!();
                return Err(Fault::Throw(reg!(src)));
            }
            Op::Concat { dst, start, count } => {
                let s = base + start as usize;
                let v = t!(concat(vm, &fiber.stack[s..s + count as usize]));
                reg!(dst) = v;
            }
            Op::Go { .. }
            | Op::Recv { .. }
            | Op::Recv2 { .. }
            | Op::Send { .. }
            | Op::Select { .. }
            | Op::WaitOn { .. }
            | Op::ScopeBegin
            | Op::ScopeEnd
            | Op::ScopeAbort { .. }
            | Op::Lock { .. }
            | Op::Unlock { .. }
            | Op::Yield { .. } => {
                save_pc!();
                match t!(concurrency_op(vm, fiber, *op, base)) {
                    Step::Next => {}
                    Step::Reload => reload!(),
                    Step::Halt(h) => return Ok(h),
                }
            }
            // A debugger's trap: leave with the pc on it (entry.rs hands it to the debugger).
            Op::Trap => {
                ip = unsafe { ip.sub(1) };
                save_pc!();
                return Err(Fault::Trap);
            }
        }
    }
}
