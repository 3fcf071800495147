//! `--profile FILE` (docs/profiling.md): a pprof profile of where the program
//! spends its time. The clock thread (profile_clock.rs) counts periods; the
//! driver charges them where it already stops — a preemption point or the end
//! of a slice — to the running fiber's stack (CPU time), and when a parked
//! fiber runs again, the periods that passed while it was parked to its stack
//! at the park (blocked time). Nothing runs per instruction.

use super::profile_clock::{Clock, Ticks};
use super::{FiberState, Wait};
use crate::bytecode::ProtoRef;
use crate::pprof::{Label, Pprof};
use crate::vm::{Fiber, Obj, Value, Vm};
use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Each sample's values: CPU samples count in the first two, blocked time in
/// the third (docs/profiling.md, "Sample types").
const TYPES: &[(&str, &str)] = &[("samples", "count"), ("cpu", "nanoseconds"), ("blocked", "nanoseconds")];

/// Frames of a stack kept in a sample, innermost first: a deep recursion
/// costs no more than this to sample.
const MAX_FRAMES: usize = 128;

/// The profile being written, shared by every VM recording into it (`csp
/// test` runs a VM per test file: one profile holds them all).
#[derive(Clone)]
pub struct ProfileFile(Rc<RefCell<Shared>>);

struct Shared {
    pprof: Pprof,
    /// Taken when the profile is written.
    file: Option<File>,
    clock: Clock,
    period: Duration,
    began: SystemTime,
    started: Instant,
}

impl ProfileFile {
    /// Creates (truncates) the file now, so a path that cannot be written is
    /// reported before the program runs, and starts sampling `hz` times a
    /// second the CPU time of the calling thread (the one the VMs run on).
    pub fn create(path: &str, hz: u32) -> std::io::Result<ProfileFile> {
        let file = File::create(path)?;
        let period = Duration::from_nanos(1_000_000_000 / u64::from(hz.max(1)));
        let pprof = Pprof::new(TYPES, 1, period.as_nanos() as i64);
        let clock = Clock::start(period)?;
        let shared =
            Shared { pprof, file: Some(file), clock, period, began: SystemTime::now(), started: Instant::now() };
        Ok(ProfileFile(Rc::new(RefCell::new(shared))))
    }

    /// Makes `vm` record its samples into this profile.
    pub fn attach(&self, vm: &mut Vm) {
        let mut s = self.0.borrow_mut();
        let p = Profile {
            shared: self.0.clone(),
            ticks: s.clock.ticks.clone(),
            period: s.period.as_nanos() as i64,
            locations: Default::default(),
            labels: Default::default(),
            stack: Vec::new(),
            keys: (s.pprof.string("fiber"), s.pprof.string("wait")),
            waits: WAITS.map(|w| s.pprof.string(w)),
            main: s.pprof.string("main"),
        };
        s.clock.ticks.mark_start();
        drop(s);
        vm.sched.profile = Some(Box::new(p));
    }

    /// Stops sampling and writes the gzipped profile (once); the write's error.
    pub fn finish(&self) -> std::io::Result<()> {
        let mut s = self.0.borrow_mut();
        s.clock.stop();
        let Some(mut file) = s.file.take() else { return Ok(()) };
        let time = s.began.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
        let bytes = s.pprof.gzipped(time, s.started.elapsed().as_nanos() as i64);
        file.write_all(&bytes)
    }
}

/// One VM's part of the profile (`Sched::profile`).
pub(crate) struct Profile {
    shared: Rc<RefCell<Shared>>,
    ticks: Arc<Ticks>,
    /// Nanoseconds a period stands for.
    period: i64,
    /// The location id of each (proto, pc) sampled.
    locations: foldhash::HashMap<(usize, u32), u64>,
    /// The `fiber` label's string id, by go site and callee.
    labels: foldhash::HashMap<(usize, u32, usize), i64>,
    /// The stack being sampled (location ids), kept to save allocations.
    stack: Vec<u64>,
    /// The string ids of the label keys `fiber` and `wait`.
    keys: (i64, i64),
    /// The string ids of `WAITS`, by index.
    waits: [i64; WAITS.len()],
    /// The string id of the main fiber's label.
    main: i64,
}

/// A parked fiber's `Fiber::parked_at`: the real-time period it parked in
/// (its low `PERIOD_BITS`) over the wait kind plus one (never 0, which is "not
/// parked"). A period of 28 bits lasts 31 days at the default rate: a park
/// longer than that is charged the rest of its length over a multiple of it.
const WAIT_BITS: u32 = 4;
const PERIOD_BITS: u32 = 32 - WAIT_BITS;
const PERIOD_MASK: u64 = (1 << PERIOD_BITS) - 1;

fn park_word(period: u64, wait: u8) -> u32 {
    ((period & PERIOD_MASK) as u32) << WAIT_BITS | (u32::from(wait) + 1)
}

/// The real-time periods from a park's word to `now`, and its wait kind.
fn unpark_word(word: u32, now: u64) -> (u64, usize) {
    let parked = u64::from(word >> WAIT_BITS);
    ((now & PERIOD_MASK).wrapping_sub(parked) & PERIOD_MASK, (word & ((1 << WAIT_BITS) - 1)) as usize - 1)
}

/// A preemption point of the running fiber: CPU periods that passed are its.
#[inline]
pub(super) fn preempted(vm: &mut Vm, f: &Fiber) {
    let Some(p) = vm.sched.profile.as_deref() else { return };
    let (n, _) = p.ticks.take_cpu();
    if n > 0 {
        charge_cpu(vm, f, n);
    }
}

/// A slice of `f` is about to begin: CPU periods that passed since the last
/// slice are the scheduler's; periods that passed while the fiber was parked
/// are blocked time at its stack (which has not moved since). The usual case
/// — nothing pending, parked in this period — is a load, a compare and a
/// store: every switch between fibers runs it.
#[inline]
pub(super) fn slice_begins(vm: &mut Vm, f: &mut Fiber) {
    let Some(p) = vm.sched.profile.as_deref() else { return };
    let now = p.ticks.now();
    let word = f.parked_at;
    let waited = word != 0 && u64::from(word >> WAIT_BITS) != Ticks::wall(now) & PERIOD_MASK;
    if Ticks::pending(now) || waited {
        return slice_begins_slow(vm, f, now);
    }
    f.parked_at = 0;
}

#[cold]
#[inline(never)]
fn slice_begins_slow(vm: &mut Vm, f: &mut Fiber, now: u64) {
    let Some(p) = vm.sched.profile.as_deref_mut() else { return };
    let ((n, starting), period) = (p.ticks.take_cpu(), p.period);
    let word = std::mem::take(&mut f.parked_at);
    // The VM's first slice: CPU time so far went to compiling the program.
    let outside = if starting { "[startup]" } else { "[runtime]" };
    if n > 0 {
        charge(vm, At::Outside(outside), [n as i64, n as i64 * period, 0]);
    }
    if word != 0 {
        let (n, wait) = unpark_word(word, Ticks::wall(now));
        if n > 0 {
            charge(vm, At::Fiber(f, Some(wait)), [0, 0, n as i64 * period]);
        }
    }
}

/// A slice of `f` ended: CPU periods that passed are its (at its stack; at
/// `[fiber exit]` if it ended).
#[inline]
pub(super) fn slice_ends(vm: &mut Vm, f: &Fiber) {
    let Some(p) = vm.sched.profile.as_deref() else { return };
    if Ticks::pending(p.ticks.now()) {
        let (n, _) = p.ticks.take_cpu();
        if n > 0 {
            charge_cpu(vm, f, n);
        }
    }
}

/// `f`, whose scheduler state is `state`, parked at the end of its slice:
/// it notes when, and on what.
#[inline]
pub(super) fn parked(p: Option<&Profile>, state: &FiberState, f: &mut Fiber) {
    let Some(p) = p else { return };
    let wait = state.parked.as_ref().map_or(0, Wait::index);
    f.parked_at = park_word(Ticks::wall(p.ticks.now()), wait);
}

/// `n` CPU periods for the running fiber.
fn charge_cpu(vm: &mut Vm, f: &Fiber, n: u64) {
    let ns = n as i64 * vm.sched.profile.as_deref().map_or(0, |p| p.period);
    charge(vm, At::Fiber(f, None), [n as i64, ns, 0]);
}

/// Where a sample's time went.
enum At<'a> {
    /// Outside the fibers' slices: a frame of this name (`[startup]`, `[runtime]`).
    Outside(&'static str),
    /// A fiber at its stack (`[fiber exit]` once its frames are gone),
    /// running, or parked on `WAITS[i]` (the `wait` label).
    Fiber(&'a Fiber, Option<usize>),
}

/// Adds a sample of `values` at `at`, labelled with the fiber and its wait.
fn charge(vm: &mut Vm, at: At, values: [i64; 3]) {
    let Some(mut p) = vm.sched.profile.take() else { return };
    let mut labels = [Label::Str(0, 0), Label::Str(0, 0)];
    let mut n = 0;
    p.stack.clear();
    match at {
        At::Outside(name) => p.pseudo(name),
        At::Fiber(f, wait) => {
            labels[0] = Label::Str(p.keys.0, p.fiber_label(vm, f));
            n = 1;
            if let Some(w) = wait {
                labels[1] = Label::Str(p.keys.1, p.waits[w]);
                n = 2;
            }
            if f.frames.is_empty() {
                p.pseudo("[fiber exit]");
            }
            for fr in f.frames.iter().rev().take(MAX_FRAMES) {
                let site = fr.current_site();
                let shared = &p.shared;
                let loc = *p.locations.entry((site.proto.as_ptr() as usize, site.pc)).or_insert_with(|| {
                    let file = &site.proto.file;
                    let start = file.line_col(site.proto.span.start).0 as i64;
                    let line = file.line_col(site.span().start).0 as i64;
                    let name = function_name(site.proto, start);
                    shared.borrow_mut().pprof.location(&name, &file.name, start, line)
                });
                p.stack.push(loc);
            }
        }
    }
    p.shared.borrow_mut().pprof.add(&p.stack, &labels[..n], &values);
    vm.sched.profile = Some(p);
}

impl Profile {
    /// A stack of one frame that stands for time outside the fibers' code.
    fn pseudo(&mut self, name: &str) {
        let loc = self.shared.borrow_mut().pprof.location(name, "", 0, 0);
        self.stack.push(loc);
    }

    /// The `fiber` label of `f`: `main`, or `go worker at main.csp:12:5` (as
    /// `--trace` names tracks, without the fiber's number: a label per `go`,
    /// so its fibers add up). Read from the fiber itself, so its start costs
    /// the profile nothing: a program may start a million fibers.
    fn fiber_label(&mut self, vm: &Vm, f: &Fiber) -> i64 {
        let Some(start) = f.start else { return self.main };
        let site = start.site();
        let callee = callee(vm, f, start.method);
        let key = (site.proto.as_ptr() as usize, site.pc, callee.map_or(0, |c| c.as_ptr() as usize));
        if let Some(&l) = self.labels.get(&key) {
            return l;
        }
        let text = match callee {
            Some(c) => format!("go {} at {}", c.display_name(), site.location()),
            None => format!("go at {}", site.location()),
        };
        let l = self.shared.borrow_mut().pprof.string(&text);
        self.labels.insert(key, l);
        l
    }
}

/// The function a fiber's `go` called: the closure in its first stack slot,
/// which stays there for the fiber's life (`Fiber::for_call`), or for a
/// method or a native that calls back, its first frame's (none once it ended).
fn callee(vm: &Vm, f: &Fiber, method: bool) -> Option<ProtoRef> {
    let closure = match f.stack.first() {
        Some(&Value::Obj(h)) if !method => match vm.heap.get(h) {
            Obj::Closure(c) => Some(c.proto),
            _ => None,
        },
        _ => None,
    };
    closure.or_else(|| f.frames.first().map(|fr| fr.proto))
}

/// A function's name in the profile: its own, or for an anonymous one where
/// it is (`<fn at main.csp:12>`), as anonymous functions are many.
fn function_name(proto: ProtoRef, start: i64) -> String {
    match proto.display_name() {
        "<fn>" => format!("<fn at {}:{start}>", proto.file.name),
        name => name.to_string(),
    }
}

/// The `wait` label's values: what a blocked fiber waited in (the names of
/// `--trace`'s blocked slices), by `Wait::index`.
const WAITS: [&str; 9] = ["recv", "send", "select", "lock", "wait task", "wait group", "wait block", "sleep", "io"];
