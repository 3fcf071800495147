//! The global allocator: mimalloc, called directly. The `mimalloc` crate's
//! allocator calls `mi_malloc_aligned` for every allocation; an alignment of
//! 8 or less is what every `malloc` block already has, so those (nearly all of
//! csp's: strings, vectors, boxed objects) take `mi_malloc`'s shorter path.
//! Built without transparent huge pages (the `no_thp` feature): zeroing 2 MB
//! pages on first touch cost more than their TLB savings (a program starting
//! a million fibers spent 70% of its time there) and tripled a small
//! program's resident size.

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;
use libmimalloc_sys as mi;

/// Alignment every mimalloc block has, whatever its size.
const MIN_ALIGN: usize = 8;

pub struct Mimalloc;

// SAFETY: mimalloc's functions meet GlobalAlloc's contract: blocks of at least
// the size asked, aligned as asked (mi_malloc's blocks are 8-aligned; larger
// alignments go through the _aligned functions), freed by mi_free.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MIN_ALIGN {
            mi::mi_malloc(layout.size()) as *mut u8
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MIN_ALIGN {
            mi::mi_zalloc(layout.size()) as *mut u8
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr as *mut c_void);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MIN_ALIGN {
            mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
        } else {
            mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
        }
    }
}
