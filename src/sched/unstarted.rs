//! Fibers of dropped `go` statements (outside `wait { }` blocks) that have not
//! started: a 16-byte record each, with its callee and arguments in one FIFO of
//! values. The design's start order makes a tree of fibers queue all its leaves
//! at once (a million in benches/conc/skynet.csp), so this is kept small:
//! - a value equal to the one at the same position in the previous record is not
//!   stored again (the `go`s of one loop share the callee and most arguments);
//! - both FIFOs are chunked, so they grow without copying and give memory back
//!   as they drain, for the fibers that then start.

use crate::bytecode::Site;
use crate::vm::{Handle, Value};
use std::collections::{HashMap, VecDeque};

/// Values or records per chunk.
const CHUNK: usize = 1024;
/// No owner.
const NONE: u32 = u32::MAX;
const CANCELLED: u8 = 1;
const METHOD: u8 = 2;

#[derive(Clone, Copy)]
struct Record {
    owner: u32,
    site: u32,
    number: u32,
    /// Values of the call (see `Fiber::for_call`).
    len: u8,
    /// `CANCELLED` (its `go` ran in a cancelled fiber) and `METHOD` (a method call).
    flags: u8,
    /// Bit i: value i is the previous record's value i.
    repeat: u16,
}

/// A record taken off the queue.
pub(super) struct Started {
    /// The call the fiber starts with.
    pub call: Vec<Value>,
    pub method: bool,
    pub owner: Option<Handle>,
    pub site: Site,
    pub number: u32,
    /// Its `go` ran in a cancelled fiber (`Born::Cancelled`; a stillborn
    /// dropped `go` makes no record).
    pub born_cancelled: bool,
}

#[derive(Default)]
pub(super) struct Unstarted {
    records: Chunked<Record>,
    values: Chunked<Value>,
    /// The values of the record pushed last, and of the one taken last.
    pushed: Vec<Value>,
    taken: Vec<Value>,
    sites: Vec<Site>,
    site_ids: HashMap<(usize, u32), u32>,
}

impl Unstarted {
    pub fn push(
        &mut self,
        owner: Option<Handle>,
        site: Site,
        number: u32,
        method: bool,
        born_cancelled: bool,
        call: impl Iterator<Item = Value>,
    ) {
        let old = std::mem::take(&mut self.pushed);
        let mut repeat = 0u16;
        for (i, v) in call.enumerate() {
            if i < 16 && old.get(i).is_some_and(|o| same(*o, v)) {
                repeat |= 1 << i;
            } else {
                self.values.push(v);
            }
            self.pushed.push(v);
        }
        let site = self.site_id(site);
        // At most 250 arguments, the callee or method name, and the receiver.
        debug_assert!(self.pushed.len() <= u8::MAX as usize);
        let (owner, len) = (owner.map_or(NONE, |h| h.0), self.pushed.len() as u8);
        let flags = if method { METHOD } else { 0 } | if born_cancelled { CANCELLED } else { 0 };
        self.records.push(Record { owner, site, number, len, flags, repeat });
    }

    pub fn pop(&mut self) -> Option<Started> {
        let r = self.records.pop()?;
        let old = std::mem::take(&mut self.taken);
        let values = &mut self.values;
        let repeated = |i: usize| i < 16 && r.repeat & (1 << i) != 0;
        self.taken.extend((0..r.len as usize).map(|i| {
            if repeated(i) {
                old[i]
            } else {
                values.pop().expect("record values")
            }
        }));
        let owner = (r.owner != NONE).then_some(Handle(r.owner));
        let (call, site) = (self.taken.clone(), self.sites[r.site as usize]);
        let method = r.flags & METHOD != 0;
        let born_cancelled = r.flags & CANCELLED != 0;
        Some(Started { call, method, owner, site, number: r.number, born_cancelled })
    }

    /// Owners and values (roots for the collector).
    pub fn roots(&self) -> impl Iterator<Item = Value> + '_ {
        let owners = self.records.iter().filter(|r| r.owner != NONE).map(|r| Value::Obj(Handle(r.owner)));
        owners.chain(self.values.iter().copied()).chain(self.pushed.iter().copied()).chain(self.taken.iter().copied())
    }

    /// Bytes held, for the memory limit (whole chunks, as allocated).
    pub fn bytes(&self) -> usize {
        self.records.chunks.len() * CHUNK * std::mem::size_of::<Record>()
            + self.values.chunks.len() * CHUNK * std::mem::size_of::<Value>()
    }

    /// `(task number, go site)` of each record, for `:fibers`.
    pub fn describe(&self) -> impl Iterator<Item = (u32, &Site)> + '_ {
        self.records.iter().map(|r| (r.number, &self.sites[r.site as usize]))
    }

    fn site_id(&mut self, site: Site) -> u32 {
        let key = (site.proto.as_ptr() as usize, site.pc);
        let next = self.sites.len() as u32;
        let id = *self.site_ids.entry(key).or_insert(next);
        if id == next {
            self.sites.push(site);
        }
        id
    }
}

/// What a record of a call of `len` values holds at most (its repeated
/// values are not stored again).
pub(super) fn record_bytes(len: usize) -> usize {
    std::mem::size_of::<Record>() + len * std::mem::size_of::<Value>()
}

/// The same value bit for bit (a float NaN included).
fn same(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Obj(x), Value::Obj(y)) => x == y,
        _ => false,
    }
}

/// A FIFO in fixed-size chunks: it grows without copying and frees chunks as it
/// drains (keeping one spare, so a queue that keeps emptying does not churn).
struct Chunked<T> {
    chunks: VecDeque<Vec<T>>,
    /// Items of the front chunk already taken.
    head: usize,
    spare: Option<Vec<T>>,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: VecDeque::new(), head: 0, spare: None }
    }
}

impl<T: Copy> Chunked<T> {
    fn push(&mut self, t: T) {
        match self.chunks.back_mut() {
            Some(c) if c.len() < CHUNK => c.push(t),
            _ => {
                let mut c = self.spare.take().unwrap_or_else(|| Vec::with_capacity(CHUNK));
                c.push(t);
                self.chunks.push_back(c);
            }
        }
    }

    fn pop(&mut self) -> Option<T> {
        let front = self.chunks.front()?;
        let t = front[self.head];
        self.head += 1;
        if self.head == front.len() {
            let mut c = self.chunks.pop_front().unwrap();
            c.clear();
            self.spare = Some(c);
            self.head = 0;
        }
        Some(t)
    }

    fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().enumerate().flat_map(|(i, c)| &c[if i == 0 { self.head } else { 0 }..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_is_fifo_across_chunks() {
        let mut q = Chunked::default();
        for i in 0..3000 {
            q.push(i);
        }
        assert_eq!(q.iter().count(), 3000);
        for i in 0..2500 {
            assert_eq!(q.pop(), Some(i));
        }
        q.push(3000);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), (2500..=3000).collect::<Vec<_>>());
        assert_eq!(q.chunks.len(), 1);
    }
}
