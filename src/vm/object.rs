//! Heap object kinds. Objects refer to each other only through `Value`/`Handle`,
//! so dropping one never recurses and the collector sees every edge.

use super::builtin::NativeFn;
use super::str::Str;
use super::value::Value;
use crate::bytecode::{ProtoRef, Site};
use crate::sched::ops::{Chan, Mutex, Task, WaitGroup};
use std::rc::Rc;

pub enum Obj {
    Str(StrObj),
    /// Immutable binary data (`bytes`); shared like strings' text.
    Bytes(Rc<[u8]>),
    List(Vec<Value>),
    /// In the slot itself (24 bytes, see vm/map.rs): a field read loads the
    /// values' address from the slot.
    Map(crate::vm::value::Map),
    Closure(Closure),
    /// A boxed variable captured by a closure (capture by reference).
    Cell(Value),
    /// Boxed: its body would not fit the 24 bytes every other kind keeps to, and
    /// a bigger body would move the kind's tag into a niche that every match on
    /// an object then pays to decode.
    Native(Box<Native>),
    Error(Box<ErrorObj>),
    Chan(Box<Chan>),
    Coroutine(Box<crate::vm::coroutine::Coroutine>),
    Task(Box<Task>),
    Mutex(Box<Mutex>),
    WaitGroup(Box<WaitGroup>),
    /// An open file or pipe end (`os/stream.rs`).
    Stream(Box<crate::os::stream::Stream>),
    /// A listening TCP socket (`os/net.rs`).
    Listener(Box<crate::os::net::Listener>),
    /// A UDP socket (`os/net.rs`).
    Udp(Box<crate::os::net::Udp>),
    /// A child process (`os/process.rs`).
    Process(Box<crate::os::process::Process>),
    /// A compiled regular expression (`std/re`), shared with the pattern cache.
    Regex(Rc<regex::Regex>),
    /// An instant and a time zone (`std/time`, `natives/time.rs`).
    Time(Box<jiff::ZonedDateTime>),
    /// A half-open integer range `lo..hi` (inclusive ranges are stored with `hi + 1`).
    Range(i64, i64),
    /// A freed slot, on the heap's free list.
    Free,
}

pub struct StrObj {
    pub s: Str,
    /// Number of chars (Unicode scalar values); equal to `s.len()` for ASCII, which
    /// makes indexing O(1) in the common case.
    pub chars: usize,
}

impl StrObj {
    pub fn new(s: Str) -> StrObj {
        let chars = if s.is_ascii() { s.len() } else { s.chars().count() };
        StrObj { s, chars }
    }

    /// `self` followed by `tail` (see `Str::plus`: in place when it can be).
    pub fn plus(&self, tail: &str, tail_chars: usize) -> StrObj {
        StrObj { s: self.s.plus(tail), chars: self.chars + tail_chars }
    }
    pub fn is_ascii(&self) -> bool {
        self.chars == self.s.len()
    }
}

pub struct Closure {
    pub proto: ProtoRef,
    /// Captured variables: `Obj::Cell`s shared with the enclosing function, or
    /// the values of variables that never change (compile/captures.rs).
    pub upvals: Box<[Value]>,
}

pub struct Native {
    pub name: &'static str,
    pub func: NativeFn,
}

pub struct ErrorObj {
    pub message: Rc<str>,
    /// `"name (file:line:col)"` entries, innermost first.
    pub trace: Vec<Rc<str>>,
    /// Further errors from the same structured block (`e.others`).
    pub others: Vec<Value>,
    /// What failed (`e.kind`); `Cancelled` marks the error of a cancelled fiber.
    pub kind: crate::vm::ErrorKind,
    /// Where it was raised, for reports of errors that travel between fibers.
    pub origin: Option<Site>,
}

impl Obj {
    pub fn type_name(&self) -> &'static str {
        match self {
            Obj::Str(_) => "string",
            Obj::Bytes(_) => "bytes",
            Obj::List(_) => "list",
            Obj::Map(_) => "map",
            Obj::Closure(_) | Obj::Native(_) => "function",
            Obj::Cell(_) => "cell",
            Obj::Error(_) => "error",
            Obj::Range(..) => "range",
            Obj::Chan(_) => "chan",
            Obj::Coroutine(_) => "coroutine",
            Obj::Task(_) => "task",
            Obj::Mutex(_) => "mutex",
            Obj::WaitGroup(_) => "waitgroup",
            Obj::Stream(_) => "stream",
            Obj::Process(_) => "process",
            Obj::Listener(_) => "listener",
            Obj::Udp(_) => "udp",
            Obj::Regex(_) => "regex",
            Obj::Time(_) => "time",
            Obj::Free => "freed",
        }
    }

    /// Rough byte size, used to pace the collector.
    pub fn size(&self) -> usize {
        let extra = match self {
            // The text and its buffer's header.
            Obj::Str(s) => s.s.len() + 16,
            Obj::Bytes(b) => b.len(),
            Obj::List(v) => v.capacity() * 16,
            Obj::Map(m) => m.size(),
            Obj::Closure(c) => c.upvals.len() * 16,
            Obj::Error(e) => e.message.len() + e.trace.len() * 48,
            // Boxed apart from the slot: a million tasks or channels must count.
            Obj::Task(t) => t.size(),
            Obj::Chan(c) => c.size(),
            // A descriptor is scarcer than memory: abandoned streams should
            // bring the collection (which closes them) closer.
            Obj::Stream(_) | Obj::Process(_) | Obj::Listener(_) | Obj::Udp(_) => 64 * 1024,
            _ => 0,
        };
        std::mem::size_of::<Obj>() + extra
    }
}
