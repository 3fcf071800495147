//! `csp test [PATH]`: every `*_test.csp` under PATH is imported by a generated
//! driver that runs each top-level `test_*` function in its own fiber with a timeout
//! and prints a line per test. Each file gets a fresh VM, so tests of one file
//! cannot disturb another's. `--bench` runs the `bench_*` functions instead,
//! `--json` turns the lines into events, `-j N` runs N files at once, each
//! in a VM on a thread of its own (`parallel.rs`), `--coverage` adds each VM's counts to one report.

mod driver;
mod events;
pub mod flags;
mod output;
mod parallel;

use crate::syntax::ast::StmtKind;
use crate::vm::{Value, Vm};
use output::say;
use std::path::{Path, PathBuf};

/// What `csp test` runs and how.
pub struct TestOptions<'a> {
    /// Fail a test still running after this many milliseconds.
    pub timeout_ms: u64,
    /// Run only tests whose `file::test_name` contains this.
    pub filter: Option<&'a str>,
    pub color: bool,
    /// `--explore N` / `--explore-seed S`: each test alone in a VM, under
    /// each of these schedules.
    pub explore: Option<crate::explore_runs::Schedules>,
    /// The options a replay command repeats besides the seed (`--seed N `).
    pub flags: String,
    /// `-j`, `--coverage`, `--bench`, `--json` and the options as given.
    pub cli: &'a flags::Flags,
    /// How each file's runtime is set up (the command line's limits and seeds).
    pub runtime: crate::embed::Options,
    /// The coverage counted so far (under `--coverage`).
    pub report: std::cell::RefCell<crate::coverage::Report>,
}

impl TestOptions<'_> {
    /// `--benchtime` in milliseconds (default one second, as Go's).
    fn benchtime(&self) -> u64 {
        self.cli.benchtime_ms.unwrap_or(1000)
    }
}

/// Runs the tests under `root`; returns the exit code (0 all passed or there
/// were none, 1 otherwise, 64 when `root` does not exist).
/// `attach` is given each runtime's VM before it runs (the `--trace` and
/// `--profile` files).
pub fn run_tests(root: &str, opts: &TestOptions, attach: &dyn Fn(&mut Vm)) -> i32 {
    let mut files = Vec::new();
    let root_path = Path::new(root);
    if !root_path.exists() {
        crate::err_println!("csp test: no such file or folder: {root}");
        return 64;
    }
    if root_path.is_file() {
        files.push(root_path.to_path_buf());
    } else {
        find_tests(root_path, &mut files);
    }
    files.sort();
    let (mut passed, mut failed) = (0, 0);
    if opts.cli.jobs > 1 && files.len() > 1 {
        (passed, failed) = parallel::run(&files, opts.cli.jobs, opts);
    } else {
        for f in &files {
            let (p, n) = run_file(f, opts, attach);
            passed += p;
            failed += n;
        }
    }
    if let Some(path) = &opts.cli.coverage {
        if let Err(e) = std::fs::write(path, opts.report.borrow().to_lcov()) {
            crate::err_println!("csp test: cannot write coverage {path}: {}", crate::os::io_reason(&e));
            failed += 1;
        }
    }
    if opts.cli.json {
        let action = if failed > 0 { "fail" } else { "pass" };
        say(&serde_json::json!({ "Action": action, "Passed": passed, "Failed": failed }).to_string());
    } else if passed + failed == 0 {
        // Like `go test` on a package without tests: nothing failed.
        say(&format!("no tests under {root}"));
        return 0;
    } else {
        say(&format!("{passed} passed, {failed} failed"));
    }
    i32::from(failed > 0)
}

/// Runs one test file; returns (passed, failed).
fn run_file(path: &Path, opts: &TestOptions, attach: &dyn Fn(&mut Vm)) -> (i64, i64) {
    let shown = path.strip_prefix("./").unwrap_or(path).to_string_lossy().into_owned();
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            output::err(format!("csp test: cannot read {shown}: {e}\n").as_bytes());
            return (0, 1);
        }
    };
    // A file that does not compile is reported as itself, not through the
    // generated driver's import of it.
    let file = std::rc::Rc::new(crate::source::SourceFile::new(shown.clone(), src.clone()));
    let plain = crate::embed::Options { caps: crate::embed::Caps::all(), stdout: true, ..Default::default() };
    if let Err(diags) = crate::runner::compile(crate::embed::Runtime::new(plain).vm(), &file) {
        output::err(crate::diag::render_all(&diags, &file, opts.color).as_bytes());
        let text = format!("FAIL {shown}: the file does not compile");
        match opts.cli.json {
            true => say(&events::event("fail", &shown, None, serde_json::json!({ "Output": text + "\n" }))),
            false => say(&text),
        }
        return (0, 1);
    }
    let names: Vec<String> = crate::syntax::parse(&src)
        .map(|p| {
            p.stmts
                .iter()
                .filter_map(|s| match &s.kind {
                    StmtKind::Fn(d) => d.name.as_ref().map(|n| n.name.clone()),
                    _ => None,
                })
                .filter(|n| n.starts_with(if opts.cli.bench { "bench_" } else { "test_" }))
                .filter(|n| opts.filter.is_none_or(|f| format!("{shown}::{n}").contains(f)))
                .filter(|n| opts.cli.bench_filter.as_ref().is_none_or(|f| n.contains(f.as_str())))
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        return (0, 0);
    }
    if let Some(schedules) = opts.explore {
        let mut counts = (0, 0);
        for n in &names {
            let ok = explore_test(path, &shown, n, schedules, opts, attach);
            counts = if ok { (counts.0 + 1, counts.1) } else { (counts.0, counts.1 + 1) };
        }
        return counts;
    }
    let mut vm = crate::embed::Runtime::new(opts.runtime.clone()).into_vm();
    attach(&mut vm);
    vm.sched.name_trace_process(&format!("csp test {shown}"));
    // Kept (`-j`), the file's output is shown whole once it is done.
    let kept = output::kept();
    if opts.cli.json || kept {
        vm.out.capture();
    }
    let began = std::time::Instant::now();
    let (passed, failed) = run_driver(&mut vm, path, &shown, &names, opts);
    if kept && !opts.cli.json {
        output::err(&vm.out.take_err());
        output::out(&vm.out.take());
    }
    if opts.cli.json {
        output::err(&vm.out.take_err());
        for e in events::from_output(&shown, &String::from_utf8_lossy(&vm.out.take())) {
            say(&e);
        }
        let action = if failed > 0 { "fail" } else { "pass" };
        let elapsed = serde_json::json!({ "Elapsed": began.elapsed().as_micros() as f64 / 1e6 });
        say(&events::event(action, &shown, None, elapsed));
    }
    if let Some(c) = &vm.coverage {
        opts.report.borrow_mut().add(c);
    }
    (passed, failed)
}

/// Runs the driver of `names` (tests of the file at `path`) in `vm`;
/// returns (passed, failed).
fn run_driver(vm: &mut Vm, path: &Path, shown: &str, names: &[String], opts: &TestOptions) -> (i64, i64) {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = path.parent().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let json = opts.cli.json;
    let mut driver = format!("import {:?} as __t\nlet __json = {json}\n{}", format!("./{file_name}"), driver::DRIVER);
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    for n in names {
        let label = format!("{shown}::{n}");
        driver.push_str(&match opts.cli.bench {
            true => format!("__bench({label:?}, {:?}, __t.{n}, {})\n", format!("{n:width$}"), opts.benchtime()),
            false => format!("__run({label:?}, __t.{n}, {})\n", opts.timeout_ms),
        });
    }
    vm.define_native("__bench_line", driver::bench_line);
    let driver_name = if dir.is_empty() { "<csp test>".to_string() } else { format!("{dir}/<csp test>") };
    let out = crate::runner::run_source(vm, &driver_name, &driver, opts.color);
    let count = |vm: &Vm, name: &str| match vm.global_names.get(name).map(|&i| vm.globals[i as usize]) {
        Some(Value::Int(n)) => n,
        _ => 0,
    };
    let (passed, mut failed) = (count(vm, "__passed"), count(vm, "__failed"));
    if out.exit_code != 0 {
        vm.out.write_err(out.stderr.as_bytes());
        vm.out
            .write(format!("FAIL {shown}: the file failed to load or run (exit code {})\n", out.exit_code).as_bytes());
        failed += 1;
    }
    vm.out.flush();
    (passed, failed)
}

/// Runs one test under each schedule, each time in a fresh VM, until one
/// fails; returns whether all passed. The failing run's lines are shown with
/// the command that replays it.
fn explore_test(
    path: &Path,
    shown: &str,
    name: &str,
    schedules: crate::explore_runs::Schedules,
    opts: &TestOptions,
    attach: &dyn Fn(&mut Vm),
) -> bool {
    let label = format!("{shown}::{name}");
    for (k, seed) in schedules.seeds().enumerate() {
        let options = crate::embed::Options { explore: Some(seed), ..opts.runtime.clone() };
        let mut vm = crate::embed::Runtime::new(options).into_vm();
        attach(&mut vm);
        vm.sched.name_trace_process(&format!("csp test {label} (schedule {seed})"));
        vm.out.capture();
        let (passed, failed) = run_driver(&mut vm, path, shown, &[name.to_string()], opts);
        if let Some(c) = &vm.coverage {
            opts.report.borrow_mut().add(c);
        }
        let ok = passed == 1 && failed == 0;
        if ok && schedules.count > 1 {
            continue;
        }
        output::err(&vm.out.take_err());
        say(String::from_utf8_lossy(&vm.out.take()).trim_end_matches('\n'));
        if !ok && schedules.count > 1 {
            let timeout =
                if opts.timeout_ms == 10_000 { String::new() } else { format!("--timeout {} ", opts.timeout_ms) };
            say(&format!(
                "    schedule {seed} failed ({} of {} tried); replay: csp test {}{timeout}--explore-seed {seed} --run {} {}",
                k + 1,
                schedules.count,
                opts.flags,
                crate::explore_runs::quote(&label),
                crate::explore_runs::quote(shown),
            ));
        }
        return ok;
    }
    say(&format!("PASS {label} ({} schedules, {})", schedules.count, crate::explore_runs::span(schedules)));
    true
}

/// Collects `*_test.csp` files under `dir`, skipping hidden folders and `target`.
fn find_tests(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" {
                find_tests(&p, out);
            }
        } else if name.ends_with("_test.csp") {
            out.push(p);
        }
    }
}
