//! Stepping with temporary traps: `next` traps every instruction of the
//! functions on the fiber's stack, `stepOut` those of its callers, `stepIn`
//! every function's; a trap ends the step only in the stepping fiber, so
//! other fibers run on through them, and a step over a blocking operation
//! ends when the operation has and the fiber runs on to the next line. A
//! coroutine's frames count above its resumer's: `next` over a `resume`
//! steps over the coroutine's run, a step over a `yield` ends in the resumer.

use super::breakpoints::Breakpoints;
use super::inspect::{contexts, location};
use crate::bytecode::{ProtoRef, Site};
use crate::vm::debug::{clear_trap, set_trap};
use crate::vm::{Fiber, Vm};

#[derive(Clone, Copy, PartialEq)]
pub enum Kind {
    Over,
    In,
    Out,
    /// `stopOnEntry`: the first instruction of the program.
    Entry,
}

/// The step under way, and the traps it put.
#[derive(Default)]
pub struct Stepping {
    step: Option<Step>,
    traps: Vec<Site>,
}

#[derive(Clone, Copy)]
struct Step {
    kind: Kind,
    fiber: u32,
    /// The fiber's frames when the step began.
    depth: usize,
    /// The file and line it began on.
    file: *const crate::source::SourceFile,
    line: usize,
}

impl Stepping {
    /// `stopOnEntry`: a trap on the program's first instruction.
    pub fn entry(&mut self, vm: &mut Vm, site: Site) {
        let step = Step { kind: Kind::Entry, fiber: 0, depth: 0, file: std::ptr::null(), line: 0 };
        self.step = Some(step);
        set_trap(vm, site);
        self.traps.push(site);
    }

    /// Begins a step of fiber `thread` (`cur` is the stopped fiber `cur_id`,
    /// its top pc `exact`ly on its instruction or past it).
    pub fn start(&mut self, vm: &mut Vm, kind: Kind, cur: Option<&Fiber>, cur_id: u32, thread: u32, exact: bool) {
        let (protos, depth, at) = {
            let f = match cur {
                Some(f) if thread == cur_id => Some(f),
                _ => crate::sched::debug::fiber(vm, thread),
            };
            let Some(f) = f else {
                return;
            };
            let Some(top) = f.frames.last() else { return };
            let pc = if exact && thread == cur_id && cur.is_some() { top.pc } else { top.pc.saturating_sub(1) };
            // Innermost first, a coroutine's resumers' frames too.
            let stacks = contexts(vm, f);
            let frames: Vec<ProtoRef> = stacks.iter().flat_map(|(_, fr)| fr.iter().rev().map(|fr| fr.proto)).collect();
            (frames, depth(vm, f), (top.proto, pc))
        };
        let file = std::rc::Rc::as_ptr(&at.0.file);
        let line = location(&at.0, at.1).0;
        self.step = Some(Step { kind, fiber: thread, depth, file, line });
        let trapped: Vec<ProtoRef> = match kind {
            // SAFETY: every proto is owned by `vm.protos` (ProtoRef's invariant).
            Kind::In => vm.protos.iter().map(|p| unsafe { ProtoRef::new(p) }).collect(),
            Kind::Over => protos,
            Kind::Out => protos[1..].to_vec(),
            Kind::Entry => Vec::new(),
        };
        // Never in std's code (the prelude's `map` and the like): a step goes
        // through it to the user's code it calls or returns to.
        let mut seen = std::collections::HashSet::new();
        for p in trapped.into_iter().filter(|p| !p.file.std && seen.insert(p.as_ptr())) {
            for pc in 0..p.code.len() as u32 {
                let site = Site { proto: p, pc };
                set_trap(vm, site);
                self.traps.push(site);
            }
        }
    }

    /// Does a trap at `site` in fiber `id` end the step? Its stop reason if so.
    pub fn done(&self, vm: &Vm, fiber: &Fiber, id: u32, site: Site) -> Option<&'static str> {
        let s = self.step?;
        if s.kind == Kind::Entry {
            return Some("entry");
        }
        if id != s.fiber {
            return None;
        }
        let depth = depth(vm, fiber);
        let moved = || {
            let (line, _) = location(&site.proto, site.pc);
            line != s.line || !std::ptr::eq(std::rc::Rc::as_ptr(&site.proto.file), s.file)
        };
        let done = match s.kind {
            Kind::Over => depth < s.depth || (depth == s.depth && moved()),
            Kind::In => depth != s.depth || moved(),
            Kind::Out => depth < s.depth,
            Kind::Entry => true,
        };
        done.then_some("step")
    }

    /// The fiber a step is under way in.
    pub fn fiber(&self) -> Option<u32> {
        self.step.filter(|s| s.kind != Kind::Entry).map(|s| s.fiber)
    }

    /// Ends the step, taking away its traps (breakpoints stay).
    pub fn clear(&mut self, vm: &mut Vm, bps: &Breakpoints) {
        self.step = None;
        for site in std::mem::take(&mut self.traps) {
            if !bps.has_site(site) {
                clear_trap(vm, site);
            }
        }
    }
}

/// A fiber's frames, its coroutines' resumers' included: resuming a
/// coroutine goes deeper, yielding comes back out.
fn depth(vm: &Vm, f: &Fiber) -> usize {
    contexts(vm, f).iter().map(|(_, frames)| frames.len()).sum()
}
