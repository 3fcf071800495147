//! Heap object kinds. Objects refer to each other only through `Value`/`Handle`,
//! so dropping one never recurses and the collector sees every edge.

use super::builtin::NativeFn;
use super::list::{const_first_word, first_word, VEC_WORD};
use super::str::Str;
use super::value::Value;
use super::List;
use crate::bytecode::{ProtoRef, Site};
use crate::sched::task::Task;
use crate::sched::values::{Chan, Mutex, WaitGroup};
use std::rc::Rc;

pub enum Obj {
    Str(StrObj),
    /// Immutable binary data (`bytes`); shared like strings' text.
    Bytes(Rc<[u8]>),
    /// One or two items in the slot itself, more beside it (vm/list.rs).
    List(List),
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
    Coroutine(Box<crate::vm::fiber::Coroutine>),
    Task(Box<Task>),
    Mutex(Box<Mutex>),
    WaitGroup(Box<WaitGroup>),
    /// A stream, socket, process, regex, time, database... or a value of an
    /// embedding host's type: anything the core does not define (`vm/host.rs`).
    Host(Box<dyn crate::vm::host::HostObject>),
    /// A half-open integer range `lo..hi` (inclusive ranges are stored with `hi + 1`).
    Range(i64, i64),
    /// A freed slot, on the heap's free list.
    Free,
}

// Every slot is this size: a bigger kind makes every object bigger.
const _: () = assert!(std::mem::size_of::<Obj>() == 32);

// A list's kind word is the object's (vm/list.rs): the other kinds of object
// take values past a list's.
const _: () = {
    assert!(const_first_word(Obj::List(List::Vec(Vec::new()))) == VEC_WORD);
    let (free, range) = (const_first_word(Obj::Free), const_first_word(Obj::Range(0, 0)));
    assert!(free > VEC_WORD + 1 && range > VEC_WORD + 1 && free != range, "an object's kind is its first word");
};

/// The longest interned string, in bytes (Lua's LUAI_MAXSHORTLEN; intern.rs).
pub const SHORT: usize = 40;

pub struct StrObj {
    pub s: Str,
    /// Number of chars (Unicode scalar values); equal to `s.len()` for ASCII, which
    /// makes indexing O(1) in the common case. In the top bit `INTERNED`.
    chars: usize,
}

/// In `StrObj::chars`: the object is in the table of short strings
/// (intern.rs), which must drop it when it is freed. Short strings made
/// elsewhere (lines read) are not, and are freed without a look there.
const INTERNED: usize = 1 << (usize::BITS - 1);

impl StrObj {
    pub fn new(s: Str) -> StrObj {
        let chars = if s.is_ascii() { s.len() } else { s.chars().count() };
        StrObj { s, chars }
    }

    /// A string of ASCII text.
    pub fn ascii(s: Str) -> StrObj {
        StrObj { chars: s.len(), s }
    }

    /// `self`, marked as the table of short strings' object for its text.
    pub fn interned(self) -> StrObj {
        StrObj { chars: self.chars | INTERNED, ..self }
    }

    pub fn is_interned(&self) -> bool {
        self.chars & INTERNED != 0
    }

    /// Number of chars (Unicode scalar values).
    #[inline]
    pub fn chars(&self) -> usize {
        self.chars & !INTERNED
    }

    /// `self` followed by `tail` (see `Str::plus`: in place when it can be).
    pub fn plus(&self, tail: &str, tail_chars: usize) -> StrObj {
        StrObj { s: self.s.plus(tail), chars: self.chars() + tail_chars }
    }

    pub fn is_ascii(&self) -> bool {
        self.chars() == self.s.len()
    }

    /// Makes this string `text` (ASCII when `ascii`): over its own bytes when
    /// it can (`Str::overwrite`), else in a new buffer with room for longer
    /// text, whose size it returns. Only for a string no other value can
    /// reach and not interned (`Heap::reread_str` checks; `Proto::reuses`).
    #[inline]
    pub fn refill(&mut self, text: &str, ascii: bool) -> usize {
        let mut made = 0;
        if !self.s.overwrite(text) {
            self.s = Str::with_room(text, (2 * text.len()).max(64));
            made = self.s.capacity() + 16;
        }
        self.chars = if ascii { text.len() } else { text.chars().count() };
        made
    }

    /// Bytes it holds beyond its slot when ASCII: the text and its buffer's header.
    #[inline]
    pub fn ascii_bytes(&self) -> usize {
        self.s.len() + 16
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
    /// The fast path of a one-argument builtin that only computes (`sqrt`,
    /// `len`), which the dispatch loop calls without `func`'s protocol.
    pub quick: Option<QuickFn>,
}

/// A builtin's answer, into `out`, for the one argument it can handle
/// without failing or allocating; false for the rest, which then go to
/// `func` (whose errors are the builtin's). References, not values in and
/// out: a `Value` crosses a call in memory, and a handler that lent its own
/// stack to the call could not jump on to the next handler.
pub type QuickFn = fn(&super::Heap, &Value, &mut Value) -> bool;

/// `QuickFn`'s result from an `Option`.
#[inline(always)]
pub fn quick_out(out: &mut Value, v: Option<Value>) -> bool {
    match v {
        Some(v) => {
            *out = v;
            true
        }
        None => false,
    }
}

impl Native {
    pub fn new(name: &'static str, func: NativeFn) -> Native {
        Native { name, func, quick: None }
    }
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
            Obj::Host(o) => o.class().name,
            Obj::Free => "freed",
        }
    }

    /// The items of a list in a `Vec`: one compare (vm/list.rs, `VEC_WORD`).
    #[inline(always)]
    pub fn list_vec(&self) -> Option<&Vec<Value>> {
        if first_word(self) != VEC_WORD {
            return None;
        }
        let Obj::List(List::Vec(items)) = self else {
            // SAFETY: only such a list has VEC_WORD there (asserted below).
            unsafe { std::hint::unreachable_unchecked() }
        };
        Some(items)
    }

    /// As `list_vec`, to change them.
    #[inline(always)]
    pub fn list_vec_mut(&mut self) -> Option<&mut Vec<Value>> {
        if first_word(self) != VEC_WORD {
            return None;
        }
        let Obj::List(List::Vec(items)) = self else {
            // SAFETY: as for `list_vec`.
            unsafe { std::hint::unreachable_unchecked() }
        };
        Some(items)
    }

    /// Item `i` of a list, for the dispatch loop: a `Vec`'s tested first, so a
    /// long list's item costs what it did before small lists were in the slot.
    #[inline(always)]
    pub fn list_item(&self, i: usize) -> Option<&Value> {
        if let Some(items) = self.list_vec() {
            return items.get(i);
        }
        match self {
            Obj::List(List::Two(items)) => items.get(i),
            Obj::List(List::One(a)) if i == 0 => Some(a),
            _ => None,
        }
    }

    /// As `list_item`, to change the item.
    #[inline(always)]
    pub fn list_item_mut(&mut self, i: usize) -> Option<&mut Value> {
        if first_word(self) == VEC_WORD {
            return self.list_vec_mut().and_then(|items| items.get_mut(i));
        }
        match self {
            Obj::List(List::Two(items)) => items.get_mut(i),
            Obj::List(List::One(a)) if i == 0 => Some(a),
            _ => None,
        }
    }

    /// Does dropping it free nothing (its items, if any, are in the slot)?
    #[inline]
    pub fn owns_nothing(&self) -> bool {
        matches!(self, Obj::List(List::Two(_) | List::One(_)) | Obj::Cell(_) | Obj::Range(..))
    }

    /// Rough byte size, used to pace the collector.
    pub fn size(&self) -> usize {
        let extra = match self {
            // The text and its buffer's header, and the character index of text
            // that is not ASCII (its header is read only then).
            Obj::Str(s) if s.is_ascii() => s.ascii_bytes(),
            Obj::Str(s) => s.ascii_bytes() + s.s.index_bytes(),
            Obj::Bytes(b) => b.len(),
            Obj::List(l) => l.heap_bytes(),
            Obj::Map(m) => m.size(),
            Obj::Closure(c) => c.upvals.len() * 16,
            Obj::Error(e) => e.message.len() + e.trace.len() * 48,
            // Boxed apart from the slot: a million tasks or channels must count.
            Obj::Task(t) => t.size(),
            Obj::Chan(c) => c.size(),
            Obj::Host(o) => o.size(),
            _ => 0,
        };
        std::mem::size_of::<Obj>() + extra
    }
}
