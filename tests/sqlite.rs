//! std/sqlite against the `sqlite3` command-line tool (Debian's `sqlite3`):
//! files csp writes are read by sqlite3 and the other way round, value by
//! value; sqlite3 holding the write lock makes csp wait (and time out), and
//! csp's transaction keeps sqlite3 out until it commits; a fiber's long query
//! leaves the others running and is interrupted when the fiber is cancelled.
//!
//! Without `sqlite3` the tests say what they skipped and pass, unless the
//! environment variable `CI` is set: then they fail (`.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn sqlite3() -> bool {
    let found = Command::new("sqlite3").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        let install = "install it with `apt-get install sqlite3` (Debian)";
        if std::env::var_os("CI").is_some() {
            panic!("`sqlite3` is not installed but CI is set, so the SQLite tests cannot be skipped: {install}");
        }
        eprintln!("skipped a SQLite test: `sqlite3` not found; {install}");
    }
    found
}

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let p = std::env::temp_dir().join(format!("csp_sqlite_{}_{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir(&p).unwrap();
        TempDir(p)
    }
    fn db(&self) -> PathBuf {
        self.0.join("test.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs csp source with the database path as its argument; its stdout
/// (the run must succeed).
fn csp(dir: &TempDir, src: &str) -> String {
    let script = dir.0.join("t.csp");
    std::fs::write(&script, format!("import \"std/sqlite\"\nlet path = args()[0]\n{src}")).unwrap();
    let out = Command::new(CSP).arg("run").arg(&script).arg(dir.db()).env("NO_COLOR", "1").output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "csp failed:\n{stdout}{stderr}");
    stdout.into_owned()
}

/// sqlite3 on the database with `sql`; its stdout (it must succeed).
fn sqlite(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3").arg(db).arg(sql).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "sqlite3 failed:\n{stdout}{stderr}");
    stdout.into_owned()
}

#[test]
fn sqlite3_reads_what_csp_writes() {
    if !sqlite3() {
        return;
    }
    let dir = TempDir::new();
    let out = csp(
        &dir,
        r#"
let db = sqlite.open(path)
db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
db.transaction(fn(tx) {
    let values = [nil, true, false, -9223372036854775807 - 1, 2.5, 1e300, "it's \"quoted\"\nand é 日本", "", bytes([0, 255, 10]), "x'); DROP TABLE t; --"]
    for v in values { tx.exec("INSERT INTO t (v) VALUES (?)", v) }
})
print(db.exec("UPDATE t SET v = :v WHERE id = :id", {id: 6, v: 1e-7}))
db.close()
"#,
    );
    assert_eq!(out, "{\"changes\": 1, \"last_insert_id\": 10}\n");
    let got = sqlite(&dir.db(), "SELECT id, typeof(v), quote(v) FROM t ORDER BY id");
    let want = "1|null|NULL\n\
                2|integer|1\n\
                3|integer|0\n\
                4|integer|-9223372036854775808\n\
                5|real|2.5\n\
                6|real|1.0e-07\n\
                7|text|'it''s \"quoted\"\nand é 日本'\n\
                8|text|''\n\
                9|blob|X'00FF0A'\n\
                10|text|'x''); DROP TABLE t; --'\n";
    assert_eq!(got, want);
    assert_eq!(sqlite(&dir.db(), "PRAGMA integrity_check"), "ok\n");
}

#[test]
fn csp_reads_what_sqlite3_writes() {
    if !sqlite3() {
        return;
    }
    let dir = TempDir::new();
    sqlite(
        &dir.db(),
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, score REAL, photo BLOB, note TEXT);\
         INSERT INTO people VALUES (1, 'Zoë', 9.5, X'89504E47', NULL);\
         INSERT INTO people VALUES (2, 'O''Brien', -0.25, X'', 'two\nlines');\
         INSERT INTO people VALUES (3, 'big', 9223372036854775807, NULL, CAST(X'FF' AS TEXT));",
    );
    let out = csp(
        &dir,
        r#"
let db = sqlite.open(path, {readonly: true})
for p in db.query("SELECT * FROM people ORDER BY id") { print(p) }
for p in db.rows("SELECT name FROM people WHERE score > ?", 0) { print(p.name) }
try { db.exec("DELETE FROM people") } catch e { print(e.kind, e.message) }
"#,
    );
    let want = "{\"id\": 1, \"name\": \"Zoë\", \"score\": 9.5, \"photo\": b\"\\x89PNG\", \"note\": nil}\n\
                {\"id\": 2, \"name\": \"O'Brien\", \"score\": -0.25, \"photo\": b\"\", \"note\": \"two\\nlines\"}\n\
                {\"id\": 3, \"name\": \"big\", \"score\": 9223372036854776000.0, \"photo\": nil, \"note\": b\"\\xff\"}\n\
                Zoë\n\
                big\n\
                sql attempt to write a readonly database\n";
    assert_eq!(out, want);
}

#[test]
fn locks_are_shared_with_sqlite3() {
    if !sqlite3() {
        return;
    }
    let dir = TempDir::new();
    sqlite(&dir.db(), "CREATE TABLE n (x INTEGER)");
    // sqlite3 takes the write lock and holds it until told to commit: csp
    // waits its timeout and fails, then gets in once sqlite3 commits. Then
    // csp holds a transaction, and sqlite3 (with a short timeout) is kept out.
    let out = csp(
        &dir,
        r#"
import "std/proc"
let db = sqlite.open(path, {timeout: 200})
let other = proc.spawn(["sqlite3", path], {stdin: "pipe", stdout: "pipe"})
other.stdin.write("BEGIN IMMEDIATE; INSERT INTO n VALUES (1); SELECT 'locked';\n")
print(other.stdout.read_line())
let t0 = now()
try { db.exec("INSERT INTO n VALUES (2)") } catch e { print(e.kind, e.message, now() - t0 >= 150) }
other.stdin.write("COMMIT;\n")
other.stdin.close()
other.wait()
print(db.exec("INSERT INTO n VALUES (3)").changes)
db.transaction(fn(tx) {
    tx.exec("INSERT INTO n VALUES (4)")
    let r = proc.run(["sqlite3", "-cmd", ".timeout 100", path, "INSERT INTO n VALUES (5)"])
    print(r.ok, "locked" in r.stderr)
})
print(db.query("SELECT group_concat(x) AS xs FROM n")[0].xs)
"#,
    );
    assert_eq!(out, "locked\nsql database is locked true\n1\nfalse true\n1,3,4\n");
    assert_eq!(sqlite(&dir.db(), "SELECT count(*) FROM n"), "3\n");
}

#[test]
fn a_long_query_parks_only_its_fiber_and_cancelling_interrupts_it() {
    let dir = TempDir::new();
    // The query would count for minutes; the ticker runs meanwhile; the
    // cancelled query frees the connection at once (the next query answers
    // within the second, not after the count).
    let out = csp(
        &dir,
        r#"
let db = sqlite.open(path)
let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
let ticks = 0
let clock = go { for i in 0..10 { sleep(10); ticks += 1 } }
let q = go db.query(slow)
wait clock
print(ticks)
let t0 = now()
q.cancel()
try { wait q } catch e { print(e.kind) }
print(db.query("SELECT 42 AS x")[0].x, now() - t0 < 1000)
"#,
    );
    assert_eq!(out, "10\ncancelled\n42 true\n");
}
