//! `csp test --json` (docs/testing.md): a file's captured driver output as one
//! JSON object a line, as `go test -json` prints them: `run`, `output`,
//! `pass`, `fail`, `bench`, then the file's own `pass` or `fail`.

use super::driver::MARK;
use serde_json::{json, Map, Value};

/// One event line: `Action` and `File` always, `Test` when about a test.
pub fn event(action: &str, file: &str, test: Option<&str>, extra: Value) -> String {
    let mut m = Map::new();
    m.insert("Action".into(), json!(action));
    m.insert("File".into(), json!(file));
    if let Some(t) = test {
        m.insert("Test".into(), json!(t));
    }
    if let Value::Object(rest) = extra {
        m.extend(rest);
    }
    Value::Object(m).to_string()
}

/// The events of one file's run from its driver's output `text`; lines not
/// marked are output of the test running then (or of the file).
pub fn from_output(file: &str, text: &str) -> Vec<String> {
    let mut events = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let Some(marked) = line.strip_prefix(MARK) else {
            events.push(event("output", file, current.as_deref(), json!({ "Output": format!("{line}\n") })));
            continue;
        };
        let mut parts = marked.splitn(3, ' ');
        let (action, ms, rest) = (parts.next().unwrap_or(""), parts.next().unwrap_or("0"), parts.next().unwrap_or(""));
        let (label, shown) = rest.split_once('\t').unwrap_or((rest, ""));
        let test = label.rsplit_once("::").map_or(label, |(_, t)| t).to_string();
        let elapsed = (ms.parse::<f64>().unwrap_or(0.0) * 1000.0).round() / 1e6;
        match action {
            "run" => {
                events.push(event("run", file, Some(&test), json!({})));
                current = Some(test);
            }
            "bench" => {
                let extra = json!({ "Elapsed": elapsed, "Output": format!("{shown}\n") });
                events.push(event("bench", file, Some(&test), extra));
                current = None;
            }
            _ => {
                events.push(event(action, file, Some(&test), json!({ "Elapsed": elapsed })));
                current = None;
            }
        }
    }
    events
}
