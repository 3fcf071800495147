//! `std/sqlite`'s databases (docs/sqlite.md). An open database is a SQLite
//! connection (rusqlite, with SQLite compiled in) owned by a thread of its own:
//! a connection may not be used from two threads at once, and a statement may
//! run long, so the VM hands each statement to that thread
//! (`Blocking::Handoff`) and only the calling fiber waits. Cancelling that
//! fiber interrupts its statement (`sqlite3_interrupt`), or drops it unrun if
//! it has not started. The natives that use this are in `natives/sqlite.rs`.

mod conn;

use crate::vm::builtin::{Blocking, Reply, Ret};
use crate::vm::{ErrorKind, Heap, Value};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// A value as SQLite stores it: NULL, INTEGER, REAL, TEXT or BLOB.
pub use rusqlite::types::Value as Cell;

/// A statement's parameters: by position (`?`, `?NNN`) or by name (`:name`,
/// `@name`, `$name`, given without the prefix).
pub enum Params {
    Positional(Vec<Cell>),
    Named(Vec<(String, Cell)>),
}

/// What the database thread did, for the native that asked to turn into a value.
pub enum Answer {
    /// A statement ran: rows it changed, the connection's last inserted rowid.
    Done {
        changes: u64,
        last_id: i64,
    },
    /// Rows with their column names; `more` when a cursor has more to give.
    Rows {
        names: Arc<[String]>,
        rows: Vec<Vec<Cell>>,
        more: bool,
    },
    Nil,
}

/// A failure: its kind and message.
pub type Fail = (ErrorKind, String);

/// Turns an answer into the builtin's result, on the VM's thread.
pub type Finish = Box<dyn FnOnce(&mut Heap, Answer) -> Value + Send>;

/// What the database thread is asked to do.
pub enum Work {
    /// Run the SQL (several statements when there are no parameters).
    Exec(String, Params),
    /// Run one statement once per set of parameters.
    ExecMany(String, Vec<Params>),
    /// Run one statement and return all its rows (at most `max_bytes` of them).
    Query(String, Params, usize),
    /// Start a cursor over one statement's rows; answers with the first batch.
    Open(String, Params),
    /// The next batch of cursor `id`'s rows.
    Next(u64),
    /// Drop cursor `id` (its rows are no longer wanted).
    Forget(u64),
    /// Roll back the open transaction, if there is one; or with a name,
    /// roll back to that savepoint and release it.
    Rollback(Option<String>),
    /// Close the connection; the thread ends.
    Close,
}

struct Job {
    /// Ids grow in the order jobs are sent, which is the order they run in.
    id: u64,
    work: Work,
    /// None for work nobody waits on (`Forget`).
    reply: Option<(Reply, Finish)>,
}

/// What the VM's thread and the database thread share: which job runs, for
/// cancelling it (a mutex, since cancelling and starting must not interleave).
struct Shared {
    next_id: std::sync::atomic::AtomicU64,
    state: Mutex<Running>,
}

#[derive(Default)]
struct Running {
    /// The last job started, and whether it is still running.
    started: u64,
    running: bool,
    /// Jobs cancelled before they started: the thread skips them.
    skip: Vec<u64>,
    interrupt: Option<rusqlite::InterruptHandle>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Running> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The way to a database's thread; a cursor keeps one too, so the thread
/// lives while either does.
#[derive(Clone)]
pub struct Link {
    jobs: Sender<Job>,
    shared: Arc<Shared>,
}

impl Link {
    fn id(&self) -> u64 {
        self.shared.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Blocks the calling fiber on `work` done by the database's thread.
    pub fn ask(&self, work: Work, finish: Finish) -> Ret {
        self.ask_as(self.id(), work, finish)
    }

    /// Blocks the calling fiber until the cursor over `sql`'s rows is open;
    /// `make` turns it into the builtin's result.
    pub fn open_rows(&self, sql: String, params: Params, make: fn(&mut Heap, Rows) -> Value) -> Ret {
        let (link, id) = (self.clone(), self.id());
        let finish = move |heap: &mut Heap, first| make(heap, Rows { link, id, first: Some(first), closed: false });
        self.ask_as(id, Work::Open(sql, params), Box::new(finish))
    }

    fn ask_as(&self, id: u64, work: Work, finish: Finish) -> Ret {
        let link = self.clone();
        let shared = self.shared.clone();
        let start = move |reply: Reply| {
            if let Err(e) = link.jobs.send(Job { id, work, reply: Some((reply, finish)) }) {
                if let Some((reply, _)) = e.0.reply {
                    reply.fail(ErrorKind::Closed, "the database is closed".into());
                }
            }
        };
        let cancel = move || {
            let mut r = shared.lock();
            if r.started == id && r.running {
                if let Some(h) = &r.interrupt {
                    h.interrupt();
                }
            } else if id > r.started {
                r.skip.push(id);
            }
        };
        Ret::Block(Blocking::Handoff(Box::new(start), Box::new(cancel)))
    }

    /// Sends work nobody waits for; it runs before any work sent after it.
    pub fn tell(&self, work: Work) {
        let _ = self.jobs.send(Job { id: self.id(), work, reply: None });
    }
}

/// An open database (or, once closed, its name).
pub struct Db {
    /// The path it was opened with (`:memory:` for one in memory).
    pub path: String,
    link: Option<Link>,
}

impl Db {
    /// The way to its thread, or the `closed` error.
    pub fn link(&self) -> Result<&Link, Fail> {
        self.link.as_ref().ok_or_else(|| (ErrorKind::Closed, format!("database {} is closed", self.path)))
    }

    /// Marks it closed (its thread is told to close the connection).
    pub fn take_link(&mut self) -> Option<Link> {
        self.link.take()
    }
}

/// A cursor over a statement's rows (`db.rows`); dropping it drops the
/// statement on the database's thread.
pub struct Rows {
    link: Link,
    id: u64,
    /// The first batch, which came with the answer that opened it.
    pub first: Option<Answer>,
    /// Closed before its end: no more rows.
    pub closed: bool,
}

impl Rows {
    /// Blocks the calling fiber for the next batch (none left once a batch
    /// says there are no more: then an empty one).
    pub fn next(&self, finish: Finish) -> Ret {
        self.link.ask(Work::Next(self.id), finish)
    }

    /// Drops the statement on the database's thread now.
    pub fn close(&mut self) {
        if !self.closed {
            self.closed = true;
            self.first = None;
            self.link.tell(Work::Forget(self.id));
        }
    }
}

impl Drop for Rows {
    fn drop(&mut self) {
        // Harmless for a cursor the thread already dropped (it ran out).
        self.close();
    }
}

/// A heap object of `std/sqlite`.
pub enum Sqlite {
    Db(Db),
    Rows(Rows),
}

/// How to open a database.
pub struct OpenOpts {
    pub readonly: bool,
    /// Create the file when it is missing.
    pub create: bool,
    /// How long a statement waits for another connection's lock.
    pub busy_timeout: Duration,
}

/// Blocks the calling fiber while the database's thread starts and opens it;
/// its result is the database object.
pub fn open(path: String, o: OpenOpts) -> Ret {
    let start = move |reply: Reply| {
        let (tx, rx) = channel();
        let shared = Arc::new(Shared { next_id: 1.into(), state: Mutex::new(Running::default()) });
        let link = Link { jobs: tx, shared: shared.clone() };
        // The reply goes over after the thread started, so a failure to start
        // is reported through it.
        let (give, take) = channel::<Reply>();
        let name = format!("sqlite {path}");
        let thread = move || {
            if let Ok(reply) = take.recv() {
                conn::run(path, o, rx, shared, reply, link)
            }
        };
        match std::thread::Builder::new().name(name).spawn(thread) {
            Ok(_) => drop(give.send(reply)),
            Err(e) => reply.fail(ErrorKind::Io, format!("cannot start the database's thread: {e}")),
        }
    };
    Ret::Block(Blocking::Handoff(Box::new(start), Box::new(|| {})))
}

/// Whether a query's result of `bytes` so far is past what the VM may hold.
fn too_big(bytes: usize, max: usize) -> Option<Fail> {
    (bytes > max).then(|| {
        let size = crate::limits::show_bytes(max);
        (
            ErrorKind::Memory,
            format!("the query's rows pass the {size} memory limit; db.rows() gives them a batch at a time"),
        )
    })
}
