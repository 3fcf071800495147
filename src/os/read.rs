//! Reading a descriptor onto the end of a buffer, into its spare capacity.

use std::os::fd::AsRawFd;

/// How much one read of a stream asks for.
pub(super) const CHUNK: usize = 256 * 1024;

/// Reads what a pipe or socket has (up to `CHUNK` bytes) onto the end of
/// `buf` through one scratch buffer per thread, so that a stream's buffer
/// grows only by what arrived: reading straight into it left 256 KiB per
/// connection, 2.5 GB for 10,000 idle ones that had each received 64 bytes.
pub(super) fn read_through_scratch(f: &std::fs::File, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    // Per isolate (a thread each).
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        scratch.clear();
        let n = read_some(f, &mut scratch)?;
        buf.extend_from_slice(&scratch[..n]);
        Ok(n)
    })
}

/// Reads up to `CHUNK` bytes onto the end of `buf` (into its spare capacity:
/// zeroing 256 KiB before every read cost more than finding the lines).
pub(super) fn read_some(f: &std::fs::File, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    read_up_to(f, buf, CHUNK)
}

/// Reads onto the end of `buf`, into its spare capacity (at least `room` bytes).
pub(super) fn read_up_to(f: &std::fs::File, buf: &mut Vec<u8>, room: usize) -> std::io::Result<usize> {
    // SAFETY: read(2) writes at most `len` bytes at `at`.
    into_spare(buf, room, |at, len| unsafe { libc::read(f.as_raw_fd(), at, len) })
}

/// Reads up to `CHUNK` bytes onto the end of `buf` only if the page cache
/// already holds them (`preadv2` with `RWF_NOWAIT`, at the file's position):
/// then a file is read at once, on the calling thread, where a pool job cost
/// two thread switches a chunk and the data came in on the other core. None
/// when the read would wait for the disk, or fails, or the kernel cannot say
/// (the caller reads through the pool then, and reports any error from there).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) fn read_cached(f: &std::fs::File, buf: &mut Vec<u8>) -> Option<usize> {
    into_spare(buf, CHUNK, |at, len| {
        // At most a chunk, however big the buffer grew: the thread is not held up.
        let iov = libc::iovec { iov_base: at, iov_len: len.min(CHUNK) };
        // SAFETY: preadv2 writes at most `iov_len` bytes at `at`.
        unsafe { libc::preadv2(f.as_raw_fd(), &iov, 1, -1, libc::RWF_NOWAIT) }
    })
    .ok()
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(super) fn read_cached(_: &std::fs::File, _: &mut Vec<u8>) -> Option<usize> {
    None
}

/// Runs `read(at, len)`, a system call writing at most `len` bytes at `at`,
/// into `buf`'s spare capacity (at least `room` bytes), and counts what it
/// wrote as `buf`'s; again when interrupted by a signal.
fn into_spare(
    buf: &mut Vec<u8>,
    room: usize,
    mut read: impl FnMut(*mut libc::c_void, usize) -> isize,
) -> std::io::Result<usize> {
    buf.reserve(room);
    let spare = buf.spare_capacity_mut();
    loop {
        let n = read(spare.as_mut_ptr().cast(), spare.len());
        if n >= 0 {
            // SAFETY: the call wrote `n` bytes into the spare capacity.
            unsafe { buf.set_len(buf.len() + n as usize) };
            return Ok(n as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
