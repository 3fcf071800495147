//! Waiting for the outside world: one `epoll` (mio) that the scheduler sleeps in
//! when no fiber is ready. It wakes for a descriptor a fiber waits on (a pipe, a
//! child process's pidfd, later sockets), for the I/O pool's finished jobs (its
//! `Waker`), for signals (a self-pipe) and at the next timer.
//!
//! A fiber waits on a descriptor only after an operation on it would block; the
//! descriptor is registered while some fiber waits on it, and every waiter is
//! woken (`Resume::Retry`: the builtin runs again) when it becomes ready.

use super::Waiter;
use crate::vm::Resume;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Duration;

/// The token of the I/O pool's waker; descriptors use `fd + FIRST_FD`.
const WAKER: Token = Token(0);
/// The token of the signal self-pipe.
pub(super) const SIGNALS: Token = Token(1);
const FIRST_FD: usize = 2;

pub(super) struct Reactor {
    poll: Poll,
    events: Events,
    pub waker: Arc<mio::Waker>,
    /// Descriptors some fiber waits on: the interest registered, and the waiters.
    waits: HashMap<RawFd, (Interest, Vec<Waiter>)>,
}

impl Reactor {
    pub fn new() -> std::io::Result<Reactor> {
        let poll = Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER)?);
        Ok(Reactor { poll, events: Events::with_capacity(256), waker, waits: HashMap::new() })
    }

    /// Fibers are parked on descriptors.
    pub fn waiting(&self) -> bool {
        !self.waits.is_empty()
    }

    /// Parks waiter `w` until `fd` is ready for `interest`.
    pub fn wait(&mut self, fd: RawFd, interest: Interest, w: Waiter) -> std::io::Result<()> {
        let token = Token(fd as usize + FIRST_FD);
        let registry = self.poll.registry();
        match self.waits.get_mut(&fd) {
            Some((registered, waiters)) => {
                if registered.add(interest) != *registered {
                    *registered = registered.add(interest);
                    registry.reregister(&mut SourceFd(&fd), token, *registered)?;
                }
                waiters.push(w);
            }
            None => {
                registry.register(&mut SourceFd(&fd), token, interest)?;
                self.waits.insert(fd, (interest, vec![w]));
            }
        }
        Ok(())
    }

    /// Takes a cancelled waiter off `fd`; the descriptor is deregistered when
    /// no one waits on it any more (it may be closed and its number reused).
    pub fn forget(&mut self, fd: RawFd, fiber: u32) {
        let Some((_, waiters)) = self.waits.get_mut(&fd) else { return };
        waiters.retain(|w| w.fiber != fiber);
        if waiters.is_empty() {
            self.waits.remove(&fd);
            let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        }
    }

    /// Registers the signal self-pipe (read end).
    pub fn watch_signals(&mut self, fd: RawFd) -> std::io::Result<()> {
        self.poll.registry().register(&mut SourceFd(&fd), SIGNALS, Interest::READABLE)
    }

    /// Sleeps until a descriptor is ready, the waker is woken or `timeout`
    /// passes; returns the waiters to wake (`Retry`).
    pub fn poll(&mut self, timeout: Option<Duration>) -> Vec<(Waiter, Resume)> {
        if let Err(e) = self.poll.poll(&mut self.events, timeout) {
            // EINTR (a signal arrived): the caller looks again.
            if e.kind() != std::io::ErrorKind::Interrupted {
                eprintln!("csp: poll failed: {e}");
            }
            return Vec::new();
        }
        let mut woken = Vec::new();
        for ev in self.events.iter() {
            match ev.token() {
                // Which signals came is in `signal::PENDING`; the scheduler
                // looks there after every poll.
                WAKER | SIGNALS => {}
                Token(t) => {
                    let fd = (t - FIRST_FD) as RawFd;
                    if let Some((_, waiters)) = self.waits.remove(&fd) {
                        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
                        woken.extend(waiters.into_iter().map(|w| (w, Resume::Retry)));
                    }
                }
            }
        }
        woken
    }
}
