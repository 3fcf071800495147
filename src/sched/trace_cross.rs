//! `--trace` across isolates (docs/trace.md, "Isolates"): what crosses from
//! one isolate to another (a job, its answer, a value on a shared channel)
//! carries a flow id, unique across isolates; its flow starts in the slice
//! of the fiber that sends it and ends in the slice of the one that takes it.

use super::{Sink, Track};
use crate::sched::trace_out::{Small, Stamp};
use crate::vm::Vm;

impl Sink {
    /// A flow event of a message between isolates, named for what crossed.
    fn cross_flow(&mut self, start: bool, what: Crossing, id: u64, ts: &Stamp, ids: &Small) {
        if self.closed {
            return;
        }
        self.open();
        self.out.put(b"\"name\":");
        self.out.put_slice(what.name());
        match start {
            true => self.out.put(b",\"ph\":\"s\",\"id\":"),
            false => self.out.put(b",\"ph\":\"f\",\"bp\":\"e\",\"id\":"),
        }
        self.out.uint(id);
        self.out.put(b",\"ts\":");
        self.out.stamp(ts);
        self.out.put(b",");
        self.out.small(ids);
    }
}

/// What crosses between isolates: each names its flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossing {
    /// `isolate.run`'s job, to the worker fiber that runs it.
    Job,
    /// The job's result or error, back to the fiber waiting for it.
    Answer,
    /// A value sent on a shared channel, to the fiber that receives it.
    Message,
}

impl Crossing {
    fn name(self) -> &'static [u8] {
        match self {
            Crossing::Job => b"\"job\"",
            Crossing::Answer => b"\"answer\"",
            Crossing::Message => b"\"message\"",
        }
    }
}

/// The messages delivered to fiber `id` while it was parked end at its
/// slice that begins now.
#[cold]
pub(super) fn arrived(arrivals: &mut Vec<(u32, u64)>, s: &mut Sink, id: u32, began: &Stamp, track: Option<&Track>) {
    arrivals.retain(|&(fid, flow)| {
        if fid != id {
            return true;
        }
        if let Some(track) = track {
            s.cross_flow(false, Crossing::Message, flow, began, &track.ids);
        }
        false
    });
}

/// Something leaves this isolate for another from the running fiber's
/// slice: a flow starts there, now. Its id, to travel with it (unique
/// across isolates); 0 when nothing is traced or no fiber runs.
pub(crate) fn cross_out(vm: &mut Vm, what: Crossing) -> u64 {
    let Some(t) = vm.sched.trace.as_deref_mut() else { return 0 };
    let Some(track) = t.running.and_then(|(cur, _)| t.fibers.get(cur as usize)) else { return 0 };
    let mut s = t.sink.borrow_mut();
    s.flows += 1;
    let id = s.flows;
    let now = Stamp::new(s.now());
    s.cross_flow(true, what, id, &now, &track.ids);
    id
}

/// Flow `id` (0: none) from another isolate arrives: it ends now, in the
/// running fiber's slice, which takes what came.
pub(crate) fn cross_in(vm: &mut Vm, id: u64, what: Crossing) {
    let Some(t) = vm.sched.trace.as_deref_mut().filter(|_| id != 0) else { return };
    let Some(track) = t.running.and_then(|(cur, _)| t.fibers.get(cur as usize)) else { return };
    let mut s = t.sink.borrow_mut();
    let now = Stamp::new(s.now());
    s.cross_flow(false, what, id, &now, &track.ids);
}

/// A message from another isolate (flow `id`; 0: none) was delivered to
/// parked fiber `fid`: its flow ends at the fiber's next slice.
pub(crate) fn cross_to_parked(vm: &mut Vm, fid: u32, id: u64) {
    if let Some(t) = vm.sched.trace.as_deref_mut().filter(|_| id != 0) {
        t.arrivals.push((fid, id));
    }
}
