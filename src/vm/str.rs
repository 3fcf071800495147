//! `Str`: the text of a csp string and of a string map key.
//!
//! A reference-counted buffer (one allocation: a header, then UTF-8 bytes) and a
//! length. Several `Str`s may share a buffer, each viewing the prefix of its own
//! length. That is what makes `s += x` linear over a loop: when `s` ends where the
//! buffer's written text ends and there is room, `x` is written after it in place
//! and the result shares the buffer. Strings made before never change — they end
//! before the new bytes — so strings stay immutable values. When the buffer is
//! full, the result gets a new one of twice the size, as a Go slice does.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;

#[repr(C)]
struct Header {
    refs: Cell<u32>,
    /// 0, or 1 + the slot of this buffer's character index (char_index.rs):
    /// made on first use by `char_offset` for long text that is not ASCII.
    index: Cell<u32>,
    /// Bytes written; every `Str` on this buffer has `len <= filled`.
    filled: Cell<usize>,
    /// The room for text in bytes, and in the top bit `GROWS`: made by `+`, so
    /// the next append that cannot happen in place over-allocates.
    cap_grows: usize,
}

const GROWS: usize = 1 << (usize::BITS - 1);

impl Header {
    fn cap(&self) -> usize {
        self.cap_grows & !GROWS
    }

    fn grows(&self) -> bool {
        self.cap_grows & GROWS != 0
    }
}

pub struct Str {
    buf: NonNull<Header>,
    len: usize,
    /// Not `Send` or `Sync`: the counts are plain cells.
    _local: PhantomData<std::rc::Rc<()>>,
}

/// The smallest buffer an over-allocating append makes.
const MIN_GROWN: usize = 32;

fn layout(cap: usize) -> Layout {
    Layout::from_size_align(std::mem::size_of::<Header>() + cap, std::mem::align_of::<Header>())
        .expect("string buffer layout")
}

impl Str {
    /// A buffer of `cap` bytes holding `parts` one after the other.
    fn build(parts: &[&str], cap: usize, grows: bool) -> Str {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        debug_assert!(len <= cap);
        let lay = layout(cap);
        // SAFETY: the layout has a non-zero size (the header).
        let raw = unsafe { alloc(lay) } as *mut Header;
        let Some(buf) = NonNull::new(raw) else { handle_alloc_error(lay) };
        // SAFETY: `raw` is a fresh allocation of the header and `cap` bytes; the
        // parts are `len <= cap` bytes in total and cannot overlap it.
        unsafe {
            let cap_grows = if grows { cap | GROWS } else { cap };
            raw.write(Header { refs: Cell::new(1), index: Cell::new(0), filled: Cell::new(len), cap_grows });
            let mut at = Self::data(buf);
            for p in parts {
                std::ptr::copy_nonoverlapping(p.as_ptr(), at, p.len());
                at = at.add(p.len());
            }
        }
        Str { buf, len, _local: PhantomData }
    }

    /// `parts` joined, in a buffer of exactly their length.
    pub fn concat(parts: &[&str]) -> Str {
        Self::build(parts, parts.iter().map(|p| p.len()).sum(), false)
    }

    fn data(buf: NonNull<Header>) -> *mut u8 {
        // SAFETY: the bytes follow the header in the same allocation.
        unsafe { (buf.as_ptr() as *mut u8).add(std::mem::size_of::<Header>()) }
    }

    fn header(&self) -> &Header {
        // SAFETY: the buffer lives while any `Str` refers to it.
        unsafe { self.buf.as_ref() }
    }

    /// `self` followed by `tail`: written in place after `self` when `self` ends
    /// where its buffer's text ends and the bytes fit. Otherwise in a new buffer:
    /// twice the length when `self` came from `+` and was the last appended to
    /// (a loop of appends), else exactly the length (`"key" + i`, or one more
    /// string made from a prefix).
    pub fn plus(&self, tail: &str) -> Str {
        let h = self.header();
        let len = self.len + tail.len();
        if h.filled.get() == self.len && h.cap() >= len {
            // SAFETY: bytes `filled..len` are inside the buffer and no `Str`
            // views them (all end at or before `filled`); `tail` is UTF-8 text
            // that ends at or before `filled` if it is in this buffer.
            unsafe { std::ptr::copy_nonoverlapping(tail.as_ptr(), Self::data(self.buf).add(self.len), tail.len()) };
            h.filled.set(len);
            return Str { buf: self.share(), len, _local: PhantomData };
        }
        if h.grows() && h.filled.get() == self.len {
            Self::build(&[self, tail], len.saturating_mul(2).max(MIN_GROWN), true)
        } else {
            Self::build(&[self, tail], len, true)
        }
    }

    fn share(&self) -> NonNull<Header> {
        let refs = &self.header().refs;
        match refs.get().checked_add(1) {
            Some(n) => refs.set(n),
            None => std::process::abort(),
        }
        self.buf
    }

    /// Both view the same bytes (a fast path for equality).
    #[inline]
    pub fn ptr_eq(a: &Str, b: &Str) -> bool {
        a.buf == b.buf && a.len == b.len
    }

    /// Writes `text` over this string's bytes, when this is its buffer's only
    /// string, the buffer has the room and no character index. Strings never
    /// change, so only for one no other value can reach (`Proto::reuses`).
    #[inline]
    pub fn overwrite(&mut self, text: &str) -> bool {
        let h = self.header();
        if h.refs.get() != 1 || h.index.get() != 0 || h.cap() < text.len() {
            return false;
        }
        // SAFETY: the buffer has room for `text`, and no other `Str` views it.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), Self::data(self.buf), text.len()) };
        h.filled.set(text.len());
        self.len = text.len();
        true
    }

    /// `text` in a buffer of `room` bytes or more.
    pub fn with_room(text: &str, room: usize) -> Str {
        Self::build(&[text], room.max(text.len()), false)
    }

    /// Bytes of the buffer, shared with other strings or not.
    pub fn capacity(&self) -> usize {
        self.header().cap()
    }

    /// The byte offset of character `i` (`i <= ` its number of characters):
    /// scanned for short text, else through the buffer's character index,
    /// made on first use, so that `s[i]` and `s.slice` take amortised constant
    /// time on text that is not ASCII. With the bytes the index grew by, for
    /// the heap's count.
    pub fn char_offset(&self, i: usize) -> (usize, usize) {
        if self.len < super::char_index::MIN_INDEXED {
            return (super::char_index::walk(self.as_bytes(), 0, i), 0);
        }
        let h = self.header();
        super::char_index::offset(&h.index, self.as_bytes(), i)
    }

    /// Bytes held by the buffer's character index (0 without one).
    pub fn index_bytes(&self) -> usize {
        super::char_index::bytes(&self.header().index)
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: bytes `0..len` were written as UTF-8 before this `Str` was made
        // and are never written again while the buffer lives.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(Self::data(self.buf), self.len)) }
    }
}

impl Str {
    /// Frees the buffer (and its character index) after its last `Str`:
    /// out of line, so that dropping a `Str` inlines as a decrement.
    #[inline(never)]
    fn free_buffer(&mut self) {
        let h = self.header();
        if h.index.get() != 0 {
            super::char_index::release(&h.index);
        }
        let lay = layout(h.cap());
        // SAFETY: this was the last reference; the allocation was made with `lay`.
        unsafe { dealloc(self.buf.as_ptr() as *mut u8, lay) }
    }
}

impl Drop for Str {
    #[inline]
    fn drop(&mut self) {
        let h = self.header();
        let n = h.refs.get() - 1;
        if n > 0 {
            h.refs.set(n);
            return;
        }
        self.free_buffer();
    }
}

impl Clone for Str {
    #[inline]
    fn clone(&self) -> Str {
        Str { buf: self.share(), len: self.len, _local: PhantomData }
    }
}

impl std::ops::Deref for Str {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self
    }
}

impl std::borrow::Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str::concat(&[s])
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str::concat(&[&s])
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str::concat(&[s])
    }
}

impl PartialEq for Str {
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        Str::ptr_eq(self, other) || self.as_str() == other.as_str()
    }
}

impl Eq for Str {}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for Str {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}

impl std::fmt::Debug for Str {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Str {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Str;

    #[test]
    fn appends_share_the_buffer_and_never_change_earlier_strings() {
        let a = Str::from("ab");
        let b = a.plus("cd"); // a new exact buffer, marked as grown by `+`
        let c = b.plus("ef"); // over-allocated
        let d = c.plus("gh"); // in place
        assert_eq!((&*a, &*b, &*c, &*d), ("ab", "abcd", "abcdef", "abcdefgh"));
        assert_eq!(c.capacity(), d.capacity());
        assert_eq!(d.buf, c.buf);
        // `c` no longer ends where the text ends: appending to it copies, into
        // a buffer of the exact length.
        let e = c.plus("XY");
        assert_ne!(e.buf, c.buf);
        assert_eq!(e.capacity(), 8);
        assert_eq!((&*c, &*d, &*e), ("abcdef", "abcdefgh", "abcdefXY"));
    }

    #[test]
    fn a_string_appended_to_itself() {
        let mut s = Str::from("x").plus("y");
        for _ in 0..5 {
            s = s.plus(&s.clone());
        }
        assert_eq!(s.len(), 64);
        assert!(s.bytes().all(|b| b == b'x' || b == b'y'));
    }

    #[test]
    fn a_loop_of_appends_copies_linearly() {
        let mut s = Str::from("");
        let mut buffers = 0;
        for _ in 0..100_000 {
            let next = s.plus("abc");
            buffers += usize::from(next.buf != s.buf);
            s = next;
        }
        assert_eq!(s.len(), 300_000);
        assert!(buffers < 30, "{buffers} buffers");
    }

    #[test]
    fn overwrite_writes_in_place_only_over_a_sole_string_with_room() {
        let mut a = Str::with_room("first line", 64);
        let buf = a.buf;
        assert!(a.overwrite("second"));
        assert_eq!((&*a, a.buf), ("second", buf));
        assert!(!a.overwrite(&"y".repeat(65)), "no room");
        let shared = a.clone();
        assert!(!a.overwrite("third"), "another string views the buffer");
        assert_eq!((&*a, &*shared), ("second", "second"));
    }

    #[test]
    fn equality_hash_and_order_are_those_of_the_text() {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let h = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        let (a, b) = (Str::from("ab").plus("c"), Str::from("abc"));
        assert_eq!(a, b);
        assert_eq!(h.hash_one(&a), h.hash_one("abc"));
        assert!(Str::from("abd") > a);
    }
}
