//! Line breakpoints: a line resolved to the first instruction of the next
//! line with code in each function of the file, a trap put there; a hit
//! stops, or logs, as its condition, hit count and log message say.

use crate::bytecode::{ProtoRef, Site};
use crate::vm::debug::{clear_trap, set_trap};
use crate::vm::{Fiber, Vm};
use serde_json::{json, Value as Json};
use std::collections::HashMap;

/// How many lines past the one asked a breakpoint may move to find code.
const SEARCH: usize = 20;

struct Breakpoint {
    /// The id the client was given (the stopped event's `hitBreakpointIds`).
    id: i64,
    sites: Vec<Site>,
    condition: Option<String>,
    hit_condition: Option<HitCondition>,
    log: Option<String>,
    hits: u64,
}

/// When a breakpoint's hits stop: `N` or `>= N` from the Nth on, `> N`,
/// `== N` only the Nth, `% N` every Nth.
#[derive(Clone, Copy)]
enum HitCondition {
    AtLeast(u64),
    Above(u64),
    Exactly(u64),
    Every(u64),
}

impl HitCondition {
    fn parse(s: &str) -> Result<HitCondition, String> {
        let s = s.trim();
        let (make, n): (fn(u64) -> HitCondition, &str) = if let Some(n) = s.strip_prefix(">=") {
            (HitCondition::AtLeast, n)
        } else if let Some(n) = s.strip_prefix("==") {
            (HitCondition::Exactly, n)
        } else if let Some(n) = s.strip_prefix('>') {
            (HitCondition::Above, n)
        } else if let Some(n) = s.strip_prefix('%') {
            (HitCondition::Every, n)
        } else {
            (HitCondition::AtLeast, s)
        };
        match n.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(make(n)),
            _ => Err(format!("hit condition {s:?}: write N, >= N, > N, == N or % N with N a positive count")),
        }
    }

    fn holds(self, hits: u64) -> bool {
        match self {
            HitCondition::AtLeast(n) => hits >= n,
            HitCondition::Above(n) => hits > n,
            HitCondition::Exactly(n) => hits == n,
            HitCondition::Every(n) => hits.is_multiple_of(n),
        }
    }
}

/// What a trap at a breakpoint does.
pub enum Hit {
    /// Stop, at the breakpoint with this id.
    Stop(i64),
    /// A log point's message, its `{expressions}` evaluated.
    Log(String),
    /// Its condition or hit count says no (or no breakpoint is there).
    Pass,
}

/// The breakpoints of each source file.
#[derive(Default)]
pub struct Breakpoints {
    by_file: HashMap<String, Vec<Breakpoint>>,
    next_id: i64,
}

/// A path as breakpoints compare them: canonical when it exists.
pub fn canonical(path: &str) -> String {
    std::fs::canonicalize(path).map_or_else(|_| path.to_string(), |p| p.to_string_lossy().into_owned())
}

/// 1-based line of each instruction of a proto.
fn lines(proto: &ProtoRef) -> impl Iterator<Item = (u32, usize)> + '_ {
    (0..proto.code.len() as u32).map(move |pc| (pc, proto.file.line_col(proto.span_at(pc).start).0))
}

impl Breakpoints {
    /// `setBreakpoints`: the file's breakpoints replaced; the response body.
    pub fn set(&mut self, vm: &mut Vm, req: &super::Request) -> Result<Json, String> {
        let path = req.args.pointer("/source/path").and_then(Json::as_str).ok_or("setBreakpoints needs source.path")?;
        let path = canonical(path);
        for old in self.by_file.remove(&path).unwrap_or_default() {
            for site in old.sites {
                if !self.has_site(site) {
                    clear_trap(vm, site);
                }
            }
        }
        let protos: Vec<ProtoRef> = vm
            .protos
            .iter()
            // SAFETY: every proto is owned by `vm.protos` (ProtoRef's invariant).
            .map(|p| unsafe { ProtoRef::new(p) })
            .filter(|p| !p.file.std && canonical(&p.file.name) == path)
            .collect();
        // `lines` is the protocol's older form of `breakpoints`.
        let wanted = match (req.args.get("breakpoints"), req.args.get("lines")) {
            (Some(Json::Array(b)), _) => b.clone(),
            (_, Some(Json::Array(lines))) => lines.iter().map(|l| json!({"line": l})).collect(),
            _ => Vec::new(),
        };
        let mut answers = Vec::new();
        let mut placed = Vec::new();
        for b in &wanted {
            let line = b.get("line").and_then(Json::as_u64).ok_or("a breakpoint needs a line")? as usize;
            self.next_id += 1;
            let id = self.next_id;
            let hit_condition = match b.get("hitCondition").and_then(Json::as_str).filter(|s| !s.trim().is_empty()) {
                Some(s) => match HitCondition::parse(s) {
                    Ok(h) => Some(h),
                    Err(why) => {
                        answers.push(json!({"id": id, "verified": false, "line": line, "message": why}));
                        continue;
                    }
                },
                None => None,
            };
            let Some((at, sites)) = resolve(&protos, line) else {
                answers.push(
                    json!({"id": id, "verified": false, "line": line, "message": "no code on or after this line"}),
                );
                continue;
            };
            for &site in &sites {
                set_trap(vm, site);
            }
            let text = |k: &str| b.get(k).and_then(Json::as_str).filter(|s| !s.trim().is_empty()).map(String::from);
            let (condition, log) = (text("condition"), text("logMessage"));
            placed.push(Breakpoint { id, sites, condition, hit_condition, log, hits: 0 });
            answers.push(json!({"id": id, "verified": true, "line": at, "source": {"path": path}}));
        }
        self.by_file.insert(path, placed);
        Ok(json!({"breakpoints": answers}))
    }

    pub fn has_site(&self, site: Site) -> bool {
        self.by_file.values().flatten().any(|b| b.sites.iter().any(|s| same(*s, site)))
    }

    /// A trap at `site` in the running `fiber`: whether a breakpoint stops.
    pub fn hit(&mut self, vm: &mut Vm, fiber: &Fiber, site: Site) -> Hit {
        let Some(b) = self.by_file.values_mut().flatten().find(|b| b.sites.iter().any(|s| same(*s, site))) else {
            return Hit::Pass;
        };
        let names = || {
            let top = fiber.frames.last().expect("a trapped frame");
            super::inspect::frame_names(vm, &fiber.stack, top, site.pc)
        };
        if let Some(cond) = &b.condition {
            let names = names();
            // A condition that fails to evaluate stops, so the user sees why.
            match super::eval::evaluate(vm, names, cond) {
                Ok(v) if !v.truthy() => return Hit::Pass,
                _ => {}
            }
        }
        b.hits += 1;
        if b.hit_condition.is_some_and(|h| !h.holds(b.hits)) {
            return Hit::Pass;
        }
        match b.log.clone() {
            Some(msg) => Hit::Log(interpolate(vm, fiber, site, &msg)),
            None => Hit::Stop(b.id),
        }
    }
}

fn same(a: Site, b: Site) -> bool {
    a.pc == b.pc && std::ptr::eq(a.proto.as_ptr(), b.proto.as_ptr())
}

/// The first line at or after `line` with code, and the first instruction
/// on it in each function that has one.
fn resolve(protos: &[ProtoRef], line: usize) -> Option<(usize, Vec<Site>)> {
    let at = (line..line + SEARCH).find(|&l| protos.iter().any(|p| lines(p).any(|(_, pl)| pl == l)))?;
    let sites = protos
        .iter()
        .filter_map(|p| lines(p).find(|&(_, pl)| pl == at).map(|(pc, _)| Site { proto: *p, pc }))
        .collect();
    Some((at, sites))
}

/// A log message with each `{expression}` replaced by its value.
fn interpolate(vm: &mut Vm, fiber: &Fiber, site: Site, msg: &str) -> String {
    let mut out = String::new();
    let mut rest = msg;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else { break };
        let expr = &rest[open + 1..open + close];
        let top = fiber.frames.last().expect("a trapped frame");
        let names = super::inspect::frame_names(vm, &fiber.stack, top, site.pc);
        match super::eval::evaluate(vm, names, expr) {
            Ok(v) => out.push_str(&crate::display::display(&vm.heap, v)),
            Err(why) => out.push_str(&format!("<{why}>")),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}
