//! The profiler's clock (docs/profiling.md): a thread that wakes at the
//! profile's rate and counts periods in atomics the VM reads at the points
//! where it already stops (preemption points, slice ends). The VM never reads
//! a clock for the profile, and the thread costs nothing between its wakes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the clock thread counts.
#[derive(Default)]
pub(super) struct Ticks {
    /// Periods of the VM thread's CPU time not yet charged to a stack.
    cpu: AtomicU64,
    /// Periods of real time since the profile began: a blocked fiber is
    /// charged the ones that passed while it was parked.
    wall: AtomicU64,
    stop: AtomicBool,
}

impl Ticks {
    /// CPU periods not charged yet, taken (zero: nothing to do, the usual).
    #[inline]
    pub fn take_cpu(&self) -> u64 {
        if self.cpu.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        self.cpu.swap(0, Ordering::Relaxed)
    }

    /// Whether CPU periods wait to be taken.
    #[inline]
    pub fn cpu_pending(&self) -> bool {
        self.cpu.load(Ordering::Relaxed) != 0
    }

    #[inline]
    pub fn wall(&self) -> u64 {
        self.wall.load(Ordering::Relaxed)
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
fn thread_cpu_clock() -> std::io::Result<libc::clockid_t> {
    let mut id: libc::clockid_t = 0;
    // SAFETY: pthread_self is the calling thread; `id` is written on success.
    match unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) } {
        0 => Ok(id),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
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
    while !t.stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::park_timeout(next - now);
            continue;
        }
        let passed = now.duration_since(start).as_nanos() as u64 / p;
        t.wall.store(passed, Ordering::Relaxed);
        next = start + Duration::from_nanos(p * (passed + 1));
        if let Some(cpu) = read(cpu_clock) {
            let n = cpu.saturating_sub(counted) / p;
            counted += n * p;
            if n > 0 {
                t.cpu.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}
