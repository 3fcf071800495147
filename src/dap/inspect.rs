//! What a stopped program shows: fibers as threads, their stacks, scopes
//! (locals, captured variables, globals) and values, lists and maps
//! expandable (and paged) through references valid until it resumes.

use crate::bytecode::Proto;
use crate::sched::debug as sched;
use crate::vm::{Fiber, Frame, Obj, Value, Vm};
use serde_json::{json, Value as Json};

/// Longest value text shown; an expandable value shows its items.
const SHOWN: usize = 200;

/// What a variables reference stands for.
#[derive(Clone, Copy)]
enum Ref {
    Locals(Place),
    Captured(Place),
    Globals,
    Value(Value),
}

/// A frame: its fiber, its context (0: the fiber's running one; 1 on: the
/// contexts of the coroutines' resumers, innermost first), its index there.
#[derive(Clone, Copy)]
pub struct Place {
    fiber: u32,
    ctx: usize,
    index: usize,
}

/// A fiber's stacks: the running context, then its coroutines' resumers'.
pub fn contexts<'a>(vm: &'a Vm, f: &'a Fiber) -> Vec<(&'a [Value], &'a [Frame])> {
    let mut all = vec![(&f.stack[..], &f.frames[..])];
    for &(h, _) in f.co_stack.iter().flat_map(|c| c.iter()).rev() {
        if let Obj::Coroutine(c) = vm.heap.get(h) {
            all.push((&c.ctx.stack[..], &c.ctx.frames[..]));
        }
    }
    all
}

/// The references handed out during one stop.
pub struct View {
    /// The fiber the program stopped in.
    pub stopped: u32,
    /// Its top frame's pc is on the instruction about to run (a trap), not past it.
    exact: bool,
    /// Frame ids: fiber and frame index.
    frames: Vec<Place>,
    refs: Vec<Ref>,
    /// Files without a path to open (std's), by `sourceReference` - 1.
    sources: Vec<std::rc::Rc<crate::source::SourceFile>>,
}

impl View {
    pub fn new(stopped: u32, exact: bool) -> View {
        View { stopped, exact, frames: Vec::new(), refs: Vec::new(), sources: Vec::new() }
    }

    /// Every fiber, as `threads` lists them (id: the fiber's slot + 1).
    pub fn threads(&self, vm: &Vm) -> Vec<Json> {
        let mut all = sched::fibers(vm);
        all.sort_by_key(|f| f.id);
        all.iter().map(|f| json!({"id": f.id + 1, "name": format!("{} [{}]", f.name, f.state)})).collect()
    }

    pub fn answer(&mut self, vm: &mut Vm, cur: Option<&Fiber>, req: &super::Request) -> Result<Json, String> {
        match req.command.as_str() {
            "threads" => Ok(json!({"threads": self.threads(vm)})),
            "stackTrace" => self.stack_trace(vm, cur, req),
            "scopes" => self.scopes(vm, cur, req),
            "variables" => self.variables(vm, cur, req),
            "evaluate" => self.evaluate(vm, cur, req),
            "source" => {
                let r = req.int("sourceReference").unwrap_or(0);
                let file = index(r).and_then(|i| self.sources.get(i)).ok_or_else(|| format!("no source {r}"))?;
                Ok(json!({"content": file.src}))
            }
            other => Err(format!("unknown command '{other}'")),
        }
    }

    /// The stack and frames of the frame at `at`.
    fn context<'a>(&self, vm: &'a Vm, cur: Option<&'a Fiber>, at: Place) -> Result<(&'a [Value], &'a [Frame]), String> {
        let f = self.fiber(vm, cur, at.fiber).ok_or("that fiber has finished")?;
        contexts(vm, f)
            .get(at.ctx)
            .copied()
            .filter(|(_, frames)| at.index < frames.len())
            .ok_or_else(|| "that frame has returned".into())
    }

    /// Fiber `id`: the stopped one is in hand (unless all were waiting), the
    /// others in their slots.
    fn fiber<'a>(&self, vm: &'a Vm, cur: Option<&'a Fiber>, id: u32) -> Option<&'a Fiber> {
        match cur {
            Some(f) if id == self.stopped => Some(f),
            _ => sched::fiber(vm, id),
        }
    }

    /// The pc a frame is at: the instruction it runs or waits in.
    pub fn pc(&self, at: Place, frames: &[Frame]) -> u32 {
        let frame = &frames[at.index];
        let top = at.ctx == 0 && at.index + 1 == frames.len();
        if top && at.fiber == self.stopped && self.exact {
            frame.pc
        } else {
            frame.pc.saturating_sub(1)
        }
    }

    fn stack_trace(&mut self, vm: &Vm, cur: Option<&Fiber>, req: &super::Request) -> Result<Json, String> {
        let thread = req.int("threadId").ok_or("stackTrace needs threadId")?;
        let id = index(thread).ok_or_else(|| format!("no thread {thread}"))? as u32;
        if id >= sched::NOT_STARTED {
            // A fiber not started yet has no frames.
            return Ok(json!({"stackFrames": [], "totalFrames": 0}));
        }
        let f = self.fiber(vm, cur, id).ok_or_else(|| format!("no thread {}", id + 1))?;
        let start = req.int("startFrame").unwrap_or(0).max(0) as usize;
        let levels = req.int("levels").filter(|&n| n > 0).map_or(usize::MAX, |n| n as usize);
        let stacks = contexts(vm, f);
        let all = stacks.iter().enumerate().flat_map(|(ctx, (_, frames))| {
            (0..frames.len()).rev().map(move |index| (Place { fiber: id, ctx, index }, *frames))
        });
        let total = stacks.iter().map(|(_, frames)| frames.len()).sum::<usize>();
        let mut shown = Vec::new();
        for (at, frames) in all.skip(start).take(levels) {
            let frame = &frames[at.index];
            let (line, column) = location(&frame.proto, self.pc(at, frames));
            self.frames.push(at);
            shown.push(json!({"id": self.frames.len(), "name": frame.proto.display_name(),
                "source": self.source(&frame.proto), "line": line, "column": column}));
        }
        Ok(json!({"stackFrames": shown, "totalFrames": total}))
    }

    /// The DAP `source` of a proto's file: its path, or for std's (which has
    /// none to open) a reference the `source` request answers with its text.
    fn source(&mut self, proto: &Proto) -> Json {
        let name = proto.file.name.rsplit('/').next().unwrap_or(&proto.file.name).to_string();
        if !proto.file.std {
            return json!({"name": name, "path": super::breakpoints::canonical(&proto.file.name)});
        }
        let known = self.sources.iter().position(|f| std::rc::Rc::ptr_eq(f, &proto.file));
        let r = known.unwrap_or_else(|| {
            self.sources.push(proto.file.clone());
            self.sources.len() - 1
        }) + 1;
        json!({"name": name, "sourceReference": r, "presentationHint": "deemphasize"})
    }

    /// The frame of a `frameId`.
    fn frame(&self, req: &super::Request) -> Result<Place, String> {
        let id = req.int("frameId").ok_or("needs frameId")?;
        index(id).and_then(|i| self.frames.get(i)).copied().ok_or_else(|| format!("no frame {id}"))
    }

    fn reference(&mut self, r: Ref) -> usize {
        self.refs.push(r);
        self.refs.len()
    }

    fn scopes(&mut self, vm: &Vm, cur: Option<&Fiber>, req: &super::Request) -> Result<Json, String> {
        let at = self.frame(req)?;
        let (_, frames) = self.context(vm, cur, at)?;
        let has_captured = !frames[at.index].proto.upval_names.is_empty();
        let mut scopes =
            vec![json!({"name": "Locals", "variablesReference": self.reference(Ref::Locals(at)), "expensive": false})];
        if has_captured {
            let r = self.reference(Ref::Captured(at));
            scopes.push(json!({"name": "Captured", "variablesReference": r, "expensive": false}));
        }
        let r = self.reference(Ref::Globals);
        scopes.push(json!({"name": "Globals", "variablesReference": r, "expensive": true}));
        Ok(json!({"scopes": scopes}))
    }

    fn variables(&mut self, vm: &Vm, cur: Option<&Fiber>, req: &super::Request) -> Result<Json, String> {
        let r = req.int("variablesReference").ok_or("variables needs variablesReference")?;
        let what = *index(r).and_then(|i| self.refs.get(i)).ok_or_else(|| format!("no variables reference {r}"))?;
        let start = req.int("start").unwrap_or(0).max(0) as usize;
        let count = req.int("count").filter(|&n| n > 0).map_or(usize::MAX, |n| n as usize);
        let named: Vec<(String, Value)> = match what {
            Ref::Locals(at) => {
                let (stack, frames) = self.context(vm, cur, at)?;
                locals(vm, stack, &frames[at.index], self.pc(at, frames))
            }
            Ref::Captured(at) => {
                let (_, frames) = self.context(vm, cur, at)?;
                captured(vm, &frames[at.index])
            }
            Ref::Globals => globals(vm),
            // VS Code asks for a list's items (`indexed`) apart from named ones.
            Ref::Value(v) => match (req.str("filter"), is_list(vm, v)) {
                (Some("named"), true) | (Some("indexed"), false) => Vec::new(),
                _ => children(vm, v, start, count),
            },
        };
        let vars: Vec<Json> = named.into_iter().map(|(name, v)| self.variable(vm, name, v)).collect();
        Ok(json!({"variables": vars}))
    }

    /// A variable as the client shows it: expandable when a list or map.
    fn variable(&mut self, vm: &Vm, name: String, v: Value) -> Json {
        let mut var = json!({"name": name, "value": shown(vm, v), "type": type_name(vm, v), "variablesReference": 0});
        if let Value::Obj(h) = v {
            match vm.heap.get(h) {
                Obj::List(l) => {
                    var["indexedVariables"] = json!(l.len());
                    var["variablesReference"] = json!(self.reference(Ref::Value(v)));
                }
                Obj::Map(m) => {
                    var["namedVariables"] = json!(m.len());
                    var["variablesReference"] = json!(self.reference(Ref::Value(v)));
                }
                _ => {}
            }
        }
        var
    }

    fn evaluate(&mut self, vm: &mut Vm, cur: Option<&Fiber>, req: &super::Request) -> Result<Json, String> {
        let expr = req.str("expression").ok_or("evaluate needs expression")?;
        let names = match req.int("frameId") {
            Some(_) => {
                let at = self.frame(req)?;
                let (stack, frames) = self.context(vm, cur, at)?;
                frame_names(vm, stack, &frames[at.index], self.pc(at, frames))
            }
            None => Vec::new(),
        };
        let v = super::eval::evaluate(vm, names, expr)?;
        let var = self.variable(vm, String::new(), v);
        Ok(json!({"result": var["value"], "type": var["type"], "variablesReference": var["variablesReference"],
            "indexedVariables": var.get("indexedVariables"), "namedVariables": var.get("namedVariables")}))
    }
}

/// The index of a 1-based id the client sent back (threads, frames,
/// references); None for one that was never handed out (0, negative, huge).
pub fn index(id: i64) -> Option<usize> {
    (1..=u32::MAX as i64).contains(&id).then(|| (id - 1) as usize)
}

/// 1-based line and column of instruction `pc`.
pub fn location(proto: &Proto, pc: u32) -> (usize, usize) {
    proto.file.line_col(proto.span_at(pc).start)
}

/// A register's value, a cell's content if it holds one.
fn unboxed(vm: &Vm, v: Value) -> Value {
    match v {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Cell(inner) => *inner,
            _ => v,
        },
        _ => v,
    }
}

/// The locals of `frame` (on `stack`) bound at `pc`, the innermost of each name.
pub fn locals(vm: &Vm, stack: &[Value], frame: &Frame, pc: u32) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for l in frame.proto.locals.iter().filter(|l| l.from <= pc && pc < l.to && is_name(&l.name)) {
        let v = stack.get(frame.base as usize + l.reg as usize).copied().unwrap_or(Value::Nil);
        let v = if l.cell { unboxed(vm, v) } else { v };
        match out.iter_mut().find(|(n, _)| *n == l.name) {
            Some(slot) => slot.1 = v,
            None => out.push((l.name.clone(), v)),
        }
    }
    out
}

/// A frame's captured variables.
fn captured(vm: &Vm, frame: &Frame) -> Vec<(String, Value)> {
    let Some(Obj::Closure(c)) = frame.closure.map(|h| vm.heap.get(h)) else { return Vec::new() };
    let names = frame.proto.upval_names.iter();
    names.zip(c.upvals.iter()).filter(|(n, _)| is_name(n)).map(|(n, &v)| (n.clone(), unboxed(vm, v))).collect()
}

/// The program's globals (builtins and hidden names left out).
fn globals(vm: &Vm) -> Vec<(String, Value)> {
    let first = vm.loader.builtin_globals;
    let user = vm.global_names.iter().filter(|(n, &g)| g >= first && is_name(n));
    user.map(|(n, &g)| (n.to_string(), vm.globals[g as usize])).collect()
}

/// Every name a frame sees (globals are found by the compiler): captured
/// variables, then locals (a local hides a captured name).
pub fn frame_names(vm: &Vm, stack: &[Value], frame: &Frame, pc: u32) -> Vec<(String, Value)> {
    let mut names = captured(vm, frame);
    for (n, v) in locals(vm, stack, frame, pc) {
        names.retain(|(m, _)| *m != n);
        names.push((n, v));
    }
    names
}

/// A name the user wrote (not a compiler temporary nor a hidden `__` name).
fn is_name(n: &str) -> bool {
    !n.starts_with("__") && n.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Items `start..start+count` of a list, or a map's entries.
fn children(vm: &Vm, v: Value, start: usize, count: usize) -> Vec<(String, Value)> {
    let Value::Obj(h) = v else { return Vec::new() };
    match vm.heap.get(h) {
        Obj::List(l) => {
            l.iter().enumerate().skip(start).take(count).map(|(i, &item)| (format!("[{i}]"), item)).collect()
        }
        Obj::Map(m) => m.iter().skip(start).take(count).map(|(k, &v)| (key_name(k), v)).collect(),
        _ => Vec::new(),
    }
}

/// A map key as a variable's name: strings bare, other keys as written.
fn key_name(k: &crate::vm::Key) -> String {
    use crate::vm::Key;
    match k {
        Key::Str(s) => s.to_string(),
        Key::Nil => "nil".into(),
        Key::Bool(b) => b.to_string(),
        Key::Int(i) => i.to_string(),
        Key::Bytes(b) => format!("bytes({})", b.len()),
    }
}

fn is_list(vm: &Vm, v: Value) -> bool {
    matches!(v, Value::Obj(h) if matches!(vm.heap.get(h), Obj::List(_)))
}

/// A value's text, cut short.
pub fn shown(vm: &Vm, v: Value) -> String {
    let mut s = crate::display::repr(&vm.heap, v);
    if s.len() > SHOWN {
        let mut end = SHOWN;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str("...");
    }
    s
}

fn type_name(vm: &Vm, v: Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Obj(h) => vm.heap.get(h).type_name(),
    }
}

/// An error value's message (another thrown value's text).
pub fn error_message(vm: &Vm, v: Value) -> String {
    match v {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Error(e) => e.message.to_string(),
            _ => shown(vm, v),
        },
        _ => shown(vm, v),
    }
}

/// An error value's kind (`user`, `index`, ...); `throw` of another value: `value`.
pub fn error_kind(vm: &Vm, v: Value) -> &'static str {
    match v {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Error(e) => e.kind.name(),
            _ => "value",
        },
        _ => "value",
    }
}
