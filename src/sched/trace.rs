//! `--trace FILE` (docs/trace.md): Chrome trace events streamed to the file as
//! the program runs. A track per fiber, named after its `go`; a slice per time
//! slice, with how it ended and on what it blocked; a flow arrow from the slice
//! that woke a fiber to that fiber's next slice. Each isolate is a process of
//! the trace, and what crosses between isolates (a job, its answer, a value on
//! a shared channel) has a flow from the fiber that sent it to the one that
//! takes it. Events are formatted by hand into a byte buffer per thread: a
//! ping-pong program makes one every few dozen nanoseconds, and `format!` per
//! event would cost more than the program.

use super::trace_out::{Out, Small, Stamp, Writer};
use super::Wait;
use crate::bytecode::Site;
use crate::vm::{Obj, Vm};
use std::cell::RefCell;
use std::fs::File;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[path = "trace_cross.rs"]
mod cross;
pub use cross::Crossing;
pub(crate) use cross::{cross_in, cross_out, cross_to_parked};

/// The open trace file as one thread writes to it, shared by every VM of
/// that thread (`csp test` runs a VM per test file: each is a process in the
/// trace, on one timeline; `--isolates 1` steps a worker beside the main
/// isolate). Isolates on other threads write through a `TraceFile` of their
/// own, opened from `TraceShare`.
#[derive(Clone)]
pub struct TraceFile(Rc<RefCell<Sink>>);

/// What every thread's part of the trace shares: the file's writer, one
/// clock, the process ids and the flow ids handed out.
#[derive(Clone)]
pub struct TraceShare(Arc<Shared>);

struct Shared {
    writer: Arc<Writer>,
    start: Instant,
    /// Process ids handed out (one per VM).
    pids: AtomicU32,
    /// Buffers opened: each hands out flow ids of its own (`FLOW_BITS`).
    buffers: AtomicU64,
}

/// A buffer's flow ids are its number in the high bits, so they are unique
/// across isolates without an atomic per flow (the main thread's are 1, 2,
/// ...; up to 2^21 buffers stay below 2^53, as JSON readers need).
const FLOW_BITS: u32 = 32;

struct Sink {
    out: Out,
    /// The document is closed: later events are dropped.
    closed: bool,
    start: Instant,
    /// Flow ids handed out.
    flows: u64,
    /// This sink made the file: its end closes the document.
    owner: bool,
    shared: Arc<Shared>,
}

impl TraceFile {
    /// Creates (truncates) the file; the writer writes the document's head.
    pub fn create(path: &str) -> std::io::Result<TraceFile> {
        let writer = Writer::start(File::create(path)?)?;
        let shared = Shared { writer, start: Instant::now(), pids: 0.into(), buffers: 0.into() };
        Ok(TraceShare(Arc::new(shared)).open_as(true))
    }

    /// Makes `vm` record its fibers into this file, as a process of its own.
    pub fn attach(&self, vm: &mut Vm) {
        let pid = self.0.borrow().shared.pids.fetch_add(1, Ordering::Relaxed) + 1;
        let sites = Default::default();
        let t = Trace {
            sink: self.0.clone(),
            pid,
            fibers: Vec::new(),
            running: None,
            last_end: None,
            sites,
            arrivals: Vec::new(),
            main_track: None,
        };
        vm.sched.trace = Some(Box::new(t));
    }

    /// What isolates on other threads open their own part of the file from.
    pub fn share(&self) -> TraceShare {
        TraceShare(self.0.borrow().shared.clone())
    }

    /// The file `vm` records into, if it does.
    pub fn of(vm: &Vm) -> Option<TraceFile> {
        vm.sched.trace.as_ref().map(|t| TraceFile(t.sink.clone()))
    }

    /// Ends the document and writes it out; the first write error, if any.
    pub fn finish(&self) -> std::io::Result<()> {
        self.0.borrow_mut().close()
    }
}

impl TraceShare {
    /// A part of the file for this thread's isolates (a buffer of its own).
    pub fn open(&self) -> TraceFile {
        self.open_as(false)
    }

    fn open_as(&self, owner: bool) -> TraceFile {
        let shared = self.0.clone();
        let n = shared.buffers.fetch_add(1, Ordering::Relaxed);
        let out = Out::new(shared.writer.clone());
        let sink = Sink { out, closed: false, start: shared.start, flows: n << FLOW_BITS, owner, shared };
        TraceFile(Rc::new(RefCell::new(sink)))
    }
}

/// This thread's events go out now (an isolate ends).
pub(crate) fn flush(vm: &mut Vm) {
    if let Some(t) = &vm.sched.trace {
        t.sink.borrow_mut().out.flush();
    }
}

/// The process ends at once (a worker's `exit(code)`, an error nobody
/// takes): this thread's events go out and the document is closed.
pub(crate) fn end_now(vm: &mut Vm) {
    if let Some(t) = &vm.sched.trace {
        let _ = t.sink.borrow_mut().close();
    }
}

impl Sink {
    /// Nanoseconds since the trace began.
    #[inline]
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// `,\n{` of a new event (the writer leaves out the first comma).
    #[inline]
    fn open(&mut self) {
        self.out.open();
    }

    /// Hands over what is buffered, closes the array and the document (once)
    /// and waits for the writer. Another thread may have closed it first.
    fn close(&mut self) -> std::io::Result<()> {
        self.closed = true;
        self.out.flush();
        self.shared.writer.end()
    }

    /// A JSON string: quoted, with `"`, `\` and control characters escaped.
    fn string(&mut self, s: &str) {
        let mut v = Vec::with_capacity(s.len() + 2);
        v.push(b'"');
        escape_into(&mut v, s);
        v.push(b'"');
        self.out.put_slice(&v);
    }

    /// A metadata event naming a process or a fiber's track (`ids`).
    fn metadata(&mut self, thread: bool, ids: &Small, name: &str) {
        if self.closed {
            return;
        }
        self.open();
        match thread {
            false => self.out.put(b"\"name\":\"process_name\",\"ph\":\"M\",\"args\":{\"name\":"),
            true => self.out.put(b"\"name\":\"thread_name\",\"ph\":\"M\",\"args\":{\"name\":"),
        }
        self.string(name);
        self.out.put(b"},");
        self.out.small(ids);
    }

    /// A flow event: its start (`s`) in a waker's slice, or its end (`f`)
    /// bound to the slice that encloses it (the woken fiber's next one).
    #[inline]
    fn flow(&mut self, start: bool, id: u64, ts: &Stamp, ids: &Small) {
        if self.closed {
            return;
        }
        self.open();
        if start {
            self.out.put(b"\"name\":\"wake\",\"ph\":\"s\",\"id\":");
        } else {
            self.out.put(b"\"name\":\"wake\",\"ph\":\"f\",\"bp\":\"e\",\"id\":");
        }
        self.out.uint(id);
        self.out.put(b",\"ts\":");
        self.out.stamp(ts);
        self.out.put(b",");
        self.out.small(ids);
    }
}

/// `"pid":P,"tid":T}`: how every event of a track ends.
fn ids(pid: u32, tid: u32) -> Small {
    let mut s = Small::new();
    s.push(b"\"pid\":");
    s.push_uint(pid.into());
    s.push(b",\"tid\":");
    s.push_uint(tid.into());
    s.push(b"}");
    s
}

impl Drop for Sink {
    /// However the process unwinds, the file is a whole document (another
    /// thread's part only hands over its events: the `Out`'s drop).
    fn drop(&mut self) {
        if self.owner {
            let _ = self.close();
        }
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
    /// Each fiber id's (slot's) track.
    fibers: Vec<Track>,
    /// The fiber whose slice is running and when the slice began: the fibers
    /// it wakes get flows from it, starting at that time.
    running: Option<(u32, Stamp)>,
    /// When the last slice ended, if the scheduler has gone straight on to
    /// the next one: that one begins then (reading the clock costs as much
    /// as a fiber switch).
    last_end: Option<u64>,
    /// `"file:line:col"` of each blocking site seen, escaped and quoted.
    sites: foldhash::HashMap<(usize, u32), Box<[u8]>>,
    /// Messages from other isolates delivered to parked fibers: (fiber, flow
    /// id), to end when the fiber next runs.
    arrivals: Vec<(u32, u64)>,
    /// The main fiber's track's name, if not `main` (a worker's driver).
    main_track: Option<Box<str>>,
}

#[derive(Clone, Copy)]
struct Track {
    /// The end of its events: `"pid":P,"tid":T}` (the tid is the task number).
    ids: Small,
    /// The id of the flow to end when it next runs.
    flow: Option<u64>,
}

impl Trace {
    /// Names this VM's process in the trace.
    pub fn name_process(&mut self, name: &str) {
        self.sink.borrow_mut().metadata(false, &ids(self.pid, 0), name);
    }

    /// Names the main fiber's track, started later.
    pub fn name_main(&mut self, name: &str) {
        self.main_track = Some(name.into());
    }

    /// A fiber running now woke fiber `fid`: a flow starts in its slice (at
    /// the slice's start: one clock read less per wake), to end when `fid`
    /// next runs. Wakes from outside a slice (timers, I/O) have no flow.
    #[inline(never)]
    pub(super) fn woke(&mut self, fid: u32) {
        let Some((cur, began)) = self.running.filter(|&(c, _)| c != fid) else { return };
        let (Some(waker), true) = (self.fibers.get(cur as usize), (fid as usize) < self.fibers.len()) else {
            return;
        };
        let mut s = self.sink.borrow_mut();
        s.flows += 1;
        let id = s.flows;
        s.flow(true, id, &began, &waker.ids);
        self.fibers[fid as usize].flow = Some(id);
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
    let track = Track { ids: ids(t.pid, tid), flow: None };
    let i = id as usize;
    if t.fibers.len() <= i {
        t.fibers.resize(i + 1, track);
    }
    t.fibers[i] = track;
    let label = t.main_track.as_deref().filter(|_| tid == 0).unwrap_or(label);
    t.sink.borrow_mut().metadata(true, &track.ids, label);
}

/// A slice of fiber `id` begins: its time (ns), after ending the flow that
/// woke it, if any.
pub(super) fn slice_begins(vm: &mut Vm, id: u32) -> Option<u64> {
    let t = vm.sched.trace.as_deref_mut()?;
    let mut s = t.sink.borrow_mut();
    let ts = t.last_end.take().unwrap_or_else(|| s.now());
    let began = Stamp::new(ts);
    t.running = Some((id, began));
    if let Some(track) = t.fibers.get_mut(id as usize) {
        if let Some(flow) = track.flow.take() {
            s.flow(false, flow, &began, &track.ids);
        }
    }
    if !t.arrivals.is_empty() {
        cross::arrived(&mut t.arrivals, &mut s, id, &began, t.fibers.get(id as usize));
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

/// The start of a slice event: its name and category, up to its `ts`.
macro_rules! head {
    ($name:literal, $cat:literal) => {
        concat!("\"name\":\"", $name, "\",\"cat\":\"", $cat, "\",\"ph\":\"X\",\"ts\":").as_bytes()
    };
}

/// How a slice ended, taken before the driver acts on the halt.
pub(super) struct Ending {
    /// The event's head, unless the fiber blocked (then it is named for what).
    head: Option<&'static [u8]>,
    /// Where the fiber is (for a blocked one: the blocking operation).
    at: Option<Site>,
}

impl Ending {
    /// The fiber gave way (preempted or `yield`).
    pub fn yielded(at: Option<Site>) -> Ending {
        Ending { head: Some(head!("yield", "yield")), at }
    }

    /// The fiber blocked (or the program deadlocked): named for what.
    pub fn blocked(at: Option<Site>) -> Ending {
        Ending { head: None, at }
    }

    pub fn done(at: Option<Site>) -> Ending {
        Ending { head: Some(head!("done", "done")), at }
    }

    pub fn failed(at: Option<Site>) -> Ending {
        Ending { head: Some(head!("error", "error")), at }
    }
}

/// Writes fiber `id`'s slice that began at `began` and ends now: a complete
/// (`X`) event named for how it ended; a blocked one's args say on what.
pub(super) fn slice_ends(vm: &mut Vm, id: u32, began: u64, ending: Ending) {
    let Some(mut t) = vm.sched.trace.take() else { return };
    let stamp = t.running.take().map_or_else(|| Stamp::new(began), |r| r.1);
    let ids = t.fibers.get(id as usize).map_or_else(|| ids(t.pid, 0), |f| f.ids);
    let wait = match ending.head {
        None => vm.sched.fibers.state(id).parked.as_ref(),
        Some(_) => None,
    };
    let sink = t.sink.clone();
    let mut s = sink.borrow_mut();
    let end = s.now();
    t.last_end = Some(end);
    if s.closed {
        drop(s);
        vm.sched.trace = Some(t);
        return;
    }
    s.open();
    s.out.put_slice(wait.map_or(ending.head.unwrap_or(head!("block", "block")), blocked_head));
    s.out.stamp(&stamp);
    s.out.put(b",\"dur\":");
    s.out.micros(end.saturating_sub(began));
    s.out.put(b",");
    if let Some(w) = wait {
        s.out.put(b"\"args\":{\"at\":");
        match ending.at {
            Some(at) => s.out.put_slice(t.site(at)),
            None => s.out.put(b"null"),
        }
        wait_args(vm, &mut s.out, w, id);
        s.out.put(b"},");
    }
    s.out.small(&ids);
    drop(s);
    vm.sched.trace = Some(t);
}

/// A blocked slice's head: named for the operation it blocked in, short
/// enough to read on a narrow slice (docs/trace.md lists them).
fn blocked_head(w: &Wait) -> &'static [u8] {
    match w {
        Wait::Recv(_) => head!("recv", "block"),
        Wait::Send(_) => head!("send", "block"),
        Wait::Select => head!("select", "block"),
        Wait::Lock(_) => head!("lock", "block"),
        Wait::Task => head!("wait task", "block"),
        Wait::Group => head!("wait group", "block"),
        Wait::Scope => head!("wait block", "block"),
        Wait::Sleep => head!("sleep", "block"),
        Wait::Io | Wait::Fd(_) => head!("io", "block"),
    }
}

/// What the wait names, each after a comma: the channel (its id; and its
/// capacity: a blocked send's buffer is full, a blocked receive's empty), the
/// channels of a `select`, the mutex, the descriptor.
fn wait_args(vm: &Vm, out: &mut Out, w: &Wait, id: u32) {
    match *w {
        Wait::Recv(h) | Wait::Send(h) => {
            out.put(b",\"chan\":");
            out.uint(h.0.into());
            if let Obj::Chan(c) = vm.heap.get(h) {
                out.put(b",\"cap\":");
                out.uint(c.cap() as u64);
            }
        }
        Wait::Select => {
            let chans = vm.sched.fibers.state(id).extra.as_ref().map_or(&[][..], |x| &x.select[..]);
            out.put(b",\"chans\":[");
            for (i, h) in chans.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                out.uint(h.0.into());
            }
            out.put(b"]");
        }
        Wait::Lock(m) => {
            out.put(b",\"lock\":");
            out.uint(m.0.into());
        }
        Wait::Fd(fd) => {
            out.put(b",\"fd\":");
            out.uint(fd.max(0) as u64);
        }
        _ => {}
    }
}

impl super::Sched {
    /// Names this VM's process in the `--trace` file, if it writes one.
    pub fn name_trace_process(&mut self, name: &str) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.name_process(name);
        }
    }

    /// Names the `--trace` track of this VM's main fiber, started later, if
    /// it is not the program's (a worker isolate's driver).
    pub fn name_trace_main(&mut self, name: &str) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.name_main(name);
        }
    }
}
