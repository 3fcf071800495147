//! Mapped blocks (Linux): each a mapping from the kernel whose first page
//! holds a header (the mapping's length, and where its dirty bytes end),
//! the block itself starting on the next page. A freed mapping waits in a
//! small per-thread cache for the next block that grows past `GROWN`: a
//! program that builds a big list again and again then reuses one mapping
//! and its pages, as it reused mimalloc's memory before blocks of that size
//! were mapped, instead of faulting fresh pages in every time (glibc's malloc
//! raises its mmap threshold instead, for the same reason).

use std::cell::RefCell;

const PAGE: usize = 4096;

/// Freed mappings one thread keeps, and their most bytes in all.
const CACHED: usize = 4;
const CACHED_BYTES: usize = 64 << 20;

#[repr(C)]
struct Header {
    /// The mapping's bytes, this page included.
    len: usize,
    /// The block's bytes from this offset on are zero: a fresh mapping's
    /// are; a block freed or shrunk leaves its old size as the bound.
    dirty: usize,
}

fn pages(n: usize) -> usize {
    n.div_ceil(PAGE) * PAGE
}

/// # Safety
/// `block` is a block from `map` or `remap`, not freed.
unsafe fn header<'a>(block: *mut u8) -> &'a mut Header {
    // SAFETY: the header page precedes the block.
    unsafe { &mut *block.sub(PAGE).cast::<Header>() }
}

/// Freed mappings (their blocks), unmapped when the thread ends.
struct Cache(Vec<*mut u8>);

impl Drop for Cache {
    fn drop(&mut self) {
        for &b in &self.0 {
            // SAFETY: a cached block is a live mapping no one else has.
            unsafe { release(b) };
        }
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const { RefCell::new(Cache(Vec::new())) };
}

/// # Safety
/// As for `header`; the mapping is unmapped.
unsafe fn release(block: *mut u8) {
    // SAFETY: see above.
    unsafe {
        let len = header(block).len;
        libc::munmap(block.sub(PAGE).cast(), len);
    }
}

fn fresh(size: usize) -> *mut u8 {
    let len = pages(size) + PAGE;
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // SAFETY: a new anonymous mapping, touching no memory of ours.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
    if p == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    // SAFETY: the mapping's first page is ours to write.
    unsafe {
        p.cast::<Header>().write(Header { len, dirty: 0 });
        p.cast::<u8>().add(PAGE)
    }
}

/// A block of `size` bytes; all zero if `zeroed`, else perhaps a cached
/// mapping (the smallest that fits) with old bytes in it.
pub fn map(size: usize, zeroed: bool) -> *mut u8 {
    if !zeroed {
        let take = |c: &RefCell<Cache>| {
            let mut c = c.borrow_mut();
            // SAFETY: cached blocks are live mappings.
            let fits = |b: &*mut u8| unsafe { header(*b).len } >= pages(size) + PAGE;
            let best = c.0.iter().enumerate().filter(|(_, b)| fits(b)).min_by_key(|(_, b)| unsafe { header(**b).len });
            best.map(|(i, _)| i).map(|i| c.0.swap_remove(i))
        };
        if let Ok(Some(block)) = CACHE.try_with(take) {
            return block;
        }
    }
    fresh(size)
}

/// Frees a block of `size` bytes: into the cache, or unmapped.
///
/// # Safety
/// `block` is a live block from `map` or `remap` of `size` bytes.
pub unsafe fn unmap(block: *mut u8, size: usize) {
    // SAFETY: see above.
    let h = unsafe { header(block) };
    h.dirty = h.dirty.max(size);
    let len = h.len;
    let keep = |c: &RefCell<Cache>| {
        let mut c = c.borrow_mut();
        // SAFETY: cached blocks are live mappings.
        let held: usize = c.0.iter().map(|b| unsafe { header(*b).len }).sum();
        if c.0.len() < CACHED && held + len <= CACHED_BYTES {
            c.0.push(block);
            return true;
        }
        false
    };
    if CACHE.try_with(keep) != Ok(true) {
        // SAFETY: see above.
        unsafe { release(block) };
    }
}

/// The block of `size` bytes grown or shrunk to `new_size`: in place while
/// its mapping is long enough (and not more than twice so), else remapped
/// by the kernel (pages moved, not bytes). Null on failure, the old block
/// kept.
///
/// # Safety
/// As for `unmap`.
pub unsafe fn remap(block: *mut u8, size: usize, new_size: usize) -> *mut u8 {
    // SAFETY: see above.
    let h = unsafe { header(block) };
    if new_size < size {
        h.dirty = h.dirty.max(size);
    }
    let len = pages(new_size) + PAGE;
    // Growing within the mapping, or shrinking by less than half, keeps it
    // whole; a big shrink gives the pages back (`mremap` to fewer).
    if len <= h.len && (new_size >= size || len > h.len / 2) {
        return block;
    }
    // SAFETY: the mapping is `h.len` bytes from its header page.
    let p = unsafe { libc::mremap(block.sub(PAGE).cast(), h.len, len, libc::MREMAP_MAYMOVE) };
    if p == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    // SAFETY: the header moved with the mapping; its new pages are zero,
    // and pages given back come back zero.
    unsafe {
        let h = &mut *p.cast::<Header>();
        h.len = len;
        h.dirty = h.dirty.min(len - PAGE);
        p.cast::<u8>().add(PAGE)
    }
}

/// The offset from which the block's bytes are known to be zero.
///
/// # Safety
/// As for `header`.
pub unsafe fn zero_from(block: *mut u8) -> usize {
    // SAFETY: see above.
    unsafe { header(block).dirty }
}
