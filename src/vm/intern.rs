//! The table of short strings: a string value of at most `SHORT` bytes made
//! by the program is one heap object per text, as in Lua. A program that
//! makes the same words over and over (splitting lines, `"w" + i`, map keys
//! read back) then holds one object per distinct word and allocates nothing
//! per repeat. Equality still compares text (`arith::equal`): lines read from
//! a stream stay out of the table (`Heap::read_str`), since they seldom
//! repeat and each would cost a lookup when made and another when freed.
//!
//! The table is weak: the collector frees an unreachable short string like
//! any other and `forget`s it here (`StrObj::is_interned`). A string found
//! here while a cycle is under way may be one the cycle was about to free;
//! `Heap::intern` marks it.

use super::object::Obj;
use super::str::Str;
use super::value::{Handle, MapHasher};
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use std::hash::{BuildHasher, Hasher};

pub use super::object::SHORT;

/// Handles of the short strings on the heap, by their text's hash (kept
/// beside each handle, so growing the table reads no string), and the text of
/// source's names and constants.
#[derive(Default)]
pub struct Interned {
    table: HashTable<(u64, Handle)>,
    /// One buffer per name or string constant in source, for the program's
    /// life (`Vm::intern`): field names compare with map keys by pointer
    /// first, so a short string made at run time shares its text when
    /// source has it.
    names: HashTable<Str>,
}

/// The text of a short string's object.
fn text_of(objs: &[Obj], h: Handle) -> &str {
    match &objs[h.0 as usize] {
        Obj::Str(s) => &s.s,
        _ => unreachable!("an interned handle is a string"),
    }
}

fn hash(s: &str) -> u64 {
    // Seeded like the maps' hash: strings come from the network too. The
    // bytes alone, without the end marker `Hash for str` adds (for keys made
    // of several strings): the table holds one string per key.
    let mut h = MapHasher.build_hasher();
    h.write(s.as_bytes());
    h.finish()
}

impl Interned {
    /// The string object of text `s` (`s.len() <= SHORT`), if there is one; else
    /// the hash to `insert` it with.
    #[inline]
    pub fn find(&self, objs: &[Obj], s: &str) -> Result<Handle, u64> {
        debug_assert!(s.len() <= SHORT);
        let hash = hash(s);
        match self.table.find(hash, |&(_, h)| text_of(objs, h) == s) {
            Some(&(_, h)) => Ok(h),
            None => Err(hash),
        }
    }

    /// The text for a new short string object: source's buffer when it has
    /// `s`. `hash` is `s`'s (from `find`).
    pub fn text(&self, hash: u64, s: &str) -> Str {
        match self.names.find(hash, |n| &**n == s) {
            Some(n) => n.clone(),
            None => Str::from(s),
        }
    }

    /// How many names are interned (for tests).
    #[cfg(test)]
    pub fn name_count(&self) -> usize {
        self.names.len()
    }

    /// The one buffer of name or constant `s`.
    pub fn name(&mut self, s: &str) -> Str {
        let hash = hash(s);
        match self.names.entry(hash, |n| &**n == s, |n| self::hash(n)) {
            Entry::Occupied(e) => e.get().clone(),
            Entry::Vacant(e) => e.insert(Str::from(s)).get().clone(),
        }
    }

    /// Records `h`, a new string object whose text has hash `hash` (from `find`).
    pub fn insert(&mut self, hash: u64, h: Handle) {
        self.table.insert_unique(hash, (hash, h), |&(hash, _)| hash);
    }

    /// Drops object `h` from the table if it is an interned string: it is
    /// being freed.
    #[inline]
    pub fn forget(&mut self, h: Handle, obj: &Obj) {
        if let Obj::Str(s) = obj {
            if s.is_interned() {
                if let Ok(e) = self.table.find_entry(hash(&s.s), |&(_, x)| x == h) {
                    e.remove();
                }
            }
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.table.len()
    }
}

/// Up to `SHORT` bytes of text built on the stack: a short string joined from
/// parts before it is looked up, so a repeat allocates nothing.
pub struct ShortText {
    len: usize,
    bytes: [u8; SHORT],
}

impl ShortText {
    /// `parts` joined, if they come to at most `SHORT` bytes.
    #[inline]
    pub fn join(parts: &[&str]) -> Option<ShortText> {
        let mut t = ShortText { len: 0, bytes: [0; SHORT] };
        for p in parts {
            let end = t.len + p.len();
            t.bytes.get_mut(t.len..end)?.copy_from_slice(p.as_bytes());
            t.len = end;
        }
        Some(t)
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: the bytes are whole UTF-8 strings copied one after another.
        unsafe { std::str::from_utf8_unchecked(&self.bytes[..self.len]) }
    }
}

#[cfg(test)]
mod tests {
    use crate::vm::gc::{self, Phase};
    use crate::vm::{Obj, Value, Vm};

    fn handle(v: Value) -> crate::vm::Handle {
        let Value::Obj(h) = v else { panic!("not an object: {v:?}") };
        h
    }

    #[test]
    fn a_short_text_is_one_object_however_it_is_made() {
        let mut vm = Vm::new();
        let a = handle(vm.heap.str("word"));
        assert_eq!(handle(vm.heap.concat(&["wo", "rd"])), a);
        assert_eq!(handle(vm.heap.string("word".to_string())), a);
        let wo = handle(vm.heap.str("wo"));
        assert_eq!(handle(vm.heap.append(wo, "rd", 2)), a);
        assert_eq!(handle(vm.heap.char_str('é')), handle(vm.heap.str("é")));
        let long = "x".repeat(super::SHORT + 1);
        assert_ne!(handle(vm.heap.str(&long)), handle(vm.heap.str(&long)));
    }

    #[test]
    fn the_collector_frees_unreachable_short_strings_and_forgets_them() {
        let mut vm = Vm::new();
        let before = vm.heap.strings.len();
        let kept = vm.heap.str("kept");
        vm.globals.push(kept);
        vm.heap.str("dropped");
        assert_eq!(vm.heap.strings.len(), before + 2);
        gc::collect(&mut vm, vec![]);
        assert_eq!(vm.heap.strings.len(), before + 1);
        assert_eq!(handle(vm.heap.str("kept")), handle(kept));
        let again = handle(vm.heap.str("dropped"));
        assert!(matches!(vm.heap.get(again), Obj::Str(s) if &*s.s == "dropped"));
    }

    /// A line read in is a string of its own, kept out of the table, and
    /// the collector frees it without looking there.
    #[test]
    fn a_read_string_is_not_interned() {
        let mut vm = Vm::new();
        let word = vm.heap.str("word");
        let before = vm.heap.strings.len();
        let read = vm.heap.read_str("word", true);
        assert_ne!(handle(read), handle(word));
        let text = |v| vm.heap.as_str(v).map(|s| s.s.to_string());
        assert_eq!(text(read), text(word));
        assert!(matches!(vm.heap.get(handle(read)), Obj::Str(s) if !s.is_interned() && s.chars() == 4));
        assert!(matches!(vm.heap.get(handle(word)), Obj::Str(s) if s.is_interned()));
        vm.heap.read_str("día", false);
        assert_eq!(vm.heap.strings.len(), before);
        vm.globals.push(word);
        gc::collect(&mut vm, vec![]);
        assert_eq!(vm.heap.strings.len(), before);
        assert_eq!(handle(vm.heap.str("word")), handle(word));
    }

    /// A string unreachable when a cycle began, found again while it runs,
    /// is reachable from then on: the cycle must not free it, whether it is
    /// found while marking or ahead of the sweep.
    #[test]
    fn a_string_found_during_a_cycle_survives_it() {
        let mut vm = Vm::new();
        let h = handle(vm.heap.str("again"));
        gc::start(&mut vm, vec![]);
        assert_eq!(handle(vm.heap.str("again")), h);
        gc::finish(&mut vm.heap);
        assert!(matches!(vm.heap.get(h), Obj::Str(s) if &*s.s == "again"));

        // Garbage before it keeps the sweep's first step short of it.
        let mut vm = Vm::new();
        for i in 0..100_000 {
            vm.heap.str(&format!("{i:>48}"));
        }
        let h = handle(vm.heap.str("again"));
        gc::start(&mut vm, vec![]);
        while vm.heap.gc.phase == Phase::Mark {
            gc::step(&mut vm.heap);
        }
        assert!(matches!(vm.heap.gc.phase, Phase::Sweep { at, .. } if at < h.0 as usize));
        assert_eq!(handle(vm.heap.str("again")), h);
        gc::finish(&mut vm.heap);
        assert!(matches!(vm.heap.get(h), Obj::Str(s) if &*s.s == "again"));
        assert_eq!(handle(vm.heap.str("again")), h);
    }
}
