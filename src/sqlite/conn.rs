//! A database's thread: opens the connection, then runs the jobs sent to it
//! in the order they come, keeping `db.rows` cursors open between jobs.

use super::{too_big, Answer, Cell, Db, Fail, Job, Link, OpenOpts, Params, Shared, Sqlite, Work};
use crate::limits::MAX_LIST;
use crate::vm::builtin::Reply;
use crate::vm::{ErrorKind, Heap};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Statement};
use self_cell::{self_cell, MutBorrow};
use std::collections::HashMap;
use std::sync::mpsc::Receiver;
use std::sync::Arc;

/// A cursor answers at most this many rows at a time, and stops a batch once
/// it holds about this many bytes.
const BATCH_ROWS: usize = 256;
const BATCH_BYTES: usize = 1 << 20;

type Stepping<'a> = rusqlite::Rows<'a>;

self_cell!(
    /// A statement and its rows, stepped through a batch at a time.
    struct Cursor<'conn> {
        owner: MutBorrow<Statement<'conn>>,
        #[covariant]
        dependent: Stepping,
    }
);

struct Open<'conn> {
    names: Arc<[String]>,
    cursor: Cursor<'conn>,
}

/// The thread's body: opens the database, answers `reply` with it, serves
/// jobs until it is closed or nothing can send any more.
pub(super) fn run(path: String, o: OpenOpts, jobs: Receiver<Job>, shared: Arc<Shared>, reply: Reply, link: Link) {
    let conn = match connect(&path, &o) {
        Ok(c) => c,
        Err(e) => return reply.fail(ErrorKind::Io, format!("cannot open database {path}: {}", message(&e))),
    };
    shared.lock().interrupt = Some(conn.get_interrupt_handle());
    let db = Db { path, link: Some(link) };
    reply.send(Box::new(move |heap: &mut Heap| Ok(heap.host_object(Sqlite::Db(db)))));
    let close = serve(&conn, &jobs, &shared);
    let closed = conn.close().map(|()| Answer::Nil).map_err(|(_, e)| fail(e));
    if let Some((reply, finish)) = close {
        reply.send(Box::new(move |heap: &mut Heap| closed.map(|a| finish(heap, a))));
    }
}

fn connect(path: &str, o: &OpenOpts) -> rusqlite::Result<Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    flags |= match (o.readonly, o.create) {
        (true, _) => OpenFlags::SQLITE_OPEN_READ_ONLY,
        (false, true) => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        (false, false) => OpenFlags::SQLITE_OPEN_READ_WRITE,
    };
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(o.busy_timeout)?;
    Ok(conn)
}

/// Runs jobs in order until `Close` (whose reply it returns, to answer once
/// the connection is closed) or until every sender is gone.
fn serve<'c>(conn: &'c Connection, jobs: &Receiver<Job>, shared: &Shared) -> Option<(Reply, super::Finish)> {
    let mut cursors: HashMap<u64, Open<'c>> = HashMap::new();
    while let Some(job) = next_job(jobs) {
        if !start(shared, job.id) {
            // Its fiber was cancelled before it ran: dropping the reply
            // posts an error nobody waits for.
            continue;
        }
        let out = match job.work {
            Work::Exec(sql, params) => exec(conn, &sql, params),
            Work::ExecMany(sql, sets) => exec_many(conn, &sql, sets),
            Work::Query(sql, params, max) => query(conn, &sql, params, max),
            Work::Open(sql, params) => open_cursor(conn, &mut cursors, job.id, &sql, params),
            Work::Next(id) => match cursors.get_mut(&id) {
                Some(open) => {
                    let a = batch(open);
                    if !matches!(a, Ok(Answer::Rows { more: true, .. })) {
                        cursors.remove(&id);
                    }
                    a
                }
                None => Ok(Answer::Rows { names: Arc::from([]), rows: Vec::new(), more: false }),
            },
            Work::Forget(id) => {
                cursors.remove(&id);
                Ok(Answer::Nil)
            }
            Work::Rollback(savepoint) => rollback(conn, savepoint),
            Work::Close => {
                shared.lock().running = false;
                return job.reply;
            }
        };
        shared.lock().running = false;
        if let Some((reply, finish)) = job.reply {
            reply.send(Box::new(move |heap: &mut Heap| out.map(|a| finish(heap, a))));
        }
    }
    None
}

/// How long the thread watches for the next job before it sleeps: a fiber
/// that runs statements one after another sends the next within it, and
/// waking from a sleep costs more than a statement (benches/sqlite).
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// The next job; None once nothing can send any more.
fn next_job(jobs: &Receiver<Job>) -> Option<Job> {
    let until = std::time::Instant::now() + SPIN;
    loop {
        match jobs.try_recv() {
            Ok(job) => return Some(job),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
            Err(std::sync::mpsc::TryRecvError::Empty) if std::time::Instant::now() < until => std::thread::yield_now(),
            Err(std::sync::mpsc::TryRecvError::Empty) => return jobs.recv().ok(),
        }
    }
}

/// Marks job `id` running, unless it was cancelled before it started.
fn start(shared: &Shared, id: u64) -> bool {
    let mut r = shared.lock();
    r.skip.retain(|&s| s >= id);
    if r.skip.first() == Some(&id) {
        r.skip.remove(0);
        return false;
    }
    r.started = id;
    r.running = true;
    true
}

fn exec(conn: &Connection, sql: &str, params: Params) -> Result<Answer, Fail> {
    let before = conn.total_changes();
    let bare = matches!(&params, Params::Positional(v) if v.is_empty());
    match conn.prepare_cached(sql) {
        Ok(mut stmt) => {
            bind(&mut stmt, params)?;
            drain(&mut stmt)?;
        }
        Err(rusqlite::Error::MultipleStatement) if !bare => {
            let msg = "parameters bind to one statement: run the statements one exec() at a time";
            return Err((ErrorKind::Value, msg.into()));
        }
        Err(rusqlite::Error::Empty) => bind_none(params)?,
        Err(e) if !bare => return Err(fail(e)),
        // Several statements, or one that failed to prepare: one at a time
        // (a later one may name a table an earlier one creates), which
        // reports a bad one's error again.
        Err(_) => {
            let mut batch = rusqlite::Batch::new(conn, sql);
            while let Some(mut stmt) = batch.next().map_err(fail)? {
                drain(&mut stmt)?;
            }
        }
    }
    // `changes()` keeps counting the last INSERT, UPDATE or DELETE: a
    // statement of another sort changed nothing.
    let changes = if conn.total_changes() != before { conn.changes() } else { 0 };
    Ok(Answer::Done { changes, last_id: conn.last_insert_rowid() })
}

/// All or nothing: the sets run inside a savepoint (one transaction, when
/// none is open), rolled back if one fails.
fn exec_many(conn: &Connection, sql: &str, sets: Vec<Params>) -> Result<Answer, Fail> {
    let mut stmt = conn.prepare_cached(sql).map_err(|e| match e {
        rusqlite::Error::MultipleStatement => {
            (ErrorKind::Value, "exec_many() runs one statement: several were given".to_string())
        }
        e => one_statement(e),
    })?;
    conn.execute_batch("SAVEPOINT csp_exec_many").map_err(fail)?;
    let mut changes = 0;
    for (i, params) in sets.into_iter().enumerate() {
        let before = conn.total_changes();
        let ran = bind(&mut stmt, params).and_then(|()| drain(&mut stmt));
        if let Err((kind, msg)) = ran {
            // Gone already if SQLite rolled the transaction back itself.
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK TO csp_exec_many; RELEASE csp_exec_many");
            }
            return Err((kind, format!("{msg} (parameter set {i})")));
        }
        if conn.total_changes() != before {
            changes += conn.changes();
        }
    }
    conn.execute_batch("RELEASE csp_exec_many").map_err(fail)?;
    Ok(Answer::Done { changes, last_id: conn.last_insert_rowid() })
}

/// Steps a statement to its end, its rows (if any) unread.
fn drain(stmt: &mut Statement) -> Result<(), Fail> {
    let mut rows = stmt.raw_query();
    while rows.next().map_err(fail)?.is_some() {}
    Ok(())
}

fn query(conn: &Connection, sql: &str, params: Params, max: usize) -> Result<Answer, Fail> {
    let mut stmt = conn.prepare_cached(sql).map_err(one_statement)?;
    bind(&mut stmt, params)?;
    let names = column_names(&stmt)?;
    let mut rows = stmt.raw_query();
    let (mut out, mut bytes) = (Vec::new(), 0);
    while let Some(row) = rows.next().map_err(fail)? {
        out.push(read_row(row, names.len(), &mut bytes));
        if out.len() > MAX_LIST {
            return Err((ErrorKind::Limit, format!("the query has more than {MAX_LIST} rows; db.rows() streams them")));
        }
        if let Some(f) = too_big(bytes, max) {
            return Err(f);
        }
    }
    Ok(Answer::Rows { names, rows: out, more: false })
}

fn open_cursor<'c>(
    conn: &'c Connection,
    cursors: &mut HashMap<u64, Open<'c>>,
    id: u64,
    sql: &str,
    params: Params,
) -> Result<Answer, Fail> {
    let mut stmt = conn.prepare(sql).map_err(one_statement)?;
    bind(&mut stmt, params)?;
    let names = column_names(&stmt)?;
    let cursor = Cursor::new(MutBorrow::new(stmt), |s| s.borrow_mut().raw_query());
    let mut open = Open { names, cursor };
    let first = batch(&mut open)?;
    if matches!(first, Answer::Rows { more: true, .. }) {
        cursors.insert(id, open);
    }
    Ok(first)
}

/// The cursor's next rows.
fn batch(open: &mut Open) -> Result<Answer, Fail> {
    let names = open.names.clone();
    open.cursor.with_dependent_mut(|_, rows| {
        let (mut out, mut bytes) = (Vec::new(), 0);
        while out.len() < BATCH_ROWS && bytes < BATCH_BYTES {
            match rows.next().map_err(fail)? {
                Some(row) => out.push(read_row(row, names.len(), &mut bytes)),
                None => return Ok(Answer::Rows { names, rows: out, more: false }),
            }
        }
        Ok(Answer::Rows { names, rows: out, more: true })
    })
}

fn rollback(conn: &Connection, savepoint: Option<String>) -> Result<Answer, Fail> {
    if !conn.is_autocommit() {
        let sql = match savepoint {
            None => "ROLLBACK".to_string(),
            Some(sp) => format!("ROLLBACK TO {sp}; RELEASE {sp}"),
        };
        conn.execute_batch(&sql).map_err(fail)?;
    }
    Ok(Answer::Nil)
}

/// Binds every parameter of the statement, by position or by name.
fn bind(stmt: &mut Statement, params: Params) -> Result<(), Fail> {
    let n = stmt.parameter_count();
    match params {
        Params::Positional(values) => {
            if values.len() != n {
                let s = if n == 1 { "" } else { "s" };
                let msg = format!("the statement takes {n} parameter{s}, {} given", values.len());
                return Err((ErrorKind::Value, msg));
            }
            for (i, v) in values.iter().enumerate() {
                stmt.raw_bind_parameter(i + 1, v).map_err(fail)?;
            }
        }
        Params::Named(values) => {
            for i in 1..=n {
                let Some(name) = stmt.parameter_name(i).map(str::to_owned) else {
                    let msg = format!("parameter {i} of the statement is positional (?): pass values, not a map");
                    return Err((ErrorKind::Value, msg));
                };
                let Some((_, v)) = values.iter().find(|(k, _)| *k == name[1..]) else {
                    return Err((ErrorKind::Value, format!("no value for parameter {name} in the map")));
                };
                stmt.raw_bind_parameter(i, v).map_err(fail)?;
            }
        }
    }
    Ok(())
}

/// Parameters given to no statement at all.
fn bind_none(params: Params) -> Result<(), Fail> {
    match params {
        Params::Positional(v) if v.is_empty() => Ok(()),
        _ => Err((ErrorKind::Value, "parameters given, but the SQL has no statement".into())),
    }
}

/// Column names, each once: a row is a map, which cannot hold two of a name.
fn column_names(stmt: &Statement) -> Result<Arc<[String]>, Fail> {
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            let msg = format!("the query has two columns named {n:?}: name one with AS");
            return Err((ErrorKind::Value, msg));
        }
    }
    Ok(names.into())
}

fn read_row(row: &rusqlite::Row, n: usize, bytes: &mut usize) -> Vec<Cell> {
    (0..n)
        .map(|i| {
            let c = match row.get_ref_unwrap(i) {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(i) => Cell::Integer(i),
                ValueRef::Real(f) => Cell::Real(f),
                // TEXT that is not UTF-8 (written by another program) comes
                // back as bytes rather than altered.
                ValueRef::Text(t) => match std::str::from_utf8(t) {
                    Ok(s) => Cell::Text(s.to_owned()),
                    Err(_) => Cell::Blob(t.to_vec()),
                },
                ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
            };
            *bytes += 32
                + match &c {
                    Cell::Text(s) => s.len(),
                    Cell::Blob(b) => b.len(),
                    _ => 0,
                };
            c
        })
        .collect()
}

/// A statement for `query` or `rows`: one, and not empty.
fn one_statement(e: rusqlite::Error) -> Fail {
    match e {
        rusqlite::Error::MultipleStatement => {
            (ErrorKind::Value, "a query is one statement: exec() runs several".into())
        }
        rusqlite::Error::Empty => (ErrorKind::Value, "the query has no SQL statement".into()),
        e => fail(e),
    }
}

/// SQLite's complaint as an `sql` error.
fn fail(e: rusqlite::Error) -> Fail {
    (ErrorKind::Sql, message(&e))
}

fn message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(code, Some(msg)) if code.code == rusqlite::ErrorCode::OperationInterrupted => {
            format!("{msg} (the statement was interrupted)")
        }
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        e => e.to_string(),
    }
}
