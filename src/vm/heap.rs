//! The object heap: a table of typed slots addressed by `Handle`, with a free list
//! and a precise, incremental mark-sweep collector (see gc.rs) that reclaims cycles.

use super::intern::{Interned, ShortText, SHORT};
use super::object::{Obj, StrObj};
use super::slots::SlotVec;
use super::str::Str;
use super::value::{Handle, Value};
use super::ErrorKind;
use std::rc::Rc;

/// The least the heap grows by between collections. Small enough that a loop
/// making short-lived strings (a line a time: benches/os/grep.csp) frees them
/// while they are still in cache: 8 MB made that loop 25% slower and its
/// process 10 MB bigger. Programs with more than 1 MB live collect at twice
/// their live size whatever this is.
pub const GC_MIN: usize = 2 << 20;

/// How much may be allocated between collections, in percent of what the
/// last one found live: the heap peaks near (100 + this)% of the live size.
pub const GROWTH_PERCENT: usize = 100;

/// How much of that growth is allocated while a cycle runs (its steps are
/// sized to end it by then; gc.rs), in percent of the live size. A cycle
/// starts when allocation reaches GROWTH_PERCENT minus this. Smaller means
/// longer steps; bigger, more cycles, since what is made during a cycle
/// survives it.
pub const CYCLE_ALLOC_PERCENT: usize = 20;

/// Objects at least this big check the memory limit as they are made; smaller
/// ones at the next preemption point (at most 1024 back-edges or calls away,
/// so a loop passes the limit by at most about 64 MB before it is stopped).
pub(super) const BIG: usize = 64 << 10;

/// Slots of `Heap::others`, the one-character strings of characters past ASCII.
const OTHERS: usize = 256;

/// Each slot's character and its string.
type OtherChars = [(char, Option<Handle>); OTHERS];

pub struct Heap {
    /// Object slots; `Obj::Free` marks a slot on `free`.
    pub(crate) objs: SlotVec<Obj>,
    /// Mark bits, parallel to `objs`.
    pub(crate) marks: SlotVec<bool>,
    /// The collector's cycle under way, if any, and its pace (gc.rs).
    pub gc: super::gc::Cycle,
    pub(crate) free: SlotVec<u32>,
    /// Approximate bytes allocated since the last cycle began (what was made
    /// during it, which survives it, included).
    pub(crate) allocated: usize,
    /// Collect when `allocated` passes this.
    pub(crate) threshold: usize,
    /// Approximate live bytes after the last collection.
    pub(crate) live: usize,
    /// Bytes held outside the heap's objects (fibers' stacks and frames, `go`s
    /// not started yet) at the last collection; they count towards `limit`.
    pub(crate) outside: usize,
    /// `--max-memory`: the most bytes `live + outside + allocated` may reach.
    pub(crate) limit: usize,
    /// With isolates, this heap's part of the runtime's `--max-memory`.
    pub(super) share: Option<super::budget::Share>,
    /// Collections so far.
    pub(super) collections: u64,
    /// `reserve` asked for a collection before it decides (`Fault::Collect`)
    /// when `collections` was this: collect at the next chance.
    pub(super) asked: std::cell::Cell<Option<u64>>,
    /// The bytes `reserve` wanted then (other isolates collect only if the
    /// decision would fail otherwise: vm/budget.rs).
    pub(super) wanted: std::cell::Cell<usize>,
    /// The last collection asked the other isolates to collect: those on
    /// this thread (`--isolates 1`) could not answer while it waited.
    pub(super) asked_others: bool,
    /// A string, bytes or list made past its size limit, or a big object past
    /// the memory limit, by code that cannot fail where it allocates (a
    /// builtin's result, an I/O completion): the caller throws it (see
    /// `take_oversize`).
    oversize: Option<(ErrorKind, String)>,
    /// A big object was made past the next cycle's trigger: the running
    /// fiber's slice ends after the builtin that made it, so the cycle starts
    /// (between slices) before a loop of a few such calls has made gigabytes.
    pub end_slice: bool,
    /// The one-character ASCII strings made so far: indexing a string and
    /// iterating over one make them all the time (a JSON parser's
    /// `current == "{"`), and this finds them before `strings` does. Roots
    /// for the collector.
    ascii: Box<[Option<Handle>; 128]>,
    /// The same for other characters, the last one made per slot of a table
    /// indexed by the code point (made on first use): text that is not ASCII,
    /// indexed or iterated, would otherwise hash every character it gives.
    /// Roots too.
    others: Option<Box<OtherChars>>,
    /// The strings of at most `SHORT` bytes the program makes, one object per
    /// text (intern.rs); lines read in are not among them.
    pub(crate) strings: Interned,
}

impl Default for Heap {
    fn default() -> Self {
        Self::new()
    }
}

impl Heap {
    pub fn new() -> Heap {
        Heap {
            objs: SlotVec::new(),
            marks: SlotVec::new(),
            gc: Default::default(),
            free: SlotVec::new(),
            allocated: 0,
            threshold: GC_MIN,
            live: 0,
            outside: 0,
            limit: crate::limits::MAX_HEAP,
            share: None,
            collections: 0,
            asked: std::cell::Cell::new(None),
            wanted: std::cell::Cell::new(0),
            asked_others: false,
            oversize: None,
            end_slice: false,
            ascii: Box::new([None; 128]),
            others: None,
            strings: Interned::default(),
        }
    }

    pub fn alloc(&mut self, obj: Obj) -> Handle {
        self.alloc_counting(obj.size(), obj)
    }

    /// `alloc` of a string, the object made most (a line read, a field split
    /// off): an ASCII one's size counted here rather than by `Obj::size`,
    /// whose call and match were a tenth of making it.
    #[inline]
    fn alloc_str(&mut self, s: StrObj) -> Handle {
        match s.is_ascii() {
            true => self.alloc_counting(std::mem::size_of::<Obj>() + s.ascii_bytes(), Obj::Str(s)),
            false => self.alloc(Obj::Str(s)),
        }
    }

    /// `alloc`, counting `bytes` towards the next collection.
    fn alloc_counting(&mut self, bytes: usize, obj: Obj) -> Handle {
        self.allocated += bytes;
        if self.allocated > self.threshold && self.in_cycle() {
            self.step();
        }
        if bytes > BIG {
            self.check_size(bytes, &obj);
        }
        if let Some(i) = self.free.pop() {
            // A free slot holds nothing to drop (assigning would call the drop glue).
            let free = std::mem::replace(&mut self.objs[i as usize], obj);
            debug_assert!(matches!(free, Obj::Free));
            std::mem::forget(free);
            self.marks[i as usize] = i >= self.gc.black_from;
            Handle(i)
        } else {
            let i = self.objs.len() as u32;
            self.objs.push(obj);
            self.marks.push(i >= self.gc.black_from);
            Handle(i)
        }
    }

    #[cold]
    fn check_size(&mut self, bytes: usize, obj: &Obj) {
        use crate::limits::{MAX_LIST, MAX_STRING};
        if self.allocated > self.threshold && !self.in_cycle() {
            self.end_slice = true;
        }
        // Made without asking `reserve` first (a builtin's result): over the
        // limit only if it is even were all else made since the collection
        // garbage.
        if self.live + self.outside + bytes > self.limit {
            self.oversize.get_or_insert((ErrorKind::Memory, self.over_message(bytes)));
            return;
        }
        let msg = match obj {
            Obj::Str(s) if s.s.len() > MAX_STRING => {
                format!("string too long ({} bytes; at most {MAX_STRING})", s.s.len())
            }
            Obj::Bytes(b) if b.len() > MAX_STRING => {
                format!("bytes too long ({} bytes; at most {MAX_STRING})", b.len())
            }
            Obj::List(l) if l.len() > MAX_LIST => format!("list too long ({} items; at most {MAX_LIST})", l.len()),
            _ => return,
        };
        self.oversize.get_or_insert((ErrorKind::Limit, msg));
    }

    /// The error for an object made too big since the last call, if any.
    #[inline]
    pub fn take_oversize(&mut self) -> Option<(ErrorKind, String)> {
        self.oversize.take()
    }

    /// A step of the cycle under way, as allocation goes on: steps a few
    /// kilobytes apart stay short (gc.rs).
    #[cold]
    #[inline(never)]
    fn step(&mut self) {
        super::gc::step(self);
    }

    /// Frees an object at once; the caller knows nothing refers to it.
    pub fn free(&mut self, h: Handle) {
        // What it refers to may be reachable elsewhere now: grey it first.
        self.barrier(h);
        self.strings.forget(h, &self.objs[h.0 as usize]);
        self.objs[h.0 as usize] = Obj::Free;
        self.free.push(h.0);
    }

    /// Records growth of an existing object (a pushed list, a longer map).
    #[inline]
    pub fn note_growth(&mut self, bytes: usize) {
        self.allocated += bytes;
    }

    /// Records memory given back at once, not by a collection (a fiber's
    /// end, a task freed with it), so a million fibers run and ended (a
    /// cancelled tree draining) do not bring collections of what stays. Not
    /// while a cycle runs, whose pacing counts on `allocated` only growing.
    #[inline]
    pub fn note_freed(&mut self, bytes: usize) {
        if !self.in_cycle() {
            self.allocated = self.allocated.saturating_sub(bytes);
        }
    }

    /// Is collector work due: a cycle to start, its next step, or (`wants_full`)
    /// a whole collection?
    #[inline]
    pub fn should_collect(&self) -> bool {
        self.allocated > self.threshold || self.wants_full() || self.gc.done
    }

    /// Asks for a whole collection at the next chance (as `reserve` does).
    pub fn ask_full(&self) {
        self.asked.set(Some(self.collections));
    }

    /// Has `reserve` asked for a whole collection before it decides?
    pub fn wants_full(&self) -> bool {
        self.asked.get() == Some(self.collections)
    }

    /// Is a collection cycle under way?
    pub fn in_cycle(&self) -> bool {
        self.gc.phase != super::gc::Phase::Idle
    }

    // Unchecked: every `Handle` is an index `alloc` handed out (or one read
    // back from such an index), and the object table never shrinks. The
    // bounds check was 3 of the dispatch loop's instructions per object touched.
    #[inline]
    pub fn get(&self, h: Handle) -> &Obj {
        debug_assert!((h.0 as usize) < self.objs.len());
        // SAFETY: see above.
        unsafe { self.objs.get_unchecked(h.0 as usize) }
    }

    /// The object, to change: while the collector marks, an object not marked
    /// yet is marked first and what it refers to greyed (gc.rs's barrier).
    #[inline]
    pub fn get_mut(&mut self, h: Handle) -> &mut Obj {
        self.barrier(h);
        debug_assert!((h.0 as usize) < self.objs.len());
        // SAFETY: as for `get`.
        unsafe { self.objs.get_unchecked_mut(h.0 as usize) }
    }

    /// The object, to add items to or to overwrite single items of, with no
    /// barrier on the whole object: the caller hands each reference it
    /// removes to `overwritten`. A change to a long list or map then costs
    /// the same whatever its length (gc.rs: the deletion barrier needs only
    /// the references removed; appending removes none).
    #[inline]
    pub fn get_mut_items(&mut self, h: Handle) -> &mut Obj {
        debug_assert!((h.0 as usize) < self.objs.len());
        // SAFETY: as for `get`.
        unsafe { self.objs.get_unchecked_mut(h.0 as usize) }
    }

    /// Is the collector marking (when changes need its barrier)?
    #[inline(always)]
    pub fn marking(&self) -> bool {
        self.gc.phase == super::gc::Phase::Mark
    }

    /// A reference just removed from an object changed through
    /// `get_mut_items` (an item overwritten or popped): while the collector
    /// marks, what it refers to is greyed, as the barrier would have.
    #[inline]
    pub fn overwritten(&mut self, old: Value) {
        if self.gc.phase == super::gc::Phase::Mark {
            if let Value::Obj(c) = old {
                if !self.marks[c.0 as usize] {
                    self.gc.gray.push(c);
                }
            }
        }
    }

    /// The collector's barrier: while it marks, an object about to change (or
    /// be freed) that is not marked yet is marked, and what it refers to
    /// greyed; a long one whose items are being greyed a piece at a time has
    /// the rest greyed (the change may move items across the marker's cursor).
    #[inline]
    fn barrier(&mut self, h: Handle) {
        if self.gc.phase == super::gc::Phase::Mark && (!self.marks[h.0 as usize] || self.gc.scanning_is(h)) {
            super::gc::darken(self, h);
        }
    }

    /// The string of one character (interned; the ASCII ones found first in
    /// `ascii`).
    #[inline]
    pub fn char_str(&mut self, c: char) -> Value {
        if !c.is_ascii() {
            return self.other_char_str(c);
        }
        match self.ascii[c as usize] {
            Some(h) => Value::Obj(h),
            None => self.first_ascii_char_str(c),
        }
    }

    #[cold]
    fn first_ascii_char_str(&mut self, c: char) -> Value {
        let v = self.intern(c.encode_utf8(&mut [0; 4]));
        if let Value::Obj(h) = v {
            self.ascii[c as usize] = Some(h);
        }
        v
    }

    /// `char_str` past ASCII: the last one made in its slot of `others`, or interned.
    #[inline(never)]
    fn other_char_str(&mut self, c: char) -> Value {
        let slot = c as usize % OTHERS;
        if let Some((seen, Some(h))) = self.others.as_ref().map(|o| o[slot]) {
            if seen == c {
                return Value::Obj(h);
            }
        }
        let v = self.intern(c.encode_utf8(&mut [0; 4]));
        if let Value::Obj(h) = v {
            self.others.get_or_insert_with(|| Box::new([('\0', None); OTHERS]))[slot] = (c, Some(h));
        }
        v
    }

    /// The shared one-character strings (collector roots).
    pub fn ascii_roots(&self) -> impl Iterator<Item = Handle> + '_ {
        let others = self.others.iter().flat_map(|o| o.iter().filter_map(|&(_, h)| h));
        self.ascii.iter().flatten().copied().chain(others)
    }

    /// The string object of short text `s`: the one there is, or a new one.
    /// One found while a cycle is under way is marked if the cycle has yet
    /// to reach it: it may have been unreachable, and is reachable again.
    pub fn intern(&mut self, s: &str) -> Value {
        match self.strings.find(&self.objs, s) {
            Ok(h) => {
                if h.0 >= self.gc.black_from {
                    self.marks[h.0 as usize] = true;
                }
                Value::Obj(h)
            }
            Err(hash) => {
                let text = self.strings.text(hash, s);
                let h = self.alloc_str(StrObj::new(text).interned());
                self.strings.insert(hash, h);
                Value::Obj(h)
            }
        }
    }

    pub fn str(&mut self, s: &str) -> Value {
        if s.len() <= SHORT {
            return self.intern(s);
        }
        Value::Obj(self.alloc_str(StrObj::new(Str::from(s))))
    }

    /// `str` of text known to be ASCII (its length is its count of chars).
    pub fn ascii_str(&mut self, s: &str) -> Value {
        debug_assert!(s.is_ascii());
        if s.len() <= SHORT {
            return self.intern(s);
        }
        Value::Obj(self.alloc_str(StrObj::ascii(Str::from(s))))
    }

    /// A string of text read in (a line), never interned whatever its
    /// length: lines seldom repeat, and looking each one up, then dropping it
    /// from the table when it is freed, cost a tenth of grep's time.
    pub fn read_str(&mut self, s: &str, ascii: bool) -> Value {
        let s = Str::from(s);
        Value::Obj(self.alloc_str(if ascii { StrObj::ascii(s) } else { StrObj::new(s) }))
    }

    /// `read_str`, made over the string `spare` when there is one (see
    /// `StrObj::refill`): the next item of a loop that lets none out.
    #[inline]
    pub fn reread_str(&mut self, spare: Option<Handle>, s: &str, ascii: bool) -> Value {
        if let Some(h) = spare {
            if let Obj::Str(x) = self.get_mut(h) {
                if !x.is_interned() {
                    let made = x.refill(s, ascii);
                    self.allocated += made;
                    return Value::Obj(h);
                }
            }
        }
        self.read_str(s, ascii)
    }

    pub fn string(&mut self, s: String) -> Value {
        self.str(&s)
    }

    /// A string made of `parts` joined, built in place in its final allocation
    /// (or on the stack, when short).
    pub fn concat(&mut self, parts: &[&str]) -> Value {
        if let Some(t) = ShortText::join(parts) {
            return self.intern(t.as_str());
        }
        Value::Obj(self.alloc_str(StrObj::new(Str::concat(parts))))
    }

    /// The string `a + tail`, `a` a string: when long, made by `StrObj::plus`
    /// (in place when it can be), counting only the bytes it adds, since an
    /// append in place shares its text with `a`.
    pub fn append(&mut self, a: Handle, tail: &str, tail_chars: usize) -> Value {
        let Obj::Str(x) = self.get(a) else { unreachable!("appending to a string") };
        if let Some(t) = ShortText::join(&[&x.s, tail]) {
            return self.intern(t.as_str());
        }
        let s = x.plus(tail, tail_chars);
        Value::Obj(self.alloc_counting(std::mem::size_of::<Obj>() + tail.len(), Obj::Str(s)))
    }

    /// A string value of shared text.
    pub fn shared_str(&mut self, s: Str) -> Value {
        if s.len() <= SHORT {
            return self.intern(&s);
        }
        Value::Obj(self.alloc_str(StrObj::new(s)))
    }

    pub fn list(&mut self, items: Vec<Value>) -> Value {
        Value::Obj(self.alloc(Obj::List(items.into())))
    }

    /// A list of a copy of `items`: one or two are kept in the slot.
    #[inline]
    pub fn list_of(&mut self, items: &[Value]) -> Value {
        Value::Obj(self.alloc(Obj::List(super::List::from_slice(items))))
    }

    /// The string inside `v`, if it is one.
    #[inline]
    pub fn as_str(&self, v: Value) -> Option<&StrObj> {
        match v {
            Value::Obj(h) => match self.get(h) {
                Obj::Str(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn as_list(&self, v: Value) -> Option<&super::List> {
        match v {
            Value::Obj(h) => match self.get(h) {
                Obj::List(l) => Some(l),
                _ => None,
            },
            _ => None,
        }
    }

    /// A `bytes` value holding `data` (a `Vec<u8>`, a `&[u8]` or an `Rc<[u8]>`).
    /// The caller keeps to `limits::MAX_STRING` (see `natives::bytes::check_len`).
    pub fn bytes(&mut self, data: impl Into<Rc<[u8]>>) -> Value {
        Value::Obj(self.alloc(Obj::Bytes(data.into())))
    }

    /// The data inside `v`, if it is a bytes value.
    #[inline]
    pub fn as_bytes(&self, v: Value) -> Option<&[u8]> {
        match v {
            Value::Obj(h) => match self.get(h) {
                Obj::Bytes(b) => Some(b),
                _ => None,
            },
            _ => None,
        }
    }

    /// The bytes a string (its UTF-8) or a bytes value holds: what writing either
    /// to a file or a process sends.
    pub fn as_data(&self, v: Value) -> Option<&[u8]> {
        match v {
            Value::Obj(h) => match self.get(h) {
                Obj::Bytes(b) => Some(b),
                Obj::Str(s) => Some(s.s.as_bytes()),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn type_name(&self, v: Value) -> &'static str {
        match v {
            Value::Nil => "nil",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Obj(h) => self.get(h).type_name(),
        }
    }

    /// Number of live objects (for tests and `--stats`).
    pub fn count(&self) -> usize {
        self.objs.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next cycle starts once allocation reaches the live size less what
    /// the cycle will allocate (the heap peaks near twice the live size, as
    /// Lua's default pause and Go's GOGC=100 do), never sooner than GC_MIN,
    /// and before the memory limit.
    #[test]
    fn collections_are_paced_by_the_live_size() {
        let mut h = Heap::new();
        h.live = 64 << 20;
        h.after_collection(0);
        assert_eq!(h.threshold, (64 << 20) * (GROWTH_PERCENT - CYCLE_ALLOC_PERCENT) / 100);
        h.live = 1000;
        h.after_collection(0);
        assert_eq!(h.threshold, GC_MIN);
        h.set_limit(100 << 20);
        h.live = 80 << 20;
        h.after_collection(0);
        assert_eq!(h.threshold, 20 << 20, "the room left under the limit");
    }

    /// A loop's next line is made over its last one: the same object, the
    /// new text and char count, whatever its length.
    #[test]
    fn a_line_is_made_over_the_spare_one() {
        let mut h = Heap::new();
        let Value::Obj(a) = h.read_str("first", true) else { panic!("a string") };
        let long = "é".repeat(100);
        for text in ["second", "", long.as_str(), "third"] {
            let v = h.reread_str(Some(a), text, text.is_ascii());
            assert!(matches!(v, Value::Obj(b) if b == a));
            let Obj::Str(s) = h.get(a) else { panic!("a string") };
            assert_eq!((&*s.s, s.chars()), (text, text.chars().count()));
        }
        assert!(matches!(h.reread_str(None, "fresh", true), Value::Obj(b) if b != a));
    }
}
