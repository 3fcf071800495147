//! The command-line tool of the examples (examples/linkcheck.csp) run as a
//! user runs it, with arguments: std/flag's help, version and errors (exit
//! codes 0 and 2), its options, and std/log's lines on stderr.

use std::process::Command;

const CSP: &str = env!("CARGO_BIN_EXE_csp");

fn linkcheck(args: &[&str]) -> (i32, String, String) {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(CSP)
        .arg("run")
        .arg(format!("{root}/examples/linkcheck.csp"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn help_and_version_exit_0_on_stdout() {
    let (code, out, err) = linkcheck(&["-v", "--help", "--bogus"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("Usage: linkcheck [options] [URLS...]\n\nFind broken links"), "{out}");
    assert!(
        out.contains("\n  -d, --depth N            how many links deep to crawl from each URL (default: 5)\n"),
        "{out}"
    );
    assert!(out.contains("\n      --[no-]external      check links to other hosts"), "{out}");
    assert!(out.ends_with("      --version            show the version and exit\n"), "{out}");
    assert_eq!(linkcheck(&["--version"]), (0, "linkcheck 1.0.0\n".to_string(), String::new()));
}

#[test]
fn bad_command_lines_exit_2_with_the_error_and_usage_on_stderr() {
    for (args, msg) in [
        (&["--depth", "deep"][..], "linkcheck: invalid value \"deep\" for --depth: not an integer\n\nUsage: linkcheck"),
        (&["--dpeth=3"][..], "linkcheck: unknown flag --dpeth (did you mean --depth?)\n\nUsage: linkcheck"),
        (&["-w"][..], "linkcheck: flag -w needs a value\n"),
        (&["--log-format", "xml"][..], "linkcheck: invalid value \"xml\" for --log-format: choose from text, json\n"),
        (&["-w", "0"][..], "linkcheck: --workers must be at least 1\n"),
        (&["-x", "("][..], "linkcheck: bad --exclude pattern: "),
        (
            &["not a url"][..],
            "linkcheck: bad URL not a url: url.parse(): bad URL \"not a url\": relative URL without a base\n",
        ),
    ] {
        let (code, out, err) = linkcheck(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.starts_with(msg), "{args:?}: {err}");
        assert!(err.contains("\nOptions:\n"), "{args:?}: {err}");
    }
}

#[test]
fn options_change_the_crawl_and_the_log() {
    // Depth 1: the start page and what it links to; JSON on stdout; -v logs
    // each fetch, as JSON lines with --log-format json.
    let (code, out, err) = linkcheck(&["--depth", "1", "--json", "-v", "--log-format", "json"]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["checked"], 4, "{out}");
    assert_eq!(report["broken"], serde_json::json!([]));
    let lines: Vec<serde_json::Value> = err.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let fetched = lines.iter().filter(|l| l["level"] == "DEBUG" && l["msg"] == "fetched").count();
    assert_eq!(fetched, 4, "{err}");
    assert!(lines.iter().all(|l| l["time"].as_str().is_some_and(|t| t.len() == 29)), "{err}");
    // Without -v there is no DEBUG line; --no-external leaves the other host out.
    let (code, out, err) = linkcheck(&["--no-external", "-x", "gone$"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "checked 9 links on 8 pages: 1 broken\n  /missing: HTTP 404\n      linked from /docs/\n");
    assert!(!err.contains("DEBUG") && err.contains(" INFO  checking start=http://127.0.0.1:"), "{err}");
}
