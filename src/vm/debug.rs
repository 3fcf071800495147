//! The debugger's hooks in the VM (docs/debugging.md). A debugger patches
//! `Op::Trap` over the instructions it wants to see (breakpoints, steps) and
//! keeps the originals here; the dispatch loop knows only the trap. `csp run`
//! sets no debugger: its only cost is a branch where a slice ends and where an
//! error is thrown.

use super::fiber::{Fiber, Halt};
use super::value::Value;
use super::{Res, Vm};
use crate::bytecode::{Op, Proto, ProtoRef, Site};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What an embedded debugger is told, on the VM's thread (it may block there:
/// then no fiber runs).
pub trait Debugger {
    /// The running `fiber` reached a trap at `site` (its top frame's pc is on it).
    fn trapped(&mut self, vm: &mut Vm, fiber: &mut Fiber, site: Site);
    /// An error `value` is being thrown in `fiber`, before it unwinds;
    /// `caught`: a handler of the fiber's will take it.
    fn thrown(&mut self, vm: &mut Vm, fiber: &mut Fiber, value: Value, caught: bool);
    /// A slice of `fiber`'s ended with `halt`: requests that came while the
    /// program ran, such as a pause, are taken here.
    fn slice_ended(&mut self, vm: &mut Vm, fiber: &mut Fiber, halt: &Halt);
    /// No fiber can run: the scheduler waits for a timer or I/O (it looks
    /// here every `IDLE_LOOK` meanwhile).
    fn idle(&mut self, vm: &mut Vm);
}

/// How long an idle scheduler waits between looks for the debugger.
pub const IDLE_LOOK: std::time::Duration = std::time::Duration::from_millis(50);

/// The debugger and the instructions its traps replaced.
pub struct Debug {
    /// Taken out while it is called (it gets `&mut Vm`).
    pub hook: Option<Box<dyn Debugger>>,
    /// The original instruction under each trap, by proto address and pc.
    pub(super) traps: HashMap<(usize, u32), Op>,
    /// An expression of the debugger's runs on the stopped program: it may
    /// not block or start fibers (the scheduler would take it for the
    /// stopped fiber).
    pub evaluating: bool,
    /// Expressions the debugger compiled, by their source (a condition runs
    /// at every hit: compiled once, its proto kept like every proto).
    pub compiled: HashMap<String, ProtoRef>,
    /// Fibers (by id) the debugger was told of (their first slice ended)
    /// and not yet of their end. A slice end that neither starts nor ends
    /// one of them is not told, unless `attention` is set.
    pub seen: Vec<bool>,
    /// Set from the debugger's other thread when it has something for the
    /// program's (requests, a pause): the next slice end tells it.
    pub attention: Arc<AtomicBool>,
}

impl Debug {
    pub fn new(hook: Box<dyn Debugger>, attention: Arc<AtomicBool>) -> Debug {
        let (traps, compiled) = (HashMap::new(), HashMap::new());
        Debug { hook: Some(hook), traps, evaluating: false, compiled, seen: Vec::new(), attention }
    }

    /// Notes that fiber `id` started (`true`) or ended; whether that is news.
    pub fn note_fiber(&mut self, id: u32, running: bool) -> bool {
        let i = id as usize;
        if self.seen.get(i).copied().unwrap_or(false) == running {
            return false;
        }
        if i >= self.seen.len() {
            self.seen.resize(i + 1, false);
        }
        self.seen[i] = running;
        true
    }

    pub fn is_trapped(&self, site: Site) -> bool {
        self.traps.contains_key(&key(site))
    }
}

pub(super) fn key(site: Site) -> (usize, u32) {
    (site.proto.as_ptr() as usize, site.pc)
}

/// Writes `op` at `site`.
pub(super) fn patch(site: Site, op: Op) {
    // SAFETY: every proto is owned by `Vm::protos` and callers hold `&mut Vm`
    // outside the dispatch loop, so no reference into the code is alive; the
    // pc is one of the proto's (checked).
    let proto = site.proto.as_ptr() as *mut Proto;
    unsafe {
        let code = &mut (*proto).code;
        code[site.pc as usize] = op;
    }
}

/// Puts a trap at `site` (kept once however often asked).
pub fn set_trap(vm: &mut Vm, site: Site) {
    let Some(d) = vm.debug.as_mut() else { return };
    if (site.pc as usize) < site.proto.code.len() && !d.traps.contains_key(&key(site)) {
        d.traps.insert(key(site), site.proto.code[site.pc as usize]);
        patch(site, Op::Trap);
    }
}

/// Takes the trap at `site` away, restoring its instruction.
pub fn clear_trap(vm: &mut Vm, site: Site) {
    if let Some(op) = vm.debug.as_mut().and_then(|d| d.traps.remove(&key(site))) {
        patch(site, op);
    }
}

/// Takes the debugger away, its traps with it.
pub fn detach(vm: &mut Vm) {
    let Some(d) = vm.debug.take() else { return };
    for (&(proto, pc), &op) in &d.traps {
        // SAFETY: the key's address is a proto of `vm.protos` (a ProtoRef's).
        let proto = unsafe { ProtoRef::new(&*(proto as *const Proto)) };
        patch(Site { proto, pc }, op);
    }
}

/// The instruction at `site` as the program has it (under a trap or not).
pub fn original(vm: &Vm, proto: ProtoRef, pc: u32) -> Op {
    let site = Site { proto, pc };
    vm.debug.as_ref().and_then(|d| d.traps.get(&key(site)).copied()).unwrap_or(proto.code[pc as usize])
}

/// An error for a concurrency operation or a blocking builtin while the
/// debugger evaluates an expression. Inlined into every channel operation:
/// one test unless a debugger is attached (`refuse_if_evaluating` is the rest).
#[inline(always)]
pub fn refuse_while_evaluating(vm: &Vm) -> Res<()> {
    match vm.debug.is_some() {
        true => refuse_if_evaluating(vm),
        false => Ok(()),
    }
}

#[cold]
#[inline(never)]
fn refuse_if_evaluating(vm: &Vm) -> Res<()> {
    match vm.debug.as_ref().is_some_and(|d| d.evaluating) {
        true => super::err(super::ErrorKind::Denied, "cannot wait or start fibers while the program is stopped"),
        false => Ok(()),
    }
}

/// Calls the debugger with `f`, keeping it out of the VM meanwhile.
pub(super) fn with_hook(vm: &mut Vm, f: impl FnOnce(&mut dyn Debugger, &mut Vm)) {
    let Some(mut hook) = vm.debug.as_mut().and_then(|d| d.hook.take()) else { return };
    f(&mut *hook, vm);
    if let Some(d) = vm.debug.as_mut() {
        d.hook = Some(hook);
    }
}

/// An error is thrown in `fiber`: the debugger may stop there.
#[cold]
#[inline(never)]
pub(super) fn on_throw(vm: &mut Vm, fiber: &mut Fiber, value: Value) {
    let caught = !fiber.handlers.is_empty();
    with_hook(vm, |h, vm| h.thrown(vm, fiber, value, caught));
}

/// A slice ended: the debugger is told when a fiber it has not seen ran,
/// one it has seen ended, or it asked for attention (a pause, requests).
/// Other slice ends cost a few loads: a program switching fibers a million
/// times a second ran 20 % slower when every one called the debugger.
#[inline]
pub(super) fn on_slice_end(vm: &mut Vm, fiber: &mut Fiber, halt: &Halt) {
    let Some(d) = vm.debug.as_deref() else { return };
    let ended = matches!(halt, Halt::Done(_) | Halt::Error(_));
    let seen = d.seen.get(vm.sched.running() as usize).copied().unwrap_or(false);
    if seen != ended && !d.attention.load(Ordering::Relaxed) {
        return;
    }
    tell_slice_end(vm, fiber, halt);
}

#[cold]
#[inline(never)]
fn tell_slice_end(vm: &mut Vm, fiber: &mut Fiber, halt: &Halt) {
    with_hook(vm, |h, vm| h.slice_ended(vm, fiber, halt));
}

/// The scheduler is idle: the debugger may stop the program there (a pause).
#[cold]
#[inline(never)]
pub fn on_idle(vm: &mut Vm) {
    with_hook(vm, |h, vm| h.idle(vm));
}
