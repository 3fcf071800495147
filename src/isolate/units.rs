//! Functions cross by identity: a function is named by the unit it was
//! compiled from (the prelude, a module, or a script file with its source)
//! and its place among the functions nested there. The receiving isolate
//! compiles the unit once (not running it), finds the same function, and
//! before the function first runs there, the unit's imports run (`inits`):
//! a module's top level runs once per isolate, a script's never.

use super::clone::Packet;
use crate::bytecode::ProtoRef;
use crate::source::SourceFile;
use crate::vm::Vm;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::sync::Arc;

/// Where a function was compiled.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Unit {
    Prelude,
    /// A module by its key (`std/NAME` or a file's canonical path).
    Module(String),
    /// The main script (or another file run as an entry): its name and text.
    Script {
        name: String,
        src: Text,
    },
}

/// A script's text as it crosses: made once per isolate that sends it and
/// shared by its crossings, hashed once, so a crossing does not copy, hash
/// and compare the whole script each time.
#[derive(Debug, Clone)]
pub struct Text {
    pub src: Arc<str>,
    digest: u64,
}

impl Text {
    fn new(src: &str) -> Text {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        src.hash(&mut h);
        Text { src: src.into(), digest: h.finish() }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.digest == other.digest && (Arc::ptr_eq(&self.src, &other.src) || self.src == other.src)
    }
}

impl Eq for Text {}

impl Hash for Text {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.digest.hash(h);
    }
}

/// The texts of the scripts an isolate has sent, by their file (kept, so
/// that its address is not another's later).
pub type Texts = HashMap<*const SourceFile, (Rc<SourceFile>, Text)>;

/// A function's identity: its unit (an index into the packet's units) and
/// the path of nested-function indices from the unit's top level.
#[derive(Debug, Clone)]
pub struct FnId {
    pub unit: u32,
    pub path: Vec<u32>,
    /// From a script: its globals cross with it.
    pub main: bool,
}

/// The units a packing names, each once.
#[derive(Default)]
pub struct UnitTable {
    units: Vec<Unit>,
    /// A unit's index by its top-level proto.
    by_root: HashMap<*const crate::bytecode::Proto, u32>,
    /// The isolate's `Local::texts`, while it packs.
    pub texts: Texts,
}

impl UnitTable {
    pub fn new(texts: Texts) -> UnitTable {
        UnitTable { texts, ..Default::default() }
    }

    /// The identity of the function compiled as `proto`, or None when it
    /// has no unit another isolate could compile (a debugger's expression).
    pub fn id_of(&mut self, vm: &Vm, proto: ProtoRef) -> Option<FnId> {
        let file = &proto.file;
        let (unit, root) = if file.name == crate::source::PRELUDE_NAME {
            (Unit::Prelude, top_level(vm, file)?)
        } else if let Some(m) = vm.loader.modules.values().find(|m| Rc::ptr_eq(&m.proto.file, file)) {
            (Unit::Module(m.key.clone()), m.proto)
        } else {
            let root = top_level(vm, file)?;
            let text = self.texts.entry(Rc::as_ptr(file)).or_insert_with(|| (file.clone(), Text::new(&file.src)));
            let src = text.1.clone();
            (Unit::Script { name: file.name.clone(), src }, root)
        };
        let path = path_to(root, proto)?;
        let main = matches!(unit, Unit::Script { .. });
        let index = match self.by_root.get(&root.as_ptr()) {
            Some(&i) => i,
            None => {
                let i = self.units.len() as u32;
                self.units.push(unit);
                self.by_root.insert(root.as_ptr(), i);
                i
            }
        };
        Some(FnId { unit: index, path, main })
    }

    pub fn into_units(self) -> Vec<Unit> {
        self.units
    }
}

/// The top level compiled from `file` (the latest, should it be compiled twice).
fn top_level(vm: &Vm, file: &Rc<SourceFile>) -> Option<ProtoRef> {
    let p = vm.protos.iter().rev().find(|p| p.name == "<main>" && Rc::ptr_eq(&p.file, file))?;
    // SAFETY: `vm.protos` owns every proto for the VM's life.
    Some(unsafe { ProtoRef::new(p) })
}

/// The nested-function indices from `root` down to `target`.
fn path_to(root: ProtoRef, target: ProtoRef) -> Option<Vec<u32>> {
    let mut stack = vec![(root, Vec::new())];
    while let Some((p, path)) = stack.pop() {
        if p.as_ptr() == target.as_ptr() {
            return Some(path);
        }
        for (i, &child) in p.protos.iter().enumerate() {
            let mut next = path.clone();
            next.push(i as u32);
            stack.push((child, next));
        }
    }
    None
}

/// What this isolate compiled for crossing functions: each unit's top level
/// and the entry that runs its imports (None: it has none).
#[derive(Default)]
pub struct Compiled {
    units: HashMap<Unit, (ProtoRef, Option<ProtoRef>)>,
    /// The imports' entries a job has run here.
    ran: std::collections::HashSet<*const crate::bytecode::Proto>,
}

/// A job runs these imports' entries before its function: marked as run.
pub fn mark_ran(vm: &mut Vm, inits: &[ProtoRef]) {
    let ran = &mut super::local(vm).compiled.ran;
    ran.extend(inits.iter().map(|p| p.as_ptr()));
}

/// The first unit of `packet` whose imports have not run here (a module
/// never imported, a script whose functions never ran in a job), by name.
pub fn not_run(vm: &mut Vm, packet: &Packet) -> Option<String> {
    for unit in &packet.units {
        let ready = match unit {
            Unit::Prelude => true,
            Unit::Module(key) => module_ran(vm, key),
            Unit::Script { name, .. } => match compiled(vm, unit) {
                Ok((_, None)) => true,
                Ok((_, Some(init))) => super::local(vm).compiled.ran.contains(&init.as_ptr()),
                Err(_) => return Some(name.clone()),
            },
        };
        if !ready {
            return Some(match unit {
                Unit::Script { name, .. } => name.clone(),
                Unit::Module(key) => key.clone(),
                Unit::Prelude => unreachable!("the prelude is always ready"),
            });
        }
    }
    None
}

/// Has module `key`'s top level run here (its exports map is set)?
fn module_ran(vm: &Vm, key: &str) -> bool {
    let Some(m) = vm.loader.modules.get(key) else { return false };
    vm.global_names.get(m.prefix.as_str()).is_some_and(|&g| !matches!(vm.globals[g as usize], crate::vm::Value::Nil))
}

/// The name the REPL's entries are compiled under.
const REPL: &str = "<repl>";

/// Is it a REPL entry (which may use what earlier entries imported)?
pub fn is_repl(unit: &Unit) -> bool {
    matches!(unit, Unit::Script { name, .. } if name == REPL)
}

/// The REPL's imports a packet carries that this isolate lacks, each as an
/// entry to run before the packet's functions (so a REPL entry compiles here,
/// and its modules' top levels run).
pub fn repl_imports(vm: &mut Vm, packet: &Packet) -> Result<Vec<ProtoRef>, String> {
    let mut inits = Vec::new();
    for (alias, key) in &packet.repl_imports {
        if vm.loader.repl_imports.get(alias).is_some_and(|m| &m.key == key) {
            continue;
        }
        inits.push(entry(vm, "<isolate>", &format!("import {key:?} as {alias}"))?);
    }
    Ok(inits)
}

/// Each unit of `packet` compiled here: its top level and its imports' entry.
pub fn resolve(vm: &mut Vm, packet: &Packet) -> Result<Vec<(ProtoRef, Option<ProtoRef>)>, String> {
    packet.units.iter().map(|u| compiled(vm, u)).collect()
}

/// Finds the function `id` names among the units `resolve` gave.
pub fn find(units: &[(ProtoRef, Option<ProtoRef>)], id: &FnId) -> Result<ProtoRef, String> {
    let mut p = units[id.unit as usize].0;
    for &i in &id.path {
        p = *p.protos.get(i as usize).ok_or("a function crossed from a different version of its module")?;
    }
    Ok(p)
}

fn compiled(vm: &mut Vm, unit: &Unit) -> Result<(ProtoRef, Option<ProtoRef>), String> {
    if let Some(&c) = super::local(vm).compiled.units.get(unit) {
        return Ok(c);
    }
    let c = match unit {
        Unit::Prelude => {
            let file = vm.protos.iter().find(|p| p.file.name == crate::source::PRELUDE_NAME).map(|p| p.file.clone());
            let root = file.and_then(|f| top_level(vm, &f)).ok_or("this isolate has no prelude")?;
            (root, None)
        }
        Unit::Module(key) => {
            let init = entry(vm, "<isolate>", &format!("import {key:?} as __isolate_unit"))?;
            let m = vm.loader.modules.get(key).ok_or_else(|| format!("the module {key} did not load"))?;
            (m.proto, Some(init))
        }
        Unit::Script { name, src } => {
            // The script this isolate runs (the main isolate's): its own functions, its imports run.
            let src = &*src.src;
            if let Some(root) = running(vm, name, src) {
                super::local(vm).compiled.units.insert(unit.clone(), (root, None));
                return Ok((root, None));
            }
            let root = entry(vm, name, src)?;
            let imports = imports_of(src);
            let init = if imports.is_empty() { None } else { Some(entry(vm, name, &imports)?) };
            (root, init)
        }
    };
    super::local(vm).compiled.units.insert(unit.clone(), c);
    Ok(c)
}

/// The top level of the script `name` with text `src`, if this isolate runs it.
fn running(vm: &Vm, name: &str, src: &str) -> Option<ProtoRef> {
    let p = vm.protos.iter().find(|p| p.name == "<main>" && p.file.name == name && p.file.src == src)?;
    // SAFETY: `vm.protos` owns every proto for the VM's life.
    Some(unsafe { ProtoRef::new(p) })
}

/// Compiles `src` named `name` as an entry (not run).
fn entry(vm: &mut Vm, name: &str, src: &str) -> Result<ProtoRef, String> {
    let file = Rc::new(SourceFile::new(name, src));
    crate::runner::compile_entry(vm, &file).map_err(|(_, diags)| {
        let first = diags.first().map_or(String::new(), |d| d.message.clone());
        format!("{name} does not compile in this isolate: {first}")
    })
}

/// A script's top-level imports, as an entry of their own: run in a worker
/// before a function of the script first runs there, as they ran before the
/// script's own code in the main isolate.
fn imports_of(src: &str) -> String {
    let Ok(program) = crate::syntax::parse(src) else { return String::new() };
    let mut out = String::new();
    for (i, s) in program.stmts.iter().enumerate() {
        if let crate::syntax::ast::StmtKind::Import { path, .. } = &s.kind {
            out.push_str(&format!("import {path:?} as __isolate_import{i}\n"));
        }
    }
    out
}
