//! Arithmetic, comparison, equality and map keys: the value semantics of §3.

use super::object::Obj;
use super::value::{Handle, Key, Value};
use super::{err, ErrorKind, Fault, Heap, Res, Vm};
use crate::bytecode::{BitOp, Cmp, Op};
use std::cmp::Ordering;

fn overflow<T>() -> Res<T> {
    err(ErrorKind::Overflow, "integer overflow")
}

#[inline]
pub fn add(heap: &mut Heap, a: Value, b: Value) -> Res<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.checked_add(y).map(Value::Int).map_or_else(overflow, Ok),
        (Value::Float(x), Value::Float(y)) => Ok(Value::Float(x + y)),
        (Value::Int(x), Value::Float(y)) => Ok(Value::Float(x as f64 + y)),
        (Value::Float(x), Value::Int(y)) => Ok(Value::Float(x + y as f64)),
        (Value::Obj(ha), Value::Obj(hb)) => match (heap.get(ha), heap.get(hb)) {
            (Obj::Str(x), Obj::Str(y)) => {
                let len = x.s.len() + y.s.len();
                if len > crate::limits::MAX_STRING {
                    return err(ErrorKind::Limit, format!("string too long ({len} bytes)"));
                }
                heap.reserve(len)?;
                let (tail, chars) = (y.s.clone(), y.chars());
                Ok(heap.append(ha, &tail, chars))
            }
            (Obj::List(x), Obj::List(y)) => {
                let len = x.len() + y.len();
                if len > crate::limits::MAX_LIST {
                    return err(ErrorKind::Limit, format!("list too long ({len} items)"));
                }
                heap.reserve(len * 16)?;
                let mut v = Vec::with_capacity(len);
                v.extend_from_slice(x);
                v.extend_from_slice(y);
                Ok(heap.list(v))
            }
            _ => super::seq_ops::bytes_add(heap, a, b),
        },
        _ => bad_operands(heap, "+", a, b),
    }
}

pub fn bad_operands<T>(heap: &Heap, op: &str, a: Value, b: Value) -> Res<T> {
    err(ErrorKind::Type, format!("cannot apply '{op}' to {} and {}", heap.type_name(a), heap.type_name(b)))
}

macro_rules! num_op {
    ($name:ident, $op:tt, $checked:ident, $sym:expr) => {
        #[inline]
        pub fn $name(heap: &Heap, a: Value, b: Value) -> Res<Value> {
            match (a, b) {
                (Value::Int(x), Value::Int(y)) => x.$checked(y).map(Value::Int).map_or_else(overflow, Ok),
                (Value::Float(x), Value::Float(y)) => Ok(Value::Float(x $op y)),
                (Value::Int(x), Value::Float(y)) => Ok(Value::Float(x as f64 $op y)),
                (Value::Float(x), Value::Int(y)) => Ok(Value::Float(x $op y as f64)),
                _ => bad_operands(heap, $sym, a, b),
            }
        }
    };
}

num_op!(sub, -, checked_sub, "-");
num_op!(num_mul, *, checked_mul, "*");

/// `*`: numbers, or a string or list repeated `n` times (`"-" * 40`, `[0] * n`,
/// either order). Reached only from the slow path, so int arithmetic does not pay.
pub fn mul(heap: &mut Heap, a: Value, b: Value) -> Res<Value> {
    let (seq, n) = match (a, b) {
        (Value::Obj(h), Value::Int(n)) | (Value::Int(n), Value::Obj(h)) => (h, n),
        _ => return num_mul(heap, a, b),
    };
    let n = n.max(0) as u128;
    match heap.get(seq) {
        Obj::Str(s) => {
            let len = s.s.len() as u128 * n;
            if len > crate::limits::MAX_STRING as u128 {
                return err(ErrorKind::Limit, format!("string too long ({len} bytes)"));
            }
            heap.reserve(len as usize)?;
            let out = s.s.repeat(n as usize);
            Ok(heap.string(out))
        }
        Obj::List(l) => {
            let len = l.len() as u128 * n;
            if len > crate::limits::MAX_LIST as u128 {
                return err(ErrorKind::Limit, format!("list too long ({len} items)"));
            }
            heap.reserve(len as usize * 16)?;
            let out = l.repeat(n as usize);
            heap.note_growth(out.len() * 16);
            Ok(heap.list(out))
        }
        _ => num_mul(heap, a, b),
    }
}

#[inline]
pub fn div(heap: &Heap, a: Value, b: Value) -> Res<Value> {
    match (a, b) {
        (Value::Int(_), Value::Int(0)) => err(ErrorKind::ZeroDivision, "integer division by zero"),
        (Value::Int(x), Value::Int(y)) => x.checked_div(y).map(Value::Int).map_or_else(overflow, Ok),
        (Value::Float(x), Value::Float(y)) => Ok(Value::Float(x / y)),
        (Value::Int(x), Value::Float(y)) => Ok(Value::Float(x as f64 / y)),
        (Value::Float(x), Value::Int(y)) => Ok(Value::Float(x / y as f64)),
        _ => bad_operands(heap, "/", a, b),
    }
}

#[inline]
pub fn rem(heap: &Heap, a: Value, b: Value) -> Res<Value> {
    match (a, b) {
        (Value::Int(_), Value::Int(0)) => err(ErrorKind::ZeroDivision, "integer division by zero"),
        (Value::Int(x), Value::Int(y)) => x.checked_rem(y).map(Value::Int).map_or_else(overflow, Ok),
        (Value::Float(x), Value::Float(y)) => Ok(Value::Float(x % y)),
        (Value::Int(x), Value::Float(y)) => Ok(Value::Float(x as f64 % y)),
        (Value::Float(x), Value::Int(y)) => Ok(Value::Float(x % y as f64)),
        _ => bad_operands(heap, "%", a, b),
    }
}

/// `a ** b` (and `pow(a, b)`): an exact int for two ints with `b >= 0`
/// (overflow is an error), else a float (`2 ** -1` is `0.5`, `0 ** -1` is
/// `inf`, as IEEE division by zero is).
pub fn pow(heap: &Heap, a: Value, b: Value) -> Res<Value> {
    let f = |v: Value| match v {
        Value::Int(i) => Some(i as f64),
        Value::Float(x) => Some(x),
        _ => None,
    };
    match (a, b) {
        (Value::Int(x), Value::Int(e)) if e >= 0 => {
            let r = match u32::try_from(e) {
                Ok(e) => x.checked_pow(e),
                Err(_) => match x {
                    0 | 1 => Some(x),
                    -1 => Some(if e % 2 == 0 { 1 } else { -1 }),
                    _ => None,
                },
            };
            r.map(Value::Int).map_or_else(overflow, Ok)
        }
        _ => match (f(a), f(b)) {
            (Some(x), Some(e)) => Ok(Value::Float(x.powf(e))),
            _ => bad_operands(heap, "**", a, b),
        },
    }
}

pub fn neg(heap: &Heap, a: Value) -> Res<Value> {
    match a {
        Value::Int(x) => x.checked_neg().map(Value::Int).map_or_else(overflow, Ok),
        Value::Float(x) => Ok(Value::Float(-x)),
        _ => err(ErrorKind::Type, format!("cannot negate {}", heap.type_name(a))),
    }
}

/// Whether two objects are equal strings; None unless both are strings.
#[inline]
pub fn str_eq(heap: &Heap, a: Handle, b: Handle) -> Option<bool> {
    match (heap.get(a), heap.get(b)) {
        (Obj::Str(x), Obj::Str(y)) => Some(x.s == y.s),
        _ => None,
    }
}

/// `str_eq` where it needs no look at the bytes: the same string, lengths
/// that differ, or two interned strings (one object per content). None
/// otherwise, and unless both are strings. Makes no call, for the dispatch
/// loop's fast paths.
#[inline(always)]
pub fn str_eq_quick(heap: &Heap, a: Handle, b: Handle) -> Option<bool> {
    match (heap.get(a), heap.get(b)) {
        (Obj::Str(x), Obj::Str(y)) => {
            if super::str::Str::ptr_eq(&x.s, &y.s) {
                Some(true)
            } else if x.s.as_str().len() != y.s.as_str().len() || (x.is_interned() && y.is_interned()) {
                Some(false)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `==`: numbers compare numerically, strings by content, lists and maps
/// structurally, other objects by identity.
pub fn equal(heap: &Heap, a: Value, b: Value) -> bool {
    // Free to make until a pair is inserted (std's default hasher is not:
    // it reads and bumps per-thread keys on every `x == nil`).
    let mut assumed = Assumed::with_hasher(super::value::MapHasher);
    eq_inner(heap, a, b, &mut assumed)
}

/// Pairs of containers under or after comparison.
type Assumed = std::collections::HashSet<(u32, u32), super::value::MapHasher>;

/// Structural equality as bisimulation: a pair of containers already under
/// comparison (a cycle) or already compared (a shared sub-list) is taken as equal.
/// That is sound because any difference makes the whole answer false at once, and
/// it keeps the work linear in the number of container pairs.
fn eq_inner(heap: &Heap, a: Value, b: Value, assumed: &mut Assumed) -> bool {
    match (a, b) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => (x as f64) == y,
        (Value::Obj(ha), Value::Obj(hb)) => {
            if ha == hb {
                return true;
            }
            match (heap.get(ha), heap.get(hb)) {
                (Obj::Str(x), Obj::Str(y)) => x.s == y.s,
                (Obj::Bytes(x), Obj::Bytes(y)) => x == y,
                (Obj::Range(a0, a1), Obj::Range(b0, b1)) => a0 == b0 && a1 == b1,
                // One channel shared between isolates, reached through two crossings.
                (Obj::Chan(x), Obj::Chan(y)) => x.same(y),
                (Obj::Host(x), Obj::Host(y)) => std::ptr::eq(x.class(), y.class()) && x.equals(&**y),
                (Obj::List(x), Obj::List(y)) => {
                    if x.len() != y.len() || x.iter().zip(y).any(|(p, q)| scalars_differ(heap, *p, *q)) {
                        return false;
                    }
                    if !assumed.insert((ha.0, hb.0)) {
                        return true;
                    }
                    crate::limits::with_stack(|| x.iter().zip(y.iter()).all(|(p, q)| eq_inner(heap, *p, *q, assumed)))
                }
                (Obj::Map(x), Obj::Map(y)) => {
                    // Entries in the same place under the same key (maps made
                    // by the same code) are compared directly first.
                    let differ = |((kx, vx), (ky, vy)): ((&Key, &Value), (&Key, &Value))| {
                        kx == ky && scalars_differ(heap, *vx, *vy)
                    };
                    if x.len() != y.len() || x.iter().zip(y.iter()).any(differ) {
                        return false;
                    }
                    if !assumed.insert((ha.0, hb.0)) {
                        return true;
                    }
                    crate::limits::with_stack(|| {
                        x.iter().all(|(k, v)| y.get(k).is_some_and(|w| eq_inner(heap, *v, *w, assumed)))
                    })
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// Two values that are not objects and are not equal: the quick "not equal"
/// tried on the items of two lists or maps before the pair set and the
/// recursion (objects compared by an `id` field, as in DeltaBlue, differ there
/// at once, without an allocation).
fn scalars_differ(heap: &Heap, a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Obj(_), _) | (_, Value::Obj(_)) => false,
        // No pair is inserted for scalars, so the set stays unallocated.
        _ => !eq_inner(heap, a, b, &mut Assumed::with_hasher(super::value::MapHasher)),
    }
}

/// `& | ^ << >>` on two ints.
pub fn bitwise(heap: &Heap, op: BitOp, a: Value, b: Value) -> Res<Value> {
    let sym = match op {
        BitOp::And => "&",
        BitOp::Or => "|",
        BitOp::Xor => "^",
        BitOp::Shl => "<<",
        BitOp::Shr => ">>",
    };
    let (Value::Int(x), Value::Int(y)) = (a, b) else {
        return bad_operands(heap, sym, a, b);
    };
    let r = match op {
        BitOp::And => x & y,
        BitOp::Or => x | y,
        BitOp::Xor => x ^ y,
        BitOp::Shl | BitOp::Shr => {
            if !(0..64).contains(&y) {
                return err(ErrorKind::Value, format!("shift amount {y} out of range (0 to 63)"));
            }
            if op == BitOp::Shl {
                x << y
            } else {
                x >> y
            }
        }
    };
    Ok(Value::Int(r))
}

/// `item in coll`: an item of a list (by `==`), a key of a map, a substring of a
/// string, an int of a range, a byte (int) or run of bytes of a bytes value; any
/// other `coll` is a type error.
pub fn contains(heap: &Heap, item: Value, coll: Value) -> Res<bool> {
    if let Value::Obj(h) = coll {
        match heap.get(h) {
            Obj::List(l) => return Ok(l.iter().any(|x| equal(heap, item, *x))),
            // A value that cannot be a key is in no map.
            Obj::Map(m) => return Ok(to_key(heap, item).is_ok_and(|k| m.contains_key(&k))),
            Obj::Str(s) => {
                return match heap.as_str(item) {
                    Some(sub) => Ok(super::substr::contains(&s.s, &sub.s)),
                    None => err(
                        ErrorKind::Type,
                        format!("'in <string>' needs a string on the left, not {}", heap.type_name(item)),
                    ),
                }
            }
            Obj::Range(lo, hi) => return Ok(matches!(item, Value::Int(i) if *lo <= i && i < *hi)),
            Obj::Bytes(b) => return super::seq_ops::bytes_contain(heap, item, b),
            _ => {}
        }
    }
    err(ErrorKind::Type, format!("cannot test membership ('in') in {}", heap.type_name(coll)))
}

/// `a is b`: the same heap object; nil, bools and numbers compare as by `==`.
/// Short strings are one object per text (intern.rs), so equal ones are the
/// same: also a line read in, which has an object of its own.
pub fn identical(heap: &Heap, a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Obj(x), Value::Obj(y)) if x == y => true,
        (Value::Obj(x), Value::Obj(y)) => match (heap.get(x), heap.get(y)) {
            (Obj::Str(p), Obj::Str(q)) => p.s.len() <= super::object::SHORT && p.s == q.s,
            _ => false,
        },
        (Value::Obj(_), _) | (_, Value::Obj(_)) => false,
        _ => equal(heap, a, b),
    }
}

/// Ordering for `< <= > >=` and `sort`: numbers numerically, strings and bytes by
/// content, lists lexicographically; anything else is an error.
pub fn compare(heap: &Heap, a: Value, b: Value) -> Res<Ordering> {
    compare_at(heap, a, b, 0)
}

/// `compare` at nesting `depth`; a cyclic or absurdly deep list is an error.
fn compare_at(heap: &Heap, a: Value, b: Value, depth: usize) -> Res<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(&y)),
        (Value::Float(x), Value::Float(y)) => float_cmp(x, y),
        (Value::Int(x), Value::Float(y)) => float_cmp(x as f64, y),
        (Value::Float(x), Value::Int(y)) => float_cmp(x, y as f64),
        (Value::Obj(ha), Value::Obj(hb)) => match (heap.get(ha), heap.get(hb)) {
            (Obj::Str(x), Obj::Str(y)) => Ok(x.s.cmp(&y.s)),
            (Obj::Bytes(x), Obj::Bytes(y)) => Ok(x.cmp(y)),
            (Obj::Host(x), Obj::Host(y)) if std::ptr::eq(x.class(), y.class()) => match x.compare(&**y) {
                Some(o) => Ok(o),
                None => bad_compare(heap, a, b),
            },
            (Obj::List(x), Obj::List(y)) => {
                if depth > crate::limits::MAX_DEPTH {
                    return err(ErrorKind::Limit, "cannot compare lists nested this deeply (or cyclic)");
                }
                for (p, q) in x.iter().zip(y.iter()) {
                    match crate::limits::with_stack(|| compare_at(heap, *p, *q, depth + 1))? {
                        Ordering::Equal => {}
                        o => return Ok(o),
                    }
                }
                Ok(x.len().cmp(&y.len()))
            }
            _ => bad_compare(heap, a, b),
        },
        _ => bad_compare(heap, a, b),
    }
}

/// NaN compares as unordered: every comparison with it is false.
fn float_cmp(x: f64, y: f64) -> Res<Ordering> {
    Ok(x.partial_cmp(&y).unwrap_or(Ordering::Equal))
}

fn bad_compare<T>(heap: &Heap, a: Value, b: Value) -> Res<T> {
    err(ErrorKind::Type, format!("cannot compare {} with {}", heap.type_name(a), heap.type_name(b)))
}

/// `a < b` with NaN making every comparison false.
#[inline]
pub fn less(heap: &Heap, a: Value, b: Value) -> Res<bool> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x < y),
        (Value::Float(x), Value::Float(y)) => Ok(x < y),
        _ if is_nan_pair(a, b) => Ok(false),
        _ => Ok(compare(heap, a, b)? == Ordering::Less),
    }
}

#[inline]
pub fn less_eq(heap: &Heap, a: Value, b: Value) -> Res<bool> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x <= y),
        (Value::Float(x), Value::Float(y)) => Ok(x <= y),
        _ if is_nan_pair(a, b) => Ok(false),
        _ => Ok(compare(heap, a, b)? != Ordering::Greater),
    }
}

fn is_nan_pair(a: Value, b: Value) -> bool {
    matches!(a, Value::Float(x) if x.is_nan()) || matches!(b, Value::Float(x) if x.is_nan())
}

/// The map key for `v`; floats and objects other than strings and bytes are not keys.
pub fn to_key(heap: &Heap, v: Value) -> Res<Key> {
    match v {
        Value::Nil => Ok(Key::Nil),
        Value::Bool(b) => Ok(Key::Bool(b)),
        Value::Int(i) => Ok(Key::Int(i)),
        Value::Float(_) => err(ErrorKind::Key, "float map keys are not allowed"),
        Value::Obj(h) => match heap.get(h) {
            Obj::Str(s) => Ok(Key::Str(s.s.clone())),
            Obj::Bytes(b) => Ok(Key::Bytes(b.clone())),
            o => err(ErrorKind::Key, format!("a {} cannot be a map key", o.type_name())),
        },
    }
}

pub fn key_value(heap: &mut Heap, k: &Key) -> Value {
    match k {
        Key::Nil => Value::Nil,
        Key::Bool(b) => Value::Bool(*b),
        Key::Int(i) => Value::Int(*i),
        Key::Str(s) => heap.shared_str(s.clone()),
        Key::Bytes(b) => heap.bytes(b.clone()),
    }
}

impl From<Fault> for Res<Value> {
    fn from(f: Fault) -> Self {
        Err(f)
    }
}

// The dispatch loop's out-of-line paths.

/// Comparison of anything but two ints, kept out of the dispatch loop.
#[cold]
#[inline(never)]
pub(super) fn compare_slow(vm: &Vm, cmp: Cmp, a: Value, b: Value) -> Res<bool> {
    match cmp {
        Cmp::Eq => Ok(equal(&vm.heap, a, b)),
        Cmp::Ne => Ok(!equal(&vm.heap, a, b)),
        Cmp::Lt => less(&vm.heap, a, b),
        Cmp::Le => less_eq(&vm.heap, a, b),
        Cmp::Gt => less(&vm.heap, b, a),
        Cmp::Ge => less_eq(&vm.heap, b, a),
    }
}

/// Slow path of `AddK`, `SubK`, `MulK` and `DivK`: `a <op> k`, or `k <op> a`
/// when the constant was written first.
#[cold]
#[inline(never)]
pub(super) fn arith_k_slow(vm: &mut Vm, op: Op, a: Value, k: Value) -> Res<Value> {
    let (Op::AddK { rev, .. } | Op::SubK { rev, .. } | Op::MulK { rev, .. } | Op::DivK { rev, .. }) = op else {
        unreachable!("arith_k_slow on {op:?}")
    };
    let (x, y) = if rev { (k, a) } else { (a, k) };
    match op {
        Op::AddK { .. } => add(&mut vm.heap, x, y),
        Op::SubK { .. } => sub(&vm.heap, x, y),
        Op::MulK { .. } => mul(&mut vm.heap, x, y),
        _ => div(&vm.heap, x, y),
    }
}

/// Slow path of the arithmetic instructions (anything but int/int without overflow).
#[cold]
#[inline(never)]
pub(super) fn arith_slow(vm: &mut Vm, op: Op, x: Value, y: Value) -> Res<Value> {
    match op {
        // `x - n`, compiled as an AddI of -n.
        Op::AddI { imm, .. } if imm < 0 => sub(&vm.heap, x, Value::Int(-(imm as i64))),
        Op::Add { .. } | Op::AddI { .. } => add(&mut vm.heap, x, y),
        Op::Sub { .. } => sub(&vm.heap, x, y),
        Op::Mul { .. } | Op::MulI { .. } => mul(&mut vm.heap, x, y),
        Op::Div { .. } => div(&vm.heap, x, y),
        _ => rem(&vm.heap, x, y),
    }
}
