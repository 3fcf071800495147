//! What can wake a fiber from outside the fibers, as the scheduler holds it:
//! timers, the blocking-I/O pool, the reactor, signal channels and the
//! `--timeout` deadline. Data only: delivering them is in timer.rs, io.rs,
//! signal.rs and deadline.rs, which run fibers' code and so sit above.

use super::pool::IoPool;
use super::reactor::Reactor;
use super::Waiter;
use crate::vm::value::{Handle, Value};
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// What can wake a fiber from outside the fibers: timers, the worker pool, the
/// reactor, signals, and `--timeout`'s deadline.
#[derive(Default)]
pub(crate) struct Events {
    pub(super) timers: Timers,
    /// The blocking-I/O pool, once used.
    pub(super) io: Option<IoPool>,
    /// The `epoll` the scheduler sleeps in when descriptors, the pool or
    /// signals can wake a fiber; made on first use.
    pub(super) reactor: Option<Reactor>,
    /// Signal channels and handling, once signals are asked for.
    pub(super) signals: Option<Box<Signals>>,
    /// `--timeout` for `run`: when the program is cancelled (see driver.rs).
    pub(super) deadline: Option<Deadline>,
    /// Where other isolates complete this one's fibers on shared channels.
    pub(super) shared: super::shared_state::Local,
    /// The other isolates: those stepped on this thread, and whether any
    /// can still make progress (set when the pool starts).
    pub(super) others: Option<super::others::Held>,
}

impl Events {
    /// The reactor, made on first use. Making it fails only when the process
    /// is out of descriptors.
    pub(super) fn reactor(&mut self) -> std::io::Result<&mut Reactor> {
        if self.reactor.is_none() {
            self.reactor = Some(Reactor::new()?);
        }
        Ok(self.reactor.as_mut().expect("made"))
    }
}

/// `sleep`, `after` and `ticker`: a binary heap of deadlines.
pub(super) enum TimerKind {
    /// Wake a sleeping fiber.
    Wake(Waiter),
    /// `after(ms)`: send the time once on this channel.
    Send(Handle),
    /// `ticker(ms)`: send the time on this channel every period (dropped when full).
    Tick(Handle, Duration),
    /// The grace time of fiber `.0`, running task `.1`, has passed.
    Grace(u32, Handle),
}

/// A timer in the heap: what to do at `at`.
pub(super) struct Timer {
    pub(super) at: Instant,
    pub(super) seq: u64,
    pub(super) kind: TimerKind,
}

impl PartialEq for Timer {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timer {
    /// Reversed, so the BinaryHeap pops the earliest deadline first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Default)]
pub(super) struct Timers {
    pub(super) heap: BinaryHeap<Timer>,
    pub(super) seq: u64,
}

impl Timers {
    /// The channels of `after` and `ticker` timers (GC roots).
    pub fn roots(&self, mut push: impl FnMut(Value)) {
        for t in &self.heap {
            if let TimerKind::Send(h) | TimerKind::Tick(h, _) | TimerKind::Grace(_, h) = t.kind {
                push(Value::Obj(h));
            }
        }
    }
}

/// `csp run --timeout`: a wall-clock limit for the whole program. When it
/// passes, the main task is cancelled as SIGTERM would cancel it (every
/// `finally` runs, locks are released, children are killed) and the program
/// exits 124, as GNU `timeout` does; if cleanup is still running when the
/// grace time (`--grace`) has passed, the program ends at once (deadline.rs).
pub(crate) struct Deadline {
    pub(super) at: Instant,
    limit: Duration,
    /// The limit passed and the main task was cancelled.
    pub fired: bool,
}

impl Deadline {
    pub fn new(limit: Duration) -> Deadline {
        Deadline { at: Instant::now() + limit, limit, fired: false }
    }

    /// `5s`, `250ms`: the limit as the user gave it.
    pub fn describe(&self) -> String {
        show(self.limit)
    }

    /// When the scheduler must next look at it (never again once it fired).
    pub fn at(&self) -> Option<Instant> {
        (!self.fired).then_some(self.at)
    }

    /// The limit moves `by` later (a debugger's stop).
    pub fn postpone(&mut self, by: Duration) {
        self.at += by;
    }
}

/// A duration as a user would write it: `5s`, `250ms`.
pub(crate) fn show(d: Duration) -> String {
    match d.subsec_millis() {
        0 => format!("{}s", d.as_secs()),
        _ => format!("{}ms", d.as_millis()),
    }
}

/// The signals a program may name, and their numbers; a signal's bit in the
/// masks below is its index here.
pub const KNOWN: [(&str, libc::c_int); 7] = [
    ("SIGINT", libc::SIGINT),
    ("SIGTERM", libc::SIGTERM),
    ("SIGHUP", libc::SIGHUP),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGWINCH", libc::SIGWINCH),
];
/// The scheduler's side: who gets which signal, and whether one ended the program.
#[derive(Default)]
pub(super) struct Signals {
    /// Channels asked for each signal (index in `KNOWN`).
    pub(super) chans: [Vec<Handle>; KNOWN.len()],
    /// `csp run`'s default handling is installed.
    pub(super) default: bool,
    /// The signal pipe is registered with this scheduler's reactor.
    pub(super) watched: bool,
    /// The signal (index) that cancelled the program.
    pub stopped_by: Option<usize>,
}

impl Signals {
    pub fn roots(&self) -> impl Iterator<Item = Handle> + '_ {
        self.chans.iter().flatten().copied()
    }
}
