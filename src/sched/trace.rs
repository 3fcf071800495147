//! `--trace FILE` (docs/trace.md): Chrome trace events streamed to the file as
//! the program runs. A track per fiber, named after its `go`; a slice per time
//! slice, with how it ended and on what it blocked; a flow arrow from the slice
//! that woke a fiber to that fiber's next slice. Events are formatted by hand
//! into one byte buffer: a ping-pong program makes one every few dozen
//! nanoseconds, and `format!` per event would cost more than the program.

use super::Wait;
use crate::bytecode::Site;
use crate::vm::exec::Halt;
use crate::vm::{Handle, Obj, Vm};
use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::rc::Rc;
use std::time::Instant;

/// Bytes gathered before a write to the file.
const WRITE_AT: usize = 1 << 16;

/// The open trace file, shared by every VM writing to it (`csp test` runs a
/// VM per test file: each is a process in the trace, on one timeline).
#[derive(Clone)]
pub struct TraceFile(Rc<RefCell<Sink>>);

struct Sink {
    file: File,
    buf: Vec<u8>,
    /// No event written yet: none needs a comma before it.
    first: bool,
    closed: bool,
    start: Instant,
    /// Process ids handed out (one per VM).
    pids: u32,
    /// Flow ids handed out.
    flows: u64,
    /// The first write that failed; later events are dropped.
    error: Option<std::io::Error>,
}

impl TraceFile {
    /// Creates (truncates) the file and writes the document's head.
    pub fn create(path: &str) -> std::io::Result<TraceFile> {
        let file = File::create(path)?;
        let mut buf = Vec::with_capacity(WRITE_AT + 4096);
        buf.extend_from_slice(b"{\"traceEvents\":[");
        let sink =
            Sink { file, buf, first: true, closed: false, start: Instant::now(), pids: 0, flows: 0, error: None };
        Ok(TraceFile(Rc::new(RefCell::new(sink))))
    }

    /// Makes `vm` record its fibers into this file, as a process of its own.
    pub fn attach(&self, vm: &mut Vm) {
        let pid = {
            let mut s = self.0.borrow_mut();
            s.pids += 1;
            s.pids
        };
        let t = Trace { sink: self.0.clone(), pid, fibers: Vec::new(), running: None, last_end: None, sites: Default::default() };
        vm.sched.trace = Some(Box::new(t));
    }

    /// Ends the document and writes out what is buffered; the first write
    /// error, if any happened.
    pub fn finish(&self) -> std::io::Result<()> {
        let mut s = self.0.borrow_mut();
        s.close();
        match s.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Sink {
    /// Nanoseconds since the trace began.
    #[inline]
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// `{` of a new event, after a comma and a newline unless it is the first.
    #[inline]
    fn open(&mut self) {
        let sep: &[u8] = if self.first { b"\n{" } else { b",\n{" };
        self.first = false;
        self.buf.extend_from_slice(sep);
    }

    /// `}` of an event; writes the buffer out once it is big enough.
    #[inline]
    fn end(&mut self) {
        self.buf.push(b'}');
        if self.buf.len() >= WRITE_AT {
            self.write_out();
        }
    }

    fn write_out(&mut self) {
        if self.error.is_none() {
            if let Err(e) = self.file.write_all(&self.buf) {
                self.error = Some(e);
            }
        }
        self.buf.clear();
    }

    /// Closes the array and the document (once) and writes everything out.
    fn close(&mut self) {
        if !self.closed {
            self.closed = true;
            self.buf.extend_from_slice(b"\n]}\n");
            self.write_out();
        }
    }

    #[inline]
    fn lit(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A decimal number, two digits at a time.
    #[inline]
    fn uint(&mut self, mut n: u64) {
        const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        while n >= 100 {
            let p = (n % 100) as usize * 2;
            n /= 100;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
        }
        if n >= 10 {
            let p = n as usize * 2;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
        } else {
            i -= 1;
            digits[i] = b'0' + n as u8;
        }
        self.buf.extend_from_slice(&digits[i..]);
    }

    /// Nanoseconds as the format's microseconds, to three decimals.
    #[inline]
    fn micros(&mut self, ns: u64) {
        self.uint(ns / 1000);
        let frac = ns % 1000;
        self.buf.extend_from_slice(&[b'.', b'0' + (frac / 100) as u8, b'0' + (frac / 10 % 10) as u8, b'0' + (frac % 10) as u8]);
    }

    /// A JSON string: quoted, with `"`, `\` and control characters escaped.
    fn string(&mut self, s: &str) {
        self.buf.push(b'"');
        escape_into(&mut self.buf, s);
        self.buf.push(b'"');
    }

    /// `"pid":P,"tid":T`
    #[inline]
    fn ids(&mut self, pid: u32, tid: u32) {
        self.lit("\"pid\":");
        self.uint(pid.into());
        self.lit(",\"tid\":");
        self.uint(tid.into());
    }

    /// A metadata event naming a process (`tid` None) or a track.
    fn metadata(&mut self, pid: u32, tid: Option<u32>, name: &str) {
        self.open();
        self.lit(match tid {
            None => "\"name\":\"process_name\",\"ph\":\"M\",",
            Some(_) => "\"name\":\"thread_name\",\"ph\":\"M\",",
        });
        self.ids(pid, tid.unwrap_or(0));
        self.lit(",\"args\":{\"name\":");
        self.string(name);
        self.lit("}");
        self.end();
    }

    /// A flow event: its start (`s`) in a waker's slice, or its end (`f`)
    /// bound to the slice that encloses it (the woken fiber's next one).
    #[inline]
    fn flow(&mut self, ph: u8, id: u64, ts: u64, pid: u32, tid: u32) {
        self.open();
        self.lit(if ph == b's' {
            "\"name\":\"wake\",\"cat\":\"wake\",\"ph\":\"s\",\"id\":"
        } else {
            "\"name\":\"wake\",\"cat\":\"wake\",\"ph\":\"f\",\"bp\":\"e\",\"id\":"
        });
        self.uint(id);
        self.lit(",\"ts\":");
        self.micros(ts);
        self.lit(",");
        self.ids(pid, tid);
        self.end();
    }
}

impl Drop for Sink {
    /// However the process unwinds, the file is a whole document.
    fn drop(&mut self) {
        self.close();
    }
}

/// Appends `s` with JSON's escapes.
fn escape_into(out: &mut Vec<u8>, s: &str) {
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1f | 0x7f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
            }
            _ => out.push(b),
        }
    }
}

/// One VM's part of the trace (`Sched::trace`).
pub(crate) struct Trace {
    sink: Rc<RefCell<Sink>>,
    pid: u32,
    /// For each fiber id (slot): its track (the task number) and the flow
    /// to end at the start of its next slice (0: none).
    fibers: Vec<(u32, u64)>,
    /// The fiber whose slice is running and when the slice began: the fibers
    /// it wakes get flows from it, starting at that time.
    running: Option<(u32, u64)>,
    /// When the last slice ended, if the scheduler has gone straight on to
    /// the next one: that one begins then (reading the clock costs as much
    /// as a fiber switch).
    last_end: Option<u64>,
    /// `"file:line:col"` of each blocking site seen, escaped and quoted.
    sites: foldhash::HashMap<(usize, u32), Box<[u8]>>,
}

impl Trace {
    /// Names this VM's process in the trace.
    pub fn name_process(&mut self, name: &str) {
        self.sink.borrow_mut().metadata(self.pid, None, name);
    }

    /// A fiber running now woke fiber `fid`: a flow starts in its slice (at
    /// the slice's start: one clock read less per wake), to end when `fid`
    /// next runs. Wakes from outside a slice (timers, I/O) have no flow.
    #[inline(never)]
    pub(super) fn woke(&mut self, fid: u32) {
        let Some((cur, began)) = self.running.filter(|&(c, _)| c != fid) else { return };
        let (Some(&(tid, _)), true) = (self.fibers.get(cur as usize), (fid as usize) < self.fibers.len()) else {
            return;
        };
        let mut s = self.sink.borrow_mut();
        s.flows += 1;
        let id = s.flows;
        s.flow(b's', id, began, self.pid, tid);
        self.fibers[fid as usize].1 = id;
    }

    /// The quoted location of `site`, made once per site.
    fn site(&mut self, site: Site) -> &[u8] {
        self.sites.entry((site.proto.as_ptr() as usize, site.pc)).or_insert_with(|| {
            let mut v = vec![b'"'];
            escape_into(&mut v, &site.location());
            v.push(b'"');
            v.into_boxed_slice()
        })
    }
}

/// Names fiber `id`'s track (`label`: see `report::fiber_title`) when it starts
/// as task number `tid`.
pub(super) fn name_fiber(vm: &mut Vm, id: u32, tid: u32, label: &str) {
    let Some(t) = vm.sched.trace.as_deref_mut() else { return };
    let i = id as usize;
    if t.fibers.len() <= i {
        t.fibers.resize(i + 1, (0, 0));
    }
    t.fibers[i] = (tid, 0);
    t.sink.borrow_mut().metadata(t.pid, Some(tid), label);
}

/// A slice of fiber `id` begins: its time (ns), after ending the flow that
/// woke it, if any.
pub(super) fn slice_begins(vm: &mut Vm, id: u32) -> Option<u64> {
    let t = vm.sched.trace.as_deref_mut()?;
    let mut s = t.sink.borrow_mut();
    let ts = t.last_end.take().unwrap_or_else(|| s.now());
    t.running = Some((id, ts));
    if let Some((tid, flow)) = t.fibers.get_mut(id as usize) {
        if *flow != 0 {
            s.flow(b'f', *flow, ts, t.pid, *tid);
            *flow = 0;
        }
    }
    Some(ts)
}

/// The scheduler is doing something else than going to the next slice
/// (collecting garbage, waiting, delivering events): the next slice's start
/// is read from the clock.
pub(super) fn gap(vm: &mut Vm) {
    if let Some(t) = vm.sched.trace.as_deref_mut() {
        t.last_end = None;
    }
}

/// How a slice ended, taken before the driver acts on the halt.
pub(super) struct Ending {
    cat: &'static str,
    /// Where the fiber is (for a blocked one: the blocking operation).
    at: Option<Site>,
}

impl Ending {
    pub fn of(halt: &Halt, at: Option<Site>) -> Ending {
        let cat = match halt {
            Halt::Preempted | Halt::Yielded => "yield",
            Halt::Blocked | Halt::Deadlock(_) => "block",
            Halt::Done(_) => "done",
            Halt::Error(_) => "error",
        };
        Ending { cat, at }
    }
}

/// Writes fiber `id`'s slice that began at `began` and ends now: a complete
/// (`X`) event named for how it ended; a blocked one's args say on what.
pub(super) fn slice_ends(vm: &mut Vm, id: u32, began: u64, ending: Ending) {
    let Some(mut t) = vm.sched.trace.take() else { return };
    t.running = None;
    let tid = t.fibers.get(id as usize).map_or(0, |f| f.0);
    let wait = match ending.cat {
        "block" => vm.sched.state(id).parked.as_ref(),
        _ => None,
    };
    let sink = t.sink.clone();
    let mut s = sink.borrow_mut();
    let end = s.now();
    t.last_end = Some(end);
    s.open();
    s.lit("\"name\":\"");
    s.lit(wait.map_or(ending.cat, Wait::describe));
    s.lit("\",\"cat\":\"");
    s.lit(ending.cat);
    s.lit("\",\"ph\":\"X\",\"ts\":");
    s.micros(began);
    s.lit(",\"dur\":");
    s.micros(end.saturating_sub(began));
    s.lit(",");
    s.ids(t.pid, tid);
    if let Some(w) = wait {
        s.lit(",\"args\":{\"at\":");
        match ending.at {
            Some(at) => s.buf.extend_from_slice(t.site(at)),
            None => s.lit("null"),
        }
        wait_args(vm, &mut s, w, id);
        s.lit("}");
    }
    s.end();
    drop(s);
    vm.sched.trace = Some(t);
}

/// What the wait names, each after a comma: the channel (as `repr` shows it,
/// and its id), the channels of a `select`, the mutex, the descriptor.
fn wait_args(vm: &Vm, s: &mut Sink, w: &Wait, id: u32) {
    let chan = |s: &mut Sink, h: Handle| {
        if let Obj::Chan(c) = vm.heap.get(h) {
            s.lit("\"<chan ");
            s.uint(c.len() as u64);
            s.lit("/");
            s.uint(c.cap() as u64);
            s.lit(">\"");
        }
    };
    match *w {
        Wait::Recv(h) | Wait::Send(h) => {
            s.lit(",\"chan\":");
            chan(s, h);
            s.lit(",\"chan_id\":");
            s.uint(h.0.into());
        }
        Wait::Select => {
            let chans = vm.sched.state(id).extra.as_ref().map_or(&[][..], |x| &x.select[..]);
            s.lit(",\"chan_ids\":[");
            for (i, h) in chans.iter().enumerate() {
                if i > 0 {
                    s.lit(",");
                }
                s.uint(h.0.into());
            }
            s.lit("]");
        }
        Wait::Lock(m) => {
            s.lit(",\"lock_id\":");
            s.uint(m.0.into());
        }
        Wait::Fd(fd) => {
            s.lit(",\"fd\":");
            s.uint(fd.max(0) as u64);
        }
        _ => {}
    }
}

/// Ends the document now: the process is about to exit without unwinding.
pub(super) fn close(vm: &Vm) {
    if let Some(t) = &vm.sched.trace {
        t.sink.borrow_mut().close();
    }
}
