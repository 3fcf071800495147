//! The embedding API (docs/embedding.md) as a Rust host uses it: values both
//! ways, host functions and types, capabilities and limits, stepping from the
//! host's loop, and the example host.

use csp::embed::{object, Caps, HostType, Options, Runtime, Step, Val};
use std::time::Duration;

fn runtime(caps: Caps) -> Runtime {
    Runtime::new(Options { caps, ..Options::default() })
}

#[test]
fn values_cross_both_ways() {
    let mut rt = runtime(Caps::none());
    let v = rt.eval("t.csp", "let m = {a: [1, 2.5, \"x\", nil, true]}\nm[3] = bytes(\"hi\")\nm").unwrap();
    let want = Val::Map(vec![
        (Val::str("a"), Val::List(vec![Val::Int(1), Val::Float(2.5), Val::str("x"), Val::Nil, Val::Bool(true)])),
        (Val::Int(3), Val::Bytes(b"hi".to_vec())),
    ]);
    assert_eq!(v, want);
    // Top-level names stay for later calls, as in the REPL.
    rt.eval("f.csp", "fn add(a, b) { return a + b }\nfn keys(m) { return m.keys() }").unwrap();
    assert_eq!(rt.call("add", &[Val::Int(2), Val::Int(40)]).unwrap(), Val::Int(42));
    assert_eq!(rt.call("add", &[Val::str("a"), Val::str("b")]).unwrap(), Val::str("ab"));
    let m = Val::record([("x", Val::Int(1)), ("y", Val::Int(2))]);
    assert_eq!(rt.call("keys", &[m]).unwrap(), Val::List(vec![Val::str("x"), Val::str("y")]));
    // A function crosses as its printed form; a cycle is refused.
    assert!(matches!(rt.eval("g.csp", "add").unwrap(), Val::Other(s) if s.contains("add")));
    let e = rt.eval("c.csp", "let l = []\nl.push(l)\nl").unwrap_err();
    assert!(e.message.contains("cyclic"), "{e:?}");
}

#[test]
fn errors_are_typed_with_the_csp_stack() {
    let mut rt = runtime(Caps::none());
    rt.eval("lib.csp", "fn inner(x) { return x[5] }\nfn outer() { return inner([1]) }").unwrap();
    let e = rt.call("outer", &[]).unwrap_err();
    assert_eq!(e.kind, "index");
    assert!(e.stack.iter().any(|f| f.contains("inner")), "{:?}", e.stack);
    assert!(e.stack.iter().any(|f| f.contains("outer")), "{:?}", e.stack);
    assert!(e.report.contains("lib.csp"), "{}", e.report);
    let e = rt.eval("bad.csp", "let = 1").unwrap_err();
    assert_eq!(e.kind, "syntax");
    let e = rt.eval("bad.csp", "print(nope)").unwrap_err();
    assert_eq!(e.kind, "compile");
    assert!(e.message.contains("nope"), "{e:?}");
    let e = rt.call("missing", &[]).unwrap_err();
    assert_eq!(e.kind, "name");
    // The runtime is still usable after each of these.
    assert_eq!(rt.eval("ok.csp", "1 + 1").unwrap(), Val::Int(2));
}

struct Counter {
    n: i64,
}

impl HostType for Counter {
    const NAME: &'static str = "counter";
    const METHODS: &'static [&'static str] = &["add", "get"];
    fn call(&mut self, method: &str, args: Vec<Val>) -> Result<Val, String> {
        match method {
            "add" => {
                self.n += args.first().and_then(Val::as_int).ok_or("needs an int")?;
                Ok(Val::Nil)
            }
            _ => Ok(Val::Int(self.n)),
        }
    }
}

#[test]
fn host_functions_and_types() {
    let mut rt = runtime(Caps::none());
    rt.register_fn("counter", |_| Ok(object(Counter { n: 0 })));
    rt.register_fn("shout", |args| match args.first() {
        Some(Val::Str(s)) => Ok(Val::Str(s.to_uppercase())),
        _ => Err("needs a string".into()),
    });
    let src = "let c = counter()\nc.add(2)\nc.add(5)\nlet r = [c.get(), type(c), shout(\"hi\")]\nr";
    assert_eq!(rt.eval("t.csp", src).unwrap(), Val::List(vec![Val::Int(7), Val::str("counter"), Val::str("HI")]));
    // The host's error is a catchable `value` error; an unknown method a `type` error.
    let v = rt.eval("e.csp", "let m = \"\"\ntry { shout(1) } catch e { m = e.kind + \": \" + e.message }\nm").unwrap();
    assert_eq!(v, Val::str("value: shout(): needs a string"));
    let e = rt.eval("e2.csp", "counter().nope()").unwrap_err();
    assert_eq!(e.kind, "type");
    assert!(e.message.contains("counter has no method 'nope'"), "{e:?}");
    // The host reaches its own object back.
    let c = rt.eval("c.csp", "let k = counter()\nk.add(3)\nk").unwrap();
    assert_eq!(c.object::<Counter>().map(|c| c.n), Some(3));
}

#[test]
fn blocking_host_functions_park_only_their_fiber() {
    let mut rt = runtime(Caps::none());
    rt.register_blocking_fn("slow", |args| {
        std::thread::sleep(Duration::from_millis(200));
        Ok(args.into_iter().next().unwrap_or(Val::Nil))
    });
    // While `slow` runs on another thread, a ticker fiber keeps running.
    let src = "let ticks = {n: 0}\ngo fn() { for i in 0..10 { sleep(10)\nticks.n += 1 } }()\nlet v = slow(7)\n[v, ticks.n >= 5]";
    assert_eq!(rt.eval("t.csp", src).unwrap(), Val::List(vec![Val::Int(7), Val::Bool(true)]));
}

#[test]
fn capabilities_deny_with_a_catchable_error() {
    let dir = std::env::temp_dir().join(format!("csp-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rt = runtime(Caps::none().files_under(&dir));
    let inside = dir.join("a.txt").to_string_lossy().into_owned();
    let src = format!("import \"std/fs\"\nfs.write({inside:?}, \"hi\")\nfs.read({inside:?})");
    assert_eq!(rt.eval("f.csp", &src).unwrap(), Val::str("hi"));
    rt.eval("imports.csp", "import \"std/fs\"\nimport \"std/net\"\nimport \"std/proc\"\nimport \"std/os\"").unwrap();
    let escape = format!("fs.read({:?})", format!("{}/../x", dir.display()));
    for (what, call) in [
        ("a file outside", "fs.read(\"/etc/hostname\")"),
        ("a way out by ..", escape.as_str()),
        ("the network", "net.connect(\"127.0.0.1:1\")"),
        ("processes", "proc.run([\"true\"])"),
        ("the environment", "os.env(\"HOME\")"),
        ("stdin", "read_line()"),
    ] {
        let e = rt.eval("d.csp", call).unwrap_err();
        assert_eq!(e.kind, "denied", "{what}: {e:?}");
        // And a script can catch it.
        let caught = rt.eval("c.csp", &format!("let k = nil\ntry {{\n{call}\n}} catch e {{ k = e.kind }}\nk")).unwrap();
        assert_eq!(caught, Val::str("denied"), "{what}");
    }
    // Imports of files are under the same rule; std modules can be narrowed.
    let e = rt.eval("i.csp", "import \"/etc/x\" as x").unwrap_err();
    assert!(e.message.contains("access denied"), "{e:?}");
    let mut rt = runtime(Caps::none().modules(&["json_free", "re"]));
    assert!(rt.eval("r.csp", "import \"std/re\"\nre.test(\"a+\", \"caa\")").is_ok());
    let e = rt.eval("n.csp", "import \"std/fs\"").unwrap_err();
    assert!(e.message.contains("not available"), "{e:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_builtin_has_a_known_access() {
    // A builtin added without a place in embed/caps.rs would be denied to every
    // host but `Caps::all()`: listing it here makes that a choice, not an accident.
    let mut rt = runtime(Caps::all());
    let unknown = csp::embed::unclassified_builtins(rt.vm());
    assert!(unknown.is_empty(), "builtins with no access in embed/caps.rs: {unknown:?}");
}

#[test]
fn limits_hold() {
    let mut rt = Runtime::new(Options { max_memory: Some(32 << 20), ..Options::default() });
    let e = rt.eval("m.csp", "let l = []\nwhile true { l.push(\"x\" * 1000000) }").unwrap_err();
    assert_eq!(e.kind, "memory");
    let mut rt = Runtime::new(Options { fuel: Some(100_000), ..Options::default() });
    let e = rt.eval("f.csp", "while true { }").unwrap_err();
    assert_eq!(e.kind, "budget");
    let mut rt = Runtime::new(Options { timeout: Some(Duration::from_millis(200)), ..Options::default() });
    let t = std::time::Instant::now();
    let e = rt.eval("t.csp", "sleep(100000)").unwrap_err();
    assert_eq!(e.kind, "timeout", "{e:?}");
    assert!(t.elapsed() < Duration::from_secs(5));
    let mut rt = Runtime::new(Options { max_fibers: Some(10), ..Options::default() });
    let e = rt.eval("g.csp", "let c = chan()\nwhile true { go fn() { <-c }() }").unwrap_err();
    assert_eq!(e.kind, "fibers");
}

#[test]
fn the_host_steps_the_runtime_from_its_own_loop() {
    let mut rt = runtime(Caps::none());
    rt.start("s.csp", "let out = []\nfor i in 0..3 { sleep(20)\nout.push(i) }\nout").unwrap();
    let mut idles = 0;
    let result = loop {
        match rt.step(Duration::from_millis(5)).unwrap() {
            Step::Done(v) => break v,
            Step::Busy => {}
            Step::Idle(next) => {
                idles += 1;
                assert!(next.is_some(), "a sleep is a timer");
                rt.wait(next);
            }
        }
    };
    assert_eq!(result, Val::List(vec![Val::Int(0), Val::Int(1), Val::Int(2)]));
    assert!(idles >= 3, "{idles}");
    // A deadlock is an error, not a hang.
    let e = rt.eval("d.csp", "let c = chan()\n<-c").unwrap_err();
    assert_eq!(e.kind, "deadlock");
    // Output is kept for the host unless it asks for stdout.
    rt.eval("p.csp", "print(\"hello\", 1)").unwrap();
    assert_eq!(rt.take_output(), "hello 1\n");
}

#[test]
fn the_example_host_runs() {
    // `cargo test` builds the examples beside the test binaries' folder.
    let exe = std::env::current_exe().unwrap();
    let example = exe.parent().unwrap().parent().unwrap().join("examples/embed");
    let out = std::process::Command::new(&example).output().unwrap_or_else(|e| panic!("{}: {e}", example.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("apples left: 3"), "{stdout}");
    assert!(stdout.contains("denied: denied - access to the network is denied"), "{stdout}");
    assert!(stdout.contains("result: {Str(\"total\"): Int(10), Str(\"left\"): Int(3)}"), "{stdout}");
    assert!(stdout.contains("over the limit: memory error"), "{stdout}");
}

#[test]
fn a_workers_print_is_kept_with_the_runtimes_own_output() {
    let mut rt = Runtime::new(Options { isolates: Some(2), ..Options::default() });
    let src = "import \"std/isolate\"\nprint(\"before\")\nfn work(x) { print(\"worker ${x}\"); return x * 2 }\nprint(wait isolate.run(work, 21))\n";
    rt.eval("iso.csp", src).unwrap();
    assert_eq!(rt.take_output(), "before\nworker 21\n42\n");
    assert_eq!(rt.take_output(), "");
}
