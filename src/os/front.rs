//! `Front`: the buffered lines of a read-only file, taken without the
//! stream's lock (see `Stream::front`).

/// What `read_line` of a read-only file left in the buffer, moved out of the
/// shared state (the buffers are swapped) so that the next lines are taken
/// without locking it: the lock was a sixth of the time of `for line in f`.
/// It goes back (`lock`) before anything else uses the shared state, and a
/// pool job starts only from there, so a job never misses it.
#[derive(Default)]
pub struct Front {
    buf: Vec<u8>,
    pos: usize,
    /// `buf[pos..]` is all ASCII (checked once for the lot rather than a line at a time).
    ascii: bool,
}

impl Front {
    /// The next whole line (without its `\n` or `\r\n`) if it is here and at
    /// most `limit` bytes, handed to `take` with whether it is known to be
    /// ASCII; consumed if `take` gives Some.
    pub fn line<T>(&mut self, limit: usize, take: impl FnOnce(&[u8], bool) -> Option<T>) -> Option<T> {
        let start = self.pos;
        let i = newline(&self.buf, start)?;
        let end = start + i;
        let end = end - usize::from(end > start && self.buf[end - 1] == b'\r');
        if end - start > limit {
            return None;
        }
        let t = take(&self.buf[start..end], self.ascii)?;
        self.pos = start + i + 1;
        Some(t)
    }

    /// Takes the unread part of the shared buffer (`rbuf` from `rpos`),
    /// leaving it empty.
    pub(super) fn fill_from(&mut self, rbuf: &mut Vec<u8>, rpos: &mut usize) {
        std::mem::swap(&mut self.buf, rbuf);
        self.pos = *rpos;
        self.ascii = self.buf[self.pos..].is_ascii();
        rbuf.clear();
        *rpos = 0;
    }

    /// Puts lines not taken yet back into the shared buffer (emptied into
    /// this one by `fill_from`), before anything else uses it.
    pub(super) fn give_back(&mut self, rbuf: &mut Vec<u8>, rpos: &mut usize) {
        if self.pos < self.buf.len() {
            std::mem::swap(&mut self.buf, rbuf);
            *rpos = self.pos;
            self.buf.clear();
            self.pos = 0;
        }
    }
}

/// The offset of the first `\n` in `buf[start..]`. Lines are short: sixteen
/// bytes at a time inline cost less than memchr's set-up for each.
fn newline(buf: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86_64; each load reads `buf[i..i + 16]`, in bounds.
    unsafe {
        use std::arch::x86_64::*;
        let nl = _mm_set1_epi8(b'\n' as i8);
        while i + 16 <= buf.len() {
            let m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(buf.as_ptr().add(i).cast()), nl));
            if m != 0 {
                return Some(i - start + m.trailing_zeros() as usize);
            }
            i += 16;
        }
    }
    memchr::memchr(b'\n', &buf[i..]).map(|j| i - start + j)
}
