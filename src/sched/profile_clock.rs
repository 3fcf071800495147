//! The profiler's clock (docs/profiling.md): a thread that wakes at the
//! profile's rate and counts periods in atomics the VM reads at the points
//! where it already stops (preemption points, slice ends). The VM never reads
//! a clock for the profile, and the thread costs nothing between its wakes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the clock thread counts: one word, so the VM learns with one load
/// whether anything happened since it last looked.
#[derive(Default)]
pub(super) struct Ticks {
    /// High half: periods of real time since the profile began (a blocked
    /// fiber is charged the ones that passed while it was parked). Low half:
    /// periods of the VM thread's CPU time not yet charged to a stack, and
    /// `STARTING`.
    word: AtomicU64,
    stop: AtomicBool,
}

/// In the low half of `Ticks::word` until a VM's first slice: the CPU time
/// so far went to compiling its program (`Ticks::mark_start`).
const STARTING: u64 = 1 << 31;
const LOW: u64 = u32::MAX as u64;

impl Ticks {
    /// The word as it is now (`pending`, `wall`).
    #[inline]
    pub fn now(&self) -> u64 {
        self.word.load(Ordering::Relaxed)
    }

    /// Whether CPU periods (or a VM's start) in the word `now` wait to be taken.
    #[inline]
    pub fn pending(now: u64) -> bool {
        now & LOW != 0
    }

    /// The real-time periods in the word `now`.
    #[inline]
    pub fn wall(now: u64) -> u64 {
        now >> 32
    }

    /// CPU periods not charged yet, taken, and whether a VM's first slice
    /// was still to begin.
    #[inline]
    pub fn take_cpu(&self) -> (u64, bool) {
        if !Self::pending(self.now()) {
            return (0, false);
        }
        let low = self.word.fetch_and(!LOW, Ordering::Relaxed) & LOW;
        (low & !STARTING, low & STARTING != 0)
    }

    /// A VM is about to run: its first slice takes what the word holds as
    /// its start-up.
    pub fn mark_start(&self) {
        self.word.fetch_or(STARTING, Ordering::Relaxed);
    }
}

/// The clock thread of one profile.
pub(super) struct Clock {
    pub ticks: Arc<Ticks>,
    thread: Option<JoinHandle<()>>,
}

impl Clock {
    /// Starts counting periods of `period`, of real time and of the CPU time
    /// of the thread calling this (the VMs' thread).
    pub fn start(period: Duration) -> std::io::Result<Clock> {
        let ticks = Arc::new(Ticks::default());
        let cpu_clock = thread_cpu_clock()?;
        let t = ticks.clone();
        let thread =
            std::thread::Builder::new().name("csp-profile".into()).spawn(move || count(&t, cpu_clock, period))?;
        Ok(Clock { ticks, thread: Some(thread) })
    }

    /// Stops the thread and waits for it.
    pub fn stop(&mut self) {
        self.ticks.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The CPU-time clock of the calling thread.
#[cfg(not(target_vendor = "apple"))]
fn thread_cpu_clock() -> std::io::Result<libc::clockid_t> {
    let mut id: libc::clockid_t = 0;
    // SAFETY: pthread_self is the calling thread; `id` is written on success.
    match unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) } {
        0 => Ok(id),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

/// macOS has no clock of another thread's CPU time: `--profile` says so.
#[cfg(target_vendor = "apple")]
fn thread_cpu_clock() -> std::io::Result<libc::clockid_t> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no per-thread CPU clock on this system"))
}

/// Nanoseconds of `clock` (None once its thread is gone).
fn read(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The thread's loop: at each period, the real periods passed so far, and the
/// whole periods of CPU time the VM thread used since the last ones counted.
fn count(t: &Ticks, cpu_clock: libc::clockid_t, period: Duration) {
    let start = Instant::now();
    let p = period.as_nanos() as u64;
    let mut counted = read(cpu_clock).unwrap_or(0);
    let mut next = start + period;
    let mut walls = 0;
    while !t.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::park_timeout(next - now);
            continue;
        }
        let passed = now.duration_since(start).as_nanos() as u64 / p;
        next = start + Duration::from_nanos(p * (passed + 1));
        let mut n = 0;
        if let Some(cpu) = read(cpu_clock) {
            n = cpu.saturating_sub(counted) / p;
            counted += n * p;
        }
        // The real periods as a difference, so one add updates both halves.
        let add = (passed - walls) << 32 | n.min(LOW >> 1);
        if add != 0 {
            t.word.fetch_add(add, Ordering::Relaxed);
        }
        walls = passed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taking_cpu_periods_leaves_real_time_and_reports_a_start_once() {
        let t = Ticks::default();
        assert!(!Ticks::pending(t.now()) && t.take_cpu() == (0, false));
        t.mark_start();
        t.word.fetch_add(3 << 32 | 2, Ordering::Relaxed);
        assert!(Ticks::pending(t.now()) && Ticks::wall(t.now()) == 3);
        assert_eq!(t.take_cpu(), (2, true));
        assert!(!Ticks::pending(t.now()) && Ticks::wall(t.now()) == 3);
        t.word.fetch_add(1, Ordering::Relaxed);
        assert_eq!(t.take_cpu(), (1, false));
    }
}
