//! The bytecode compiler: resolves names at compile time, allocates registers and
//! emits a `Proto` per function. Errors are collected so one pass reports many.

mod captures;
mod conc;
mod cond;
mod cover;
mod expr;
mod import;
mod loader;
mod operand;
mod stmt;

pub use import::{std_source, Module};
pub use loader::Loader;

use crate::bytecode::{Op, Proto, ProtoRef, UpvalDesc};
use crate::source::SourceFile;
use crate::source::Span;
use crate::syntax::ast::{Block, Program, StmtKind};
use crate::vm::{Value, Vm};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

#[derive(Debug, Clone)]
pub struct CompileError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
    /// `csp::compile`, or `csp::syntax` for a syntax error in an imported module.
    pub code: &'static str,
    /// The imported module the error is in (None: the file being compiled).
    pub file: Option<Rc<SourceFile>>,
}

/// How a file's top-level names are kept.
#[derive(Default, Clone)]
pub struct Unit {
    /// Prepended to the file's global names: empty for the main file and the REPL,
    /// `"KEY::"` for a module, so modules never see each other's names.
    pub prefix: String,
    /// A REPL entry: its top-level names are globals (they outlive the entry) and
    /// imports stay bound for later entries.
    pub repl: bool,
    /// The file's module key (see `Module::key`), to find import cycles.
    pub key: Option<String>,
    /// A module: its top-level names are globals (its exports), and its top level
    /// ends by storing its exports map in the global named `prefix` and returning it.
    pub module: bool,
}

/// Compiles a parsed file to the Proto of its top level.
pub fn compile(vm: &mut Vm, file: Rc<SourceFile>, program: &Program) -> Result<ProtoRef, Vec<CompileError>> {
    let key = import::file_key(&file);
    compile_unit(vm, file, program, Unit { key, ..Unit::default() })
}

/// Compiles a parsed file as `unit` says.
pub fn compile_unit(
    vm: &mut Vm,
    file: Rc<SourceFile>,
    program: &Program,
    unit: Unit,
) -> Result<ProtoRef, Vec<CompileError>> {
    let top = top_names(&program.stmts).into_iter().collect();
    let imports = if unit.repl { vm.loader.repl_imports.clone() } else { HashMap::new() };
    let mut c = Compiler {
        vm,
        file,
        errors: Vec::new(),
        funcs: Vec::new(),
        top,
        span: Span::default(),
        pending_breaks: Vec::new(),
        too_many_globals: false,
        imports,
        unit,
    };
    let key = c.unit.key.clone();
    c.vm.loader.importing.extend(key.clone());
    let proto = c.main(&program.stmts);
    if key.is_some() {
        c.vm.loader.importing.pop();
    }
    if c.errors.is_empty() {
        if c.unit.repl {
            c.vm.loader.repl_imports = std::mem::take(&mut c.imports);
        }
        Ok(proto)
    } else {
        // Top-level functions compile first; report in source order, after the
        // errors of imported modules (which the import's own error refers to).
        c.errors.sort_by_key(|e| (e.file.is_none(), if e.file.is_none() { e.span.start } else { 0 }));
        Err(c.errors)
    }
}

/// A file's top-level `let` and `fn` names, in source order.
/// A module's exports: its top-level names but those starting with `_`, which
/// stay private to it (docs/modules.md).
pub(crate) fn exported_names(stmts: &[crate::syntax::ast::Stmt]) -> Vec<String> {
    top_names(stmts).into_iter().filter(|n| !n.starts_with('_')).collect()
}

pub(crate) fn top_names(stmts: &[crate::syntax::ast::Stmt]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for s in stmts {
        let new: Vec<&String> = match &s.kind {
            StmtKind::Let { names, .. } => names.iter().map(|n| &n.name).collect(),
            StmtKind::Fn(d) => d.name.iter().map(|n| &n.name).collect(),
            _ => continue,
        };
        for n in new {
            if seen.insert(n) {
                names.push(n.clone());
            }
        }
    }
    names
}

pub(crate) struct Local {
    name: String,
    reg: u8,
    /// The register holds a cell because a nested function may capture it.
    cell: bool,
    /// Its entry in `FuncState::debug_locals`.
    info: usize,
}

pub(crate) enum Ctx {
    Loop {
        breaks: Vec<usize>,
        continues: Vec<usize>,
    },
    /// An active `try`: `handler` while its TryBegin is in force; `finally` to run
    /// on every exit.
    Try {
        handler: bool,
        finally: Option<Block>,
    },
    /// A `lock` or `wait { }` body: leaving it pops its handler and runs `release`
    /// (Unlock, ScopeEnd).
    Guard {
        release: Op,
    },
    /// A `finally` body: leaving it early (`return`, `break`) ends its shield.
    Shield,
}

pub(crate) struct FuncState {
    name: String,
    code: Vec<Op>,
    spans: Vec<Span>,
    consts: Vec<Value>,
    str_consts: HashMap<String, u16>,
    names: Vec<crate::vm::Str>,
    selects: Vec<(Vec<bool>, bool)>,
    /// Compound assignments' read-combine-write runs (`Proto::rereads`).
    rereads: Vec<(u32, u32)>,
    name_idx: HashMap<String, u16>,
    templates: Vec<std::rc::Rc<crate::vm::value::Layout>>,
    protos: Vec<ProtoRef>,
    upvals: Vec<UpvalDesc>,
    upval_names: Vec<String>,
    /// Every local declared, with where it is bound (`Proto::locals`).
    debug_locals: Vec<crate::bytecode::LocalVar>,
    scopes: Vec<Vec<Local>>,
    next_reg: usize,
    max_reg: usize,
    ctx: Vec<Ctx>,
    /// Names nested functions capture (at the top level: globals).
    captured: HashSet<String>,
    /// Captured names that live in cells (see captures.rs); other captures copy.
    cells: HashSet<String>,
    is_main: bool,
    /// The register limit was hit (reported once).
    too_complex: bool,
    /// A table of this function (constants, names, templates, functions)
    /// outgrew its 16-bit operands (reported once).
    too_big: bool,
}

/// Where a name lives.
#[derive(Clone, Copy)]
pub(crate) enum Var {
    Local(u8),
    Cell(u8),
    Upval(u8),
    Global(u16),
}

pub(crate) struct Compiler<'a> {
    vm: &'a mut Vm,
    file: Rc<SourceFile>,
    errors: Vec<CompileError>,
    funcs: Vec<FuncState>,
    /// Top-level `let` and `fn` names of the file (globals, visible everywhere).
    top: HashSet<String>,
    /// Span given to emitted instructions.
    span: Span,
    /// `break` jumps of the loop just closed, patched once its exit is known.
    pending_breaks: Vec<usize>,
    /// The global-name limit was hit (reported once).
    too_many_globals: bool,
    unit: Unit,
    /// Import aliases of this file.
    imports: HashMap<String, Rc<Module>>,
}

impl Compiler<'_> {
    fn main(&mut self, stmts: &Block) -> ProtoRef {
        self.begin_func("<main>".into(), captures::of(&[], stmts), true);
        // Modules are found and compiled before any code that may name them.
        self.load_imports(stmts);
        // Top-level functions are defined first so code may call them before their text.
        for s in stmts {
            if let StmtKind::Fn(d) = &s.kind {
                self.span = s.span;
                let idx = self.function(d);
                let t = self.alloc();
                self.emit(Op::Closure { dst: t, proto: idx });
                let name = d.name.as_ref().map(|n| n.name.as_str()).unwrap_or("");
                let g = self.top_global(name);
                self.emit(Op::SetGlobal { src: t, idx: g });
                self.free_to(t);
            }
        }
        for s in stmts {
            if !matches!(s.kind, StmtKind::Fn(_)) {
                self.stmt(s);
            }
        }
        if self.unit.module {
            self.return_exports(stmts);
        } else {
            self.emit(Op::ReturnNil);
        }
        self.end_func(Span::default(), (0, 0, false))
    }

    pub(crate) fn error(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(CompileError { span, message: message.into(), help: None, code: "csp::compile", file: None });
    }

    pub(crate) fn error_help(&mut self, span: Span, message: impl Into<String>, help: impl Into<String>) {
        let help = Some(help.into());
        self.errors.push(CompileError { span, message: message.into(), help, code: "csp::compile", file: None });
    }

    pub(crate) fn fs(&mut self) -> &mut FuncState {
        self.funcs.last_mut().unwrap()
    }

    pub(crate) fn begin_func(&mut self, name: String, captures: captures::Captures, is_main: bool) {
        self.funcs.push(FuncState {
            name,
            code: Vec::new(),
            spans: Vec::new(),
            consts: Vec::new(),
            str_consts: HashMap::new(),
            names: Vec::new(),
            selects: Vec::new(),
            rereads: Vec::new(),
            name_idx: HashMap::new(),
            templates: Vec::new(),
            protos: Vec::new(),
            upvals: Vec::new(),
            upval_names: Vec::new(),
            debug_locals: Vec::new(),
            scopes: vec![Vec::new()],
            next_reg: 0,
            max_reg: 0,
            ctx: Vec::new(),
            captured: captures.captured,
            cells: captures.cells,
            is_main,
            too_complex: false,
            too_big: false,
        });
    }

    pub(crate) fn end_func(&mut self, span: Span, params: (u8, u8, bool)) -> ProtoRef {
        let mut f = self.funcs.pop().unwrap();
        crate::bytecode::jumps::to_relative(&mut f.code);
        let mut proto = Proto {
            name: f.name,
            code: f.code,
            spans: f.spans,
            consts: f.consts,
            names: f.names.into_iter().map(crate::vm::value::Name::new).collect(),
            selects: f.selects,
            rereads: f.rereads.into_boxed_slice(),
            reuses: Box::new([]),
            templates: f.templates.into_boxed_slice(),
            protos: f.protos,
            upvals: f.upvals,
            upval_names: f.upval_names.into_boxed_slice(),
            locals: f.debug_locals.into_boxed_slice(),
            nparams: params.0,
            nrequired: params.1,
            has_rest: params.2,
            exact_argc: crate::bytecode::proto::exact_argc(params.0, params.2),
            nregs: (f.max_reg + 1).min(255) as u8,
            file: self.file.clone(),
            span,
            trace_lines: Default::default(),
        };
        proto.reuses = crate::bytecode::reuse::loops(&proto);
        // Debug builds check what the dispatch loop's unchecked accessors
        // assume: a compiler bug is caught here, not as memory corruption. A
        // file with errors never runs, so its protos need not hold.
        #[cfg(debug_assertions)]
        if self.errors.is_empty() {
            if let Some(broken) = crate::bytecode::verify::verify(&proto) {
                panic!("the compiler made bad bytecode: {broken}");
            }
        }
        self.vm.register_proto(proto)
    }

    pub(crate) fn emit(&mut self, op: Op) -> usize {
        let span = self.span;
        let f = self.fs();
        f.code.push(op);
        f.spans.push(span);
        f.code.len() - 1
    }

    pub(crate) fn here(&mut self) -> usize {
        self.fs().code.len()
    }

    /// Points the jump at `at` to the current position.
    pub(crate) fn patch(&mut self, at: usize) {
        let here = self.here() as u32;
        self.patch_to(at, here);
    }

    pub(crate) fn patch_to(&mut self, at: usize, to: u32) {
        let op = &mut self.fs().code[at];
        match op.target_mut() {
            Some(target) => *target = to,
            None => unreachable!("patching {op:?}"),
        }
    }

    pub(crate) fn alloc(&mut self) -> u8 {
        let f = self.funcs.last_mut().unwrap();
        let r = f.next_reg;
        f.next_reg += 1;
        f.max_reg = f.max_reg.max(r);
        if r > 250 {
            // One report per function is enough.
            if !f.too_complex {
                f.too_complex = true;
                let span = self.span;
                self.error(span, "function too complex: more than 250 registers in use");
            }
            return 250;
        }
        r as u8
    }

    /// Releases registers from `r` up.
    pub(crate) fn free_to(&mut self, r: u8) {
        self.fs().next_reg = r as usize;
    }

    /// The first free register, to free back to. Past 250 `alloc` has reported
    /// the function as too complex; the mark must not clamp to a register in use
    /// before that, or later temporaries would silently share it.
    pub(crate) fn mark(&mut self) -> u8 {
        self.fs().next_reg.min(255) as u8
    }

    pub(crate) fn str_const(&mut self, s: &str) -> u16 {
        if let Some(&k) = self.fs().str_consts.get(s) {
            return k;
        }
        let rc = self.vm.intern(s);
        let v = self.vm.heap.shared_str(rc);
        let f = self.funcs.last_mut().unwrap();
        f.consts.push(v);
        let n = f.consts.len();
        let k = self.table_index(n, "constants");
        self.fs().str_consts.insert(s.to_string(), k);
        k
    }

    /// Index of a field or method name in the Proto's name table.
    pub(crate) fn name_const(&mut self, s: &str) -> u16 {
        if let Some(&k) = self.fs().name_idx.get(s) {
            return k;
        }
        let name = self.vm.intern(s);
        let f = self.fs();
        f.names.push(name);
        let n = f.names.len();
        let k = self.table_index(n, "field and method names");
        self.fs().name_idx.insert(s.to_string(), k);
        k
    }

    /// The index of a new map layout with these keys (see `Proto::templates`).
    pub(crate) fn map_template(&mut self, keys: &[&str]) -> u16 {
        let keys: Vec<_> = keys.iter().map(|k| crate::vm::value::Key::Str(self.vm.intern(k))).collect();
        let f = self.fs();
        f.templates.push(crate::vm::value::Layout::of(keys));
        let n = f.templates.len();
        self.table_index(n, "map literals")
    }

    /// The constant a literal `nil`, boolean, number or string is (shared
    /// with an equal one made before, among the first few), for instructions
    /// with a constant operand; None for any other expression.
    pub(crate) fn literal_const(&mut self, e: &crate::syntax::ast::Expr) -> Option<u16> {
        use crate::syntax::ast::ExprKind;
        let v = match e.kind {
            ExprKind::Str(ref s) => return Some(self.str_const(s)),
            ExprKind::Nil => Value::Nil,
            ExprKind::Bool(b) => Value::Bool(b),
            ExprKind::Int(i) => Value::Int(i),
            ExprKind::Float(f) => Value::Float(f),
            _ => return None,
        };
        let same = |c: &Value| match (c, &v) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        };
        match self.fs().consts.iter().take(256).position(same) {
            Some(k) => Some(k as u16),
            None => Some(self.const_value(v)),
        }
    }

    pub(crate) fn const_value(&mut self, v: Value) -> u16 {
        let f = self.fs();
        f.consts.push(v);
        let n = f.consts.len();
        self.table_index(n, "constants")
    }

    /// The operand naming the last of `len` entries of one of the function's
    /// tables. Past 65,536 the operand cannot name it: a compile error (once
    /// per function), never an instruction that reads another entry.
    pub(crate) fn table_index(&mut self, len: usize, what: &str) -> u16 {
        if len > 1 << 16 && !self.fs().too_big {
            self.fs().too_big = true;
            let span = self.span;
            self.error_help(
                span,
                format!("function too big: more than 65536 {what}"),
                "split it into several functions, or read the data from a file",
            );
        }
        (len - 1).min(u16::MAX as usize) as u16
    }

    pub(crate) fn global(&mut self, name: &str) -> u16 {
        let g = self.vm.global_slot(name);
        if g > u16::MAX as u32 && !self.too_many_globals {
            self.too_many_globals = true;
            let span = self.span;
            self.error(span, "too many global names (at most 65536)");
        }
        g as u16
    }

    /// The global slot of a top-level name of this file.
    pub(crate) fn top_global(&mut self, name: &str) -> u16 {
        let q = format!("{}{}", self.unit.prefix, name);
        self.global(&q)
    }

    pub(crate) fn begin_scope(&mut self) {
        self.fs().scopes.push(Vec::new());
    }

    pub(crate) fn end_scope(&mut self) {
        let f = self.fs();
        let scope = f.scopes.pop().unwrap();
        let end = f.code.len() as u32;
        for l in &scope {
            f.debug_locals[l.info].to = end;
        }
        if let Some(first) = scope.first() {
            f.next_reg = first.reg as usize;
        }
    }

    /// Is this the file's top level, where `let` and `fn` define globals?
    pub(crate) fn at_top_level(&mut self) -> bool {
        let f = self.fs();
        f.is_main && f.scopes.len() == 1
    }

    /// Must these top-level names be globals? Only when a function refers to them
    /// (or registers run short): otherwise they live in the top level's registers,
    /// which is what makes top-level loops fast. Nothing else can observe the
    /// difference: functions are the only other code that could name them.
    pub(crate) fn needs_global(&mut self, names: &[crate::syntax::ast::Ident]) -> bool {
        let all = self.unit.module || self.unit.repl;
        let f = self.fs();
        all || f.next_reg >= 200 || names.iter().any(|n| f.captured.contains(&n.name))
    }

    /// Binds `name` to register `reg` in the current scope, boxing it in a cell
    /// when a nested function may capture it and something may change it.
    pub(crate) fn declare(&mut self, name: &str, reg: u8) {
        let cell = self.fs().cells.contains(name);
        if cell {
            self.emit(Op::NewCell { reg });
        }
        let f = self.fs();
        let from = f.code.len() as u32;
        let info = f.debug_locals.len();
        f.debug_locals.push(crate::bytecode::LocalVar { name: name.to_string(), reg, cell, from, to: u32::MAX });
        f.scopes.last_mut().unwrap().push(Local { name: name.to_string(), reg, cell, info });
        let f = self.fs();
        f.next_reg = f.next_reg.max(reg as usize + 1);
    }

    /// Binds parameter `name` to its register (its cell, if any, comes later).
    pub(crate) fn bind_param(&mut self, name: &str, reg: u8) {
        let f = self.fs();
        let info = f.debug_locals.len();
        let local = crate::bytecode::LocalVar { name: name.to_string(), reg, cell: false, from: 0, to: u32::MAX };
        f.debug_locals.push(local);
        f.scopes.last_mut().unwrap().push(Local { name: name.to_string(), reg, cell: false, info });
    }

    pub(crate) fn resolve(&mut self, name: &str, span: Span) -> Option<Var> {
        let depth = self.funcs.len() - 1;
        if let Some((reg, cell)) = find_local(&self.funcs[depth], name) {
            return Some(if cell { Var::Cell(reg) } else { Var::Local(reg) });
        }
        if let Some(i) = self.upval(depth, name) {
            return Some(Var::Upval(i));
        }
        if self.top.contains(name) {
            return Some(Var::Global(self.top_global(name)));
        }
        // Builtins; the main file and the REPL also see their own earlier globals.
        if let Some(&g) = self.vm.global_names.get(name) {
            if self.unit.prefix.is_empty() || g < self.vm.loader.builtin_globals {
                return Some(Var::Global(self.global(name)));
            }
        }
        let help = match (crate::suggest::habit(name), self.closest_name(name)) {
            (Some(habit), _) => habit.to_string(),
            (None, Some(near)) => format!("did you mean `{near}`?"),
            (None, None) => "declare it with `let` or `fn` first".to_string(),
        };
        self.error_help(span, format!("undefined name '{name}'"), help);
        None
    }

    /// The visible name closest to a misspelt one: locals of every enclosing
    /// function, the file's top-level names and imports, and builtins.
    fn closest_name(&self, name: &str) -> Option<String> {
        let locals = self.funcs.iter().flat_map(|f| f.scopes.iter().flatten().map(|l| l.name.as_str()));
        let file = self.top.iter().chain(self.imports.keys()).map(String::as_str);
        let builtins = self.vm.global_names.iter().filter(|(n, &g)| {
            let user_visible = !n.starts_with("__") && !n.contains("::");
            user_visible && (self.unit.prefix.is_empty() || g < self.vm.loader.builtin_globals)
        });
        let candidates = locals.chain(file).chain(builtins.map(|(n, _)| &**n));
        crate::suggest::closest(name, candidates).map(str::to_string)
    }

    /// The upvalue index of `name` in function `depth`, threading it through every
    /// function between its declaration and here.
    fn upval(&mut self, depth: usize, name: &str) -> Option<u8> {
        if depth == 0 {
            return None;
        }
        if let Some(i) = self.funcs[depth].upval_names.iter().position(|n| n == name) {
            return Some(i as u8);
        }
        // The register holds the variable's cell, or its value if it never
        // changes (captures.rs): either is what the closure keeps.
        let desc = match find_local(&self.funcs[depth - 1], name) {
            Some((reg, _)) => UpvalDesc::Local(reg),
            None => UpvalDesc::Upval(self.upval(depth - 1, name)?),
        };
        let f = &mut self.funcs[depth];
        f.upvals.push(desc);
        f.upval_names.push(name.to_string());
        Some((f.upvals.len() - 1) as u8)
    }
}

pub(super) fn find_local(f: &FuncState, name: &str) -> Option<(u8, bool)> {
    f.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|l| l.name == name).map(|l| (l.reg, l.cell))
}
