//! The process's allocator: mimalloc, except for huge blocks, which are
//! mapped from the kernel directly and grown with `mremap`: blocks made at
//! 16 MiB or more, and blocks grown past 1 MiB. mimalloc's `realloc` always
//! copies; a list of millions of items, a long string or a big map's entries
//! would stall the program for milliseconds each time it doubles (docs/gc.md,
//! "Pauses"). `mremap` moves the pages instead of their bytes, and the new
//! pages are faulted in as they are first written, spread over the pushes
//! that fill them. glibc's malloc does the same past its mmap threshold.
//! Elsewhere than Linux every block is mimalloc's.

use mimalloc::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};

pub struct Alloc;

/// Blocks made at this size or more are mapped (a copy of one costs a few
/// milliseconds, with the faults of its fresh pages).
const HUGE: usize = 16 << 20;

/// Blocks grown to this size or more are mapped: the copy into the mapping
/// is of at most this much, once, and later growth moves pages. Made
/// blocks below `HUGE` stay mimalloc's, which reuses freed memory without
/// faulting it in again: a program that makes many such blocks and frees
/// them pays no system calls for them.
const GROWN: usize = 1 << 20;

/// Might a block of this size be mapped? Decided by the size alone, which
/// `dealloc` and `realloc` are given again: one compare on every free.
#[inline(always)]
fn maybe_mapped(size: usize) -> bool {
    cfg!(target_os = "linux") && size >= GROWN
}

/// Is a block of this layout made mapped rather than mimalloc's?
fn made_mapped(layout: &Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= HUGE && layout.align() <= 4096
}

/// Is the live block `ptr` of this layout a mapping? From `GROWN` to `HUGE`
/// it may be either, and mimalloc's page map says which.
fn is_mapped(ptr: *const u8, layout: &Layout) -> bool {
    extern "C" {
        // In the mimalloc library the `mimalloc` crate links (page-map.c).
        fn mi_is_in_heap_region(p: *const u8) -> bool;
    }
    // SAFETY: a query of mimalloc's page map, for any address.
    maybe_mapped(layout.size()) && layout.align() <= 4096 && !unsafe { mi_is_in_heap_region(ptr) }
}

/// Every block mimalloc makes is aligned to a word at least: a layout that
/// asks no more goes to plain `mi_malloc`, whose fast path is shorter than
/// the aligned one `MiMalloc` calls for every layout.
const WORD: usize = std::mem::size_of::<usize>();

extern "C" {
    // In the mimalloc library the `mimalloc` crate links (alloc.c).
    fn mi_malloc(size: usize) -> *mut u8;
    fn mi_zalloc(size: usize) -> *mut u8;
    fn mi_realloc(p: *mut u8, new_size: usize) -> *mut u8;
}

// SAFETY: each block is freed, grown or shrunk by the allocator that made
// it, which `is_mapped` tells from its size and address.
unsafe impl GlobalAlloc for Alloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= HUGE {
            return huge::alloc(layout, false);
        }
        if layout.align() <= WORD {
            // SAFETY: any size; every mimalloc block is word-aligned.
            return unsafe { mi_malloc(layout.size()) };
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= HUGE {
            return huge::alloc(layout, true);
        }
        if layout.align() <= WORD {
            // SAFETY: as for `alloc`.
            return unsafe { mi_zalloc(layout.size()) };
        }
        // SAFETY: as for `alloc`.
        unsafe { MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if maybe_mapped(layout.size()) {
            // SAFETY: `ptr` was made by `huge::alloc` with this layout.
            return unsafe { huge::dealloc(ptr, layout) };
        }
        // SAFETY: as for `alloc`.
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if maybe_mapped(layout.size().max(new_size)) {
            // SAFETY: the caller's contract, passed on.
            return unsafe { huge::realloc(ptr, layout, new_size) };
        }
        if layout.align() <= WORD {
            // SAFETY: `ptr` is mimalloc's, from `alloc`.
            return unsafe { mi_realloc(ptr, new_size) };
        }
        // SAFETY: as for `alloc`.
        unsafe { MiMalloc.realloc(ptr, layout, new_size) }
    }
}

/// Is `Alloc` the process's allocator (`installed`, by the `csp` binary)?
/// Only then is a block that is not mimalloc's one of our mappings, with
/// its header to say where its written bytes end.
static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says `Alloc` is the `#[global_allocator]` (call once, at start-up).
pub fn installed() {
    INSTALLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `items` grown to `cap` items, the new ones all-zero bytes, which must be
/// a valid `T` (a nil value): a huge block grows by moving its pages, whose
/// new part is zero already, so growing costs neither a copy nor a write
/// of the new part (a map's values: docs/gc.md, "Pauses").
pub fn grow_zeroed<T: Copy>(items: Box<[T]>, cap: usize) -> Box<[T]> {
    let n = items.len();
    let size = std::mem::size_of::<T>();
    assert!(cap >= n && size > 0);
    let mut v = std::mem::ManuallyDrop::new(items.into_vec());
    v.reserve_exact(cap - n);
    let layout = Layout::array::<T>(v.capacity()).expect("a block's layout");
    let p = v.as_mut_ptr();
    // A mapping's bytes are zero from `zero_from` on (src/alloc/maps.rs).
    let dirty = match INSTALLED.load(std::sync::atomic::Ordering::Relaxed) && is_mapped(p.cast(), &layout) {
        // SAFETY: a live mapped block.
        true => unsafe { maps::zero_from(p.cast()) }.div_ceil(size).min(v.capacity()),
        false => v.capacity(),
    };
    // SAFETY: the capacity is at least `cap`; the items from `n` on are
    // zeroed here up to `dirty`, and are zero past it, and all-zero bytes
    // are a `T` (the caller's contract).
    unsafe {
        if dirty > n {
            std::ptr::write_bytes(p.add(n), 0, dirty - n);
        }
        let cap = v.capacity();
        v.set_len(cap);
        std::mem::ManuallyDrop::into_inner(v).into_boxed_slice()
    }
}

/// The paths of huge blocks, out of line: the drop glue of every type that
/// frees memory inlines `dealloc`, which must stay a compare and a call.
mod huge {
    use super::{is_mapped, made_mapped, maps, MiMalloc, GROWN};
    use std::alloc::{GlobalAlloc, Layout};

    /// A block of `layout`, all zero if `zeroed`.
    #[cold]
    #[inline(never)]
    pub fn alloc(layout: Layout, zeroed: bool) -> *mut u8 {
        match (made_mapped(&layout), zeroed) {
            (true, _) => maps::map(layout.size(), zeroed),
            // SAFETY: a layout `GlobalAlloc::alloc` was given.
            (false, false) => unsafe { MiMalloc.alloc(layout) },
            // SAFETY: as above.
            (false, true) => unsafe { MiMalloc.alloc_zeroed(layout) },
        }
    }

    /// # Safety
    /// `ptr` was made by `alloc` with this layout.
    #[cold]
    #[inline(never)]
    pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
        match is_mapped(ptr, &layout) {
            // SAFETY: see above.
            true => unsafe { maps::unmap(ptr, layout.size()) },
            // SAFETY: see above.
            false => unsafe { MiMalloc.dealloc(ptr, layout) },
        }
    }

    /// # Safety
    /// As for `GlobalAlloc::realloc`; one of the sizes is at least `GROWN`.
    /// A block grown to `GROWN` or more becomes (or stays) a mapping; one
    /// shrunk stays what it is while it is that big.
    #[cold]
    #[inline(never)]
    pub unsafe fn realloc(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size`, rounded up to the
        // alignment, does not overflow.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let was = is_mapped(ptr, &layout);
        let will = cfg!(target_os = "linux")
            && new_size >= GROWN
            && layout.align() <= 4096
            && (was || new_size > layout.size());
        match (was, will) {
            // SAFETY: as for `GlobalAlloc::realloc`.
            (false, false) => unsafe { MiMalloc.realloc(ptr, layout, new_size) },
            // SAFETY: `ptr` was mapped with the old size.
            (true, true) => unsafe { maps::remap(ptr, layout.size(), new_size) },
            _ => {
                // SAFETY: both blocks are live and at least this long;
                // each is freed by the allocator that made it.
                unsafe {
                    let to = match will {
                        true => maps::map(new_size, false),
                        false => MiMalloc.alloc(new),
                    };
                    if !to.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                        match was {
                            true => maps::unmap(ptr, layout.size()),
                            false => MiMalloc.dealloc(ptr, layout),
                        }
                    }
                    to
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod maps;

/// Never used: nothing is mapped elsewhere than Linux.
#[cfg(not(target_os = "linux"))]
mod maps {
    pub fn map(_: usize, _: bool) -> *mut u8 {
        std::ptr::null_mut()
    }

    pub unsafe fn unmap(_: *mut u8, _: usize) {}

    pub unsafe fn remap(_: *mut u8, _: usize, _: usize) -> *mut u8 {
        std::ptr::null_mut()
    }

    pub unsafe fn zero_from(_: *mut u8) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(p: *mut u8, n: usize) {
        (0..n).step_by(4093).for_each(|i| unsafe { *p.add(i) = (i % 251) as u8 });
    }

    fn check(p: *mut u8, n: usize) -> bool {
        (0..n).step_by(4093).all(|i| unsafe { *p.add(i) } == (i % 251) as u8)
    }

    /// Word-aligned layouts take `mi_malloc`'s path: aligned, zeroed when
    /// asked, their bytes kept when grown, also into a mapping.
    #[test]
    fn word_aligned_blocks_take_the_plain_path() {
        let a = Alloc;
        for (size, align) in [(1, 1), (3, 2), (8, 8), (24, 8), (40, 4), (100, 8), (4000, 8)] {
            let lay = Layout::from_size_align(size, align).unwrap();
            unsafe {
                let z = a.alloc_zeroed(lay);
                assert!((z as usize).is_multiple_of(align) && check_zero(z, size));
                a.dealloc(z, lay);
                let p = a.alloc(lay);
                assert!((p as usize).is_multiple_of(align));
                (0..size).for_each(|i| *p.add(i) = i as u8);
                let p = a.realloc(p, lay, size * 3);
                assert!(!p.is_null() && (0..size).all(|i| *p.add(i) == i as u8));
                let grown = Layout::from_size_align(size * 3, align).unwrap();
                let p = a.realloc(p, grown, GROWN * 2);
                let mapped = is_mapped(p, &Layout::from_size_align(GROWN * 2, align).unwrap());
                assert!(mapped && (0..size).all(|i| *p.add(i) == i as u8));
                a.dealloc(p, Layout::from_size_align(GROWN * 2, align).unwrap());
            }
        }
    }

    unsafe fn check_zero(p: *mut u8, n: usize) -> bool {
        (0..n).all(|i| unsafe { *p.add(i) } == 0)
    }

    /// A block grows from mimalloc's into a mapping, grows as a mapping
    /// (moved or not), shrinks back into mimalloc's, keeping its bytes.
    #[test]
    fn blocks_keep_their_bytes_across_the_threshold() {
        let a = Alloc;
        let small = Layout::from_size_align(HUGE / 2, 16).unwrap();
        unsafe {
            let p = a.alloc(small);
            fill(p, small.size());
            let p = a.realloc(p, small, HUGE * 2);
            assert!(!p.is_null() && check(p, small.size()));
            fill(p, HUGE * 2);
            let big = Layout::from_size_align(HUGE * 2, 16).unwrap();
            let p = a.realloc(p, big, HUGE * 5);
            assert!(!p.is_null() && check(p, HUGE * 2));
            let bigger = Layout::from_size_align(HUGE * 5, 16).unwrap();
            let p = a.realloc(p, bigger, 1000);
            assert!(!p.is_null() && check(p, 1000));
            a.dealloc(p, Layout::from_size_align(1000, 16).unwrap());
            let z = Layout::from_size_align(HUGE, 8).unwrap();
            let q = a.alloc_zeroed(z);
            assert!((0..HUGE).step_by(4096).all(|i| *q.add(i) == 0));
            a.dealloc(q, z);
        }
    }

    /// A block grown past `GROWN` moves into a mapping and keeps its bytes;
    /// shrunk while still that big it stays one; shrunk below, it goes back
    /// to mimalloc. A block *made* that big is mimalloc's.
    #[test]
    fn blocks_grown_past_a_mebibyte_become_mappings() {
        let a = Alloc;
        let lay = |n| Layout::from_size_align(n, 16).unwrap();
        unsafe {
            let made = a.alloc(lay(GROWN * 2));
            assert!(!is_mapped(made, &lay(GROWN * 2)));
            a.dealloc(made, lay(GROWN * 2));
            let p = a.alloc(lay(GROWN / 2));
            fill(p, GROWN / 2);
            let p = a.realloc(p, lay(GROWN / 2), GROWN * 3);
            assert!(is_mapped(p, &lay(GROWN * 3)) && check(p, GROWN / 2));
            let p = a.realloc(p, lay(GROWN * 3), GROWN + 5);
            assert!(is_mapped(p, &lay(GROWN + 5)) && check(p, GROWN / 2));
            let p = a.realloc(p, lay(GROWN + 5), GROWN / 4);
            assert!(!is_mapped(p, &lay(GROWN / 4)) && check(p, GROWN / 4));
            a.dealloc(p, lay(GROWN / 4));
        }
    }

    /// A mapping knows where its written bytes end: past what a shrink or a
    /// free left, it reads zero (what `grow_zeroed` relies on). A freed
    /// mapping is reused, pages and all, by the next block that fits, which
    /// grows in place while the mapping is long enough.
    #[test]
    #[cfg(target_os = "linux")]
    fn mappings_know_their_dirty_bytes_and_are_reused() {
        let a = Alloc;
        let lay = |n| Layout::from_size_align(n, 16).unwrap();
        unsafe {
            let p = a.alloc(lay(HUGE * 2));
            assert_eq!(maps::zero_from(p), 0);
            std::ptr::write_bytes(p, 0xAB, HUGE * 2);
            let odd = HUGE + 1000;
            let p = a.realloc(p, lay(HUGE * 2), odd);
            let p = a.realloc(p, lay(odd), HUGE * 3);
            assert!(!p.is_null() && *p.add(odd - 1) == 0xAB);
            let from = maps::zero_from(p);
            assert_eq!(from, HUGE * 2);
            assert!((from..HUGE * 3).step_by(97).all(|i| *p.add(i) == 0), "stale bytes past the bound");
            a.dealloc(p, lay(HUGE * 3));
            // Freed into this thread's cache: the next block that fits gets it.
            let q = a.realloc(a.alloc(lay(GROWN / 2)), lay(GROWN / 2), GROWN);
            assert_eq!(q, p, "the cached mapping is reused");
            assert_eq!(maps::zero_from(q), HUGE * 3);
            assert_eq!(a.realloc(q, lay(GROWN), GROWN * 2), q, "grown in place, the mapping kept whole");
            assert_eq!(a.realloc(q, lay(GROWN * 2), HUGE * 3), q, "grown in place");
            // Shrunk to less than half its mapping, a block gives pages back;
            // what it kept stays known dirty, what comes back is zero.
            let q = a.realloc(q, lay(HUGE * 3), HUGE);
            assert_eq!(maps::zero_from(q), HUGE);
            let q = a.realloc(q, lay(HUGE), HUGE * 2);
            assert!((HUGE..HUGE * 2).step_by(97).all(|i| *q.add(i) == 0));
            a.dealloc(q, lay(HUGE * 2));
            let z = a.alloc_zeroed(lay(HUGE));
            assert!(z != p && (0..HUGE).step_by(4096).all(|i| *z.add(i) == 0), "zeroed blocks are fresh");
            a.dealloc(z, lay(HUGE));
        }
        let v: Box<[u64]> = vec![7; 1000].into_boxed_slice();
        let v = grow_zeroed(v, 5000);
        assert_eq!(v.len(), 5000);
        assert!(v[..1000].iter().all(|&x| x == 7) && v[1000..].iter().all(|&x| x == 0));
    }
}
