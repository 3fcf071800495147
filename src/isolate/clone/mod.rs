//! The structured clone (docs/isolates.md): values packed from one isolate's
//! heap into a `Packet`, which may cross threads, and unpacked into another
//! heap. Shared sub-structure and cycles are kept (every object is packed
//! once and referred to by its index), a copy never aliases its original, and
//! packing is all or nothing: the first part that cannot cross fails it.
//! Functions cross by identity (`units.rs`): the function's module and its
//! place there, with its captured variables copied.

mod flat;
mod resources;

use super::units::{self, FnId};
use crate::sched::shared::{self, SharedChan};
use crate::vm::host::Moving;
use crate::vm::map::{Layout, Map};
use crate::vm::object::{Closure, ErrorObj, Native};
use crate::vm::value::new_map;
use crate::vm::{ErrorKind, Handle, Key, Obj, Value, Vm};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// Values packed for another isolate: `Send`, and independent of any heap.
#[derive(Debug, Default)]
pub struct Packet {
    nodes: Vec<Node>,
    roots: Vec<Slot>,
    /// The keys of the packed maps, once per layout the maps share.
    layouts: Vec<Vec<PKey>>,
    /// The main script's globals the packed functions reach, by name.
    globals: Vec<(String, Slot)>,
    /// The modules and scripts the packed functions come from.
    pub(super) units: Vec<units::Unit>,
    /// The channels packed: shared, not copied.
    chans: Vec<Arc<SharedChan>>,
    /// The resources packed: moved, not copied (taken when unpacked).
    resources: Vec<Option<Box<dyn Moving>>>,
    /// Where each resource was in the isolate that packed it, and the id of
    /// the marker it left there (for `restore`).
    origins: Vec<(Handle, u64)>,
    /// The mailbox of the isolate that packed the resources: a packet
    /// dropped with resources still in it sends them back there.
    home: Option<Arc<shared::Mailbox>>,
    /// The REPL's imports (alias, module), when a function of a REPL entry
    /// crosses: an entry refers to what earlier ones imported.
    pub(super) repl_imports: Vec<(String, String)>,
    /// `--trace`: the flow from the fiber that sent it to the one that gets
    /// it (0: none).
    pub flow: u64,
}

impl std::fmt::Debug for dyn Moving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<resource>")
    }
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Node(u32),
}

#[derive(Debug)]
enum PKey {
    Nil,
    Bool(bool),
    Int(i64),
    Str(Box<str>),
    Bytes(Box<[u8]>),
}

#[derive(Debug)]
enum Node {
    Str(Box<str>),
    Bytes(Box<[u8]>),
    List(Vec<Slot>),
    /// A map: its keys (an index into the packet's layouts) and values.
    Map(u32, Vec<Slot>),
    Range(i64, i64),
    Cell(Slot),
    /// `origin`: where it was raised, as a function and an instruction.
    Error {
        kind: ErrorKind,
        message: Box<str>,
        trace: Vec<Box<str>>,
        others: Vec<Slot>,
        origin: Option<(FnId, u32)>,
    },
    Func {
        id: FnId,
        upvals: Vec<Slot>,
    },
    Native(&'static str),
    /// A channel: an index into the packet's channels.
    Chan(u32),
    /// A resource: an index into the packet's resources, and the values
    /// that move with it (`HostObject::trace`).
    Resource(u32, Vec<Slot>),
}

/// Why a value cannot cross: what it is and where it sits in what was sent.
#[derive(Debug)]
pub struct CannotCross {
    pub what: String,
    pub path: String,
}

impl CannotCross {
    /// "a mutex cannot cross to another isolate (at [1].lock)"
    pub fn message(&self) -> String {
        let at = if self.path.is_empty() { String::new() } else { format!(" (at {})", self.path) };
        format!("{} cannot cross to another isolate{at}", self.what)
    }
}

/// Where a node was first found: its parent node and the edge from it (for
/// the path in a `CannotCross`).
#[derive(Clone)]
enum Edge {
    Root(usize),
    Item(u32, usize),
    /// The field at this index of the parent map.
    Field(u32, usize),
    /// The captured variable at this index of the parent closure.
    Captured(u32, usize),
    Global(String),
    Other(u32),
}

struct Packer<'a> {
    vm: &'a Vm,
    seen: HashMap<u32, u32, foldhash::fast::RandomState>,
    nodes: Vec<Option<Node>>,
    /// Each node's object, for the path of an error.
    handles: Vec<Handle>,
    edges: Vec<Edge>,
    todo: Vec<(Handle, u32)>,
    globals: Vec<(String, Slot)>,
    globals_seen: std::collections::HashSet<u32>,
    units: units::UnitTable,
    layouts: Vec<Vec<PKey>>,
    /// A layout's index by its id and length (maps sharing one share it).
    layouts_seen: HashMap<(u64, usize), u32, foldhash::fast::RandomState>,
    /// The channels met, with their nodes: shared once the walk succeeds.
    chans: Vec<(Handle, u32)>,
    /// The resources met: moved once the walk succeeds.
    resources: Vec<Handle>,
}

/// Packs `values` (and what they reach) for another isolate. The channels
/// among them are shared from now on (sched/shared.rs); the resources move
/// (`crossing` says how, for the error of a use left behind: made only when
/// one does).
pub fn pack(vm: &mut Vm, values: &[Value], crossing: &dyn Fn() -> String) -> Result<Packet, CannotCross> {
    if let Some(packet) = flat::pack(vm, values) {
        return Ok(packet);
    }
    let texts = std::mem::take(&mut super::local(vm).texts);
    let mut p = Packer {
        vm,
        seen: HashMap::default(),
        nodes: Vec::new(),
        handles: Vec::new(),
        edges: Vec::new(),
        todo: Vec::new(),
        globals: Vec::new(),
        globals_seen: Default::default(),
        units: units::UnitTable::new(texts),
        layouts: Vec::new(),
        layouts_seen: HashMap::default(),
        chans: Vec::new(),
        resources: Vec::new(),
    };
    let roots = values.iter().enumerate().map(|(i, &v)| p.slot(v, Edge::Root(i))).collect();
    while let Some((h, at)) = p.todo.pop() {
        let node = p.node(h, at)?;
        p.nodes[at as usize] = Some(node);
    }
    let texts = std::mem::take(&mut p.units.texts);
    let nodes = p.nodes.into_iter().map(|n| n.expect("every node packed")).collect();
    let mut packet = Packet {
        nodes,
        roots,
        layouts: p.layouts,
        globals: p.globals,
        units: p.units.into_units(),
        chans: Vec::new(),
        resources: Vec::new(),
        origins: Vec::new(),
        home: None,
        repl_imports: Vec::new(),
        flow: 0,
    };
    if packet.units.iter().any(units::is_repl) {
        packet.repl_imports = vm.loader.repl_imports.iter().map(|(a, m)| (a.clone(), m.key.clone())).collect();
    }
    let (found, edges, handles, resources) = (p.chans, p.edges, p.handles, p.resources);
    super::local(vm).texts = texts;
    if !found.is_empty() {
        let restore = resources::restore_one;
        shared::set_carrier(shared::Carrier { pack: pack_one, unpack: unpack_one, restore, flow: flow_of });
    }
    for (h, at) in found {
        match shared::share(vm, h) {
            Ok(sc) => packet.chans.push(sc),
            Err(what) => return Err(CannotCross { what, path: path(vm, &edges, &handles, at) }),
        }
    }
    if !resources.is_empty() {
        let crossing = crossing();
        for h in resources {
            let (moving, id) = resources::move_out(vm, h, &crossing);
            packet.resources.push(Some(moving));
            packet.origins.push((h, id));
        }
        packet.home = shared::home(vm);
    }
    Ok(packet)
}

/// A value sent on a shared channel, packed.
fn pack_one(vm: &mut Vm, v: Value) -> Result<shared::Payload, shared::CannotPack> {
    match pack(vm, &[v], &|| "sent on a shared channel".into()) {
        Ok(p) => Ok(Box::new(p)),
        Err(c) => {
            let msg = CannotCross { what: c.what.clone(), path: c.path.replacen("argument 1", "the value", 1) };
            Err((c.what, msg.message()))
        }
    }
}

/// A shared channel's payload's flow (`--trace`).
fn flow_of(p: &mut shared::Payload) -> Option<&mut u64> {
    p.downcast_mut::<Packet>().map(|p| &mut p.flow)
}

/// A value received on a shared channel: the modules its functions come
/// from must have run here (a job's imports run before its function; a
/// receive runs nothing).
fn unpack_one(vm: &mut Vm, p: shared::Payload) -> Result<Value, String> {
    let mut packet = p.downcast::<Packet>().map_err(|_| "not a packed value".to_string())?;
    if let Some(unit) = units::not_run(vm, &packet) {
        return Err(format!(
            "a function from {unit} arrived before {unit} ran in this isolate (send it with isolate.run, or import its module there first)"
        ));
    }
    Ok(unpack(vm, &mut packet)?.values.first().copied().unwrap_or(Value::Nil))
}

impl Packer<'_> {
    fn slot(&mut self, v: Value, edge: Edge) -> Slot {
        match v {
            Value::Nil => Slot::Nil,
            Value::Bool(b) => Slot::Bool(b),
            Value::Int(i) => Slot::Int(i),
            Value::Float(x) => Slot::Float(x),
            Value::Obj(h) => {
                if let Some(&i) = self.seen.get(&h.0) {
                    return Slot::Node(i);
                }
                let i = self.nodes.len() as u32;
                self.seen.insert(h.0, i);
                self.nodes.push(None);
                self.handles.push(h);
                self.edges.push(edge);
                self.todo.push((h, i));
                Slot::Node(i)
            }
        }
    }

    fn node(&mut self, h: Handle, at: u32) -> Result<Node, CannotCross> {
        let vm = self.vm;
        Ok(match vm.heap.get(h) {
            Obj::Str(s) => Node::Str(s.s.as_str().into()),
            Obj::Bytes(b) => Node::Bytes(b.to_vec().into()),
            Obj::List(items) => {
                Node::List(items.iter().enumerate().map(|(i, &v)| self.slot(v, Edge::Item(at, i))).collect())
            }
            Obj::Map(m) => {
                let layout = *self.layouts_seen.entry((m.layout_id(), m.len())).or_insert_with(|| {
                    self.layouts.push(m.keys().map(pkey).collect());
                    self.layouts.len() as u32 - 1
                });
                let values = m.iter().enumerate().map(|(i, (_, &v))| self.slot(v, Edge::Field(at, i))).collect();
                Node::Map(layout, values)
            }
            Obj::Range(lo, hi) => Node::Range(*lo, *hi),
            Obj::Cell(v) => Node::Cell(self.slot(*v, Edge::Other(at))),
            Obj::Error(e) => self.error(e, at),
            Obj::Closure(c) => self.closure(c, at)?,
            Obj::Native(n) => Node::Native(n.name),
            Obj::Chan(_) => {
                self.chans.push((h, at));
                Node::Chan(self.chans.len() as u32 - 1)
            }
            Obj::Host(o) if o.movable().is_some() => {
                if let Some(Err(why)) = o.movable() {
                    let mut shown = String::new();
                    o.display(&mut shown);
                    return Err(CannotCross { what: format!("{shown} ({why})"), path: self.path(at) });
                }
                // Taken only once the whole walk succeeded (`move_out`).
                let mut held = Vec::new();
                o.trace(&mut |v| held.push(v));
                let held = held.into_iter().map(|v| self.slot(v, Edge::Other(at))).collect();
                self.resources.push(h);
                Node::Resource(self.resources.len() as u32 - 1, held)
            }
            other => {
                let what = match other {
                    Obj::Host(o) => format!("a {} (a resource of this isolate)", o.class().name),
                    o => format!("a {}", o.type_name()),
                };
                return Err(CannotCross { what, path: self.path(at) });
            }
        })
    }

    fn error(&mut self, e: &ErrorObj, at: u32) -> Node {
        let others = e.others.iter().map(|&v| self.slot(v, Edge::Other(at))).collect();
        let trace = e.trace.iter().map(|t| Box::from(&**t)).collect();
        let origin = e.origin.filter(|s| s.proto.file.name != super::worker::DRIVER_NAME);
        let origin = origin.and_then(|s| Some((self.units.id_of(self.vm, s.proto)?, s.pc)));
        Node::Error { kind: e.kind, message: Box::from(&*e.message), trace, others, origin }
    }

    fn closure(&mut self, c: &Closure, at: u32) -> Result<Node, CannotCross> {
        let Some(id) = self.units.id_of(self.vm, c.proto) else {
            let what = format!("the function {} (it is not in a module or script file)", shown_name(&c.proto.name));
            return Err(CannotCross { what, path: self.path(at) });
        };
        let upvals = c.upvals.iter().enumerate().map(|(i, &v)| self.slot(v, Edge::Captured(at, i))).collect();
        if id.main {
            self.main_globals(c.proto);
        }
        Ok(Node::Func { id, upvals })
    }

    /// The main script's globals that `proto` (and the functions nested in
    /// it) read or write: copied with it, as captured variables are.
    fn main_globals(&mut self, proto: crate::bytecode::ProtoRef) {
        let vm = self.vm;
        let mut stack = vec![proto];
        while let Some(p) = stack.pop() {
            stack.extend(p.protos.iter().copied());
            for op in &p.code {
                let idx = match *op {
                    crate::bytecode::Op::GetGlobal { idx, .. }
                    | crate::bytecode::Op::SetGlobal { idx, .. }
                    | crate::bytecode::Op::CallGlobal { idx, .. } => idx as u32,
                    _ => continue,
                };
                if idx < vm.loader.builtin_globals || !self.globals_seen.insert(idx) {
                    continue;
                }
                let Some((name, _)) = vm.global_names.get_index(idx as usize) else { continue };
                if name.contains("::") || name.starts_with("__") {
                    continue; // a module's own (module state stays per isolate), or the runtime's
                }
                let name = name.to_string();
                let slot = self.slot(vm.globals[idx as usize], Edge::Global(name.clone()));
                self.globals.push((name, slot));
            }
        }
    }

    fn path(&self, at: u32) -> String {
        path(self.vm, &self.edges, &self.handles, at)
    }
}

/// "[2].items[0]" from the root to node `at`.
fn path(vm: &Vm, edges: &[Edge], handles: &[Handle], at: u32) -> String {
    let mut parts = Vec::new();
    let mut i = at;
    loop {
        match &edges[i as usize] {
            Edge::Root(n) => {
                parts.push(format!("argument {}", n + 1));
                break;
            }
            Edge::Global(name) => {
                parts.push(format!("the global {name}"));
                break;
            }
            Edge::Item(p, n) => {
                parts.push(format!("[{n}]"));
                i = *p;
            }
            Edge::Field(p, k) => {
                let key = match vm.heap.get(handles[*p as usize]) {
                    Obj::Map(m) => m.key_at(*k).map_or_else(String::new, key_label),
                    _ => String::new(),
                };
                parts.push(format!(".{key}"));
                i = *p;
            }
            Edge::Captured(p, k) => {
                let name = match vm.heap.get(handles[*p as usize]) {
                    Obj::Closure(c) => c.proto.upval_names.get(*k).cloned().unwrap_or_default(),
                    _ => String::new(),
                };
                parts.push(format!(" captured {name}"));
                i = *p;
            }
            Edge::Other(p) => i = *p,
        }
    }
    parts.reverse();
    parts.concat()
}

fn shown_name(name: &str) -> String {
    if name.is_empty() {
        "<anonymous>".into()
    } else {
        name.to_string()
    }
}

fn key_label(k: &Key) -> String {
    match k {
        Key::Str(s) => s.as_str().to_string(),
        Key::Int(i) => format!("[{i}]"),
        Key::Bool(b) => format!("[{b}]"),
        Key::Nil => "[nil]".into(),
        Key::Bytes(_) => "[bytes]".into(),
    }
}

fn pkey(k: &Key) -> PKey {
    match k {
        Key::Nil => PKey::Nil,
        Key::Bool(b) => PKey::Bool(*b),
        Key::Int(i) => PKey::Int(*i),
        Key::Str(s) => PKey::Str(s.as_str().into()),
        Key::Bytes(b) => PKey::Bytes(b.to_vec().into()),
    }
}

/// What `unpack` made: the values, and the entries that run the imports of
/// the units their functions come from (to run before calling one).
pub struct Unpacked {
    pub values: Vec<Value>,
    pub inits: Vec<crate::bytecode::ProtoRef>,
}

/// Unpacks `packet` into `vm`'s heap: its values, with the main script's
/// globals it carries set. Functions are re-linked (`units::resolve`), which
/// may compile their module or script (not run it: see `Unpacked::inits`).
pub fn unpack(vm: &mut Vm, packet: &mut Packet) -> Result<Unpacked, String> {
    // The main script's globals first: a REPL entry compiles here only if
    // the names earlier entries defined are known.
    for (name, _) in &packet.globals {
        vm.global_slot(name);
    }
    let mut inits = units::repl_imports(vm, packet)?;
    let units = units::resolve(vm, packet)?;
    let layouts: Vec<Rc<Layout>> = packet.layouts.iter().map(|keys| Layout::of(keys.iter().map(key))).collect();
    // Objects first (empty where they refer to others), then their contents,
    // so cycles and shared parts come out as they went in.
    let mut handles = Vec::with_capacity(packet.nodes.len());
    for node in &packet.nodes {
        let obj = match node {
            Node::Str(s) => {
                let Value::Obj(h) = vm.heap.str(s) else { unreachable!("a string is an object") };
                handles.push(h);
                continue;
            }
            Node::Bytes(b) => Obj::Bytes(Rc::from(&**b)),
            Node::List(_) => Obj::List(crate::vm::List::from_slice(&[])),
            Node::Map(..) => Obj::Map(new_map(0)),
            Node::Range(lo, hi) => Obj::Range(*lo, *hi),
            Node::Cell(_) => Obj::Cell(Value::Nil),
            Node::Error { kind, message, trace, origin, .. } => Obj::Error(Box::new(ErrorObj {
                message: Rc::from(&**message),
                trace: trace.iter().map(|t| Rc::from(&**t)).collect(),
                others: Vec::new(),
                kind: *kind,
                origin: match origin {
                    Some((id, pc)) => Some(crate::bytecode::Site { proto: units::find(&units, id)?, pc: *pc }),
                    None => None,
                },
            })),
            Node::Func { id, upvals } => {
                let proto = units::find(&units, id)?;
                Obj::Closure(Closure { proto, upvals: vec![Value::Nil; upvals.len()].into_boxed_slice() })
            }
            Node::Chan(i) => {
                let Value::Obj(h) = shared::adopt(vm, packet.chans[*i as usize].clone()) else { unreachable!() };
                handles.push(h);
                continue;
            }
            Node::Resource(..) => Obj::Cell(Value::Nil),
            Node::Native(name) => match native(vm, name) {
                Some(h) => {
                    handles.push(h);
                    continue;
                }
                None => Obj::Native(Box::new(Native::new(name, missing_native(name)))),
            },
        };
        handles.push(vm.heap.alloc(obj));
    }
    let value = |s: &Slot| match *s {
        Slot::Nil => Value::Nil,
        Slot::Bool(b) => Value::Bool(b),
        Slot::Int(i) => Value::Int(i),
        Slot::Float(x) => Value::Float(x),
        Slot::Node(i) => Value::Obj(handles[i as usize]),
    };
    for (node, &h) in packet.nodes.iter().zip(&handles) {
        match node {
            Node::List(items) => {
                let items: Vec<Value> = items.iter().map(value).collect();
                vm.heap.note_growth(items.len() * 16);
                *vm.heap.get_mut(h) = Obj::List(crate::vm::List::from_slice(&items));
            }
            Node::Map(layout, values) => {
                let values: Vec<Value> = values.iter().map(value).collect();
                vm.heap.note_growth(values.len() * 16);
                *vm.heap.get_mut(h) = Obj::Map(Map::from_layout(&layouts[*layout as usize], &values));
            }
            Node::Cell(v) => *vm.heap.get_mut(h) = Obj::Cell(value(v)),
            Node::Error { others, .. } if !others.is_empty() => {
                let others = others.iter().map(value).collect();
                if let Obj::Error(e) = vm.heap.get_mut(h) {
                    e.others = others;
                }
            }
            Node::Func { upvals, .. } => {
                let ups: Vec<Value> = upvals.iter().map(value).collect();
                if let Obj::Closure(c) = vm.heap.get_mut(h) {
                    c.upvals = ups.into_boxed_slice();
                }
            }
            Node::Resource(i, held) => {
                let held: Vec<Value> = held.iter().map(value).collect();
                let moving = packet.resources[*i as usize].take().expect("a packet is unpacked once");
                resources::land_at(vm, h, moving, &held);
            }
            _ => {}
        }
    }
    for (name, slot) in &packet.globals {
        let g = vm.global_slot(name);
        vm.globals[g as usize] = value(slot);
    }
    let values = packet.roots.iter().map(value).collect();
    inits.extend(units.iter().filter_map(|u| u.1));
    Ok(Unpacked { values, inits })
}

fn key(k: &PKey) -> Key {
    match k {
        PKey::Nil => Key::Nil,
        PKey::Bool(b) => Key::Bool(*b),
        PKey::Int(i) => Key::Int(*i),
        PKey::Str(s) => Key::Str(crate::vm::str::Str::from(&**s)),
        PKey::Bytes(b) => Key::Bytes(Rc::from(&**b)),
    }
}

/// The builtin named `name` in `vm` (a global, possibly hidden).
fn native(vm: &Vm, name: &str) -> Option<Handle> {
    vm.globals.iter().find_map(|&v| match v {
        Value::Obj(h) if matches!(vm.heap.get(h), Obj::Native(n) if n.name == name) => Some(h),
        _ => None,
    })
}

/// A builtin the target lacks (an embedder's, registered in one runtime only)
/// fails when called, not when it crosses.
fn missing_native(_name: &'static str) -> crate::vm::NativeFn {
    fn missing(_: &mut Vm, _: &[Value]) -> crate::vm::Res<Value> {
        crate::vm::err(ErrorKind::Type, "this builtin does not exist in this isolate")
    }
    crate::vm::NativeFn::Value(missing)
}
