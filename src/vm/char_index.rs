//! Character offsets of string buffers whose text is not ASCII, so that
//! `s[i]` and `s.slice(a, b)` find character `i` in amortised constant time
//! instead of walking from the start (a loop over `s[i]` would be quadratic).
//!
//! A buffer's index is sparse: the byte offset of every `EVERY`th character
//! (4 bytes per 64 characters), made on first use and extended as far as the
//! characters asked for, plus the last position found, so that a loop going
//! forward walks one character at a time. The text of a buffer is only ever
//! appended to (vm/str.rs), so an index stays true for every string viewing
//! a prefix of it, including ones made by later appends in place.
//!
//! Indexes live in a table of slots; a buffer's header holds its slot. The
//! table is per thread because a buffer is: `Str` is neither `Send` nor
//! `Sync`, so every string sharing a buffer, and its last drop (which frees
//! the slot), is on the thread that made it. No other program state is kept
//! here.

use std::cell::{Cell, RefCell};

/// Characters between two recorded offsets.
const EVERY: usize = 64;

/// Text shorter than this (bytes) is walked from its start: an index would
/// cost more memory than the walk costs time.
pub const MIN_INDEXED: usize = 256;

struct Index {
    /// `marks[k]`: the byte offset of character `k * EVERY`.
    marks: Vec<u32>,
    /// The characters walked so far and their bytes: marks exist up to there.
    chars: usize,
    bytes: usize,
    /// The last character found and its byte offset.
    cursor: (usize, usize),
}

impl Index {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Index>() + self.marks.capacity() * 4
    }

    /// The byte offset of character `i` of `text`, extending the marks to it.
    fn find(&mut self, text: &[u8], i: usize) -> usize {
        if i >= self.chars {
            let (mut c, mut b) = (self.chars, self.bytes);
            while c < i && b < text.len() {
                b += width(text[b]);
                c += 1;
                if c.is_multiple_of(EVERY) {
                    self.marks.push(b as u32);
                }
            }
            (self.chars, self.bytes) = (c, b);
            self.cursor = (c, b);
            return b;
        }
        let block = i / EVERY;
        let (mut c, mut b) = (block * EVERY, self.marks[block] as usize);
        if (c..=i).contains(&self.cursor.0) {
            (c, b) = self.cursor;
        }
        let b = walk(text, b, i - c);
        self.cursor = (i, b);
        b
    }
}

/// The bytes of the UTF-8 sequence that starts with `lead`.
#[inline]
fn width(lead: u8) -> usize {
    match lead {
        0..0xc0 => 1,
        0xc0..0xe0 => 2,
        0xe0..0xf0 => 3,
        _ => 4,
    }
}

/// The byte offset `n` characters after byte offset `from` of UTF-8 `text`
/// (its end if there are fewer).
#[inline]
pub fn walk(text: &[u8], mut from: usize, n: usize) -> usize {
    for _ in 0..n {
        if from >= text.len() {
            break;
        }
        from += width(text[from]);
    }
    from.min(text.len())
}

#[derive(Default)]
struct Table {
    slots: Vec<Option<Index>>,
    free: Vec<u32>,
}

// Per isolate (a thread each).
thread_local! {
    // Shared by the buffers of this thread, reached only from their headers;
    // a RefCell, borrowed only inside the functions below, which never nest.
    static TABLE: RefCell<Table> = RefCell::new(Table::default());
}

/// The byte offset of character `i` of `text`, the start of the buffer that
/// `slot` (its header's index field) belongs to; with the bytes the index
/// grew by. Text past 4 GiB, whose offsets would not fit, is walked.
pub fn offset(slot: &Cell<u32>, text: &[u8], i: usize) -> (usize, usize) {
    if u32::try_from(text.len()).is_err() {
        return (walk(text, 0, i), 0);
    }
    TABLE
        .try_with(|t| {
            let mut t = t.borrow_mut();
            if slot.get() == 0 {
                let index = Index { marks: vec![0], chars: 0, bytes: 0, cursor: (0, 0) };
                let n = match t.free.pop() {
                    Some(n) => {
                        t.slots[n as usize] = Some(index);
                        n
                    }
                    None if t.slots.len() < u32::MAX as usize - 1 => {
                        t.slots.push(Some(index));
                        t.slots.len() as u32 - 1
                    }
                    None => return (walk(text, 0, i), 0),
                };
                slot.set(n + 1);
            }
            let index = t.slots[slot.get() as usize - 1].as_mut().expect("a live buffer's index");
            let before = index.heap_bytes();
            let b = index.find(text, i);
            (b, index.heap_bytes() - before)
        })
        .unwrap_or_else(|_| (walk(text, 0, i), 0))
}

/// Bytes held by the index in `slot` (0 for none).
pub fn bytes(slot: &Cell<u32>) -> usize {
    if slot.get() == 0 {
        return 0;
    }
    TABLE.try_with(|t| t.borrow().slots[slot.get() as usize - 1].as_ref().map_or(0, Index::heap_bytes)).unwrap_or(0)
}

/// The buffer is freed: so is its index.
#[cold]
#[inline(never)]
pub fn release(slot: &Cell<u32>) {
    let n = slot.get();
    if n == 0 {
        return;
    }
    // At thread exit the table may be gone before the last strings: nothing to free then.
    let _ = TABLE.try_with(|t| {
        let mut t = t.borrow_mut();
        t.slots[n as usize - 1] = None;
        t.free.push(n - 1);
    });
    slot.set(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character's offset, in order, backwards and at random, against
    /// `char_indices`, in text that is mixed widths and grows between lookups.
    #[test]
    fn offsets_match_char_indices() {
        let text: String = (0..5000).map(|i| ['a', 'é', '€', '😀'][i * 7 % 4]).collect();
        let want: Vec<usize> = text.char_indices().map(|(b, _)| b).chain([text.len()]).collect();
        let slot = Cell::new(0);
        let all = text.as_bytes();
        // Only a prefix at first, as a string later appended to in place.
        let prefix = &all[..want[1000]];
        for i in (0..=1000).step_by(3) {
            assert_eq!(offset(&slot, prefix, i).0, want[i]);
        }
        for (i, &b) in want.iter().enumerate() {
            assert_eq!(offset(&slot, all, i).0, b, "forward {i}");
        }
        for i in (0..want.len()).rev() {
            assert_eq!(offset(&slot, all, i).0, want[i], "backward {i}");
        }
        let mut x = 12345usize;
        for _ in 0..10000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let i = (x >> 33) % want.len();
            assert_eq!(offset(&slot, all, i).0, want[i], "random {i}");
        }
        // Four bytes a mark, the vector at most doubled, and the record.
        assert!(bytes(&slot) <= 5000 / EVERY * 8 + 128, "{} bytes", bytes(&slot));
        release(&slot);
        assert_eq!(slot.get(), 0);
        assert_eq!(walk("aé€😀".as_bytes(), 1, 2), 6);
    }
}
