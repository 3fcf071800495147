//! Tasks: the handle `go` returns, holding a fiber's outcome, its owner and children.

use crate::bytecode::Site;
use crate::vm::heap::Heap;
use crate::vm::kind::{Fault, Res};
use crate::vm::object::Obj;
use crate::vm::value::{Handle, Value};
use std::rc::Rc;

pub enum TaskState {
    /// Started by `go` but not run yet: the call its fiber starts with (see
    /// `Fiber::for_call`). The fiber is built when it first runs, so a million
    /// queued fibers stay small.
    Pending(Box<[Value]>, Kickoff),
    Running,
    Done(Value),
    Failed(Value),
    /// Ended by cancellation; holds the `Cancelled` error.
    Cancelled(Value),
}

/// How a pending task's fiber makes its first call.
#[derive(Clone, Copy)]
pub struct Kickoff {
    /// A method call (see `Fiber::for_call`).
    pub method: bool,
    pub born: Born,
}

/// A fiber's state at its `go` (docs/concurrency.md, "Cancellation").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Born {
    Live,
    /// The `go` ran in a cancelled fiber (outside a shielded `finally`): it
    /// runs until its first suspension, where `Cancelled` is thrown.
    Cancelled,
    /// The `go` ran in a fiber that itself started cancelled: it never makes
    /// its first call (`Start::stillborn`).
    Stillborn,
}

pub struct Task {
    /// The number shown as `<task N>`.
    pub number: u32,
    /// The fiber running it, while it runs.
    pub fiber: Option<u32>,
    pub state: TaskState,
    /// The task of the fiber that started this one (None for the main fiber).
    pub owner: Option<Handle>,
    /// Index of the owner's `wait { }` block that started it, if any.
    pub scope: Option<u32>,
    /// Someone waited on it, so a failure has been observed.
    pub observed: bool,
    /// Started by a `go` statement whose task was dropped: failures propagate at once.
    pub dropped: bool,
    /// Cancelled before it started: its fiber starts cancelled.
    pub cancelled: bool,
    /// `DETACHED`, `IN_SCOPE`, `TREE_DONE`: one byte, so a task stays 80.
    pub marks: u8,
    /// Where the `go` that started it is (None for the main fiber).
    pub site: Option<Site>,
    /// Boxed apart: most tasks never start fibers, nor are waited on.
    pub extra: Option<Box<TaskExtra>>,
}

#[derive(Default)]
pub struct TaskExtra {
    /// Tasks started by this task's fiber.
    pub children: Vec<Handle>,
    /// Fibers parked in `wait` on this task: (fiber, park generation).
    pub waiters: Vec<(u32, u32)>,
    /// The channel `t.done()` returned, closed when the task ends.
    pub done_chan: Option<Handle>,
    /// Children started by dropped `go`s that have not run yet (spawn.rs
    /// keeps them as records, not tasks).
    pub unstarted: u32,
    /// Its records numbered below this start cancelled: the task was cancelled
    /// once they were queued (one store, not a scan of every record).
    pub records_cancelled_below: u32,
    /// Why it was cancelled ("cancelled by fiber 2 at x.csp:3:5"), for the
    /// report of an uncaught cancellation; set on the task a cancellation
    /// started from, its descendants find it through their owners.
    pub cancelled_by: Option<Rc<str>>,
}

/// Started by `__go_detached`: its caller holds the task (it is `dropped`
/// only so that its failure propagates at once).
pub const DETACHED: u8 = 1;
/// A `wait { }` block waits for it: it or an owner is a block's child (only
/// then does its end wake fibers at the end of a block).
pub const IN_SCOPE: u8 = 2;
/// It and every task started under it have finished (`tree_done`).
pub const TREE_DONE: u8 = 4;

impl Task {
    pub fn is(&self, mark: u8) -> bool {
        self.marks & mark != 0
    }

    pub fn result(&self) -> Value {
        match self.state {
            TaskState::Pending(..) | TaskState::Running => Value::Nil,
            TaskState::Done(v) | TaskState::Failed(v) | TaskState::Cancelled(v) => v,
        }
    }

    pub fn children(&self) -> &[Handle] {
        self.extra.as_ref().map_or(&[], |x| &x.children)
    }

    pub fn done_chan(&self) -> Option<Handle> {
        self.extra.as_ref().and_then(|x| x.done_chan)
    }

    pub fn unstarted(&self) -> u32 {
        self.extra.as_ref().map_or(0, |x| x.unstarted)
    }

    pub fn extra_mut(&mut self) -> &mut TaskExtra {
        self.extra.get_or_insert_with(Default::default)
    }

    pub fn finished(&self) -> bool {
        !matches!(self.state, TaskState::Pending(..) | TaskState::Running)
    }
}

impl Task {
    /// The values it holds, for the collector: a pending call, its outcome, its
    /// children, its owner (failures propagate up the owner chain, even past a
    /// finished owner nothing else refers to) and its `done()` channel.
    pub fn trace(&self, mut push: impl FnMut(Value)) {
        if let TaskState::Pending(call, _) = &self.state {
            call.iter().for_each(|&v| push(v));
        }
        push(self.result());
        let handles = self.children().iter().copied().chain(self.owner).chain(self.done_chan());
        handles.for_each(|h| push(Value::Obj(h)));
    }

    /// Bytes it holds apart from its slot (as allocated: a million finished
    /// tasks may be kept by a tree of fibers, and --max-memory must count them).
    pub fn size(&self) -> usize {
        use crate::limits::malloc_size;
        let extra = self.extra.as_ref().map_or(0, |x| {
            malloc_size(std::mem::size_of::<TaskExtra>())
                + malloc_size(x.children.capacity() * 4)
                + malloc_size(x.waiters.capacity() * 8)
        });
        let pending = match &self.state {
            TaskState::Pending(call, _) => malloc_size(call.len() * std::mem::size_of::<Value>()),
            _ => 0,
        };
        malloc_size(std::mem::size_of::<Task>()) + extra + pending
    }
}

pub(super) fn get(heap: &Heap, h: Handle) -> &Task {
    match heap.get(h) {
        Obj::Task(t) => t,
        _ => unreachable!("not a task"),
    }
}

/// Task `h`'s extra state, made now if need be and counted as it is made
/// (before the next collection measures it).
pub(super) fn extra_of(heap: &mut Heap, h: Handle) -> &mut TaskExtra {
    if get(heap, h).extra.is_none() {
        heap.note_growth(crate::limits::malloc_size(std::mem::size_of::<TaskExtra>()));
    }
    get_mut(heap, h).extra_mut()
}

pub(super) fn get_mut(heap: &mut Heap, h: Handle) -> &mut Task {
    match heap.get_mut(h) {
        Obj::Task(t) => t,
        _ => unreachable!("not a task"),
    }
}

/// A finished task's result, or its error thrown; None while it runs.
pub(super) fn outcome(heap: &mut Heap, h: Handle) -> Res<Option<Value>> {
    let t = get_mut(heap, h);
    match t.state {
        TaskState::Pending(..) | TaskState::Running => Ok(None),
        TaskState::Done(v) => Ok(Some(v)),
        TaskState::Failed(e) | TaskState::Cancelled(e) => {
            t.observed = true;
            Err(Fault::Throw(e))
        }
    }
}
