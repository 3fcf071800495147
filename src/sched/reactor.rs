//! Waiting for the outside world: one `epoll` (mio) that the scheduler sleeps in
//! when no fiber is ready. It wakes for a descriptor a fiber waits on (a pipe, a
//! child process's pidfd, later sockets), for the I/O pool's finished jobs (its
//! `Waker`), for signals (a self-pipe) and at the next timer.
//!
//! A fiber waits on a descriptor only after an operation on it would block (it
//! read or wrote until `EAGAIN`), and every waiter is woken (`Resume::Retry`:
//! the builtin runs again) when it becomes ready. A descriptor stays
//! registered (edge-triggered) from its first wait until it closes: owners
//! hold waited-on descriptors in `os::watched::Watched`, which reports the
//! close, so a reused number is registered afresh. Readiness while no fiber
//! waits is dropped: the next operation tries the descriptor first.

use super::Waiter;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Duration;

/// The token of the I/O pool's waker; descriptors use `fd + FIRST_FD`.
const WAKER: Token = Token(0);
/// The token of the signal self-pipe.
pub(super) const SIGNALS: Token = Token(1);
const FIRST_FD: usize = 2;
/// The token of the reactor of isolates run on this thread (`others.rs`).
const OTHERS: Token = Token(usize::MAX);

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
    /// By descriptor number: registered descriptors, with the interest
    /// registered and the fibers waiting (none between waits).
    table: Vec<Option<(Interest, Vec<Waiting>)>>,
    /// Fibers waiting, over all descriptors.
    parked: usize,
    /// Descriptors closed since the table was last cleaned.
    closed: crate::os::watched::Closed,
    /// Waiters on a descriptor that closed under them, to wake at the next poll.
    orphans: Vec<(Waiter, Woken)>,
}

impl Reactor {
    pub fn new() -> std::io::Result<Reactor> {
        let poll = Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), WAKER)?);
        let closed = crate::os::watched::subscribe();
        Ok(Reactor {
            poll,
            events: Events::with_capacity(256),
            waker,
            table: Vec::new(),
            parked: 0,
            closed,
            orphans: Vec::new(),
        })
    }

    /// Fibers are parked on descriptors.
    pub fn waiting(&self) -> bool {
        self.parked > 0 || !self.orphans.is_empty()
    }

    /// Forgets descriptors that closed: the kernel dropped their registration.
    fn clean(&mut self) {
        let closed = std::mem::take(&mut *self.closed.lock().unwrap_or_else(|p| p.into_inner()));
        for fd in closed {
            if let Some(Some((_, waiters))) = self.table.get_mut(fd as usize).map(Option::take) {
                // Owners close a descriptor only with no one waiting on it; if
                // that ever fails, the waiters retry and find it closed.
                self.parked -= waiters.len();
                self.orphans.extend(waiters.into_iter().map(|x| (x.w, Woken::Retry)));
            }
        }
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
        self.clean();
        let waiting = Waiting { w, write };
        let token = Token(fd as usize + FIRST_FD);
        let registry = self.poll.registry();
        let i = fd as usize;
        if self.table.len() <= i {
            self.table.resize_with(i + 1, || None);
        }
        match &mut self.table[i] {
            Some((registered, waiters)) => {
                if registered.add(interest) != *registered {
                    *registered = registered.add(interest);
                    registry.reregister(&mut SourceFd(&fd), token, *registered)?;
                }
                waiters.push(waiting);
            }
            slot @ None => {
                registry.register(&mut SourceFd(&fd), token, interest)?;
                *slot = Some((interest, vec![waiting]));
            }
        }
        self.parked += 1;
        Ok(())
    }

    /// Takes a cancelled waiter off `fd` (which stays registered).
    pub fn forget(&mut self, fd: RawFd, fiber: u32) {
        let Some(Some((_, waiters))) = self.table.get_mut(fd as usize) else { return };
        let before = waiters.len();
        waiters.retain(|x| x.w.fiber != fiber);
        self.parked -= before - waiters.len();
    }

    /// Registers the signal self-pipe (read end).
    pub fn watch_signals(&mut self, fd: RawFd) -> std::io::Result<()> {
        self.poll.registry().register(&mut SourceFd(&fd), SIGNALS, Interest::READABLE)
    }

    /// Registers the reactor of isolates that run on this thread: this one's
    /// sleep ends when theirs would.
    pub fn watch_others(&mut self, fd: RawFd) -> std::io::Result<()> {
        self.poll.registry().register(&mut SourceFd(&fd), OTHERS, Interest::READABLE)
    }

    /// This reactor's own descriptor (an `epoll`), for `watch_others`.
    pub fn fd(&self) -> RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.poll)
    }

    /// Sleeps until a descriptor is ready, the waker is woken or `timeout`
    /// passes; returns the waiters to wake.
    pub fn poll(&mut self, timeout: Option<Duration>) -> Vec<(Waiter, Woken)> {
        self.clean();
        let timeout = if self.orphans.is_empty() { timeout } else { Some(Duration::ZERO) };
        if let Err(e) = self.poll.poll(&mut self.events, timeout) {
            // EINTR (a signal arrived): the caller looks again.
            if e.kind() != std::io::ErrorKind::Interrupted {
                crate::err_println!("csp: poll failed: {e}");
            }
            return std::mem::take(&mut self.orphans);
        }
        self.clean();
        let mut woken = std::mem::take(&mut self.orphans);
        for ev in self.events.iter() {
            match ev.token() {
                // Which signals came is in `signal::PENDING`; the scheduler
                // looks there after every poll.
                // The isolates on this thread have work: the scheduler steps them.
                WAKER | SIGNALS | OTHERS => {}
                Token(t) => {
                    let fd = (t - FIRST_FD) as RawFd;
                    let Some(Some((registered, waiters))) = self.table.get_mut(fd as usize) else { continue };
                    let before = waiters.len();
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
                                    let msg = format!("cannot write to {name}: {}", crate::os::io_reason(&e));
                                    woken.push((x.w, Woken::Failed(msg)));
                                }
                            },
                        }
                    }
                    self.parked -= before - still.len();
                    // Write interest is dropped once no one waits to write, so a
                    // socket that is read does not wake the poll for every ACK.
                    if still.is_empty() && *registered != Interest::READABLE {
                        *registered = Interest::READABLE;
                        let token = Token(fd as usize + FIRST_FD);
                        let _ = self.poll.registry().reregister(&mut SourceFd(&fd), token, Interest::READABLE);
                    }
                    *waiters = still;
                }
            }
        }
        woken
    }

    /// Wakes every fiber waiting on `fd` to retry (it is being closed; they
    /// find it closed).
    pub fn closing(&mut self, fd: RawFd) -> Vec<(Waiter, Woken)> {
        let Some(Some((_, waiters))) = self.table.get_mut(fd as usize).map(Option::take) else { return Vec::new() };
        self.parked -= waiters.len();
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
