//! Precise, incremental mark-sweep collection (snapshot at the beginning).
//!
//! A cycle starts between slices, when every fiber is in its slot: the roots
//! (fibers' registers, the scheduler's state, globals, constants) are greyed at
//! once. Marking and sweeping then run a bounded step at a time, at preemption
//! points and between slices, while fibers go on running. What keeps that
//! correct:
//! - Every object a program or a builtin changes is reached through
//!   `Heap::get_mut`, which, while marking, first marks the object and greys
//!   what it refers to (`darken`). So a reference removed from an object not
//!   yet marked is still followed: everything reachable when the cycle began is
//!   marked (Yuasa's deletion barrier), and registers need no barrier. Adding
//!   items, or overwriting one, needs less: only the reference removed is
//!   greyed (`Heap::get_mut_items`, `Heap::overwritten`), so `xs.push(v)` and
//!   `xs[i] = v` on a list of millions cost what they cost on a short one.
//! - A long list or map is greyed a piece of `PIECE` items at a time
//!   (`Cycle::scanning`), so no step stalls on it; a change other than the
//!   above to the one being greyed has the rest greyed first.
//! - Objects made during a cycle are born marked (`Cycle::black_from`), so they
//!   survive it; while sweeping, only those past the sweep's cursor, which the
//!   sweep will reach and unmark.

use super::heap::{Heap, CYCLE_ALLOC_PERCENT, GC_MIN};
use super::list::List;
use super::object::Obj;
use super::value::{Handle, Value};
use super::Vm;
use std::time::{Duration, Instant};

/// Where the collector is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    Idle,
    /// Following the grey objects (`Cycle::gray`); the barrier is on.
    Mark,
    /// Freeing unmarked objects from `at` on; `live` sums the marked ones so far.
    Sweep {
        at: usize,
        live: usize,
    },
}

/// The cycle under way (`Heap::gc`) and its pace.
pub struct Cycle {
    pub phase: Phase,
    pub(super) gray: Vec<Handle>,
    /// A long list or map marked and having its items greyed a piece at a
    /// time, and the index its next piece starts at: a step never stalls on
    /// one big container.
    scanning: Option<(Handle, usize)>,
    /// Slots from here on are born marked: 0 while marking, the sweep's
    /// cursor while sweeping, none when idle (kept apart from `phase` for
    /// `Heap::alloc`'s sake).
    pub(super) black_from: u32,
    /// Units of work owed per KB allocated, set as the cycle starts.
    work_per_kb: usize,
    /// `Heap::allocated` at the last step, and when the cycle began.
    stepped_at: usize,
    began_at: usize,
    /// Units of work owed by steps cut short (MAX_STEP).
    debt: usize,
    /// How long steps may still run in this time slice: the scheduler sets
    /// it as a slice begins (`Heap::alloc`'s steps spend it).
    pub step_time: Duration,
    /// When the next timer is due, as the scheduler last looked: steps end
    /// by then, so that the fiber it wakes is not kept waiting behind them.
    pub yield_at: Option<Instant>,
    /// A cycle has ended and `Heap::after_collection` has not yet paced the next.
    pub done: bool,
}

impl Cycle {
    /// Is `h` the container whose items are being greyed piece by piece?
    #[inline]
    pub(super) fn scanning_is(&self, h: Handle) -> bool {
        self.scanning.is_some_and(|(s, _)| s == h)
    }
}

impl Default for Cycle {
    fn default() -> Cycle {
        Cycle {
            phase: Phase::Idle,
            gray: Vec::new(),
            scanning: None,
            black_from: u32::MAX,
            work_per_kb: 0,
            stepped_at: 0,
            began_at: 0,
            debt: 0,
            step_time: MAX_STEP,
            yield_at: None,
            done: false,
        }
    }
}

/// Work of the smallest step, in units (an object marked is about 4 plus its
/// references, a slot swept 1, or 8 when it frees an object).
const MIN_STEP: usize = 20_000;

/// The longest a step runs. Work it leaves undone is owed to the next step
/// (`Cycle::debt`), which comes after STEP_BYTES more are allocated: the cycle
/// keeps up with allocation, and no step stalls the program for long. Steps
/// within a time slice together run at most `Cycle::step_time`.
pub const MAX_STEP: Duration = Duration::from_micros(500);

/// Allocation between steps of a cycle.
pub const STEP_BYTES: usize = 32 << 10;

/// Units of work between looks at the clock.
const CHUNK: usize = 4096;

/// Starts a cycle: greys the scheduler's roots (`work`), the loader's (the
/// prelude's functions), the shared one-character strings, globals and the
/// constants of every proto.
pub fn start(vm: &mut Vm, mut work: Vec<Handle>) {
    debug_assert_eq!(vm.heap.gc.phase, Phase::Idle);
    work.extend(vm.loader.roots());
    work.extend(vm.heap.ascii_roots());
    let vm_roots = vm.globals.iter().chain(vm.protos.iter().flat_map(|p| p.consts.iter()));
    work.extend(vm_roots.filter_map(|v| match v {
        Value::Obj(h) => Some(*h),
        _ => None,
    }));
    let heap = &mut vm.heap;
    heap.gc.gray = work;
    heap.gc.phase = Phase::Mark;
    heap.gc.black_from = 0;
    // Marking is about 6 units per object and sweeping 1 to 8 per slot; the
    // steps are sized to end the cycle once CYCLE_ALLOC_PERCENT is allocated.
    let work_estimate = heap.objs.len() * 12;
    let room = (heap.live + heap.outside).max(GC_MIN) * CYCLE_ALLOC_PERCENT / 100;
    heap.gc.work_per_kb = (work_estimate * 1024 / room).max(1);
    heap.gc.stepped_at = heap.allocated;
    heap.gc.began_at = heap.allocated;
}

/// Does a step of the cycle sized by what was allocated since the last one
/// (at least `MIN_STEP`). True when that ended the cycle (`Cycle::done`
/// then stays set until the scheduler paces the next: `Heap::after_collection`).
///
/// It may run wherever an object is made (`Heap::alloc`), not only between
/// slices: marking frees nothing, and what a sweep frees was unreachable
/// when the cycle began and has been since, so no code can hold it.
pub fn step(heap: &mut Heap) -> bool {
    let since = heap.allocated.saturating_sub(heap.gc.stepped_at);
    heap.gc.stepped_at = heap.allocated;
    heap.threshold = heap.allocated + STEP_BYTES;
    let c = &mut heap.gc;
    c.debt = c.debt.saturating_add((since / 1024).saturating_mul(c.work_per_kb)).max(MIN_STEP);
    // Past the memory limit, the cycle ends now, whatever the time.
    let urgent = heap.live + heap.outside + heap.allocated > heap.limit;
    let allowed = if urgent { Duration::MAX } else { c.step_time.min(MAX_STEP) };
    if allowed.is_zero() {
        return false;
    }
    let began = Instant::now();
    // None: no limit (urgent).
    let mut stop = began.checked_add(allowed);
    if let (false, Some(due)) = (urgent, heap.gc.yield_at) {
        stop = Some(stop.map_or(due, |s| s.min(due)));
    }
    let ended = loop {
        let mut budget = CHUNK.min(heap.gc.debt);
        let chunk = budget;
        if run(heap, &mut budget) {
            heap.gc.debt = 0;
            heap.gc.done = true;
            break true;
        }
        heap.gc.debt -= chunk - budget;
        if heap.gc.debt == 0 || stop.is_some_and(|t| Instant::now() >= t) {
            break false;
        }
    };
    heap.gc.step_time = heap.gc.step_time.saturating_sub(began.elapsed());
    ended
}

/// A step between slices (or with nothing to run): it may take MAX_STEP,
/// or until `timer` (the next timer's deadline).
pub fn step_between_slices(heap: &mut Heap, timer: Option<Instant>) -> bool {
    heap.gc.step_time = MAX_STEP;
    heap.gc.yield_at = timer;
    step(heap)
}

/// A whole collection at once: ends the cycle under way, then runs another
/// from `roots` (the scheduler's; see `start`).
pub fn collect(vm: &mut Vm, roots: Vec<Handle>) {
    finish(&mut vm.heap);
    start(vm, roots);
    finish(&mut vm.heap);
}

/// Ends the cycle under way, if any, at once.
pub fn finish(heap: &mut Heap) {
    if heap.gc.phase != Phase::Idle {
        run(heap, &mut { usize::MAX });
        heap.gc.debt = 0;
    }
}

/// Runs the cycle for about `budget` units of work, counting them off; true
/// when it ended.
fn run(heap: &mut Heap, budget: &mut usize) -> bool {
    if heap.gc.phase == Phase::Mark {
        if !mark(heap, budget) {
            return false;
        }
        heap.gc.phase = Phase::Sweep { at: 0, live: 0 };
    }
    sweep(heap, budget)
}

/// Follows grey objects until none is left (true) or the budget is spent.
fn mark(heap: &mut Heap, budget: &mut usize) -> bool {
    loop {
        if *budget == 0 {
            return false;
        }
        if let Some((h, at)) = heap.gc.scanning {
            let (cost, next) = scan_piece(heap, h, at, PIECE);
            heap.gc.scanning = next.map(|n| (h, n));
            *budget = budget.saturating_sub(cost);
            continue;
        }
        let Some(h) = heap.gc.gray.pop() else { return true };
        let i = h.0 as usize;
        let cost = if heap.marks[i] {
            1
        } else {
            heap.marks[i] = true;
            if items_of(&heap.objs[i]).is_some_and(|items| items.len() > PIECE) {
                heap.gc.scanning = Some((h, 0));
                4
            } else {
                4 + trace(&heap.objs[i], &heap.marks, &mut heap.gc.gray)
            }
        };
        *budget = budget.saturating_sub(cost);
    }
}

/// Items a step greys of a long list or map before it looks at its budget
/// again (about 10 µs of work).
const PIECE: usize = 4096;

/// A list's or map's items (a list of one or two has none here: it is short).
fn items_of(obj: &Obj) -> Option<&[Value]> {
    match obj {
        Obj::List(List::Vec(items)) => Some(items),
        Obj::Map(m) => Some(m.values().as_slice()),
        _ => None,
    }
}

/// Greys up to `n` items of container `h` from `at`; returns the work done
/// and where the next piece starts (None: its last item is done).
fn scan_piece(heap: &mut Heap, h: Handle, at: usize, n: usize) -> (usize, Option<usize>) {
    let (objs, marks, gray) = (&heap.objs, &heap.marks, &mut heap.gc.gray);
    // Freed at once since, or shrunk below the cursor: nothing left to grey.
    let Some(items) = items_of(&objs[h.0 as usize]).filter(|items| at < items.len()) else { return (1, None) };
    let end = items.len().min(at.saturating_add(n));
    for v in &items[at..end] {
        if let Value::Obj(c) = v {
            if !marks[c.0 as usize] {
                gray.push(*c);
            }
        }
    }
    (end - at, (end < items.len()).then_some(end))
}

/// The barrier (see the module's text): marks object `h`, not marked yet, and
/// greys what it refers to, before it changes; for the container being
/// greyed a piece at a time, greys the rest of it.
#[cold]
pub(super) fn darken(heap: &mut Heap, h: Handle) {
    if let Some((_, at)) = heap.gc.scanning.filter(|&(s, _)| s == h) {
        heap.gc.scanning = None;
        scan_piece(heap, h, at, usize::MAX);
        return;
    }
    let i = h.0 as usize;
    heap.marks[i] = true;
    trace(&heap.objs[i], &heap.marks, &mut heap.gc.gray);
}

/// Greys the unmarked objects `obj` refers to; returns how many references it has.
fn trace(obj: &Obj, marks: &[bool], gray: &mut Vec<Handle>) -> usize {
    let mut n = 0;
    let mut push = |v: &Value| {
        n += 1;
        if let Value::Obj(c) = v {
            if !marks[c.0 as usize] {
                gray.push(*c);
            }
        }
    };
    let mut push_value = |v: Value| push(&v);
    match obj {
        Obj::List(items) => items.iter().for_each(&mut push),
        Obj::Map(m) => m.values().for_each(&mut push),
        Obj::Cell(v) => push(v),
        Obj::Closure(c) => c.upvals.iter().for_each(push),
        Obj::Error(e) => e.others.iter().for_each(&mut push),
        Obj::Chan(c) => c.trace(&mut push_value),
        Obj::Coroutine(c) => c.trace(&mut push_value),
        Obj::Task(t) => t.trace(&mut push_value),
        Obj::Host(o) => o.trace(&mut push_value),
        Obj::Str(_)
        | Obj::Bytes(_)
        | Obj::Native(_)
        | Obj::Range(..)
        | Obj::Mutex(_)
        | Obj::WaitGroup(_)
        | Obj::Free => {}
    }
    n
}

/// Sweeps slots from the cursor on for about `budget` units; true when the
/// last slot is swept. Then `live` is what was marked less what was made
/// during the cycle, and `allocated` starts over from that.
fn sweep(heap: &mut Heap, budget: &mut usize) -> bool {
    let Phase::Sweep { at, mut live } = heap.gc.phase else { unreachable!("sweeping") };
    let mut i = at;
    let mut spent = 0;
    while i < heap.objs.len() && spent < *budget {
        if heap.marks[i] {
            heap.marks[i] = false;
            // A marked free slot was freed at once during the cycle.
            if !matches!(heap.objs[i], Obj::Free) {
                live += heap.objs[i].size();
            }
            spent += 1;
        } else if !matches!(heap.objs[i], Obj::Free) {
            heap.strings.forget(Handle(i as u32), &heap.objs[i]);
            let dead = std::mem::replace(&mut heap.objs[i], Obj::Free);
            // Most dead objects are small lists, which own nothing: no drop glue.
            if dead.owns_nothing() {
                std::mem::forget(dead);
            }
            heap.free.push(i as u32);
            spent += 8;
        } else {
            spent += 1;
        }
        i += 1;
    }
    *budget = budget.saturating_sub(spent);
    heap.gc.black_from = i as u32;
    if i < heap.objs.len() {
        heap.gc.phase = Phase::Sweep { at: i, live };
        return false;
    }
    heap.gc.phase = Phase::Idle;
    heap.gc.black_from = u32::MAX;
    let made = heap.allocated - heap.gc.began_at;
    heap.live = live.saturating_sub(made);
    heap.allocated = made;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items of list `l`, to append or overwrite (as `seq_ops` does).
    fn items_adding(heap: &mut Heap, l: Handle) -> &mut List {
        match heap.get_mut_items(l) {
            Obj::List(items) => items,
            _ => unreachable!("a list"),
        }
    }

    /// A VM keeping a list of `PIECE * 3` one-item lists, in a cycle that has
    /// greyed the list's first half.
    fn half_greyed() -> (Vm, Handle) {
        let mut vm = Vm::new();
        let n = PIECE * 3;
        let items = (0..n).map(|i| vm.heap.list(vec![Value::Int(i as i64)])).collect();
        let Value::Obj(l) = vm.heap.list(items) else { unreachable!() };
        let slot = vm.global_slot("keep");
        vm.globals[slot as usize] = Value::Obj(l);
        start(&mut vm, Vec::new());
        while !vm.heap.gc.scanning.is_some_and(|(h, at)| h == l && at > n / 2) {
            assert!(!run(&mut vm.heap, &mut { PIECE / 2 }), "the cycle ended before the list was half greyed");
        }
        (vm, l)
    }

    /// Ends the cycle; every item of `l` must be alive.
    fn all_alive(heap: &mut Heap, l: Handle) {
        finish(heap);
        let Obj::List(items) = heap.get(l) else { unreachable!() };
        for v in items.iter().filter(|v| !matches!(v, Value::Nil)) {
            let Value::Obj(h) = v else { unreachable!() };
            assert!(matches!(heap.get(*h), Obj::List(_)), "an item was freed while reachable");
        }
    }

    /// Items moved from the part not greyed yet into the part done, as
    /// `xs[0] = xs[j]; xs[j] = nil` and a pop pushed back do: the slot
    /// barrier greys what each write removes.
    #[test]
    fn items_moved_by_writes_survive_a_list_greyed_in_pieces() {
        let (mut vm, l) = half_greyed();
        let heap = &mut vm.heap;
        let last = items_adding(heap, l).len() - 1;
        let far = std::mem::replace(&mut items_adding(heap, l)[last - 1], Value::Nil);
        heap.overwritten(far);
        let near = std::mem::replace(&mut items_adding(heap, l)[0], far);
        heap.overwritten(near);
        let popped = items_adding(heap, l).pop().expect("items");
        heap.overwritten(popped);
        items_adding(heap, l)[1] = popped;
        items_adding(heap, l).push(near);
        all_alive(heap, l);
    }

    /// A change through `get_mut` (here a reverse) to the list being greyed
    /// has the rest greyed first: items it moves across the cursor survive.
    #[test]
    fn items_moved_by_a_whole_list_change_survive_a_list_greyed_in_pieces() {
        let (mut vm, l) = half_greyed();
        let Obj::List(items) = vm.heap.get_mut(l) else { unreachable!() };
        items.reverse();
        all_alive(&mut vm.heap, l);
    }
}
