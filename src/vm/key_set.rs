//! A map's keys in insertion order, with a hash index that grows a piece at
//! a time (docs/gc.md, "Pauses").
//!
//! The keys and their hashes sit in two arrays by insertion index; the index
//! is an open-addressing table (linear probing) of 8-byte slots, each the
//! key's index and 32 bits of its hash, so a probe compares hashes without
//! touching the keys, and a key is found or added with one probe sequence.
//! Up to `SCAN` keys there is no table: the hashes are scanned.
//!
//! Growing a big table rebuilds it while the program goes on: the new table
//! (twice the slots, mapped zeroed) takes new keys at once and the old
//! table's slots move `MOVE` at a time per insertion, in slot order, while
//! lookups that miss in the new table look in the old one. A rebuild of
//! millions of keys in one step stalled the program for hundreds of
//! milliseconds (benches/gc/, `map`). Slot order, not key order: a slot's
//! key goes to the same place in the new table or one old length further,
//! so the new table is written in two runs, each page touched once while it
//! fills; in key order each write was to a random page, a page fault each.

use super::value::{Key, MapHasher};
use std::hash::BuildHasher;

/// Keys a set may have without a table (found by scanning their hashes).
const SCAN: usize = 8;

/// Tables of at least this many slots grow a piece at a time.
const GRADUAL: usize = 1 << 15;

/// Old slots moved to the new table per insertion: the move ends long
/// before the new table fills (at a third of the insertions that would).
const MOVE: usize = 16;

/// A slot: 0 when empty, else the key's hash in the high half and its index
/// plus one in the low half.
type Slot = u64;

/// A key removed from the old table while it moves: skipped by the move,
/// passed over by probes (its index is past any key's). Moving the slots
/// after it back instead could carry an unmoved one behind the move's cursor.
const GONE: Slot = u64::MAX;

#[derive(Default)]
pub struct KeySet {
    keys: Vec<Key>,
    hashes: Vec<u32>,
    /// Empty while `keys.len() <= SCAN`; else a power of two of slots, at
    /// most two thirds full.
    table: Box<[Slot]>,
    /// The table being replaced, while its keys move.
    old: Option<Box<Moving>>,
}

/// The table being replaced: its slots below `at` are in the new table too;
/// keys added since it began are only in the new one.
struct Moving {
    table: Box<[Slot]>,
    at: usize,
}

thread_local! {
    /// How many tables this thread's maps are moving (`Moving`s alive).
    static MOVES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Is a big map's index being rebuilt on this thread? While it is, most
/// insertions write a page of the fresh table that no one has touched, and
/// its fault (several microseconds in a VM) makes each of them far slower
/// than the preemption countdown assumes: the scheduler counts shorter
/// slices (src/sched/driver.rs).
pub fn moving() -> bool {
    MOVES.with(|m| m.get() > 0)
}

impl Moving {
    fn new(table: Box<[Slot]>) -> Box<Moving> {
        MOVES.with(|m| m.set(m.get() + 1));
        Box::new(Moving { table, at: 0 })
    }
}

impl Drop for Moving {
    fn drop(&mut self) {
        // Ignored while the thread ends (the count goes with it).
        let _ = MOVES.try_with(|m| m.set(m.get() - 1));
    }
}

#[inline]
fn hash_of(k: &Key) -> u32 {
    (MapHasher.hash_one(k) >> 32) as u32
}

#[inline]
fn slot(hash: u32, i: usize) -> Slot {
    ((hash as u64) << 32) | (i as u64 + 1)
}

#[inline]
fn slot_hash(s: Slot) -> u32 {
    (s >> 32) as u32
}

#[inline]
fn slot_index(s: Slot) -> usize {
    (s as u32 as usize) - 1
}

/// A zeroed table: a huge one is mapped pages, zero until written (src/alloc/).
fn zeroed(slots: usize) -> Box<[Slot]> {
    vec![0; slots].into_boxed_slice()
}

/// Where in `table` key `k` (hash `h`) is, or the empty slot that ends its
/// probe sequence: `Ok(pos)` or `Err(pos)`. Inlined: the call's register
/// saves cost a fifth of a lookup.
#[inline(always)]
fn probe(table: &[Slot], keys: &[Key], k: &Key, h: u32) -> Result<usize, usize> {
    let mask = table.len() - 1;
    let mut pos = h as usize & mask;
    loop {
        let s = table[pos];
        if s == 0 {
            return Err(pos);
        }
        if slot_hash(s) == h && keys.get(slot_index(s)) == Some(k) {
            return Ok(pos);
        }
        pos = (pos + 1) & mask;
    }
}

/// Puts index `i` (hash `h`, known absent) into `table`.
#[inline]
fn place(table: &mut [Slot], h: u32, i: usize) {
    let mask = table.len() - 1;
    let mut pos = h as usize & mask;
    while table[pos] != 0 {
        pos = (pos + 1) & mask;
    }
    table[pos] = slot(h, i);
}

/// The position of index `i` (hash `h`) in `table`, if there.
fn find_index(table: &[Slot], h: u32, i: usize) -> Option<usize> {
    let mask = table.len() - 1;
    let mut pos = h as usize & mask;
    loop {
        match table[pos] {
            0 => return None,
            s if slot_index(s) == i => return Some(pos),
            _ => pos = (pos + 1) & mask,
        }
    }
}

/// Empties slot `pos`, moving the slots after it back so that no probe
/// sequence is cut (deletion without tombstones).
fn remove_at(table: &mut [Slot], mut pos: usize) {
    let mask = table.len() - 1;
    let mut next = pos;
    loop {
        next = (next + 1) & mask;
        let s = table[next];
        if s == 0 {
            break;
        }
        let home = slot_hash(s) as usize & mask;
        // `s` may fill the hole if the hole lies between its home and it.
        if next.wrapping_sub(home) & mask >= next.wrapping_sub(pos) & mask {
            table[pos] = s;
            pos = next;
        }
    }
    table[pos] = 0;
}

/// Slots for `n` keys: a power of two at most two thirds full.
fn slots_for(n: usize) -> usize {
    (n * 3 / 2 + 1).next_power_of_two().max(16)
}

impl KeySet {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Bytes this set holds.
    pub fn bytes(&self) -> usize {
        let old = self.old.as_ref().map_or(0, |m| m.table.len() * 8);
        self.keys.capacity() * std::mem::size_of::<Key>() + self.hashes.capacity() * 4 + self.table.len() * 8 + old
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Key> {
        self.keys.iter()
    }

    #[inline]
    pub fn get_index(&self, i: usize) -> Option<&Key> {
        self.keys.get(i)
    }

    /// Out of line: inlined into the dispatch loop, it took a register
    /// the loop keeps its jump table in (one instruction more per op).
    #[inline(never)]
    pub fn get_index_of(&self, k: &Key) -> Option<usize> {
        self.find(k, hash_of(k))
    }

    #[inline(always)]
    fn find(&self, k: &Key, h: u32) -> Option<usize> {
        if self.table.is_empty() {
            return self.hashes.iter().zip(&self.keys).position(|(&x, key)| x == h && key == k);
        }
        match probe(&self.table, &self.keys, k, h) {
            Ok(pos) => Some(slot_index(self.table[pos])),
            Err(_) => {
                let old = self.old.as_ref()?;
                probe(&old.table, &self.keys, k, h).ok().map(|pos| slot_index(old.table[pos]))
            }
        }
    }

    /// Adds `k` last unless present: its index, and whether it was added.
    pub fn insert_full(&mut self, k: Key) -> (usize, bool) {
        let h = hash_of(&k);
        let n = self.keys.len();
        // The common case: one probe finds the key or the empty slot it goes to.
        let mut empty = None;
        if self.old.is_none() && !self.table.is_empty() {
            match probe(&self.table, &self.keys, &k, h) {
                Ok(pos) => return (slot_index(self.table[pos]), false),
                Err(pos) => empty = Some(pos).filter(|_| (n + 1) * 3 <= self.table.len() * 2),
            }
        } else if let Some(i) = self.find(&k, h) {
            return (i, false);
        }
        self.keys.push(k);
        self.hashes.push(h);
        match empty {
            Some(pos) => self.table[pos] = slot(h, n),
            None => self.indexed(h, n),
        }
        (n, true)
    }

    /// Key `i` (hash `h`), just pushed, goes into the index: growing it
    /// when full, and moving some old keys if a move is under way.
    fn indexed(&mut self, h: u32, i: usize) {
        let n = self.keys.len();
        if self.table.is_empty() {
            if n > SCAN {
                self.rebuild(slots_for(n));
            }
            return;
        }
        if n * 3 > self.table.len() * 2 {
            self.finish_move();
            let slots = self.table.len() * 2;
            if slots < GRADUAL {
                self.rebuild(slots);
                return;
            }
            let table = std::mem::replace(&mut self.table, zeroed(slots));
            self.old = Some(Moving::new(table));
        }
        place(&mut self.table, h, i);
        self.move_some(MOVE);
    }

    /// Moves up to `count` slots of the old table into the new one.
    fn move_some(&mut self, count: usize) {
        let Some(m) = self.old.as_mut() else { return };
        let end = m.table.len().min(m.at.saturating_add(count));
        for &s in &m.table[m.at..end] {
            if s != 0 && s != GONE {
                place(&mut self.table, slot_hash(s), slot_index(s));
            }
        }
        m.at = end;
        if end == m.table.len() {
            self.old = None;
        }
    }

    fn finish_move(&mut self) {
        self.move_some(usize::MAX);
    }

    /// A new index of `slots` slots (none for a few keys) from the keys.
    fn rebuild(&mut self, slots: usize) {
        self.old = None;
        if self.keys.len() <= SCAN {
            self.table = Box::default();
            return;
        }
        let mut table = zeroed(slots);
        for (i, &h) in self.hashes.iter().enumerate() {
            place(&mut table, h, i);
        }
        self.table = table;
    }

    /// Removes key `i`; the keys after it move down one place.
    pub fn shift_remove_index(&mut self, i: usize) -> Option<Key> {
        if i >= self.keys.len() {
            return None;
        }
        self.finish_move();
        let n = self.keys.len();
        let k = self.keys.remove(i);
        let h = self.hashes.remove(i);
        if self.table.is_empty() || n - 1 <= SCAN {
            self.rebuild(slots_for(n - 1));
            return Some(k);
        }
        let pos = find_index(&self.table, h, i).expect("an indexed key");
        remove_at(&mut self.table, pos);
        if (n - i) * 8 < self.table.len() {
            // Few keys after it: find each.
            for j in i + 1..n {
                let pos = find_index(&self.table, self.hashes[j - 1], j).expect("an indexed key");
                self.table[pos] -= 1;
            }
        } else {
            for s in self.table.iter_mut().filter(|s| **s != 0 && slot_index(**s) > i) {
                *s -= 1;
            }
        }
        Some(k)
    }

    /// Removes the last key.
    pub fn pop(&mut self) -> Option<Key> {
        let k = self.keys.pop()?;
        let h = self.hashes.pop().expect("a hash per key");
        let i = self.keys.len();
        if self.table.is_empty() {
            return Some(k);
        }
        if i <= SCAN {
            self.rebuild(0);
            return Some(k);
        }
        // While a move is under way the key is in either table or both.
        if let Some(pos) = find_index(&self.table, h, i) {
            remove_at(&mut self.table, pos);
        }
        if let Some(m) = self.old.as_mut() {
            if let Some(pos) = find_index(&m.table, h, i) {
                m.table[pos] = GONE;
            }
        }
        Some(k)
    }

    /// Keeps the first `n` keys.
    pub fn truncate(&mut self, n: usize) {
        if n < self.keys.len() {
            self.keys.truncate(n);
            self.hashes.truncate(n);
            self.rebuild(slots_for(n));
        }
    }
}

impl Clone for KeySet {
    fn clone(&self) -> KeySet {
        let mut c = KeySet { keys: self.keys.clone(), hashes: self.hashes.clone(), table: Box::default(), old: None };
        if self.old.is_none() {
            c.table = self.table.clone();
        } else {
            c.rebuild(slots_for(c.keys.len()));
        }
        c
    }
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(&self.keys).finish()
    }
}

impl FromIterator<Key> for KeySet {
    fn from_iter<I: IntoIterator<Item = Key>>(iter: I) -> KeySet {
        let mut s = KeySet::default();
        for k in iter {
            s.insert_full(k);
        }
        s
    }
}

impl IntoIterator for KeySet {
    type Item = Key;
    type IntoIter = std::vec::IntoIter<Key>;
    fn into_iter(self) -> Self::IntoIter {
        self.keys.into_iter()
    }
}

#[cfg(test)]
#[path = "key_set_tests.rs"]
mod tests;
