//! `--profile FILE` (docs/profiling.md): a pprof profile of where the program
//! spends its time. The clock thread (profile_clock.rs) counts periods; the
//! driver charges them where it already stops — a preemption point or the end
//! of a slice — to the running fiber's stack (CPU time), and when a parked
//! fiber runs again, the periods that passed while it was parked to its stack
//! at the park (blocked time). Nothing runs per instruction.

use super::profile_clock::{Clock, Ticks};
use super::{task, Wait};
use crate::bytecode::ProtoRef;
use crate::pprof::{Label, Pprof};
use crate::vm::exec::Halt;
use crate::vm::{Fiber, Vm};
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
            fibers: Vec::new(),
            stack: Vec::new(),
            keys: (s.pprof.string("fiber"), s.pprof.string("wait")),
            waits: WAITS.map(|w| s.pprof.string(w)),
            starting: true,
        };
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
    /// By fiber id (ids are reused: a fiber's first slice writes its entry).
    fibers: Vec<FiberInfo>,
    /// The stack being sampled (location ids), kept to save allocations.
    stack: Vec<u64>,
    /// The string ids of the label keys `fiber` and `wait`.
    keys: (i64, i64),
    /// The string ids of `WAITS`, by index.
    waits: [i64; WAITS.len()],
    /// No slice has begun yet: CPU time so far went to compiling the program.
    starting: bool,
}

/// 8 bytes: a program may park a million fibers.
#[derive(Clone, Copy, Default)]
struct FiberInfo {
    /// The function its `go` called (for its label).
    callee: Option<ProtoRef>,
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
    let n = p.ticks.take_cpu();
    if n > 0 {
        charge_cpu(vm, f, n);
    }
}

/// A slice of fiber `id` is about to begin: CPU periods that passed since the
/// last slice are the scheduler's; periods that passed while the fiber was
/// parked are blocked time at its stack (which has not moved since). The
/// usual case — no period passed — is a few loads and a store: every switch
/// between fibers runs it.
#[inline]
pub(super) fn slice_begins(vm: &mut Vm, id: u32, f: &mut Fiber) {
    let Some(p) = vm.sched.profile.as_deref() else { return };
    let word = f.parked_at;
    let same = word == 0 || u64::from(word >> WAIT_BITS) == p.ticks.wall() & PERIOD_MASK;
    if p.ticks.cpu_pending() || !same || p.starting {
        return slice_begins_slow(vm, id, f);
    }
    f.parked_at = 0;
}

/// A fiber was made for a `go` of `callee` (start.rs): what its `fiber` label
/// needs. Ids are reused: this replaces an ended fiber's entry.
#[cold]
pub(super) fn started(vm: &mut Vm, id: u32, callee: Option<ProtoRef>) {
    if let Some(p) = vm.sched.profile.as_deref_mut() {
        *p.info(id) = FiberInfo { callee };
    }
}

#[cold]
#[inline(never)]
fn slice_begins_slow(vm: &mut Vm, id: u32, f: &mut Fiber) {
    let Some(p) = vm.sched.profile.as_deref_mut() else { return };
    let (n, period, wall) = (p.ticks.take_cpu() as i64, p.period, p.ticks.wall());
    let word = std::mem::take(&mut f.parked_at);
    // The first slice: CPU time so far went to compiling the program.
    let outside = if std::mem::take(&mut p.starting) { "[startup]" } else { "[runtime]" };
    if n > 0 {
        charge(vm, At::Outside(outside), [n, n * period, 0]);
    }
    if word != 0 {
        let (n, wait) = unpark_word(word, wall);
        if n > 0 {
            charge(vm, At::Fiber(id, f, Some(wait)), [0, 0, n as i64 * period]);
        }
    }
}

/// A slice of fiber `id` ended with `halt`: CPU periods that passed are its
/// (at its stack; at `[fiber exit]` if it ended); a blocked one notes when.
#[inline]
pub(super) fn slice_ends(vm: &mut Vm, id: u32, f: &mut Fiber, halt: &Halt) {
    let Some(p) = vm.sched.profile.as_deref() else { return };
    if matches!(halt, Halt::Blocked) {
        let wait = vm.sched.fibers.state(id).parked.as_ref().map_or(0, Wait::index);
        f.parked_at = park_word(p.ticks.wall(), wait);
    }
    if p.ticks.cpu_pending() {
        let n = p.ticks.take_cpu();
        charge_cpu(vm, f, n);
    }
}

/// `n` CPU periods for the running fiber.
fn charge_cpu(vm: &mut Vm, f: &Fiber, n: u64) {
    let id = vm.sched.fibers.current;
    let ns = n as i64 * vm.sched.profile.as_deref().map_or(0, |p| p.period);
    charge(vm, At::Fiber(id, f, None), [n as i64, ns, 0]);
}

/// Where a sample's time went.
enum At<'a> {
    /// Outside the fibers' slices: a frame of this name (`[startup]`, `[runtime]`).
    Outside(&'static str),
    /// Fiber `id` at its stack (`[fiber exit]` once its frames are gone),
    /// running, or parked on `WAITS[i]` (the `wait` label).
    Fiber(u32, &'a Fiber, Option<usize>),
}

/// Adds a sample of `values` at `at`, labelled with the fiber and its wait.
fn charge(vm: &mut Vm, at: At, values: [i64; 3]) {
    let Some(mut p) = vm.sched.profile.take() else { return };
    let mut labels = [Label::Str(0, 0), Label::Str(0, 0)];
    let mut n = 0;
    p.stack.clear();
    match at {
        At::Outside(name) => p.pseudo(name),
        At::Fiber(id, f, wait) => {
            labels[0] = Label::Str(p.keys.0, p.fiber_label(vm, id, f));
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
    fn info(&mut self, id: u32) -> &mut FiberInfo {
        let i = id as usize;
        if self.fibers.len() <= i {
            self.fibers.resize(i + 1, FiberInfo::default());
        }
        &mut self.fibers[i]
    }

    /// A stack of one frame that stands for time outside the fibers' code.
    fn pseudo(&mut self, name: &str) {
        let loc = self.shared.borrow_mut().pprof.location(name, "", 0, 0);
        self.stack.push(loc);
    }

    /// The `fiber` label of fiber `id`: `main`, or `go worker at main.csp:12:5`
    /// (as `--trace` names tracks, without the fiber's number: a label per
    /// `go`, so its fibers add up).
    fn fiber_label(&mut self, vm: &Vm, id: u32, f: &Fiber) -> i64 {
        let site = vm.sched.fibers.state(id).task.and_then(|t| task::get(vm, t).site);
        let callee = self.info(id).callee.or_else(|| f.frames.first().map(|fr| fr.proto));
        let key = match site {
            Some(s) => (s.proto.as_ptr() as usize, s.pc, callee.map_or(0, |c| c.as_ptr() as usize)),
            None => (0, 0, 0),
        };
        if let Some(&l) = self.labels.get(&key) {
            return l;
        }
        let text = match (site, callee) {
            (None, _) => "main".to_string(),
            (Some(s), Some(c)) => format!("go {} at {}", c.display_name(), s.location()),
            (Some(s), None) => format!("go at {}", s.location()),
        };
        let l = self.shared.borrow_mut().pprof.string(&text);
        self.labels.insert(key, l);
        l
    }
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_fiber_s_entry_is_small() {
        assert!(std::mem::size_of::<super::FiberInfo>() <= 8);
    }
}
