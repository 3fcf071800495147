//! Untrusted source for the fuzz targets and their replay test
//! (docs/fuzzing.md): the three paths they take (parse; compile and check; run)
//! with a VM that cannot reach the machine, under a budget, output discarded.

use crate::runner;
use crate::sched::Budget;
use crate::source::SourceFile;
use crate::vm::object::{Native, Obj};
use crate::vm::{builtin::NativeFn, err, ErrorKind, Res, Value, Vm};
use std::rc::Rc;
use std::time::Duration;

/// A sandboxed run's budget: enough for every test and example to do real
/// work, small enough that a fuzzer makes hundreds of runs a second.
pub const BUDGET: Budget = Budget { ticks: 1_000_000, time: Duration::from_millis(250) };

/// A sandboxed VM's heap limit (`--max-memory`) and most fibers (`--max-fibers`).
pub const MAX_MEMORY: usize = 64 << 20;
pub const MAX_FIBERS: usize = 10_000;

/// The stack each input runs on (see `on_stack`): tests/bad_input.rs's.
pub const STACK: usize = 256 * 1024;

/// The name the sandboxed source is compiled under.
const NAME: &str = "fuzz.csp";

/// Global builtins that only compute (or read the clock): every other builtin,
/// including any added later, throws in the sandbox.
const PURE: &[&str] = &[
    "abs",
    "acos",
    "after",
    "args",
    "asin",
    "assert",
    "atan",
    "atan2",
    "bin",
    "bytes",
    "cap",
    "ceil",
    "chan",
    "choice",
    "chr",
    "close",
    "coroutine",
    "cos",
    "div",
    "divmod",
    "eprint",
    "error",
    "exit",
    "exp",
    "float",
    "floor",
    "format",
    "from_entries",
    "hex",
    "hypot",
    "int",
    "is_finite",
    "is_inf",
    "is_nan",
    "json_decode",
    "json_encode",
    "len",
    "log",
    "log10",
    "log2",
    "max",
    "min",
    "mod",
    "mutex",
    "now",
    "oct",
    "ord",
    "pow",
    "print",
    "randint",
    "random",
    "range",
    "round",
    "sample",
    "set",
    "shuffle",
    "sin",
    "sleep",
    "sorted",
    "sqrt",
    "str",
    "sum",
    "tan",
    "ticker",
    "type",
    "waitgroup",
    "zip",
    "__deadlocked",
    "__go_detached",
    "__rename_error",
    "__io_error",
    "__value_error",
    "__program_name",
    "__log_line",
    "__limit_error",
    "__closed_error",
    "__type_error",
    "__protocol_error",
    "__timeout_error",
    "__os_time",
    "__http_chunk_size",
    "__http_wait_request",
    "__http_date",
];

/// Hidden builtins of the std modules that only compute, by prefix.
const PURE_MODULES: &[&str] = &[
    "__base64_",
    "__compress_",
    "__crypto_",
    "__csv_",
    "__hash_",
    "__hex_",
    "__path_",
    "__re_",
    "__time_",
    "__url_",
    "__ws_",
];

/// Whether the global builtin `name` may stay callable in the sandbox.
pub fn is_pure(name: &str) -> bool {
    PURE.contains(&name) || PURE_MODULES.iter().any(|p| name.starts_with(p))
}

fn disabled(_: &mut Vm, _: &[Value]) -> Res<Value> {
    err(ErrorKind::Io, "not allowed in the sandbox: it would reach files, processes, the network or the environment")
}

/// A VM whose builtins cannot touch the machine: those that reach files,
/// directories, processes, the network, the environment, signals or stdin
/// throw (keeping their names, for traces); `import` takes only `std/`
/// modules; output and `eprint` text are discarded; the heap and the number
/// of fibers are limited.
pub fn vm() -> Vm {
    // A replayed input runs as it did under the fuzzer: a fixed seed. The
    // sandbox's own list of builtins decides what is disabled, not `Caps`.
    let options = crate::embed::Options {
        max_memory: Some(MAX_MEMORY),
        max_fibers: Some(MAX_FIBERS),
        caps: crate::embed::Caps::all(),
        stdout: true,
        seed: Some(crate::vm::Rng::DEFAULT_SEED),
        ..Default::default()
    };
    let mut vm = crate::embed::Runtime::new(options).into_vm();
    let names: Vec<(Rc<str>, u32)> = vm.global_names.iter().map(|(n, &i)| (n.clone(), i)).collect();
    for (name, slot) in names {
        let Value::Obj(h) = vm.globals[slot as usize] else { continue };
        let Obj::Native(n) = vm.heap.get(h) else { continue };
        if !is_pure(&name) {
            let native = Native::new(n.name, NativeFn::Value(disabled));
            vm.globals[slot as usize] = Value::Obj(vm.heap.alloc(Obj::Native(Box::new(native))));
        }
    }
    vm.loader.std_only = true;
    vm.out.set_sink(crate::vm::output::Sink::Func(Box::new(|_| {})));
    vm.out.set_err_sink(Box::new(|_| {}));
    vm
}

/// The `parse` target: lexer and parser.
pub fn parse(src: &str) {
    let _ = crate::syntax::parse(src);
}

/// The `compile` target: parse and compile, then `csp check`'s pass (`check`
/// compiles first: one VM, one compilation).
pub fn compile(src: &str) {
    let file = Rc::new(SourceFile::new(NAME, src));
    let _ = runner::check(&mut vm(), &file);
}

/// The `run` target: compiles and runs in the sandbox under `BUDGET`.
pub fn run(src: &str) -> runner::Outcome {
    let mut vm = vm();
    vm.sched.set_budget(BUDGET);
    runner::run_source(&mut vm, NAME, src, false)
}

/// The text parsers with fuzz targets of their own (docs/fuzzing.md).
pub const TEXT_TARGETS: &[&str] = &["http", "json", "csv", "replace", "format"];

/// A text parser's fuzz target: `data` to the parser as a program's call
/// would give it (an HTTP head; `json_decode`; `csv.parse` plain and with a
/// header; a pattern for `re.compile` and a template for `re.replace`; a
/// format string with values of every kind), in a sandbox VM kept per
/// thread: making one costs more than most inputs. Errors are answers; only
/// a panic, a hang or an overflow is a finding.
pub fn text(target: &str, data: &[u8]) {
    thread_local! {
        static VM: std::cell::RefCell<Option<Vm>> = const { std::cell::RefCell::new(None) };
    }
    VM.with(|cell| {
        let mut cell = cell.borrow_mut();
        let vm = cell.get_or_insert_with(vm);
        drop(text_calls(vm, target, data));
        // What the inputs made is garbage now, collected once it passes the
        // collector's trigger: no scheduler runs here to collect it, and a
        // fresh heap every few thousand inputs let a big string per input
        // pile up (the format target passed 2 GB in five minutes).
        if vm.heap.should_collect() {
            crate::vm::gc::collect(vm, Vec::new());
            vm.heap.after_collection(0);
        }
    })
}

/// The calls of `text`, with their answers (none for `http`, whose parser
/// is driven directly).
fn text_calls(vm: &mut Vm, target: &str, data: &[u8]) -> Vec<Res<crate::vm::Ret>> {
    if target == "http" {
        crate::natives::http::fuzz(vm, data);
        return Vec::new();
    }
    let Ok(text) = std::str::from_utf8(data) else { return Vec::new() };
    let input = vm.heap.str(text);
    let call = crate::natives::call_global;
    match target {
        "json" => vec![call(vm, "json_decode", &[input])],
        "csv" => {
            let opts = crate::natives::fs::record(&mut vm.heap, &[("header", Value::Bool(true))]);
            vec![call(vm, "__csv_parse", &[input]), call(vm, "__csv_parse", &[input, opts])]
        }
        "replace" => {
            let (pattern, s) = (vm.heap.str(r"(?P<word>\w+)(\s*)(\d)?"), vm.heap.str("one two 3 four"));
            vec![call(vm, "__re_compile", &[input]), call(vm, "__re_replace", &[pattern, s, input])]
        }
        "format" => {
            let nested = vm.heap.list(vec![Value::Int(1), Value::Float(-2.5)]);
            let map = crate::natives::fs::record(&mut vm.heap, &[("a", nested), ("b", Value::Int(-7))]);
            let s = vm.heap.str("text");
            vec![call(vm, "format", &[input, Value::Int(42), Value::Float(-0.125), s, nested, map, Value::Nil])]
        }
        _ => panic!("no text target {target}"),
    }
}

/// Runs `f` on a thread with a `size`-byte stack (so recursion that grows with
/// the input overflows there, not only on a deep input); its panic is re-raised.
pub fn on_stack<R: Send>(size: usize, f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        let t = std::thread::Builder::new().stack_size(size).spawn_scoped(s, f).expect("cannot start a thread");
        t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards: each text target reaches its parser (a good input is
    /// answered with a value, a bad one with an error, not a wrong call).
    #[test]
    fn text_targets_reach_their_parsers() {
        let mut vm = vm();
        for (target, good, bad) in [
            ("json", "[1, {\"a\": 2}]", "[1,"),
            ("csv", "a,b\n1,2\n", "a,\"b"),
            ("replace", "$word-", "a(b"),
            ("format", "{0:>5} {3[1]}", "{9}"),
        ] {
            let ok = text_calls(&mut vm, target, good.as_bytes());
            assert!(!ok.is_empty() && ok.iter().all(|r| matches!(r, Ok(crate::vm::Ret::Value(_)))), "{target}");
            let failed = text_calls(&mut vm, target, bad.as_bytes());
            assert!(matches!(failed[0], Err(crate::vm::Fault::Error(_))), "{target}");
        }
    }

    /// Guards: the sandbox disables the outside world and keeps the rest.
    #[test]
    fn outside_builtins_throw() {
        for src in [
            "read_file(\"/etc/hostname\")",
            "write_file(\"/tmp/csp-sandbox-x\", \"x\")",
            "read_line()",
            "import \"std/fs\"\nfs.list(\"/\")",
            "import \"std/proc\"\nproc.run([\"true\"])",
            "import \"std/os\"\nos.setenv(\"X\", \"1\")",
            "import \"std/net\"\nnet.connect(\"127.0.0.1:1\")",
        ] {
            let out = run(src);
            assert_eq!(out.exit_code, 1, "{src}: {}", out.stderr);
            assert!(out.stderr.contains("not allowed in the sandbox"), "{src}: {}", out.stderr);
        }
        assert!(!std::path::Path::new("/tmp/csp-sandbox-x").exists());
        assert_eq!(run("import \"std/re\"\nassert(re.test(\"a+\", \"caab\"))\nprint(1)").exit_code, 0);
    }

    /// Guards: a file import is refused without reading the file.
    #[test]
    fn only_std_imports() {
        let out = run("import \"/dev/zero\" as z");
        assert_eq!(out.exit_code, 2);
        assert!(out.stderr.contains("cannot import '/dev/zero' in the sandbox"), "{}", out.stderr);
    }

    /// Guards: endless loops and sleeps end with the budget's outcome.
    #[test]
    fn budget_ends_runs() {
        for src in [
            "while true { }",
            "while true { sleep(1) }",
            "sleep(1e9)",
            "let c = chan()\ngo fn() { while true { c <- 1 } }()\nwhile true { <-c }",
        ] {
            let t = std::time::Instant::now();
            assert_eq!(run(src).exit_code, runner::TIMED_OUT, "{src}");
            assert!(t.elapsed() < BUDGET.time * 3, "{src}: {:?}", t.elapsed());
        }
    }

    /// Guards: the heap and fiber limits hold in the sandbox.
    #[test]
    fn memory_and_fibers_are_limited() {
        // More time than the fuzzers' budget: filling the heap's limit takes
        // longer on a loaded machine or in a debug build.
        let run = |src: &str| {
            let mut vm = vm();
            vm.sched.set_budget(Budget { time: Duration::from_secs(20), ..BUDGET });
            runner::run_source(&mut vm, NAME, src, false)
        };
        let out = run("let l = []\nwhile true { l.push(\"x\" * 2000000) }");
        assert!(out.stderr.contains("csp::runtime::memory"), "{}", out.stderr);
        let out = run("let c = chan()\nwhile true { go fn() { <-c }() }");
        assert!(out.stderr.contains("csp::runtime::fibers"), "{}", out.stderr);
    }
}
