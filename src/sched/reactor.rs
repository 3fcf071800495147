//! Waiting for the outside world: one `epoll` (mio) that the scheduler sleeps in
//! when no fiber is ready. It wakes for a descriptor a fiber waits on (a pipe, a
//! child process's pidfd, later sockets), for the I/O pool's finished jobs (its
//! `Waker`), for signals (a self-pipe) and at the next timer.
//!
//! A fiber waits on a descriptor only after an operation on it would block; the
//! descriptor is registered while some fiber waits on it, and every waiter is
//! woken (`Resume::Retry`: the builtin runs again) when it becomes ready.

use super::Waiter;
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

/// A fiber waiting on a descriptor: to retry its operation, or for bytes the
/// reactor writes for it (what is left, and the stream's name for errors).
struct Waiting {
    w: Waiter,
    write: Option<(Pending, String)>,
}

/// What the reactor writes for a waiter.
pub(super) enum Pending {
    /// These bytes (what is left of them).
    Bytes(Vec<u8>),
    /// Whatever the stream's own buffer holds, until it says done.
    Drain(crate::vm::builtin::Drain),
}

/// What a waiter gets.
pub(super) enum Woken {
    /// Run the operation again.
    Retry,
    /// The write is done.
    Written,
    /// The write failed.
    Failed(String),
}

pub(super) struct Reactor {
    poll: Poll,
    events: Events,
    pub waker: Arc<mio::Waker>,
    /// Descriptors some fiber waits on: the interest registered, and the waiters.
    waits: HashMap<RawFd, (Interest, Vec<Waiting>)>,
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

    /// Parks waiter `w` until `fd` is ready for `interest` (with `write`, until
    /// the reactor has written those bytes).
    pub fn wait(
        &mut self,
        fd: RawFd,
        interest: Interest,
        w: Waiter,
        write: Option<(Pending, String)>,
    ) -> std::io::Result<()> {
        let waiting = Waiting { w, write };
        let token = Token(fd as usize + FIRST_FD);
        let registry = self.poll.registry();
        match self.waits.get_mut(&fd) {
            Some((registered, waiters)) => {
                if registered.add(interest) != *registered {
                    *registered = registered.add(interest);
                    registry.reregister(&mut SourceFd(&fd), token, *registered)?;
                }
                waiters.push(waiting);
            }
            None => {
                registry.register(&mut SourceFd(&fd), token, interest)?;
                self.waits.insert(fd, (interest, vec![waiting]));
            }
        }
        Ok(())
    }

    /// Takes a cancelled waiter off `fd`; the descriptor is deregistered when
    /// no one waits on it any more (it may be closed and its number reused).
    pub fn forget(&mut self, fd: RawFd, fiber: u32) {
        let Some((_, waiters)) = self.waits.get_mut(&fd) else { return };
        waiters.retain(|x| x.w.fiber != fiber);
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
    /// passes; returns the waiters to wake.
    pub fn poll(&mut self, timeout: Option<Duration>) -> Vec<(Waiter, Woken)> {
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
                    let Some((_, waiters)) = self.waits.get_mut(&fd) else { continue };
                    let mut still = Vec::new();
                    let mut blocked = false;
                    for mut x in waiters.drain(..) {
                        match x.write.as_mut() {
                            None => woken.push((x.w, Woken::Retry)),
                            Some(_) if blocked => still.push(x),
                            Some((pending, name)) => match pending.write(fd) {
                                Ok(true) => woken.push((x.w, Woken::Written)),
                                Ok(false) => {
                                    blocked = true;
                                    still.push(x);
                                }
                                Err(e) => {
                                    let msg = format!("cannot write to {name}: {}", crate::runner::io_reason(&e));
                                    woken.push((x.w, Woken::Failed(msg)));
                                }
                            },
                        }
                    }
                    if still.is_empty() {
                        self.waits.remove(&fd);
                        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
                    } else {
                        *waiters = still;
                    }
                }
            }
        }
        woken
    }

    /// Wakes every fiber waiting on `fd` to retry (it is being closed; they
    /// find it closed).
    pub fn closing(&mut self, fd: RawFd) -> Vec<(Waiter, Woken)> {
        let Some((_, waiters)) = self.waits.remove(&fd) else { return Vec::new() };
        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        waiters
            .into_iter()
            .map(|x| match x.write {
                None => (x.w, Woken::Retry),
                Some((_, name)) => (x.w, Woken::Failed(format!("cannot write to {name}: it was closed"))),
            })
            .collect()
    }
}

impl Pending {
    /// Writes what the descriptor takes now; true when all is written.
    fn write(&mut self, fd: RawFd) -> std::io::Result<bool> {
        match self {
            Pending::Bytes(data) => write_some(fd, data),
            Pending::Drain(drain) => drain(),
        }
    }
}

/// Writes as much of `data` as the descriptor takes now, removing it from
/// `data`; true when all of it is written.
fn write_some(fd: RawFd, data: &mut Vec<u8>) -> std::io::Result<bool> {
    while !data.is_empty() {
        // SAFETY: writes from a live buffer of that length to a descriptor the
        // stream keeps open while a fiber waits on it.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::WouldBlock => return Ok(false),
                std::io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        }
        data.drain(..n as usize);
    }
    Ok(true)
}
