//! `csp dap` (docs/debugging.md): a whole session driven by a real DAP
//! client (`tests/dap/session.js` on `@vscode/debugadapter-testsupport`, as
//! VS Code drives an adapter), and each request at the protocol level,
//! malformed messages included (an error response, never a crash).
//!
//! The client session needs `node` and `npm`; without them it prints what it
//! skipped and passes, unless the environment variable `CI` is set.

mod common;
mod dap_adapter;
use dap_adapter::Adapter;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

#[test]
fn vscode_client_session() {
    let install = "install Node.js and npm (Debian: `apt-get install nodejs npm`)";
    if !common::have("node", "the DAP client session", install)
        || !common::have("npm", "the DAP client session", install)
    {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/dap");
    if !dir.join("node_modules/@vscode/debugadapter-testsupport").exists() {
        let out = Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&dir).output().unwrap();
        assert!(out.status.success(), "npm ci in tests/dap failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = Command::new("node").arg(dir.join("session.js")).arg(CSP).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("dap session: ok"), "the DAP client session failed:\n{text}");
}

#[test]
fn malformed_messages_get_error_responses() {
    let mut a = Adapter::start();
    a.send_body("{not json");
    let r = a.next();
    assert_eq!((r["type"].as_str(), r["success"].as_bool()), (Some("response"), Some(false)), "{r}");
    assert!(r["message"].as_str().unwrap().contains("malformed message"), "{r}");
    a.send_body(r#"{"seq": 7, "type": "event", "event": "x"}"#);
    let r = a.next();
    assert!(r["message"].as_str().unwrap().contains("not a request") && r["request_seq"] == 7, "{r}");
    a.send_body(r#"{"seq": 8, "type": "request"}"#);
    assert!(a.next()["message"].as_str().unwrap().contains("without a command"));
    a.send_raw(b"Content-Length: banana\r\n\r\n");
    assert!(a.next()["message"].as_str().unwrap().contains("Content-Length"));
    a.send_raw(b"Garbage here\r\n\r\n");
    assert!(a.next()["message"].as_str().unwrap().contains("not a header line"));
    assert!(a.fails("frobnicate", json!({})).contains("unknown command 'frobnicate'"));
    // Still serving.
    assert_eq!(a.ok("initialize", json!({}))["supportsLogPoints"], true);
    a.disconnect();
}

#[test]
fn requests_that_need_a_program() {
    let mut a = Adapter::start();
    a.ok("initialize", json!({}));
    assert!(a.fails("stackTrace", json!({"threadId": 1})).contains("no program is running"));
    assert!(a.fails("launch", json!({})).contains("needs `program`"));
    assert!(a.fails("launch", json!({"program": "/no/such/file.csp"})).contains("cannot read program"));
    assert!(a.fails("launch", json!({"program": "x.csp", "args": [1]})).contains("`args` must be a list of strings"));
    assert!(a.fails("attach", json!({})).contains("cannot attach"));
    a.ok("terminate", json!({}));
    a.event("terminated");
    assert!(a.child.wait().unwrap().success());
}

#[test]
fn a_program_that_does_not_compile() {
    let mut a = Adapter::start();
    a.ok("initialize", json!({}));
    let path = std::env::temp_dir().join(format!("csp_dap_bad_{}.csp", std::process::id()));
    std::fs::write(&path, "let x = \n").unwrap();
    assert!(a.fails("launch", json!({"program": path})).contains("does not compile"));
    let (stderr, code) = a.output_until_exit("stderr");
    assert_eq!(code, 2);
    assert!(stderr.contains("csp::syntax"), "{stderr}");
    a.event("terminated");
    a.disconnect();
}

#[test]
fn stop_on_entry_next_evaluate_and_the_end() {
    let src = "fn f() { return g }\nlet g = 5\nlet a = 1\nlet b = a + f()\nprint(b, args())\n";
    let (mut a, _) = Adapter::launch("entry", src, json!({"stopOnEntry": true, "args": ["x"]}), json!([]), &[]);
    let (reason, line, _, thread) = a.stopped();
    assert_eq!((reason.as_str(), line), ("entry", 1));
    let next = |a: &mut Adapter| {
        let seq = a.request("next", json!({"threadId": thread}));
        a.response(seq);
        a.stopped()
    };
    assert_eq!(next(&mut a).1, 2);
    let (reason, line, frame, _) = next(&mut a);
    assert_eq!((reason.as_str(), line), ("step", 3));
    // A global (f reads g); what would block or start a fiber is refused.
    assert_eq!(a.evaluate(frame, "g * 2"), "10");
    assert!(a.fails("evaluate", json!({"expression": "g +", "frameId": frame})).contains("expected"));
    for blocking in ["<-chan()", "sleep(10)", "go f()"] {
        let why = a.fails("evaluate", json!({"expression": blocking, "frameId": frame}));
        assert!(why.contains("cannot wait or start fibers"), "{blocking}: {why}");
    }
    let (_, line, frame, _) = next(&mut a);
    assert_eq!(line, 4);
    assert_eq!(a.evaluate(frame, "a * 10 + f()"), "15");
    // Frames of an earlier stop are gone; ids never handed out are errors.
    assert!(a.fails("scopes", json!({"frameId": 99})).contains("no frame"));
    assert!(a.fails("scopes", json!({"frameId": 0})).contains("no frame"));
    assert!(a.fails("variables", json!({"variablesReference": 0})).contains("no variables reference"));
    assert!(a.fails("variables", json!({"variablesReference": -5})).contains("no variables reference"));
    assert!(a.fails("stackTrace", json!({"threadId": 0})).contains("no thread"));
    assert!(a.fails("stackTrace", json!({"threadId": "one"})).contains("needs threadId"));
    assert!(a.fails("evaluate", json!({"frameId": frame})).contains("needs expression"));
    a.ok("continue", json!({"threadId": thread}));
    let (out, code) = a.output_until_exit("stdout");
    assert_eq!((out.as_str(), code), ("6 [\"x\"]\n", 0));
    a.event("terminated");
    // The program has ended: requests for it fail, the adapter goes on.
    assert!(a.fails("stackTrace", json!({"threadId": 1})).contains("the program has ended"));
    a.disconnect();
}

#[test]
fn the_program_cannot_read_or_write_the_protocol() {
    // read_line sees end-of-file and a child's stdout goes to stderr: the
    // protocol's bytes stay the adapter's.
    let src = "import \"std/proc\"\nprint(read_line())\nlet p = proc.spawn([\"echo\", \"child says hi\"], {stdout: \"inherit\"})\np.wait()\nprint(\"after\")\n";
    let (mut a, _) = Adapter::launch("stdio", src, json!({}), json!([]), &[]);
    assert_eq!(a.output_until_exit("stdout"), ("nil\nafter\n".to_string(), 0));
    a.disconnect();
}

#[test]
fn conditions_hit_counts_and_log_points() {
    let src = "let total = 0\nfor i in 0..10 {\n    total += i\n}\nprint(total)\n";
    let (mut a, path) = Adapter::launch("cond", src, json!({}), json!([{"line": 3, "condition": "i == 4"}]), &[]);
    let (reason, line, frame, thread) = a.stopped();
    assert_eq!((reason.as_str(), line), ("breakpoint", 3));
    assert_eq!(a.local(frame, "i"), "4");
    // Counted from when it is set: hits at i = 5, 6.
    let bps =
        a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": 3, "hitCondition": "== 2"}]}));
    assert_eq!(bps["breakpoints"][0]["verified"], true);
    let bad = a
        .ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": 3, "hitCondition": "often"}]}));
    assert_eq!(bad["breakpoints"][0]["verified"], false, "{bad}");
    a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": 3, "hitCondition": "== 2"}]}));
    a.ok("continue", json!({"threadId": thread}));
    let (_, _, frame, thread) = a.stopped();
    assert_eq!(a.local(frame, "i"), "6");
    a.ok(
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": [{"line": 3, "logMessage": "i is {i}, {nope}"}]}),
    );
    a.ok("continue", json!({"threadId": thread}));
    let (out, code) = a.output_until_exit("stdout");
    assert_eq!((out.as_str(), code), ("45\n", 0));
    let console: String = a
        .seen
        .iter()
        .filter(|m| m["event"] == "output" && m["body"]["category"] == "console")
        .map(|m| m["body"]["output"].as_str().unwrap())
        .collect();
    assert!(console.starts_with("i is 7, <undefined name 'nope'"), "{console}");
    assert_eq!(console.lines().count(), 3, "{console}");
    a.disconnect();
}

#[test]
fn breakpoints_move_to_the_next_line_with_code() {
    let src = "let a = 1\n\n// a comment\n\nlet b = 2\nprint(a + b)\n";
    let (mut a, path) = Adapter::launch("move", src, json!({}), json!([{"line": 2}]), &[]);
    let ev = a.event("stopped");
    assert_eq!(ev["hitBreakpointIds"], json!([1]), "{ev}");
    a.seen.push(json!({"type": "event", "event": "stopped", "body": ev}));
    let (reason, line, _, thread) = a.stopped();
    assert_eq!((reason.as_str(), line), ("breakpoint", 5));
    let r = a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": 500}]}));
    assert_eq!(r["breakpoints"][0]["verified"], false);
    // The older `lines` form.
    let r = a.ok("setBreakpoints", json!({"source": {"path": path}, "lines": [3, 6]}));
    let lines: Vec<&Value> = r["breakpoints"].as_array().unwrap().iter().map(|b| &b["line"]).collect();
    assert_eq!(lines, [&json!(5), &json!(6)]);
    a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": []}));
    a.ok("continue", json!({"threadId": thread}));
    assert_eq!(a.output_until_exit("stdout"), ("3\n".to_string(), 0));
    a.disconnect();
}

#[test]
fn exception_filters() {
    let src = "try {\n    throw error(\"caught one\")\n} catch e {\n    print(\"caught\")\n}\nthrow error(\"uncaught one\")\n";
    let (mut a, _) = Adapter::launch("all", src, json!({}), json!([]), &["all"]);
    let ev = a.event("stopped");
    assert_eq!((ev["reason"].as_str(), ev["text"].as_str()), (Some("exception"), Some("caught one")), "{ev}");
    a.ok("continue", json!({"threadId": ev["threadId"]}));
    let ev = a.event("stopped");
    assert_eq!(ev["text"], "uncaught one");
    let info = a.ok("exceptionInfo", json!({"threadId": ev["threadId"]}));
    assert_eq!((info["exceptionId"].as_str(), info["breakMode"].as_str()), (Some("user"), Some("unhandled")), "{info}");
    a.ok("continue", json!({"threadId": ev["threadId"]}));
    let (stderr, code) = a.output_until_exit("stderr");
    assert_eq!(code, 1);
    assert!(stderr.contains("uncaught one"), "{stderr}");
    a.disconnect();

    // Only the uncaught one.
    let (mut a, _) = Adapter::launch("uncaught", src, json!({}), json!([]), &["uncaught"]);
    let ev = a.event("stopped");
    assert_eq!(ev["text"], "uncaught one");
    a.ok("continue", json!({"threadId": ev["threadId"]}));
    assert_eq!(a.output_until_exit("stdout"), ("caught\n".to_string(), 1));
    a.disconnect();

    // Fibers left waiting are cancelled at the end: no stop for that.
    let waiting = "let ch = chan()\ngo fn() { <-ch }()\nsleep(10)\nprint(\"end\")\n";
    let (mut a, _) = Adapter::launch("cancelled", waiting, json!({}), json!([]), &["all"]);
    assert_eq!(a.output_until_exit("stdout"), ("end\n".to_string(), 0));
    assert!(!a.seen.iter().any(|m| m["event"] == "stopped"));
    a.disconnect();

    // Neither: the program ends with its error, unstopped.
    let (mut a, _) = Adapter::launch("none", src, json!({}), json!([]), &[]);
    assert_eq!(a.output_until_exit("stdout").1, 1);
    assert!(!a.seen.iter().any(|m| m["event"] == "stopped"));
    a.disconnect();
}

#[test]
fn pause_stops_a_busy_program_and_disconnect_ends_it() {
    let src = "let n = 0\nwhile true {\n    n += 1\n}\n";
    let (mut a, _) = Adapter::launch("pause", src, json!({}), json!([]), &[]);
    // Running: threads come from the last look, the rest waits for a stop.
    assert!(a.ok("threads", json!({}))["threads"].as_array().unwrap().len() == 1);
    assert!(a.fails("stackTrace", json!({"threadId": 1})).contains("running"));
    a.ok("pause", json!({"threadId": 1}));
    let (reason, line, frame, _) = a.stopped();
    assert_eq!(reason, "pause");
    assert!((2..=3).contains(&line), "paused at line {line}");
    assert!(a.local(frame, "n").parse::<i64>().unwrap() > 0);
    a.disconnect();
}

#[test]
fn the_clock_stands_still_while_stopped() {
    // Stopped for 800 ms at line 2: `now()` and the 300 ms timer do not see it.
    let src = "let t0 = now()\nlet timer = after(300)\nlet waited = now() - t0\nprint(waited < 300)\n<-timer\nprint(now() - t0 < 700)\n";
    let (mut a, _) = Adapter::launch("clock", src, json!({}), json!([{"line": 3}]), &[]);
    let (_, _, _, thread) = a.stopped();
    std::thread::sleep(Duration::from_millis(800));
    a.ok("continue", json!({"threadId": thread}));
    assert_eq!(a.output_until_exit("stdout"), ("true\ntrue\n".to_string(), 0));
    a.disconnect();
}

#[test]
fn breakpoints_set_while_running_and_a_pause_of_a_waiting_program() {
    // A program that mostly waits: its slices end blocked, never preempted.
    let src = "for i in 0..400 {\n    sleep(5)\n    let j = i\n}\nprint(\"done\")\n";
    let (mut a, path) = Adapter::launch("running", src, json!({}), json!([]), &[]);
    std::thread::sleep(Duration::from_millis(100));
    a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": 3}]}));
    let (reason, line, frame, thread) = a.stopped();
    assert_eq!((reason.as_str(), line), ("breakpoint", 3));
    let i: i64 = a.local(frame, "i").parse().unwrap();
    assert!(i > 0, "the program ran before the breakpoint was set (i = {i})");
    a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": []}));
    a.ok("continue", json!({"threadId": thread}));
    a.ok("pause", json!({}));
    let (reason, line, _, _) = a.stopped();
    assert_eq!(reason, "pause");
    assert!((1..=3).contains(&line), "paused at line {line}");
    a.disconnect();
}

#[test]
fn a_coroutine_shows_its_frames_then_its_resumers() {
    let src = "fn gen(n) {\n    for i in 0..n {\n        yield i * 2\n    }\n}\nlet co = coroutine(gen)\nlet first = co.resume(2)\nprint(first)\n";
    let (mut a, path) = Adapter::launch("co", src, json!({}), json!([{"line": 3}]), &[]);
    let ev = a.event("stopped");
    let st = a.ok("stackTrace", json!({"threadId": ev["threadId"]}));
    let frames: Vec<(String, i64)> = st["stackFrames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_string(), f["line"].as_i64().unwrap()))
        .collect();
    assert_eq!(frames, [("gen".to_string(), 3), ("<main>".to_string(), 7)]);
    let resumer = st["stackFrames"][1]["id"].as_i64().unwrap();
    assert!(a.locals(resumer).iter().any(|(n, v)| n == "co" && v.starts_with("<coroutine")), "{:?}", a.locals(resumer));
    let top = st["stackFrames"][0]["id"].as_i64().unwrap();
    assert_eq!((a.local(top, "n"), a.local(top, "i")), ("2".to_string(), "0".to_string()));
    // A step over the yield ends in the resumer.
    a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": []}));
    let seq = a.request("next", json!({"threadId": ev["threadId"]}));
    a.response(seq);
    let (reason, line, _, _) = a.stopped();
    assert_eq!((reason.as_str(), line), ("step", 8));
    a.ok("continue", json!({"threadId": ev["threadId"]}));
    assert_eq!(a.output_until_exit("stdout"), ("0\n".to_string(), 0));
    a.disconnect();
}

#[test]
fn no_debug_runs_without_stopping() {
    // VS Code's Run Without Debugging: breakpoints and stopOnEntry are ignored.
    let src = "let a = 1\nprint(a + 1)\nthrow error(\"end\")\n";
    let (mut a, _) =
        Adapter::launch("nodebug", src, json!({"noDebug": true, "stopOnEntry": true}), json!([{"line": 2}]), &["all"]);
    assert_eq!(a.output_until_exit("stdout"), ("2\n".to_string(), 1));
    assert!(!a.seen.iter().any(|m| m["event"] == "stopped"));
    a.disconnect();
}

#[test]
fn a_program_whose_fibers_all_wait_takes_breakpoints_and_pauses() {
    // Set while the program sleeps: the breakpoint is in place when it wakes.
    let src = "sleep(1000)\nlet x = 1\nsleep(3000)\nprint(x)\n";
    let (mut a, path) = Adapter::launch("idle", src, json!({}), json!([]), &[]);
    std::thread::sleep(Duration::from_millis(150));
    a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": 2}]}));
    let (reason, line, _, thread) = a.stopped();
    assert_eq!((reason.as_str(), line), ("breakpoint", 2));
    a.ok("continue", json!({"threadId": thread}));
    // Paused in the long sleep: the main fiber, blocked there.
    std::thread::sleep(Duration::from_millis(150));
    a.ok("pause", json!({}));
    let (reason, line, _, thread) = a.stopped();
    assert_eq!((reason.as_str(), line, thread), ("pause", 3, 1));
    let threads = a.ok("threads", json!({}));
    assert!(threads["threads"][0]["name"].as_str().unwrap().contains("blocked"), "{threads}");
    a.disconnect();
}

#[test]
fn steps_go_through_std_code_to_the_users() {
    // `map` is written in csp in the prelude: stepping never stops inside it.
    let src = "fn double(x) {\n    return x * 2\n}\nlet ys = [1, 2].map(double)\nprint(ys)\n";
    let (mut a, path) = Adapter::launch("std", src, json!({}), json!([{"line": 4}]), &[]);
    let (_, _, _, thread) = a.stopped();
    a.ok("setBreakpoints", json!({"source": {"path": path}, "breakpoints": []}));
    let step = |a: &mut Adapter, how: &str| {
        let seq = a.request(how, json!({"threadId": thread}));
        a.response(seq);
        let ev = a.event("stopped");
        let st = a.ok("stackTrace", json!({"threadId": ev["threadId"]}));
        let top = &st["stackFrames"][0];
        (top["name"].as_str().unwrap().to_string(), top["line"].as_i64().unwrap())
    };
    assert_eq!(step(&mut a, "stepIn"), ("double".to_string(), 2));
    // Below double, the prelude's map: its text comes by reference.
    let st = a.ok("stackTrace", json!({"threadId": thread}));
    let map = &st["stackFrames"][1];
    assert_eq!(map["name"], "__list_map", "{st}");
    let text = a.ok("source", json!({"sourceReference": map["source"]["sourceReference"]}));
    assert!(text["content"].as_str().unwrap().contains("fn __list_map"), "{}", &text["content"].to_string()[..200]);
    let (name, line) = step(&mut a, "stepOut");
    assert_eq!(name, "<main>");
    assert!((4..=5).contains(&line), "line {line}");
    a.ok("continue", json!({"threadId": thread}));
    assert_eq!(a.output_until_exit("stdout"), ("[2, 4]\n".to_string(), 0));
    a.disconnect();
}

#[test]
fn thread_events_announce_fibers_and_their_ends() {
    let src = "let ch = chan()\ngo fn() {\n    sleep(20)\n    ch <- 1\n}()\nprint(<-ch)\n";
    let (mut a, _) = Adapter::launch("threads", src, json!({}), json!([]), &[]);
    assert_eq!(a.output_until_exit("stdout"), ("1\n".to_string(), 0));
    let events: Vec<String> = a
        .seen
        .iter()
        .filter(|m| m["event"] == "thread")
        .map(|m| format!("{} {}", m["body"]["reason"].as_str().unwrap(), m["body"]["threadId"]))
        .collect();
    assert_eq!(events, ["started 1", "started 2", "exited 2", "exited 1"]);
    a.disconnect();

    // While the program runs, threads lists the fibers the events announced.
    let src = "go fn() {\n    sleep(3000)\n}()\nsleep(3000)\n";
    let (mut a, _) = Adapter::launch("threads_running", src, json!({}), json!([]), &[]);
    a.event("thread");
    a.event("thread");
    let threads = a.ok("threads", json!({}));
    let names: Vec<&str> = threads["threads"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{threads}");
    assert!(names[0] == "main fiber" && names[1].starts_with("fiber 1 (go at "), "{threads}");
    a.disconnect();
}

#[test]
fn captured_variables_and_globals() {
    let src = "let limit = 10\nfn counter() {\n    let n = 0\n    return fn() {\n        n += 1\n        return n + limit\n    }\n}\nlet c = counter()\nc()\nprint(c())\n";
    let (mut a, _) = Adapter::launch("captured", src, json!({}), json!([{"line": 6, "hitCondition": "2"}]), &[]);
    let (_, line, frame, _) = a.stopped();
    assert_eq!(line, 6);
    let scopes = a.ok("scopes", json!({"frameId": frame}));
    let names: Vec<&str> = scopes["scopes"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Locals", "Captured", "Globals"]);
    let vars = |a: &mut Adapter, i: usize| {
        let r = scopes["scopes"][i]["variablesReference"].clone();
        let v = a.ok("variables", json!({"variablesReference": r}));
        let v = v["variables"].as_array().unwrap().iter();
        v.map(|v| format!("{}={}", v["name"].as_str().unwrap(), v["value"].as_str().unwrap())).collect::<Vec<_>>()
    };
    assert_eq!(vars(&mut a, 1), ["n=2"]);
    // `limit` is a global: a function reads it.
    assert!(vars(&mut a, 2).contains(&"limit=10".to_string()), "{:?}", vars(&mut a, 2));
    assert_eq!(a.evaluate(frame, "n * 100 + limit"), "210");
    a.disconnect();
}
