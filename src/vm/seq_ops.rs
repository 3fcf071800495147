//! Lists, strings and bytes as the dispatch loop uses them out of line:
//! indexing (negative counts from the end), item assignment, `push`, and
//! bytes' `+` and `in`. The library's methods build on these.

use super::arith::bad_operands;
use super::object::Obj;
use super::{err, ErrorKind, Handle, Heap, List, Res, Value};
use crate::limits::{MAX_LIST, MAX_STRING};

/// Resolves an index with negative counting from the end; `None` if out of range.
pub fn resolve_index(i: i64, len: usize) -> Option<usize> {
    let j = if i < 0 { i.checked_add(len as i64)? } else { i };
    if j >= 0 && (j as u64) < len as u64 {
        Some(j as usize)
    } else {
        None
    }
}

/// The error of a list growing past `MAX_LIST` items.
#[cold]
pub fn list_too_long<T>() -> Res<T> {
    err(ErrorKind::Limit, format!("list too long (at most {MAX_LIST} items)"))
}

/// A `limit` error if `len` bytes would pass the string limit, which bytes share.
pub fn check_bytes_len(len: usize) -> Res<()> {
    if len > MAX_STRING {
        return err(ErrorKind::Limit, format!("bytes too long ({len} bytes)"));
    }
    Ok(())
}

/// The items of list `h`, to change them.
pub fn items_mut(heap: &mut Heap, h: Handle) -> &mut List {
    match heap.get_mut(h) {
        Obj::List(l) => l,
        _ => unreachable!("receiver is a list"),
    }
}

/// The items of list `h`, to append to or to overwrite single items of (the
/// caller hands what it removes to `Heap::overwritten`): no barrier on the
/// whole list, so a long one costs no more to change than a short one.
pub fn items_adding(heap: &mut Heap, h: Handle) -> &mut List {
    match heap.get_mut_items(h) {
        Obj::List(l) => l,
        _ => unreachable!("receiver is a list"),
    }
}

/// Appends `v` to list `h` (`xs.push(v)`, a comprehension's items): past
/// `MAX_LIST` items a `limit` error, and a list that must grow first asks the
/// memory limit for the room (it doubles). Out of line: the dispatch loop's
/// comprehension instruction stays small.
#[inline(never)]
pub fn push(heap: &mut Heap, h: Handle, v: Value) -> Res<()> {
    let l = items_adding(heap, h);
    if l.len() == l.capacity() {
        let (len, cap) = (l.len(), l.capacity());
        if len >= MAX_LIST {
            return list_too_long();
        }
        heap.reserve(cap * 16)?;
    }
    items_adding(heap, h).push(v);
    heap.note_growth(16);
    Ok(())
}

fn out_of_range<T>(i: i64, len: usize) -> Res<T> {
    err(ErrorKind::Index, format!("list index {i} out of range for length {len}"))
}

/// `xs[i]` for a list value `list`.
pub fn list_index(heap: &Heap, list: Value, i: i64) -> Res<Value> {
    let Some(l) = heap.as_list(list) else {
        return err(ErrorKind::Type, "not a list");
    };
    match resolve_index(i, l.len()) {
        Some(j) => Ok(l[j]),
        None => out_of_range(i, l.len()),
    }
}

/// `xs[i] = v` for a list value `list`.
pub fn list_set(heap: &mut Heap, list: Value, i: i64, v: Value) -> Res<()> {
    let Value::Obj(h) = list else {
        return err(ErrorKind::Type, "not a list");
    };
    let l = items_adding(heap, h);
    match resolve_index(i, l.len()) {
        Some(j) => {
            let old = std::mem::replace(&mut l[j], v);
            heap.overwritten(old);
            Ok(())
        }
        None => out_of_range(i, l.len()),
    }
}

/// `s[i]` for a string value `s`: the one-character string at char index `i`.
pub fn str_index(heap: &mut Heap, s: Value, i: i64) -> Res<Value> {
    let Some(so) = heap.as_str(s) else {
        return err(ErrorKind::Type, "not a string");
    };
    let len = so.chars();
    let Some(j) = resolve_index(i, len) else {
        return err(ErrorKind::Index, format!("string index {i} out of range for length {len}"));
    };
    if so.is_ascii() {
        let c = so.s.as_bytes()[j] as char;
        return Ok(heap.char_str(c));
    }
    let (b, grew) = so.s.char_offset(j);
    let c = so.s[b..].chars().next().expect("index checked against char count");
    heap.note_growth(grew);
    Ok(heap.char_str(c))
}

/// `b[i]`: the byte at index `i` as an int.
pub fn bytes_index(b: &[u8], i: i64) -> Res<Value> {
    match resolve_index(i, b.len()) {
        Some(j) => Ok(Value::Int(b[j] as i64)),
        None => err(ErrorKind::Index, format!("bytes index {i} out of range for length {}", b.len())),
    }
}

/// `a + b` where both are objects and not two strings or two lists: bytes
/// concatenation, or the type error (with a hint when text meets bytes).
#[cold]
pub fn bytes_add(heap: &mut Heap, a: Value, b: Value) -> Res<Value> {
    match (heap.as_bytes(a), heap.as_bytes(b)) {
        (Some(x), Some(y)) => {
            check_bytes_len(x.len() + y.len())?;
            let data = [x, y].concat();
            Ok(heap.bytes(data))
        }
        (Some(_), None) | (None, Some(_)) if heap.as_str(a).is_some() || heap.as_str(b).is_some() => err(
            ErrorKind::Type,
            format!(
                "cannot apply '+' to {} and {}: convert the string with s.encode() (or the bytes with b.decode())",
                heap.type_name(a),
                heap.type_name(b)
            ),
        ),
        _ => bad_operands(heap, "+", a, b),
    }
}

/// Where `sub` first occurs in `b` (an empty `sub` at 0).
pub fn find_bytes(b: &[u8], sub: &[u8]) -> Option<usize> {
    if sub.is_empty() {
        return Some(0);
    }
    b.windows(sub.len()).position(|w| w == sub)
}

/// `item in b`: an int byte, or bytes occurring as a run in `b`. An int outside
/// 0 to 255 is in no bytes value.
pub fn bytes_contain(heap: &Heap, item: Value, b: &[u8]) -> Res<bool> {
    match item {
        Value::Int(i) => Ok(u8::try_from(i).is_ok_and(|x| b.contains(&x))),
        _ => match heap.as_bytes(item) {
            Some(sub) => Ok(find_bytes(b, sub).is_some()),
            None => err(
                ErrorKind::Type,
                format!("'in <bytes>' needs an int or bytes on the left, not {}", heap.type_name(item)),
            ),
        },
    }
}
