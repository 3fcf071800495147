//! The dispatch loop's less frequent instructions (`in`, `is`, `**`, bitwise
//! operators, destructuring, two-variable loops, ranges made into values, coverage's `Count`), out of line so the loop's own
//! code stays small: every arm the loop inlines costs the hot ones registers.

use super::fiber::Fiber;
use super::object::Obj;
use super::value::{cached_get, Name, Value};
use super::{arith, err, ErrorKind, Res, Vm};
use crate::bytecode::Op;

/// `a in b`.
#[inline(never)]
pub(super) fn contains(vm: &Vm, a: Value, b: Value) -> Res<bool> {
    if let (Some(needle), Some(hay)) = (vm.heap.as_str(a), vm.heap.as_str(b)) {
        return Ok(super::substr::contains(&hay.s, &needle.s));
    }
    arith::contains(&vm.heap, a, b)
}

/// `key + off` as IndexAdd's source wrote it: `key - n` for a negative
/// offset (a type error names the operator the program used).
fn offset_key(vm: &mut Vm, key: Value, off: i8) -> Res<Value> {
    match off < 0 {
        true => arith::sub(&vm.heap, key, Value::Int(-(off as i64))),
        false => arith::add(&mut vm.heap, key, Value::Int(off as i64)),
    }
}

/// `obj[key + off]` off the fast path: a map, a string, a negative index,
/// an error.
#[inline(never)]
pub(super) fn index_add(vm: &mut Vm, obj: Value, key: Value, off: i8) -> Res<Value> {
    let key = offset_key(vm, key, off)?;
    super::object_ops::index(vm, obj, key)
}

/// `obj[key + off] = v` off the fast path.
#[inline(never)]
pub(super) fn set_index_add(vm: &mut Vm, obj: Value, key: Value, off: i8, v: Value) -> Res<()> {
    let key = offset_key(vm, key, off)?;
    super::object_ops::set_index(vm, obj, key, v)
}

/// `obj.name` off the fast path: a map's field (nil when it has none), or
/// what `field` says of anything else.
pub(super) fn field_of(vm: &mut Vm, obj: Value, name: &Name) -> Res<Value> {
    if let Value::Obj(h) = obj {
        if let Obj::Map(m) = vm.heap.get(h) {
            return Ok(cached_get(m, name).copied().unwrap_or(Value::Nil));
        }
    }
    super::object_ops::field(vm, obj, name.key())
}

/// `obj.name[key + off]` (FieldIndex) off the fast path: the field read,
/// then the index as `Index` (`off` 0) or `IndexAdd` would.
#[inline(never)]
pub(super) fn field_index(vm: &mut Vm, obj: Value, name: &Name, key: Value, off: i8) -> Res<Value> {
    let o = field_of(vm, obj, name)?;
    match off {
        0 => super::object_ops::index(vm, o, key),
        _ => index_add(vm, o, key, off),
    }
}

/// `obj.name[key + off] = v` (FieldSetIndex) off the fast path.
#[inline(never)]
pub(super) fn field_set_index(vm: &mut Vm, obj: Value, name: &Name, key: Value, off: i8, v: Value) -> Res<()> {
    let o = field_of(vm, obj, name)?;
    match off {
        0 => super::object_ops::set_index(vm, o, key, v),
        _ => set_index_add(vm, o, key, off, v),
    }
}

/// Runs `op` for the frame whose registers start at `base`.
#[inline(never)]
pub(super) fn rare_op(vm: &mut Vm, fiber: &mut Fiber, op: Op, base: usize) -> Res<()> {
    macro_rules! reg {
        ($r:expr) => {
            fiber.stack[base + $r as usize]
        };
    }
    match op {
        Op::Is { dst, a, b } => {
            let r = arith::identical(&vm.heap, reg!(a), reg!(b));
            reg!(dst) = Value::Bool(r);
        }
        Op::Bitwise { op, dst, a, b } => {
            let v = arith::bitwise(&vm.heap, op, reg!(a), reg!(b))?;
            reg!(dst) = v;
        }
        Op::Pow { dst, a, b } => {
            let v = arith::pow(&vm.heap, reg!(a), reg!(b))?;
            reg!(dst) = v;
        }
        Op::BitNot { dst, src } => {
            let v = match reg!(src) {
                Value::Int(i) => Value::Int(!i),
                x => return err(ErrorKind::Type, format!("cannot apply '~' to {}", vm.heap.type_name(x))),
            };
            reg!(dst) = v;
        }
        Op::Shield => {
            fiber.shield += 1;
            if fiber.shield == 1 {
                crate::sched::ops::set_shielded(vm, true);
            }
        }
        Op::Unshield => {
            fiber.shield = fiber.shield.saturating_sub(1);
            if !fiber.shielded() {
                crate::sched::ops::set_shielded(vm, false);
                crate::sched::ops::check_interrupt(vm)?;
            }
        }
        Op::Unpack { dst, src, count } => {
            let v = reg!(src);
            let n = count as usize;
            match vm.heap.as_list(v) {
                Some(l) if l.len() == n => {
                    let s = base + dst as usize;
                    // Copied first: `src` may be one of the destinations.
                    let items = l.to_vec();
                    fiber.stack[s..s + n].copy_from_slice(&items);
                }
                Some(l) => {
                    let msg = format!("cannot destructure a list of {} items into {n} names", l.len());
                    return err(ErrorKind::Value, msg);
                }
                None => {
                    return err(ErrorKind::Type, format!("cannot destructure {} into {n} names", vm.heap.type_name(v)));
                }
            }
        }
        Op::IterPair { base: b, dst } => {
            let (it, state) = (reg!(b), reg!(b + 1));
            let entry = match (it, state) {
                (Value::Obj(h), Value::Int(i)) => match vm.heap.get(h) {
                    Obj::Map(m) => (i as usize).checked_sub(1).and_then(|j| m.get_index(j)).map(|(_, v)| *v),
                    _ => None,
                },
                _ => None,
            };
            match entry {
                Some(value) => {
                    reg!(dst) = reg!(dst + 1);
                    reg!(dst + 1) = value;
                }
                None => {
                    reg!(dst) = reg!(b + 2);
                    if let Value::Int(i) = reg!(b + 2) {
                        reg!(b + 2) = Value::Int(i + 1);
                    }
                }
            }
        }
        Op::Range { dst, lo, hi, inclusive } => {
            let (l, h) = match (reg!(lo), reg!(hi)) {
                (Value::Int(l), Value::Int(h)) => (l, h),
                (l, h) => return arith::bad_operands(&vm.heap, "..", l, h),
            };
            let h = match (inclusive, h.checked_add(1)) {
                (false, _) => h,
                (true, Some(h)) => h,
                (true, None) => return err(ErrorKind::Overflow, "integer overflow"),
            };
            reg!(dst) = Value::Obj(vm.heap.alloc(Obj::Range(l, h)));
        }
        Op::Count { id } => {
            if let Some(c) = &mut vm.coverage {
                c.hit(id);
            }
        }
        _ => unreachable!("not a rare instruction"),
    }
    Ok(())
}
