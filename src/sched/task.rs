//! Tasks: the handle `go` returns, holding a fiber's outcome, its owner and children.

use crate::vm::fiber::ProtoRef;
use crate::vm::{Handle, Value};

/// A source position as a function and instruction index, turned into
/// `file:line:col` only when a report needs it.
#[derive(Clone, Copy)]
pub struct Site {
    pub proto: ProtoRef,
    pub pc: u32,
}

impl Site {
    pub fn span(&self) -> crate::syntax::ast::Span {
        self.proto.spans.get(self.pc as usize).copied().unwrap_or(self.proto.span)
    }

    pub fn location(&self) -> String {
        self.proto.file.location(self.span())
    }
}

pub enum TaskState {
    /// Started by `go` but not run yet: the callee, then its arguments. Its fiber
    /// is built when it first runs, so a million queued fibers stay small.
    Pending(Box<[Value]>),
    Running,
    Done(Value),
    Failed(Value),
    /// Ended by cancellation; holds the `Cancelled` error.
    Cancelled(Value),
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
}

impl Task {
    pub fn result(&self) -> Value {
        match self.state {
            TaskState::Pending(_) | TaskState::Running => Value::Nil,
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
        !matches!(self.state, TaskState::Pending(_) | TaskState::Running)
    }
}
