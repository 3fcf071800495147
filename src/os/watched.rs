//! Descriptors that fibers wait on in the reactor. The reactor keeps a
//! descriptor registered in its epoll from the first wait until it closes
//! (two `epoll_ctl` calls per wait saved), so it must hear of every close:
//! a number the kernel reuses for a new descriptor must be registered afresh.
//! Owners hold such descriptors in a `Watched`, whose drop tells every
//! reactor of the process (each VM has one) just before the descriptor closes.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, Weak};

/// A descriptor owner (a file, a socket, a pidfd) whose closing reactors hear of.
pub struct Watched<T: AsRawFd>(T);

impl<T: AsRawFd> Watched<T> {
    pub fn new(t: T) -> Watched<T> {
        Watched(t)
    }
}

impl<T: AsRawFd> std::ops::Deref for Watched<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: AsRawFd> Drop for Watched<T> {
    fn drop(&mut self) {
        // Before the field's own drop closes it: the number cannot be reused
        // before every reactor has it on its list.
        let fd = self.0.as_raw_fd();
        let mut lists = LISTS.lock().unwrap_or_else(|p| p.into_inner());
        lists.retain(|l| match l.upgrade() {
            Some(l) => {
                l.lock().unwrap_or_else(|p| p.into_inner()).push(fd);
                true
            }
            None => false,
        });
    }
}

/// Descriptors closed since a reactor last looked.
pub type Closed = Arc<Mutex<Vec<RawFd>>>;

/// Shared by every isolate: each reactor's list, as a descriptor closed in
/// one may be watched by another's.
static LISTS: Mutex<Vec<Weak<Mutex<Vec<RawFd>>>>> = Mutex::new(Vec::new());

/// A new reactor's list of closed descriptors, filled from now on.
pub fn subscribe() -> Closed {
    let list = Closed::default();
    LISTS.lock().unwrap_or_else(|p| p.into_inner()).push(Arc::downgrade(&list));
    list
}
