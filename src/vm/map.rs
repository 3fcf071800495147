//! csp's map: insertion-ordered keys in a `Layout` that maps of the same
//! shape share, and the values in a plain array beside it.
//!
//! Why split: objects made by one literal (`{x: x, y: y}`) share one layout,
//! so a field access checks the layout's address against its inline cache and
//! reads the value, without touching the keys (vm/value.rs, `cached_get`).
//! The values of a 6-field object fill 96 bytes instead of 240 (IndexMap's
//! 40-byte buckets), and a literal copies one array instead of hashing
//! each key. A layout is shared until a map adds or removes a key: then that
//! map gets its own copy (copy on write).
//!
//! A `Map` is 24 bytes, so the heap keeps it in the object's slot (no box):
//! the layout, and the values as a boxed slice whose length is the capacity
//! (the map's length is its layout's). A field read goes from the slot
//! straight to the value.

use super::key_set::KeySet;
use super::value::{Key, Value};
use std::rc::Rc;

/// The keys of one or more maps, in insertion order, with their hash index.
/// `id` names this exact sequence of keys: a layout whose keys move
/// (a removal) takes a new id, one that only grows keeps its id (the keys
/// already there keep their indices, all an inline cache remembers).
#[derive(Debug)]
pub struct Layout {
    id: u64,
    keys: KeySet,
}

/// Ids are never reused, so a cached id can never name another layout.
fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Layout {
    /// A layout of these keys (a literal's template); repeated keys keep their first place.
    pub fn of(keys: impl IntoIterator<Item = Key>) -> Rc<Layout> {
        Rc::new(Layout { id: next_id(), keys: keys.into_iter().collect() })
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

thread_local! {
    /// The layout of every new empty map: an empty map costs no layout of its own.
    static EMPTY: Rc<Layout> = Layout::of([]);
}

/// Invariant: `values.len() >= layout.keys.len()`; value `i` belongs to key
/// `i`, and the values past the keys are nil (room to grow).
#[derive(Clone, Debug)]
pub struct Map {
    layout: Rc<Layout>,
    values: Box<[Value]>,
}

impl Default for Map {
    fn default() -> Map {
        Map::with_capacity(0)
    }
}

impl Map {
    pub fn with_capacity(n: usize) -> Map {
        Map { layout: EMPTY.with(Rc::clone), values: vec![Value::Nil; n].into_boxed_slice() }
    }

    /// A map of `layout`'s keys and these values, one each.
    pub fn from_layout(layout: &Rc<Layout>, values: &[Value]) -> Map {
        debug_assert_eq!(layout.len(), values.len());
        Map { layout: layout.clone(), values: values.into() }
    }

    /// The id of this map's layout (see `Layout`).
    #[inline(always)]
    pub fn layout_id(&self) -> u64 {
        self.layout.id
    }

    /// Where this map's layout is, as the `Rc` holds it: what an inline
    /// cache compares (vm/value.rs, `Name`). The `Rc`'s own word rather than
    /// `Rc::as_ptr`, which adds the counts' offset to it: one instruction
    /// per field read.
    #[inline(always)]
    pub fn layout_word(&self) -> usize {
        const _: () = assert!(std::mem::size_of::<Rc<Layout>>() == std::mem::size_of::<usize>());
        // SAFETY: an `Rc` of a sized type is one pointer (asserted above); its
        // bits identify the allocation for as long as the `Rc` lives.
        unsafe { std::mem::transmute_copy::<Rc<Layout>, usize>(&self.layout) }
    }

    pub fn layout(&self) -> &Rc<Layout> {
        &self.layout
    }

    pub fn len(&self) -> usize {
        self.layout.len()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.values.len()
    }

    /// Bytes this map holds: its values, and its layout when no other map shares it.
    pub fn size(&self) -> usize {
        let own = if Rc::strong_count(&self.layout) == 1 { 48 + self.layout.keys.bytes() } else { 0 };
        self.values.len() * 16 + own
    }

    /// The values that belong to keys.
    fn live(&self) -> &[Value] {
        &self.values[..self.len()]
    }

    /// The keys, to change: this map's own layout (copied if shared). With
    /// `moving`, the keys will change places, so the layout takes a new id.
    fn keys_mut(&mut self, moving: bool) -> &mut KeySet {
        if Rc::get_mut(&mut self.layout).is_none() {
            let keys = self.layout.keys.clone();
            self.layout = Rc::new(Layout { id: next_id(), keys });
        }
        // Unique now: just checked, or just made.
        let l = Rc::get_mut(&mut self.layout).expect("a unique layout");
        if moving {
            l.id = next_id();
        }
        &mut l.keys
    }

    pub fn get_index_of(&self, k: &Key) -> Option<usize> {
        self.layout.keys.get_index_of(k)
    }

    pub fn get(&self, k: &Key) -> Option<&Value> {
        self.get_index_of(k).map(|i| &self.values[i])
    }

    pub fn get_mut(&mut self, k: &Key) -> Option<&mut Value> {
        self.get_index_of(k).map(|i| &mut self.values[i])
    }

    pub fn contains_key(&self, k: &Key) -> bool {
        self.get_index_of(k).is_some()
    }

    #[inline(always)]
    pub fn get_index(&self, i: usize) -> Option<(&Key, &Value)> {
        Some((self.layout.keys.get_index(i)?, &self.values[i]))
    }

    pub fn get_index_mut(&mut self, i: usize) -> Option<(&Key, &mut Value)> {
        Some((self.layout.keys.get_index(i)?, &mut self.values[i]))
    }

    /// The value at index `i`, which must be below `len()` (an index found
    /// for this layout): checked only against the capacity, which the slot
    /// holds, so that a cached field read touches no other memory.
    #[inline(always)]
    pub fn value_at(&self, i: usize) -> Option<&Value> {
        debug_assert!(i < self.len());
        self.values.get(i)
    }

    /// The value `off` bytes into the values (a cached field's offset,
    /// `Name`): the index times the size of a value.
    ///
    /// # Safety
    /// `off / size_of::<Value>()` must be below `self.len()`.
    #[inline(always)]
    pub unsafe fn value_at_offset(&self, off: usize) -> &Value {
        debug_assert!(off / std::mem::size_of::<Value>() < self.len());
        &*self.values.as_ptr().cast::<u8>().add(off).cast::<Value>()
    }

    /// `value_at_offset`, to change.
    ///
    /// # Safety
    /// As for `value_at_offset`.
    #[inline(always)]
    pub unsafe fn value_at_offset_mut(&mut self, off: usize) -> &mut Value {
        debug_assert!(off / std::mem::size_of::<Value>() < self.len());
        &mut *self.values.as_mut_ptr().cast::<u8>().add(off).cast::<Value>()
    }

    /// `value_at`, to change.
    #[inline(always)]
    pub fn value_at_mut(&mut self, i: usize) -> Option<&mut Value> {
        debug_assert!(i < self.len());
        self.values.get_mut(i)
    }

    /// The key at index `i`.
    #[inline(always)]
    pub fn key_at(&self, i: usize) -> Option<&Key> {
        self.layout.keys.get_index(i)
    }

    /// Sets `k` to `v`: in place if present (returning the old value), else last.
    pub fn insert(&mut self, k: Key, v: Value) -> Option<Value> {
        let n = self.len();
        let i = match Rc::get_mut(&mut self.layout) {
            // One probe finds the key or adds it.
            Some(l) => l.keys.insert_full(k).0,
            // A shared layout is copied only if a key is added.
            None => match self.layout.keys.get_index_of(&k) {
                Some(i) => i,
                None => self.keys_mut(false).insert_full(k).0,
            },
        };
        if i < n {
            return Some(std::mem::replace(&mut self.values[i], v));
        }
        if n == self.values.len() {
            let values = std::mem::take(&mut self.values);
            self.values = crate::alloc::grow_zeroed(values, (n * 2).max(4));
        }
        self.values[n] = v;
        None
    }

    /// Removes `k`, keeping the order of the rest.
    pub fn shift_remove(&mut self, k: &Key) -> Option<Value> {
        let i = self.get_index_of(k)?;
        let n = self.len();
        let v = self.values[i];
        self.values.copy_within(i + 1..n, i);
        self.values[n - 1] = Value::Nil;
        self.keys_mut(true).shift_remove_index(i);
        Some(v)
    }

    /// Removes and returns the last entry.
    pub fn pop(&mut self) -> Option<(Key, Value)> {
        let n = self.len().checked_sub(1)?;
        let v = std::mem::replace(&mut self.values[n], Value::Nil);
        let k = self.keys_mut(true).pop().expect("a key for each value");
        Some((k, v))
    }

    /// Keeps the first `n` entries.
    pub fn truncate(&mut self, n: usize) {
        let len = self.len();
        if n < len {
            self.values[n..len].fill(Value::Nil);
            self.keys_mut(true).truncate(n);
        }
    }

    pub fn clear(&mut self) {
        let n = self.len();
        self.values[..n].fill(Value::Nil);
        self.layout = EMPTY.with(Rc::clone);
    }

    pub fn iter(&self) -> Iter<'_> {
        self.layout.keys.iter().zip(self.live().iter())
    }

    pub fn keys(&self) -> std::slice::Iter<'_, Key> {
        self.layout.keys.iter()
    }

    pub fn values(&self) -> std::slice::Iter<'_, Value> {
        self.live().iter()
    }

    pub fn values_mut(&mut self) -> std::slice::IterMut<'_, Value> {
        let n = self.len();
        self.values[..n].iter_mut()
    }
}

pub type Iter<'a> = std::iter::Zip<std::slice::Iter<'a, Key>, std::slice::Iter<'a, Value>>;

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a Key, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Map {
    type Item = (Key, Value);
    type IntoIter = std::iter::Zip<std::vec::IntoIter<Key>, std::vec::IntoIter<Value>>;
    fn into_iter(self) -> Self::IntoIter {
        let mut values = self.values.into_vec();
        let keys = Rc::try_unwrap(self.layout).map(|l| l.keys).unwrap_or_else(|l| l.keys.clone());
        values.truncate(keys.len());
        keys.into_iter().zip(values)
    }
}

impl Extend<(Key, Value)> for Map {
    fn extend<I: IntoIterator<Item = (Key, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(Key, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (Key, Value)>>(iter: I) -> Map {
        let mut m = Map::default();
        m.extend(iter);
        m
    }
}

impl std::ops::Index<usize> for Map {
    type Output = Value;
    fn index(&self, i: usize) -> &Value {
        &self.live()[i]
    }
}

impl std::ops::IndexMut<usize> for Map {
    fn index_mut(&mut self, i: usize) -> &mut Value {
        let n = self.len();
        &mut self.values[..n][i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Key {
        Key::Str(s.into())
    }

    /// Maps from one template share a layout until one of them changes its
    /// keys; a changed value stays in its own map.
    #[test]
    fn a_shared_layout_is_copied_on_write() {
        let layout = Layout::of([k("x"), k("y")]);
        let mut a = Map::from_layout(&layout, &[Value::Int(1), Value::Int(2)]);
        let b = Map::from_layout(&layout, &[Value::Int(3), Value::Int(4)]);
        assert_eq!(a.layout_id(), b.layout_id());
        a.insert(k("x"), Value::Int(10));
        assert_eq!(a.layout_id(), b.layout_id(), "a value changed, not a key");
        a.insert(k("z"), Value::Int(5));
        assert_ne!(a.layout_id(), b.layout_id());
        assert_eq!(b.len(), 2);
        assert!(b.get(&k("z")).is_none());
        let keys: Vec<_> = a.keys().cloned().collect();
        assert_eq!(keys, vec![k("x"), k("y"), k("z")]);
        assert!(matches!(a.get(&k("x")), Some(Value::Int(10))));
        assert!(matches!(b.get(&k("x")), Some(Value::Int(3))));
    }

    /// Appending keeps a unique layout's id (indices stay valid); removing
    /// moves keys, so the id changes.
    #[test]
    fn ids_change_when_keys_move() {
        let mut m = Map::default();
        m.insert(k("a"), Value::Nil);
        let id = m.layout_id();
        m.insert(k("b"), Value::Nil);
        assert_eq!(m.layout_id(), id);
        m.shift_remove(&k("a"));
        assert_ne!(m.layout_id(), id);
        assert_eq!(m.get_index_of(&k("b")), Some(0));
        let id = m.layout_id();
        m.pop();
        assert_ne!(m.layout_id(), id);
        assert!(m.is_empty());
    }

    /// The room past the last key holds nothing a reader can see: after
    /// growth, removal, truncation and clearing, only the keys' values show.
    #[test]
    fn spare_room_stays_hidden() {
        let mut m = Map::with_capacity(2);
        for i in 0..5 {
            m.insert(Key::Int(i), Value::Int(i * 10));
        }
        assert!(m.capacity() >= 5);
        m.shift_remove(&Key::Int(1));
        m.truncate(3);
        let pairs: Vec<_> = m.iter().map(|(k, v)| (k.clone(), *v)).collect();
        assert_eq!(pairs.len(), 3);
        assert!(matches!(pairs[2], (Key::Int(3), Value::Int(30))));
        assert_eq!(m.values().count(), 3);
        assert_eq!(m.clone().into_iter().count(), 3);
        m.clear();
        assert!(m.is_empty() && m.iter().next().is_none());
        m.insert(Key::Int(7), Value::Int(70));
        assert_eq!(m.values().count(), 1);
        assert!(matches!(m.get(&Key::Int(7)), Some(Value::Int(70))));
    }
}
