//! `List`: a list's items. A list of one or two items keeps them in its heap
//! slot, so a pair, a `[k, v]` entry or a tree node is one object with nothing
//! allocated beside it and nothing to free when it dies; any other length is a
//! `Vec`. The three cases share the 32 bytes of a slot: `Two`'s first value's tag
//! word holds the kind (rustc puts the other cases' tags in its unused values),
//! which the assertion below keeps true.

use super::value::Value;
use std::ops::{Deref, DerefMut};

pub enum List {
    /// Exactly two items. First: its tag word is the niche the others use.
    Two([Value; 2]),
    /// Any length; an empty list allocates nothing.
    Vec(Vec<Value>),
    /// Exactly one item.
    One(Value),
}

const _: () = assert!(std::mem::size_of::<List>() == 32);

/// The first word of a list in a `Vec`, and of an `Obj` holding one. rustc
/// keeps the kind in the first word: `Two`'s first item's tag (0 to 4: see
/// `Value`), the other kinds of list and then of object taking values past
/// those. A `match` decodes it in several instructions, and LLVM does not
/// reduce `is it a list in a Vec` to one compare: `List::as_vec_mut` and
/// `Obj::list_vec` compare the word.
pub(super) const VEC_WORD: u64 = const_first_word(List::Vec(Vec::new()));

#[repr(C)]
struct Words {
    first: u64,
    rest: std::mem::MaybeUninit<[u64; 3]>,
}

/// The first word of a 32-byte value, at compile time.
pub(super) const fn const_first_word<T>(x: T) -> u64 {
    assert!(std::mem::size_of::<T>() == 32);
    // SAFETY: the same size; every kind of list and object sets the first word.
    let w = unsafe { std::mem::transmute_copy::<T, Words>(&x) };
    std::mem::forget(x);
    w.first
}

/// The first word of a list or an object (see `VEC_WORD`).
#[inline(always)]
pub(super) fn first_word<T>(x: &T) -> u64 {
    const { assert!(std::mem::size_of::<T>() == 32) };
    // SAFETY: as for `const_first_word`.
    unsafe { (x as *const T as *const u64).read() }
}

const _: () = {
    let one = const_first_word(List::One(Value::Nil));
    let two = const_first_word(List::Two([Value::Nil, Value::Nil]));
    assert!(VEC_WORD > 4 && one > 4 && VEC_WORD != one && two == 0, "a list's kind is its first word");
};

impl Default for List {
    fn default() -> List {
        List::Vec(Vec::new())
    }
}

/// One or two items move into the slot (the `Vec` would be freed when the
/// list dies anyway).
impl From<Vec<Value>> for List {
    fn from(items: Vec<Value>) -> List {
        match *items {
            [a] => List::One(a),
            [a, b] => List::Two([a, b]),
            _ => List::Vec(items),
        }
    }
}

impl List {
    /// A list of `items` (in the slot when there are one or two).
    #[inline]
    pub fn from_slice(items: &[Value]) -> List {
        match *items {
            [a] => List::One(a),
            [a, b] => List::Two([a, b]),
            _ => List::Vec(items.to_vec()),
        }
    }

    /// The items, when in a `Vec`: one compare of the kind word (`VEC_WORD`).
    #[inline(always)]
    pub fn as_vec_mut(&mut self) -> Option<&mut Vec<Value>> {
        if first_word(self) != VEC_WORD {
            return None;
        }
        let List::Vec(items) = self else {
            // SAFETY: only `Vec` has VEC_WORD there (asserted with it).
            unsafe { std::hint::unreachable_unchecked() }
        };
        Some(items)
    }

    /// How many items fit before the next push allocates.
    pub fn capacity(&self) -> usize {
        match self {
            List::Vec(v) => v.capacity(),
            List::One(_) | List::Two(_) => 2,
        }
    }

    /// Bytes held outside the slot (for the collector's pacing).
    pub fn heap_bytes(&self) -> usize {
        match self {
            List::Vec(v) => v.capacity() * std::mem::size_of::<Value>(),
            List::One(_) | List::Two(_) => 0,
        }
    }

    pub fn push(&mut self, v: Value) {
        if let Some(items) = self.as_vec_mut() {
            if items.capacity() > 0 {
                return items.push(v);
            }
        }
        match self {
            List::Vec(_) => *self = List::One(v),
            List::One(a) => *self = List::Two([*a, v]),
            List::Two([a, b]) => {
                let mut items = Vec::with_capacity(4);
                items.extend_from_slice(&[*a, *b, v]);
                *self = List::Vec(items);
            }
        }
    }

    pub fn pop(&mut self) -> Option<Value> {
        match self {
            List::Vec(items) => items.pop(),
            List::One(a) => {
                let a = *a;
                *self = List::default();
                Some(a)
            }
            List::Two([a, b]) => {
                let (a, b) = (*a, *b);
                *self = List::One(a);
                Some(b)
            }
        }
    }

    /// The items as a `Vec`, to change their number in other ways (moved out
    /// of the slot first when they are there).
    pub fn vec_mut(&mut self) -> &mut Vec<Value> {
        if !matches!(self, List::Vec(_)) {
            *self = List::Vec(self.to_vec());
        }
        match self {
            List::Vec(items) => items,
            _ => unreachable!("made a Vec above"),
        }
    }
}

impl Deref for List {
    type Target = [Value];
    #[inline]
    fn deref(&self) -> &[Value] {
        match self {
            List::Vec(items) => items,
            List::Two(items) => items,
            List::One(a) => std::slice::from_ref(a),
        }
    }
}

impl DerefMut for List {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Value] {
        match self {
            List::Vec(items) => items,
            List::Two(items) => items,
            List::One(a) => std::slice::from_mut(a),
        }
    }
}

impl<'a> IntoIterator for &'a List {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(l: &List) -> Vec<i64> {
        l.iter()
            .map(|v| match v {
                Value::Int(i) => *i,
                _ => panic!("an int"),
            })
            .collect()
    }

    #[test]
    fn pushes_and_pops_move_between_the_slot_and_a_vec() {
        let mut l = List::default();
        for i in 0..5 {
            l.push(Value::Int(i));
            assert_eq!(ints(&l), (0..=i).collect::<Vec<_>>());
            assert_eq!(matches!(l, List::Vec(_)), i >= 2, "inline up to two items");
        }
        for i in (0..5).rev() {
            assert!(matches!(l.pop(), Some(Value::Int(j)) if j == i));
            assert_eq!(ints(&l), (0..i).collect::<Vec<_>>());
        }
        assert!(l.pop().is_none());
        let mut two = List::from_slice(&[Value::Int(1), Value::Int(2)]);
        assert!(matches!(two, List::Two(_)));
        two.vec_mut().insert(1, Value::Int(9));
        assert_eq!(ints(&two), [1, 9, 2]);
        two[0] = Value::Int(7);
        assert_eq!(ints(&two), [7, 9, 2]);
    }
}
