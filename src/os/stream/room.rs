//! How a stream's read buffer grows for a big read and gives the room back.

use super::Shared;
use crate::os::read::CHUNK;

/// A buffer grown past a megabyte for one big read goes back to the allocator
/// once that read has taken all of it.
pub(super) fn release_big(s: &mut Shared) {
    if s.rpos == s.rbuf.len() && s.rbuf.capacity() > 1 << 20 {
        s.rbuf = Vec::new();
        s.rpos = 0;
    }
}

/// Once a read has buffered a megabyte, room for all it may gather (`cap`)
/// at once: growing by doubling would copy it and, at the cap, hold twice
/// the cap. The room is address space until data arrives.
pub(super) fn room_for(s: &mut Shared, cap: usize) {
    let want = cap.saturating_add(CHUNK).saturating_sub(s.rbuf.len() - s.rpos);
    if s.rbuf.len() - s.rpos >= 1 << 20 && s.rbuf.capacity() - s.rbuf.len() < want {
        let rpos = s.rpos;
        s.rbuf.drain(..rpos);
        s.rpos = 0;
        s.rbuf.reserve_exact(want);
    }
}
