//! The hidden builtins under `std/sqlite` (std/sqlite.csp builds the database
//! object, its locking and transactions on them; docs/sqlite.md). Each one that
//! touches the database blocks the calling fiber while the database's thread
//! works (`sqlite/`). Values cross as SQLite stores them: nil is NULL, an int
//! INTEGER, a float REAL, a string TEXT, bytes a BLOB, and a bool 1 or 0.

use super::args::arity;
use crate::sqlite::{Answer, Cell, Db, OpenOpts, Params, Rows, Sqlite};
use crate::vm::host::{Class, HostObject};
use crate::vm::map::Layout;
use crate::vm::value::Map;
use crate::vm::{err, ErrorKind, Fiber, Heap, Key, NativeFn, Obj, Res, Ret, Value, Vm};
use std::time::Duration;

pub fn register(vm: &mut Vm) {
    vm.define_hidden("sqlite.open", NativeFn::Full(open));
    vm.define_hidden("db.exec", NativeFn::Full(exec));
    vm.define_hidden("db.exec_many", NativeFn::Full(exec_many));
    vm.define_hidden("db.query", NativeFn::Full(query));
    vm.define_hidden("db.rows", NativeFn::Full(rows));
    vm.define_hidden("db.next_rows", NativeFn::Full(next_rows));
    vm.define_hidden("db.close_rows", NativeFn::Value(close_rows));
    vm.define_hidden("db.rollback", NativeFn::Value(rollback));
    vm.define_hidden("db.close", NativeFn::Full(close));
    vm.define_hidden("db.misuse", NativeFn::Value(misuse));
}

/// `sqlite.open(path, opts?)`: options `readonly` (false), `create` (true:
/// make the file when it is missing), `timeout` (ms a statement waits for
/// another connection's lock; 5000).
fn open(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    const NAME: &str = "sqlite.open";
    arity(NAME, args, 1, 2)?;
    let Some(path) = vm.heap.as_str(args[0]).map(|s| s.s.to_string()) else {
        return err(ErrorKind::Type, format!("{NAME}() needs a string path, not {}", vm.heap.type_name(args[0])));
    };
    if path.is_empty() || path.contains('\0') {
        return err(ErrorKind::Value, format!("{NAME}() needs a path (\":memory:\" for a database in memory)"));
    }
    if path != ":memory:" {
        vm.files.check(NAME, &path)?;
    }
    let o = super::text::Opts::new(vm, NAME, args.get(1), &["readonly", "create", "timeout"])?;
    let ms = match o.value("timeout") {
        None => 5000,
        Some(Value::Int(ms)) if ms >= 0 => ms as u64,
        Some(v) => {
            let what = crate::display::display(&vm.heap, v);
            return err(ErrorKind::Value, format!("{NAME}() option timeout needs milliseconds >= 0, not {what}"));
        }
    };
    let opts = OpenOpts {
        readonly: o.bool(vm, "readonly", false)?,
        create: o.bool(vm, "create", true)?,
        busy_timeout: Duration::from_millis(ms),
    };
    Ok(crate::sqlite::open(path, opts))
}

/// A database or a cursor over its rows (`Obj::Host`); std/sqlite wraps
/// them in maps, so they have no methods of their own.
static CLASS: Class = Class { name: "sqlite", methods: &[], next: None, field: None };

impl HostObject for Sqlite {
    fn class(&self) -> &'static Class {
        &CLASS
    }
    /// A database holds a thread and a connection.
    fn size(&self) -> usize {
        64 * 1024
    }
    fn display(&self, out: &mut String) {
        match self {
            Sqlite::Db(db) => out.push_str(&format!("<sqlite {}>", db.path)),
            Sqlite::Rows(_) => out.push_str("<sqlite rows>"),
        }
    }
}

/// The database or cursor `v` (std/sqlite passes only these).
fn sqlite_mut(vm: &mut Vm, v: Value) -> &mut Sqlite {
    let Value::Obj(h) = v else { unreachable!("std/sqlite passes a database or a cursor") };
    vm.heap.host_mut::<Sqlite>(h).expect("std/sqlite passes a database or a cursor")
}

fn db(vm: &mut Vm, v: Value) -> &mut Db {
    match sqlite_mut(vm, v) {
        Sqlite::Db(db) => db,
        Sqlite::Rows(_) => unreachable!("std/sqlite passes a database"),
    }
}

fn rows_mut(vm: &mut Vm, v: Value) -> &mut Rows {
    match sqlite_mut(vm, v) {
        Sqlite::Rows(r) => r,
        Sqlite::Db(_) => unreachable!("std/sqlite passes a cursor"),
    }
}

/// The SQL and parameters of `db.NAME(db, sql, params)`, where `params` is
/// the list of the csp function's rest arguments: values by position, or one
/// map of values by name.
fn statement(vm: &Vm, name: &str, args: &[Value]) -> Res<(String, Params)> {
    arity(name, args, 3, 3)?;
    let sql = sql_arg(vm, name, args[1])?;
    let items = vm.heap.as_list(args[2]).map(|l| l.to_vec()).unwrap_or_default();
    Ok((sql, params(vm, name, &items, "")?))
}

fn sql_arg(vm: &Vm, name: &str, v: Value) -> Res<String> {
    match vm.heap.as_str(v) {
        Some(s) => Ok(s.s.to_string()),
        None => err(ErrorKind::Type, format!("{name}() needs a string of SQL, not {}", vm.heap.type_name(v))),
    }
}

/// One set of parameters (`set` names it in errors: "" or " of set 3").
fn params(vm: &Vm, name: &str, items: &[Value], set: &str) -> Res<Params> {
    if let [Value::Obj(h)] = items[..] {
        if let Obj::Map(m) = vm.heap.get(h) {
            let mut named = Vec::with_capacity(m.len());
            for (k, v) in m.iter() {
                let Key::Str(k) = k else {
                    return err(ErrorKind::Type, format!("{name}() parameter names are strings"));
                };
                named.push((k.to_string(), cell(vm, name, &format!("parameter {k}{set}"), *v)?));
            }
            return Ok(Params::Named(named));
        }
    }
    let mut values = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        values.push(cell(vm, name, &format!("parameter {}{set}", i + 1), *v)?);
    }
    Ok(Params::Positional(values))
}

/// A csp value as SQLite stores it.
fn cell(vm: &Vm, name: &str, what: &str, v: Value) -> Res<Cell> {
    Ok(match v {
        Value::Nil => Cell::Null,
        Value::Bool(b) => Cell::Integer(i64::from(b)),
        Value::Int(i) => Cell::Integer(i),
        Value::Float(f) => Cell::Real(f),
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Str(s) => Cell::Text(s.s.to_string()),
            Obj::Bytes(b) => Cell::Blob(b.to_vec()),
            o => {
                let t = o.type_name();
                let msg = format!("{name}() {what} is a {t}: SQL takes nil, bool, int, float, string or bytes");
                return err(ErrorKind::Type, msg);
            }
        },
    })
}

/// A value read from SQLite.
fn value(heap: &mut Heap, c: Cell) -> Value {
    match c {
        Cell::Null => Value::Nil,
        Cell::Integer(i) => Value::Int(i),
        Cell::Real(f) => Value::Float(f),
        Cell::Text(s) => heap.string(s),
        Cell::Blob(b) => heap.bytes(b),
    }
}

/// Rows as a list of maps (column name to value, in the columns' order).
fn row_maps(heap: &mut Heap, names: &[String], rows: Vec<Vec<Cell>>) -> Value {
    let layout = Layout::of(names.iter().map(|n| Key::Str(n.as_str().into())));
    let mut out = Vec::with_capacity(rows.len());
    let mut vals = Vec::with_capacity(names.len());
    for row in rows {
        vals.clear();
        vals.extend(row.into_iter().map(|c| value(heap, c)));
        out.push(Value::Obj(heap.alloc(Obj::Map(Map::from_layout(&layout, &vals)))));
    }
    heap.list(out)
}

/// `db.exec(db, sql, params)`: `{changes, last_insert_id}`.
fn exec(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let (sql, params) = statement(vm, "db.exec", args)?;
    let link = db(vm, args[0]).link().map_err(fault)?.clone();
    Ok(link.ask(crate::sqlite::Work::Exec(sql, params), Box::new(done_map)))
}

/// `db.exec_many(db, sql, sets)`: the statement once for each set of
/// parameters (a list of values, or a map by name); `{changes, last_insert_id}`
/// with the changes added up.
fn exec_many(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    const NAME: &str = "db.exec_many";
    arity(NAME, args, 3, 3)?;
    let sql = sql_arg(vm, NAME, args[1])?;
    let Some(sets) = vm.heap.as_list(args[2]).map(|l| l.to_vec()) else {
        let t = vm.heap.type_name(args[2]);
        return err(ErrorKind::Type, format!("{NAME}() needs a list of parameter sets, not {t}"));
    };
    let mut all = Vec::with_capacity(sets.len());
    for (i, set) in sets.iter().enumerate() {
        let items = match vm.heap.as_list(*set) {
            Some(l) => l.to_vec(),
            None if matches!(set, Value::Obj(h) if matches!(vm.heap.get(*h), Obj::Map(_))) => vec![*set],
            None => {
                let t = vm.heap.type_name(*set);
                return err(
                    ErrorKind::Type,
                    format!("{NAME}() set {i} must be a list or a map of parameters, not {t}"),
                );
            }
        };
        all.push(params(vm, NAME, &items, &format!(" of set {i}"))?);
    }
    let link = db(vm, args[0]).link().map_err(fault)?.clone();
    Ok(link.ask(crate::sqlite::Work::ExecMany(sql, all), Box::new(done_map)))
}

/// `{changes, last_insert_id}`.
fn done_map(heap: &mut Heap, a: Answer) -> Value {
    let Answer::Done { changes, last_id } = a else { unreachable!("exec answers Done") };
    let layout = Layout::of(["changes", "last_insert_id"].map(|k| Key::Str(k.into())));
    let m = Map::from_layout(&layout, &[Value::Int(changes as i64), Value::Int(last_id)]);
    Value::Obj(heap.alloc(Obj::Map(m)))
}

/// `db.query(db, sql, params)`: every row, as a list of maps.
fn query(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let (sql, params) = statement(vm, "db.query", args)?;
    let max = vm.heap.limit;
    let link = db(vm, args[0]).link().map_err(fault)?.clone();
    Ok(link.ask(crate::sqlite::Work::Query(sql, params, max), Box::new(rows_value)))
}

fn rows_value(heap: &mut Heap, a: Answer) -> Value {
    match a {
        Answer::Rows { names, rows, .. } => row_maps(heap, &names, rows),
        _ => unreachable!("a query answers rows"),
    }
}

/// `db.rows(db, sql, params)`: a cursor, its first batch fetched.
fn rows(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    let (sql, params) = statement(vm, "db.rows", args)?;
    let link = db(vm, args[0]).link().map_err(fault)?.clone();
    let make = |heap: &mut Heap, r: Rows| heap.host_object(Sqlite::Rows(r));
    Ok(link.open_rows(sql, params, make))
}

/// `db.next_rows(cursor)`: its next batch of rows (a list of maps), or nil
/// when there are no more.
fn next_rows(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("db.next_rows", args, 1, 1)?;
    let r = rows_mut(vm, args[0]);
    let batch = |heap: &mut Heap, a: Answer| match a {
        Answer::Rows { rows, more: false, .. } if rows.is_empty() => Value::Nil,
        a => rows_value(heap, a),
    };
    match r.first.take() {
        Some(a) => Ok(Ret::Value(batch(&mut vm.heap, a))),
        None if r.closed => Ok(Ret::Value(Value::Nil)),
        None => Ok(r.next(Box::new(batch))),
    }
}

/// `db.close_rows(cursor)`: drops its statement now (ending the read it
/// holds); the cursor gives no more rows.
fn close_rows(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("db.close_rows", args, 1, 1)?;
    rows_mut(vm, args[0]).close();
    Ok(Value::Nil)
}

/// `db.rollback(db, savepoint)`: has the open transaction rolled back (or,
/// with a savepoint's name, the work since that savepoint), without waiting:
/// it runs before any statement asked for later, and it must happen even in
/// a cancelled fiber, where waiting is not possible.
fn rollback(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("db.rollback", args, 2, 2)?;
    let savepoint = vm.heap.as_str(args[1]).map(|s| s.s.to_string());
    if let Ok(link) = db(vm, args[0]).link() {
        link.tell(crate::sqlite::Work::Rollback(savepoint));
    }
    Ok(Value::Nil)
}

/// `db.close(db)`: closes the connection (a second close does nothing).
fn close(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("db.close", args, 1, 1)?;
    match db(vm, args[0]).take_link() {
        Some(link) => Ok(link.ask(crate::sqlite::Work::Close, Box::new(|_: &mut Heap, _| Value::Nil))),
        None => Ok(Ret::Value(Value::Nil)),
    }
}

/// `db.misuse(what)` throws the error of a database used the wrong way:
/// "nested", by the fiber whose transaction holds it (it would wait for
/// itself); "ended", a transaction's `tx` used after it ended.
fn misuse(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("db.misuse", args, 1, 1)?;
    match vm.heap.as_str(args[0]).map(|s| &*s.s) {
        Some("nested") => err(
            ErrorKind::Lock,
            "the database is held by this fiber's transaction: inside db.transaction(fn(tx) { ... }) use tx, not db",
        ),
        _ => err(
            ErrorKind::Closed,
            "the transaction has ended: its tx works only inside the function given to transaction()",
        ),
    }
}

fn fault(f: crate::sqlite::Fail) -> crate::vm::Fault {
    crate::vm::Fault::Error(Box::new(f))
}
