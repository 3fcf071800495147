//! The `csp` command: run, check, disasm, fmt, test, build, add/fetch/update,
//! completions; a standalone executable's start; exit codes 0/1/2/64.

use std::process::ExitCode;

/// `csp --help` (the command table itself is `completions.rs`'s).
const USAGE: &str = include_str!("usage.txt");

/// A mistake on the command line: what is wrong, then the one-line usage
/// (the whole help is `csp --help`).
fn usage_error(msg: &str) -> ExitCode {
    csp::err_println!("csp: {msg}\nusage: csp [OPTIONS] [COMMAND] [FILE] [ARGS...]  (`csp --help` lists them)");
    ExitCode::from(64)
}

/// `unknown option '--timout'; did you mean `--timeout`?`: the nearest of the
/// known names.
fn unknown(what: &str, given: &str, known: impl IntoIterator<Item = &'static str>) -> ExitCode {
    let stem = given.split('=').next().unwrap_or(given);
    match csp::suggest::closest(stem, known) {
        Some(near) => usage_error(&format!("unknown {what} '{given}'; did you mean `{near}`?")),
        None => usage_error(&format!("unknown {what} '{given}'")),
    }
}

struct Options {
    timeout_ms: Option<u64>,
    grace_ms: Option<u64>,
    max_memory: Option<usize>,
    max_fibers: Option<usize>,
    /// `--isolates N` (else `CSP_ISOLATES`).
    isolates: Option<usize>,
    run: Option<String>,
    seed: Option<u64>,
    slice_us: Option<u64>,
    trace: Option<String>,
    profile: Option<String>,
    profile_hz: Option<u32>,
    explore: Option<u64>,
    explore_seed: Option<u64>,
    /// `csp check --deny-warnings`: warnings fail the check (exit 1).
    deny_warnings: bool,
    /// `--offline`: packages only from the cache.
    offline: bool,
    /// `csp test`'s own options (and `--coverage`).
    test: csp::testing::flags::Flags,
}

impl Options {
    /// The schedules `--explore N` / `--explore-seed S` ask for.
    fn schedules(&self) -> Option<csp::explore_runs::Schedules> {
        match (self.explore, self.explore_seed) {
            (Some(count), first) => Some(csp::explore_runs::Schedules { first: first.unwrap_or(1), count }),
            (None, Some(first)) => Some(csp::explore_runs::Schedules { first, count: 1 }),
            (None, None) => None,
        }
    }

    /// What a replay command must repeat besides the schedule.
    fn replay_flags(&self) -> String {
        self.seed.map(|s| format!("--seed {s} ")).unwrap_or_default()
    }
}

/// Runs before Rust's runtime, which replaces closed standard descriptors with
/// `/dev/null`: a program started with stdout closed must fail to print, not
/// print into nothing.
#[used]
#[link_section = ".init_array"]
static CHECK_STDOUT: extern "C" fn() = check_stdout;

extern "C" fn check_stdout() {
    // SAFETY: F_GETFD only reads the descriptor's flags.
    if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
        csp::vm::output::mark_stdout_closed();
    }
}

fn main() -> ExitCode {
    csp::alloc::installed();
    csp::os::fdlimit::raise();
    // The interpreter keeps frames on the heap; the big stack is headroom for the
    // compiler's recursion over deeply nested (but accepted) source.
    let child = std::thread::Builder::new().stack_size(64 << 20).spawn(cli);
    match child.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => ExitCode::from(70),
    }
}

/// What a leading `--option` asked for.
enum Flag {
    /// Keep parsing.
    Continue,
    /// Stop with this exit code (`--help`, `--version`, a bad option).
    Exit(ExitCode),
}

/// Parses the option at `args[*i]`, advancing `*i` past any value it takes.
fn parse_option(args: &[String], i: &mut usize, opts: &mut Options) -> Flag {
    let positive = |n: &u64| *n > 0;
    match args[*i].as_str() {
        "--help" => Flag::Exit(write_stdout(&format!("{USAGE}\n"))),
        "--version" => Flag::Exit(write_stdout(&format!("csp {}\n", env!("CARGO_PKG_VERSION")))),
        "--seed" => value(args, i, &mut opts.seed, |s| s.parse().ok(), "--seed needs an integer"),
        "--trace" => value(args, i, &mut opts.trace, |s| Some(s.to_string()), "--trace needs a FILE"),
        "--profile" => value(args, i, &mut opts.profile, |s| Some(s.to_string()), "--profile needs a FILE"),
        "--profile-hz" => value(
            args,
            i,
            &mut opts.profile_hz,
            |s| s.parse().ok().filter(|n| (1..=10_000).contains(n)),
            "--profile-hz needs a rate from 1 to 10000 (samples a second)",
        ),
        "--timeout" => value(
            args,
            i,
            &mut opts.timeout_ms,
            csp::limits::parse_millis,
            "--timeout needs a positive time: milliseconds, or 30s, 2m, 1h",
        ),
        "--grace" => value(
            args,
            i,
            &mut opts.grace_ms,
            csp::limits::parse_millis,
            "--grace needs a positive time: milliseconds, or 30s, 2m, 1h",
        ),
        "--max-memory" => value(
            args,
            i,
            &mut opts.max_memory,
            csp::limits::parse_bytes,
            "--max-memory needs a positive size: bytes, or 512M, 2G",
        ),
        "--max-fibers" => value(
            args,
            i,
            &mut opts.max_fibers,
            |s| s.parse().ok().filter(|&n| n > 0),
            "--max-fibers needs a positive integer",
        ),
        "--isolates" => value(
            args,
            i,
            &mut opts.isolates,
            |s| s.parse().ok().filter(|&n| n > 0),
            "--isolates needs a positive integer",
        ),
        "--deny-warnings" => {
            opts.deny_warnings = true;
            Flag::Continue
        }
        "--offline" => {
            opts.offline = true;
            Flag::Continue
        }
        "--run" => value(args, i, &mut opts.run, |s| Some(s.to_string()), "--run needs a PATTERN"),
        "--slice-us" => value(
            args,
            i,
            &mut opts.slice_us,
            |s| s.parse().ok().filter(positive),
            "--slice-us needs a positive integer (microseconds)",
        ),
        "--explore" => value(
            args,
            i,
            &mut opts.explore,
            |s| s.parse().ok().filter(positive),
            "--explore needs a positive number of schedules",
        ),
        "--explore-seed" => {
            value(args, i, &mut opts.explore_seed, |s| s.parse().ok(), "--explore-seed needs a non-negative integer")
        }
        other => match opts.test.parse(args, i) {
            Some(Ok(())) => Flag::Continue,
            Some(Err(needs)) => Flag::Exit(usage_error(&needs)),
            None => Flag::Exit(unknown("option", other, csp::completions::OPTIONS.iter().map(|o| o.name))),
        },
    }
}

/// The value after the option at `args[*i]`, read by `parse` into `slot`
/// (advancing `*i` past it), or the usage error `needs`.
fn value<T>(
    args: &[String],
    i: &mut usize,
    slot: &mut Option<T>,
    parse: impl Fn(&str) -> Option<T>,
    needs: &str,
) -> Flag {
    match args.get(*i + 1).and_then(|s| parse(s)) {
        Some(v) => {
            *slot = Some(v);
            *i += 1;
            Flag::Continue
        }
        None => Flag::Exit(usage_error(needs)),
    }
}

/// Writes to stdout; a closed pipe (`csp disasm x.csp | head`) ends quietly.
fn write_stdout(s: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            csp::err_println!("csp: cannot write output: {e}");
            ExitCode::from(74)
        }
    }
}

fn cli() -> ExitCode {
    // A standalone executable (`csp build`) runs its program with every argument.
    if let Some(b) = csp::bundle::own() {
        return run_bundle(b);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Options {
        timeout_ms: None,
        grace_ms: None,
        max_memory: None,
        max_fibers: None,
        isolates: None,
        run: None,
        seed: None,
        slice_us: None,
        trace: None,
        profile: None,
        profile_hz: None,
        explore: None,
        explore_seed: None,
        deny_warnings: false,
        offline: false,
        test: Default::default(),
    };
    // Options go before the command or between the command and FILE:
    // `csp --seed 5 run x.csp` and `csp run --seed 5 x.csp` are the same.
    let mut i = 0;
    while i < args.len() && (args[i].starts_with("--") || args[i] == "-j") {
        if let Flag::Exit(code) = parse_option(&args, &mut i, &mut opts) {
            return code;
        }
        i += 1;
    }
    if opts.isolates.is_none() {
        if let Some(v) = std::env::var_os("CSP_ISOLATES") {
            match v.to_str().and_then(|s| s.trim().parse().ok()).filter(|&n: &usize| n > 0) {
                Some(n) => opts.isolates = Some(n),
                None => return usage_error("CSP_ISOLATES needs a positive integer"),
            }
        }
    }
    let explore_cmd = matches!(args.get(i).map(String::as_str), Some("run" | "test"))
        || args.get(i).is_some_and(|a| looks_like_script(a));
    if opts.schedules().is_some() && !explore_cmd {
        return usage_error("--explore and --explore-seed are for `csp run` and `csp test`");
    }
    if let Some(msg) = recording_misuse(&opts, explore_cmd) {
        return usage_error(&msg);
    }
    let Some(cmd) = args.get(i) else {
        return ExitCode::from(csp::repl::run(&runtime_options(&opts)) as u8);
    };
    i += 1;
    match cmd.as_str() {
        "repl" if i == args.len() => ExitCode::from(csp::repl::run(&runtime_options(&opts)) as u8),
        "repl" => usage_error("`csp repl` takes no arguments"),
        "lsp" if i == args.len() => ExitCode::from(csp::lsp::run() as u8),
        "lsp" => usage_error("`csp lsp` takes no arguments"),
        "dap" if i == args.len() => ExitCode::from(csp::dap::run() as u8),
        "dap" => usage_error("`csp dap` takes no arguments (the program comes in `launch`)"),
        "fmt" => ExitCode::from(csp::fmt::cli::run(&args[i..], csp::diag::use_color()) as u8),
        "add" | "fetch" | "update" => {
            let mut rest: Vec<String> = args[i..].to_vec();
            let before = rest.len();
            rest.retain(|a| a != "--offline");
            let offline = opts.offline || rest.len() != before;
            ExitCode::from(csp::pkg::cli::run(cmd, &rest, offline) as u8)
        }
        "build" => build(&args[i..], opts.offline),
        "completions" => match (&args[i..], args.get(i).and_then(|s| csp::completions::script(s))) {
            ([_], Some(script)) => write_stdout(&script),
            _ => usage_error("`csp completions` needs one SHELL: bash, zsh or fish"),
        },
        "run" | "check" | "disasm" | "test" => {
            while i < args.len() && (args[i].starts_with("--") || args[i] == "-j") {
                if args[i] == "--" {
                    i += 1;
                    break;
                }
                if let Flag::Exit(code) = parse_option(&args, &mut i, &mut opts) {
                    return code;
                }
                i += 1;
            }
            if let Some(msg) = opts.test.misuse(
                cmd,
                opts.trace.is_some() || opts.profile.is_some(),
                opts.schedules().is_some(),
                opts.explore.is_some(),
            ) {
                return usage_error(msg);
            }
            let rest = &args[i..];
            if opts.deny_warnings && cmd != "check" {
                return usage_error("--deny-warnings is for `csp check`");
            }
            if let Some(msg) = recording_misuse(&opts, matches!(cmd.as_str(), "run" | "test")) {
                return usage_error(&msg);
            }
            if cmd == "test" {
                if rest.len() > 1 {
                    return usage_error("`csp test` takes at most one PATH");
                }
                let root = rest.first().map_or(".", String::as_str);
                let test_opts = csp::testing::TestOptions {
                    timeout_ms: opts.timeout_ms.unwrap_or(10_000),
                    filter: opts.run.as_deref(),
                    color: csp::diag::use_color(),
                    explore: opts.schedules(),
                    flags: opts.replay_flags(),
                    cli: &opts.test,
                    runtime: runtime_options(&opts),
                    report: Default::default(),
                };
                let recording = match open_recording(&opts) {
                    Ok(r) => r,
                    Err(code) => return code,
                };
                let code = csp::testing::run_tests(root, &test_opts, &|vm| recording.attach(vm, None));
                recording.finish();
                return ExitCode::from(code as u8);
            }
            let Some(path) = rest.first() else {
                return usage_error(&format!("`csp {cmd}` needs a FILE"));
            };
            if cmd != "run" && rest.len() > 1 {
                return usage_error(&format!("`csp {cmd}` takes one FILE"));
            }
            file_command(cmd, path, &rest[1..], &opts)
        }
        // `csp FILE [ARGS...]` runs the file, so `#!/usr/bin/env csp` scripts work.
        file if looks_like_script(file) => file_command("run", file, &args[i..], &opts),
        other => unknown("command", other, csp::completions::COMMANDS.iter().map(|c| c.name)),
    }
}

/// `csp build FILE -o OUT [--offline]`.
fn build(args: &[String], offline: bool) -> ExitCode {
    let (mut file, mut out, mut offline) = (None, None, offline);
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-o" | "--output" => match args.get(i + 1) {
                Some(o) => {
                    out = Some(o.clone());
                    i += 1;
                }
                None => return usage_error("-o needs the executable's path"),
            },
            "--offline" => offline = true,
            a if a.starts_with('-') => return unknown("option", a, ["-o", "--output", "--offline"]),
            a if file.is_none() => file = Some(a.to_string()),
            _ => return usage_error("`csp build` takes one FILE"),
        }
        i += 1;
    }
    let Some(file) = file else { return usage_error("`csp build` needs a FILE and -o OUT") };
    let out = out.unwrap_or_else(|| {
        let base = file.rsplit('/').next().unwrap_or(&file);
        base.strip_suffix(".csp").unwrap_or(base).to_string()
    });
    if out == file {
        return usage_error("-o would overwrite the script; name another file");
    }
    match csp::bundle_build::build(&file, &out, offline, csp::diag::use_color()) {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, report)) => {
            csp::err_print!("{report}");
            ExitCode::from(code as u8)
        }
    }
}

/// Runs the program bundled into this executable, as `csp run ENTRY ARGS...`.
fn run_bundle(b: csp::bundle::Bundle) -> ExitCode {
    let Some(src) = b.files.get(&b.entry).cloned() else {
        let me = std::env::args().next().unwrap_or_default();
        csp::err_println!(
            "{me}: the program bundled into this executable is damaged (build it again with `csp build`)"
        );
        return ExitCode::from(70);
    };
    let entry = b.entry.clone();
    let mut rt = csp::embed::Runtime::new(csp::embed::Options {
        max_memory: Some(csp::limits::default_max_memory()),
        caps: csp::embed::Caps::all(),
        stdout: true,
        args: std::env::args().skip(1).collect(),
        bundle: Some(std::sync::Arc::new(b)),
        ..Default::default()
    });
    if let Err(e) = rt.install_signal_handlers() {
        csp::err_println!("csp: cannot handle signals: {e}");
    }
    let out = rt.run_program(&entry, &src, csp::diag::use_color());
    csp::err_print!("{}", out.stderr);
    ExitCode::from(out.exit_code as u8)
}

/// Is this first argument a script to run rather than a mistyped command?
fn looks_like_script(arg: &str) -> bool {
    arg.ends_with(".csp") || arg.contains('/') || std::path::Path::new(arg).is_file()
}

/// The runtime the command line asks for: all of `csp run`'s reach, and the
/// limits, seeds and schedule its flags give (`--timeout` is `run`'s alone).
fn runtime_options(opts: &Options) -> csp::embed::Options {
    use std::time::Duration;
    csp::embed::Options {
        max_memory: Some(opts.max_memory.unwrap_or_else(csp::limits::default_max_memory)),
        max_fibers: opts.max_fibers,
        isolates: opts.isolates,
        caps: csp::embed::Caps::all(),
        stdout: true,
        grace: opts.grace_ms.map(Duration::from_millis),
        slice: opts.slice_us.map(Duration::from_micros),
        seed: opts.seed,
        explore: opts.explore_seed,
        offline: opts.offline,
        coverage: opts.test.coverage.is_some().then_some(opts.test.coverage_std),
        ..Default::default()
    }
}

fn file_command(cmd: &str, path: &str, script_args: &[String], opts: &Options) -> ExitCode {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            // A missing file is not a usage mistake: no help text.
            csp::err_println!("csp: cannot read {path}: {}", csp::os::io_reason(&e));
            return ExitCode::from(64);
        }
    };
    let src = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            csp::err_println!("error[csp::syntax]: {path} is not valid UTF-8 (invalid byte at offset {at})");
            return ExitCode::from(2);
        }
    };
    let mut options = csp::embed::Options { args: script_args.to_vec(), ..runtime_options(opts) };
    if let (Some(schedules), Some(_), "run") = (opts.schedules(), opts.explore, cmd) {
        let code = csp::explore_runs::run_program(path, &src, schedules, &opts.replay_flags(), &options);
        return ExitCode::from(code as u8);
    }
    if cmd == "run" {
        options.timeout = opts.timeout_ms.map(std::time::Duration::from_millis);
    }
    let color = csp::diag::use_color();
    let mut rt = csp::embed::Runtime::new(options);
    match cmd {
        "run" => {
            if let Err(e) = rt.install_signal_handlers() {
                csp::err_println!("csp: cannot handle signals: {e}");
            }
            let recording = match open_recording(opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            recording.attach(rt.vm(), Some(&format!("csp run {path}")));
            let out = rt.run_program(path, &src, color);
            csp::err_print!("{}", out.stderr);
            recording.finish();
            if let (Some(c), Some(to)) = (&rt.vm().coverage, &opts.test.coverage) {
                if let Err(e) = csp::coverage::write(c, to) {
                    csp::err_println!("csp: cannot write coverage {to}: {}", csp::os::io_reason(&e));
                }
            }
            ExitCode::from(out.exit_code as u8)
        }
        "disasm" => {
            let file = std::rc::Rc::new(csp::source::SourceFile::new(path, src));
            match csp::runner::compile(rt.vm(), &file) {
                Ok(proto) => write_stdout(&csp::bytecode::disasm::disasm(&proto, &rt.vm().heap)),
                Err(diags) => {
                    csp::err_print!("{}", csp::diag::render_all(&diags, &file, color));
                    ExitCode::from(2)
                }
            }
        }
        _ => {
            let file = std::rc::Rc::new(csp::source::SourceFile::new(path, src));
            let diags = csp::runner::check(rt.vm(), &file);
            csp::err_print!("{}", csp::diag::render_all(&diags, &file, color));
            // Errors exit 2; warnings alone pass unless asked not to.
            match (diags.iter().any(|d| !d.is_warning()), diags.is_empty()) {
                (true, _) => ExitCode::from(2),
                (false, false) if opts.deny_warnings => ExitCode::from(1),
                _ => ExitCode::SUCCESS,
            }
        }
    }
}

/// Why `--trace` or `--profile` cannot be used here, if they cannot: they
/// are for `csp run` and `csp test` (`run_or_test`), and record one run, not
/// `--explore`'s many.
fn recording_misuse(opts: &Options, run_or_test: bool) -> Option<String> {
    let (flag, what) = match (&opts.trace, &opts.profile) {
        (Some(_), _) => ("--trace", "trace"),
        (None, Some(_)) => ("--profile", "profile"),
        (None, None) if opts.profile_hz.is_some() => return Some("--profile-hz is for --profile FILE".into()),
        (None, None) => return None,
    };
    if !run_or_test {
        return Some(format!("{flag} is for `csp run` and `csp test`"));
    }
    let many = opts.explore.is_some();
    many.then(|| format!("{flag} records one run, not --explore's many: {what} one schedule with --explore-seed S"))
}

/// The `--trace` and `--profile` files, created now (they are written while
/// the program runs); a path that cannot be written is a bad command line.
fn open_recording(opts: &Options) -> Result<csp::recording::Recording, ExitCode> {
    let hz = opts.profile_hz.unwrap_or(csp::recording::DEFAULT_HZ);
    csp::recording::Recording::open(opts.trace.as_deref(), opts.profile.as_deref(), hz).map_err(|msg| {
        csp::err_println!("{msg}");
        ExitCode::from(64)
    })
}

/// mimalloc without transparent huge pages (the `no_thp` feature): zeroing
/// 2 MB pages on first touch cost more than their TLB savings (a program
/// starting a million fibers spent 70% of its time there) and tripled a small
/// program's resident size. (Calling `mi_malloc` directly for small alignments
/// instead of the crate's `mi_malloc_aligned` saved 1-2% of instructions on
/// string-heavy code but timed 2-4% slower on nbody, fib and loop; tried again
/// with the dispatch loop's placement pinned (link/startup.ld), it timed the
/// same as this on binary_trees, strings_maps, fib and nbody: not kept.)
#[global_allocator]
static GLOBAL: csp::alloc::Alloc = csp::alloc::Alloc;
