//! Signals. A handler (signal-hook, no extra thread) sets the signal's bit in
//! `PENDING` and writes a byte to a self-pipe the reactor watches, so an idle
//! scheduler wakes; the scheduler checks `PENDING` between slices (one atomic
//! load) and acts on the VM's thread: it sends the signal's name on the channels
//! a program asked for (`os.signals`), or applies the default handling that
//! `csp run` installs: SIGINT/SIGTERM cancel the main task (exit 128+n), a
//! second one exits at once, SIGQUIT prints every fiber and goes on.

use super::events::{Signals, KNOWN};
use super::lifecycle::{cancel_task, Cause};
use super::{chan, task};
use crate::vm::{Value, Vm};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

const INT: usize = 0;
const TERM: usize = 1;
const QUIT: usize = 5;

// Process-wide, as signals are: only the main isolate installs the handlers
// and reads them; it cancels the work it sent to other isolates.
/// Signals arrived and not yet acted on.
static PENDING: AtomicU32 = AtomicU32::new(0);
/// Signals our handler is installed for.
static INSTALLED: AtomicU32 = AtomicU32::new(0);
/// SIGINT/SIGTERM under the default handling: the handler counts them, so a
/// third one ends the process even if the VM's thread never looks again.
static DEFAULT: AtomicU32 = AtomicU32::new(0);
static STOPS: AtomicU32 = AtomicU32::new(0);
/// The self-pipe: read end (drained by the scheduler), write end (the handler).
static PIPE: [AtomicI32; 2] = [AtomicI32::new(-1), AtomicI32::new(-1)];

/// The index of a signal named `name` ("SIGINT").
pub fn index_of(name: &str) -> Option<usize> {
    KNOWN.iter().position(|(n, _)| *n == name)
}

/// The exit code of a program ended by signal `i`: 128 + its number, as shells report.
pub(super) fn exit_code(i: usize) -> i32 {
    128 + KNOWN[i].1
}

/// Was the signal ignored when the process started (`nohup`, a background job
/// of a non-interactive shell)? Then the default handling leaves it ignored.
fn inherited_ignored(sig: libc::c_int) -> bool {
    // SAFETY: a query only (null new action), into a zeroed struct.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Makes the self-pipe once (non-blocking both ends, closed on exec).
fn pipe() -> std::io::Result<RawFd> {
    let r = PIPE[0].load(Ordering::Acquire);
    if r >= 0 {
        return Ok(r);
    }
    let mut fds = [0; 2];
    if !nonblocking_pipe(&mut fds) {
        return Err(std::io::Error::last_os_error());
    }
    PIPE[1].store(fds[1], Ordering::Release);
    PIPE[0].store(fds[0], Ordering::Release);
    Ok(fds[0])
}

#[cfg(target_os = "linux")]
fn nonblocking_pipe(fds: &mut [libc::c_int; 2]) -> bool {
    // SAFETY: pipe2 writes two descriptors into `fds`.
    unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) == 0 }
}

/// Elsewhere than Linux (macOS has no pipe2): the flags set one by one.
#[cfg(not(target_os = "linux"))]
fn nonblocking_pipe(fds: &mut [libc::c_int; 2]) -> bool {
    // SAFETY: pipe writes two descriptors into `fds`; fcntl only sets flags on them.
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return false;
        }
        fds.iter().all(|&fd| {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) == 0
                && libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0
        })
    }
}

/// Installs the handler for signal `i` (once per process).
fn install(i: usize) -> std::io::Result<()> {
    if INSTALLED.load(Ordering::Acquire) & (1 << i) != 0 {
        return Ok(());
    }
    pipe()?;
    let sig = KNOWN[i].1;
    let action = move || {
        // Only async-signal-safe work here: atomics, write(2), _exit(2).
        if DEFAULT.load(Ordering::Relaxed) & (1 << i) != 0 && STOPS.fetch_add(1, Ordering::Relaxed) >= 2 {
            signal_hook::low_level::exit(128 + sig);
        }
        PENDING.fetch_or(1 << i, Ordering::AcqRel);
        let fd = PIPE[1].load(Ordering::Relaxed);
        // SAFETY: a one-byte write to our pipe; full (signals pile up) is fine.
        unsafe { libc::write(fd, [0u8].as_ptr().cast(), 1) };
    };
    // SAFETY: the action above is async-signal-safe.
    unsafe { signal_hook::low_level::register(sig, action) }?;
    INSTALLED.fetch_or(1 << i, Ordering::AcqRel);
    Ok(())
}

fn signals(vm: &mut Vm) -> &mut Signals {
    vm.sched.events.signals.get_or_insert_with(Default::default)
}

/// Registers the self-pipe with this scheduler's reactor, so an idle wait ends
/// when a signal arrives.
fn watch(vm: &mut Vm) -> std::io::Result<()> {
    if signals(vm).watched {
        return Ok(());
    }
    let fd = pipe()?;
    vm.sched.events.reactor()?.watch_signals(fd)?;
    signals(vm).watched = true;
    Ok(())
}

/// `csp run`: SIGINT and SIGTERM cancel the main task, SIGQUIT prints every
/// fiber; a signal the process inherited as ignored stays ignored.
pub fn install_default(vm: &mut Vm) -> std::io::Result<()> {
    for i in [INT, TERM, QUIT] {
        if inherited_ignored(KNOWN[i].1) {
            continue;
        }
        if i != QUIT {
            DEFAULT.fetch_or(1 << i, Ordering::AcqRel);
        }
        install(i)?;
    }
    signals(vm).default = true;
    watch(vm)
}

/// `os.signals(...)`: a channel (buffer 16, further signals dropped while it is
/// full) that receives the name of each of the signals `which` (indexes) that
/// arrives; those signals no longer get the default handling.
pub fn notify(vm: &mut Vm, which: &[usize]) -> std::io::Result<Value> {
    watch(vm)?;
    let ch = super::ops::new_chan(vm, 16);
    let Value::Obj(h) = ch else { unreachable!() };
    for &i in which {
        install(i)?;
        DEFAULT.fetch_and(!(1 << i), Ordering::AcqRel);
        let list = &mut signals(vm).chans[i];
        if !list.contains(&h) {
            list.push(h);
        }
    }
    Ok(ch)
}

/// Are signals watched (an idle scheduler must wait in the reactor to see them)?
pub(super) fn watching(vm: &Vm) -> bool {
    vm.sched.events.signals.as_ref().is_some_and(|s| s.watched)
}

/// Can a signal still wake a fiber? While the main task runs and a program
/// asked for signals on a channel, a fiber blocked on it is waiting for the
/// outside world, not deadlocked (once the main task ends, it is a leftover).
pub(super) fn can_wake(vm: &Vm) -> bool {
    let asked = vm.sched.events.signals.as_ref().is_some_and(|s| s.chans.iter().any(|c| !c.is_empty()));
    asked && vm.sched.main_task.is_some_and(|t| !task::get(&vm.heap, t).finished())
}

/// Acts on the signals that arrived since the last look (cheap when none did).
pub(super) fn deliver(vm: &mut Vm) {
    // An isolate that handles no signals (a worker) leaves them to the one
    // that does: taking the bits here would lose them.
    if PENDING.load(Ordering::Acquire) == 0 || vm.sched.events.signals.is_none() {
        return;
    }
    // Drain first, then take the bits: a signal arriving in between leaves its
    // bit or its byte behind, never neither.
    drain();
    let bits = PENDING.swap(0, Ordering::AcqRel);
    for i in (0..KNOWN.len()).filter(|i| bits & (1 << i) != 0) {
        let chans = vm.sched.events.signals.as_ref().map(|s| s.chans[i].clone()).unwrap_or_default();
        if !chans.is_empty() {
            let name = vm.heap.str(KNOWN[i].0);
            for ch in chans {
                // Full: dropped, as Go's signal.Notify does; closed: ignored.
                let _ = chan::try_send(vm, ch, name);
            }
        } else if vm.sched.events.signals.as_ref().is_some_and(|s| s.default) {
            match i {
                INT | TERM => stop(vm, i),
                QUIT => {
                    crate::err_print!("{}", super::report::fiber_dump(vm));
                    super::others::dump(vm);
                }
                _ => {}
            }
        }
    }
}

/// Reads every byte the handler wrote.
fn drain() {
    let fd = PIPE[0].load(Ordering::Acquire);
    let mut buf = [0u8; 64];
    // SAFETY: reads into a local buffer from our non-blocking pipe.
    while fd >= 0 && unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}

/// SIGINT/SIGTERM: cancel the main task (its fibers' `finally` blocks run and
/// their locks are released); a second one ends the process at once.
fn stop(vm: &mut Vm, i: usize) {
    let main = vm.sched.main_task.filter(|_| signals(vm).stopped_by.is_none());
    let Some(main) = main else {
        // The second: the program ends at once, with this signal's status.
        vm.sched.exit = Some(exit_code(i));
        return;
    };
    signals(vm).stopped_by = Some(i);
    vm.sched.begin_ending();
    cancel_task(vm, main, Cause::Signal(KNOWN[i].0));
}
