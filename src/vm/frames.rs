//! A context's call frames: a vector whose capacity never passes
//! `MAX_FRAMES`, so the call's fast path tests one thing, `len != capacity`,
//! for both room for the frame and the depth limit.

use super::fiber::Frame;
use crate::limits::MAX_FRAMES;
use std::ops::{Deref, DerefMut};

#[derive(Default)]
pub struct Frames(Vec<Frame>);

impl Frames {
    /// Pushes `frame`; the caller has checked the depth (`len() < MAX_FRAMES`).
    pub fn push(&mut self, frame: Frame) {
        debug_assert!(self.0.len() < MAX_FRAMES);
        if self.0.len() == self.0.capacity() {
            self.grow();
        }
        self.0.push(frame)
    }

    /// Room for one more frame unless `MAX_FRAMES` are there: doubling, but
    /// never past the limit (`reserve_exact`, so the capacity is what is asked).
    #[cold]
    pub fn grow(&mut self) {
        let cap = self.0.capacity();
        if self.0.len() == cap {
            self.0.reserve_exact(next_capacity(cap) - cap);
        }
    }

    pub fn pop(&mut self) -> Option<Frame> {
        self.0.pop()
    }

    pub fn truncate(&mut self, len: usize) {
        self.0.truncate(len)
    }

    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// # Safety
    /// As `Vec::set_len`: the frames below `len` are written, `len` is at
    /// most the capacity.
    #[inline(always)]
    pub unsafe fn set_len(&mut self, len: usize) {
        self.0.set_len(len)
    }
}

/// The capacity after `cap`: doubled (4 at least), `MAX_FRAMES` at most.
fn next_capacity(cap: usize) -> usize {
    cap + cap.max(4).min(MAX_FRAMES - cap)
}

impl Deref for Frames {
    type Target = [Frame];
    fn deref(&self) -> &[Frame] {
        &self.0
    }
}

impl DerefMut for Frames {
    fn deref_mut(&mut self) -> &mut [Frame] {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_doubles_up_to_the_limit() {
        let mut cap = 0;
        let mut steps = 0;
        while cap < MAX_FRAMES {
            let next = next_capacity(cap);
            assert!(next > cap && next <= MAX_FRAMES && next <= (2 * cap).max(4));
            cap = next;
            steps += 1;
        }
        assert_eq!(cap, MAX_FRAMES);
        assert_eq!(next_capacity(MAX_FRAMES), MAX_FRAMES);
        assert!(steps < 20);
    }

    #[test]
    fn push_grows_by_steps() {
        let mut f = Frames::default();
        f.grow();
        assert_eq!(f.capacity(), 4);
        f.grow();
        assert_eq!(f.capacity(), 4, "room left: no growth");
    }
}
