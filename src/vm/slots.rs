//! `SlotVec`: a growable array in its own memory mapping, for the heap's object
//! table and mark bits. A `Vec` doubles by copying: at four million objects
//! that is a 128 MB copy, a 50 ms stall in the middle of a program however
//! incremental its collector. `mremap` moves the pages instead of copying
//! them, so growing costs about as much at any size.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

pub struct SlotVec<T> {
    ptr: NonNull<T>,
    len: usize,
    /// Bytes mapped (a whole number of pages); 0 before the first push.
    mapped: usize,
}

/// The first mapping: 64 KB.
const FIRST: usize = 64 << 10;

impl<T> SlotVec<T> {
    pub fn new() -> SlotVec<T> {
        const { assert!(std::mem::size_of::<T>() > 0 && std::mem::align_of::<T>() <= 4096) };
        SlotVec { ptr: NonNull::dangling(), len: 0, mapped: 0 }
    }

    #[inline]
    pub fn push(&mut self, v: T) {
        if (self.len + 1) * std::mem::size_of::<T>() > self.mapped {
            self.grow();
        }
        // SAFETY: the mapping holds at least `len + 1` items.
        unsafe { self.ptr.as_ptr().add(self.len).write(v) };
        self.len += 1;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: item `len` was initialised and is no longer counted.
        Some(unsafe { self.ptr.as_ptr().add(self.len).read() })
    }

    /// Doubles the mapping, moving its pages (the kernel's page tables, not
    /// the bytes). Out of memory aborts, as `Vec` does.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let size = (self.mapped * 2).max(FIRST);
        // SAFETY: a fresh anonymous mapping, or the mapping this owns moved to
        // a bigger one (its contents kept).
        let p = unsafe {
            if self.mapped == 0 {
                libc::mmap(
                    std::ptr::null_mut(),
                    size,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            } else {
                remap(self.ptr.as_ptr().cast(), self.mapped, size)
            }
        };
        if p == libc::MAP_FAILED {
            let layout = std::alloc::Layout::from_size_align(size, 4096).expect("a layout");
            std::alloc::handle_alloc_error(layout);
        }
        self.ptr = NonNull::new(p.cast()).expect("a mapping");
        self.mapped = size;
    }
}

/// A mapping of `old` bytes grown to `new`, its contents kept: moved by the
/// kernel without a copy.
///
/// # Safety
/// `p` is an anonymous mapping of `old` bytes, not used again after.
#[cfg(target_os = "linux")]
unsafe fn remap(p: *mut libc::c_void, old: usize, new: usize) -> *mut libc::c_void {
    // SAFETY: see above.
    unsafe { libc::mremap(p, old, new, libc::MREMAP_MAYMOVE) }
}

/// Elsewhere than Linux (no mremap): a new mapping, the contents copied.
///
/// # Safety
/// As above.
#[cfg(not(target_os = "linux"))]
unsafe fn remap(p: *mut libc::c_void, old: usize, new: usize) -> *mut libc::c_void {
    let (prot, flags) = (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS);
    // SAFETY: a fresh mapping of `new` bytes, `old` of them copied from `p`, then `p` unmapped.
    unsafe {
        let q = libc::mmap(std::ptr::null_mut(), new, prot, flags, -1, 0);
        if q != libc::MAP_FAILED {
            std::ptr::copy_nonoverlapping(p.cast::<u8>(), q.cast::<u8>(), old);
            libc::munmap(p, old);
        }
        q
    }
}

impl<T> Default for SlotVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for SlotVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` items are initialised (a dangling pointer for none).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for SlotVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as `deref`, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for SlotVec<T> {
    fn drop(&mut self) {
        // SAFETY: the items are initialised and dropped once; then the mapping
        // this owns is unmapped.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len));
            if self.mapped > 0 {
                libc::munmap(self.ptr.as_ptr().cast(), self.mapped);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SlotVec;
    use std::rc::Rc;

    /// Items survive the moves of growth and are dropped with the table.
    #[test]
    fn grows_keeping_items_and_drops_them() {
        let counter = Rc::new(());
        let mut v = SlotVec::new();
        for i in 0..100_000u32 {
            v.push((i, counter.clone()));
        }
        assert_eq!(v.len(), 100_000);
        assert!(v.iter().enumerate().all(|(i, (x, _))| *x == i as u32));
        v[7].0 = 70;
        assert_eq!(v[7].0, 70);
        assert_eq!(v.pop().map(|p| p.0), Some(99_999));
        assert_eq!(Rc::strong_count(&counter), 100_000);
        drop(v);
        assert_eq!(Rc::strong_count(&counter), 1);
    }
}
