//! Expressions: each compiles into a destination register.

use super::cond::literal_compare;
use super::{captures, Compiler, Var};
use crate::bytecode::{BitOp, Cmp, Op};
use crate::syntax::ast::*;
use crate::vm::Value;

/// Most registers a list or map literal uses at once before falling back to pushes.
const LITERAL_BATCH: usize = 64;

impl Compiler<'_> {
    /// Evaluates `e` into some register: a plain local's own register, or a new temporary.
    pub(crate) fn expr_any(&mut self, e: &Expr) -> u8 {
        if let ExprKind::Name(n) = &e.kind {
            let save = self.span;
            self.span = e.span;
            let var = self.resolve(n, e.span);
            self.span = save;
            match var {
                Some(Var::Local(r)) => return r,
                None => return self.alloc(),
                _ => {}
            }
        }
        let t = self.alloc();
        self.expr_to(e, t);
        t
    }

    /// Evaluates `e` into `dst`, using temporaries above the current mark.
    pub(crate) fn expr_to(&mut self, e: &Expr, dst: u8) {
        let save_span = self.span;
        self.span = e.span;
        let mark = self.mark();
        crate::limits::with_stack(|| self.expr_inner(e, dst));
        self.free_to(mark);
        self.span = save_span;
    }

    fn expr_inner(&mut self, e: &Expr, dst: u8) {
        match &e.kind {
            ExprKind::Nil => {
                self.emit(Op::LoadNil { dst });
            }
            ExprKind::Bool(b) => {
                self.emit(Op::LoadBool { dst, val: *b });
            }
            ExprKind::Int(i) => self.load_int(dst, *i),
            ExprKind::Float(f) => {
                let k = self.const_value(Value::Float(*f));
                self.emit(Op::LoadK { dst, k });
            }
            ExprKind::Str(s) => {
                let k = self.str_const(s);
                self.emit(Op::LoadK { dst, k });
            }
            ExprKind::Interp(parts) => {
                let start = self.mark();
                for p in parts {
                    let r = self.alloc();
                    match p {
                        InterpPart::Lit(s) => {
                            let k = self.str_const(s);
                            self.emit(Op::LoadK { dst: r, k });
                        }
                        InterpPart::Expr(x) => self.expr_to(x, r),
                    }
                }
                let count = parts.len().min(255) as u8;
                self.emit(Op::Concat { dst, start, count });
            }
            ExprKind::Name(n) => {
                let var = self.resolve(n, e.span);
                self.load_var(var, dst);
            }
            ExprKind::List(items) => self.list(items, dst),
            ExprKind::ListComp { expr, key, var, iter, cond } => {
                self.list_comp(expr, key.as_ref(), var, iter, cond.as_deref(), dst)
            }
            ExprKind::Map(pairs) => self.map(pairs, dst),
            ExprKind::Unary(UnOp::Neg, a) => {
                if let ExprKind::Int(i) = a.kind {
                    return self.load_int(dst, -i);
                }
                if let ExprKind::Float(f) = a.kind {
                    let k = self.const_value(Value::Float(-f));
                    self.emit(Op::LoadK { dst, k });
                    return;
                }
                let r = self.expr_any(a);
                self.emit(Op::Neg { dst, src: r });
            }
            ExprKind::Unary(UnOp::Not, a) => {
                let r = self.expr_any(a);
                self.emit(Op::Not { dst, src: r });
            }
            ExprKind::Unary(UnOp::BitNot, a) => {
                let r = self.expr_any(a);
                self.emit(Op::BitNot { dst, src: r });
            }
            ExprKind::Cond(c, a, b) => {
                let jf = self.jump_if_false(c);
                self.expr_to(a, dst);
                let jend = self.emit(Op::Jmp { target: 0 });
                jf.into_iter().for_each(|j| self.patch(j));
                self.expr_to(b, dst);
                self.patch(jend);
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, dst),
            ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                // Straight into dst when it is a temporary (`b` cannot read it);
                // a local's register must keep its value until `b` is done.
                let direct = !self.is_local(dst) && (dst as usize) < self.fs().next_reg;
                let t = if direct { dst } else { self.alloc() };
                self.expr_to(a, t);
                let j = if let ExprKind::And(..) = e.kind {
                    self.emit(Op::JmpIfNot { src: t, target: 0 })
                } else {
                    self.emit(Op::JmpIf { src: t, target: 0 })
                };
                self.expr_to(b, t);
                self.patch(j);
                if t != dst {
                    self.emit(Op::Move { dst, src: t });
                }
            }
            ExprKind::Range { lo, hi, inclusive } => {
                let l = self.expr_any(lo);
                let h = self.expr_any(hi);
                self.emit(Op::Range { dst, lo: l, hi: h, inclusive: *inclusive });
            }
            ExprKind::Index(o, k) => {
                if let Some((obj, name, key, off)) = self.field_index_operands(o, k) {
                    self.span = e.span;
                    self.emit(Op::FieldIndex { dst, obj, name, key, off });
                    return;
                }
                let ro = self.expr_any(o);
                if let ExprKind::Int(i @ 0..=255) = k.kind {
                    self.span = e.span;
                    self.emit(Op::IndexI { dst, obj: ro, idx: i as u8 });
                    return;
                }
                if let Some((base, off)) = offset_key(k) {
                    let rk = self.expr_any(base);
                    self.span = e.span;
                    self.emit(Op::IndexAdd { dst, obj: ro, key: rk, off });
                    return;
                }
                let rk = self.expr_any(k);
                self.span = e.span;
                self.emit(Op::Index { dst, obj: ro, key: rk });
            }
            ExprKind::Field(o, name) => {
                if let Some(g) = self.module_member(o, name) {
                    self.emit(Op::GetGlobal { dst, idx: g });
                    return;
                }
                let ro = self.expr_any(o);
                let k = self.name_const(&name.name);
                self.span = e.span;
                self.emit(Op::Field { dst, obj: ro, name: k });
            }
            ExprKind::Call(f, args) if self.is_module(f) => self.module_called(f),
            ExprKind::Call(f, args) => {
                let base = self.call_base(dst);
                let global = self.callee(f, args, base);
                self.args(args);
                self.span = e.span;
                let argc = args.len().min(255) as u8;
                self.emit(match global {
                    Some(idx) => Op::CallGlobal { base, argc, idx },
                    None => Op::Call { base, argc },
                });
                if dst != base {
                    self.emit(Op::Move { dst, src: base });
                }
            }
            ExprKind::Method(recv, name, args) if self.is_module(recv) => {
                // `mod.f(x)` calls the export; there is no receiver.
                let f = Expr { span: e.span, kind: ExprKind::Field(recv.clone(), name.clone()) };
                self.expr_inner(&Expr { span: e.span, kind: ExprKind::Call(Box::new(f), args.clone()) }, dst);
            }
            ExprKind::Method(recv, name, args) => {
                let base = self.call_base(dst);
                let r = self.alloc();
                self.expr_to(recv, r);
                self.args(args);
                let k = self.name_const(&name.name);
                self.span = e.span;
                self.emit(Op::Invoke { base, argc: args.len().min(255) as u8, name: k });
                if dst != base {
                    self.emit(Op::Move { dst, src: base });
                }
            }
            ExprKind::Func(d) => {
                let idx = self.function(d);
                self.emit(Op::Closure { dst, proto: idx });
            }
            ExprKind::Recv(ch) => {
                let c = self.expr_any(ch);
                self.span = e.span;
                self.emit(Op::Recv { dst, ch: c });
            }
            ExprKind::Go(call) => self.go(call, dst, false),
            ExprKind::GoBlock(b) => self.go_block(b, e.span, dst, false),
            ExprKind::Wait(x) => {
                let r = self.expr_any(x);
                self.span = e.span;
                self.emit(Op::WaitOn { dst, src: r });
            }
            ExprKind::Yield(v) => {
                // The yielded value goes out from dst; the resumed value comes back in it.
                match v {
                    Some(v) => self.expr_to(v, dst),
                    None => {
                        self.emit(Op::LoadNil { dst });
                    }
                }
                self.span = e.span;
                self.emit(Op::Yield { dst });
            }
        }
    }

    /// Evaluates a left operand, into `dst` itself when `dst` is a temporary (the
    /// right operand cannot read it), so a long chain `a + b + c + ...` needs one
    /// register rather than one per term.
    fn left_operand(&mut self, a: &Expr, dst: u8) -> u8 {
        if matches!(a.kind, ExprKind::Name(_)) || self.is_local(dst) || dst as usize >= self.fs().next_reg {
            return self.expr_any(a);
        }
        self.expr_to(a, dst);
        dst
    }

    /// A call's window starts at `dst` when `dst` is the newest temporary, which
    /// saves moving the result; otherwise at a fresh register.
    /// Loads `var`'s value into `dst` (nothing for a name that did not resolve).
    fn load_var(&mut self, var: Option<Var>, dst: u8) {
        match var {
            Some(Var::Local(r)) if r != dst => {
                self.emit(Op::Move { dst, src: r });
            }
            Some(Var::Local(_)) | None => {}
            Some(Var::Cell(r)) => {
                self.emit(Op::GetCell { dst, cell: r });
            }
            Some(Var::Upval(i)) => {
                self.emit(Op::GetUpval { dst, idx: i });
            }
            Some(Var::Global(g)) => {
                self.emit(Op::GetGlobal { dst, idx: g });
            }
        }
    }

    /// Loads a call's callee into `base`, unless it is a global function that
    /// its arguments cannot reassign (they run no other code: see
    /// `runs_no_code`). Then it returns the global, for `CallGlobal` to read
    /// after the arguments: one instruction less per call.
    fn callee(&mut self, f: &Expr, args: &[Expr], base: u8) -> Option<u16> {
        let ExprKind::Name(n) = &f.kind else {
            self.expr_to(f, base);
            return None;
        };
        let save = self.span;
        self.span = f.span;
        let var = self.resolve(n, f.span);
        let global = match var {
            Some(Var::Global(g)) if args.iter().all(runs_no_code) => Some(g),
            _ => {
                self.load_var(var, base);
                None
            }
        };
        self.span = save;
        global
    }

    fn call_base(&mut self, dst: u8) -> u8 {
        if dst as usize + 1 == self.fs().next_reg && !self.is_local(dst) {
            dst
        } else {
            self.alloc()
        }
    }

    /// The register of `e` when it is a name of a local of this function
    /// that no closure captures; nothing is reported for other names.
    pub(crate) fn local_reg(&self, e: &Expr) -> Option<u8> {
        let ExprKind::Name(n) = &e.kind else { return None };
        match super::find_local(&self.funcs[self.funcs.len() - 1], n) {
            Some((reg, false)) => Some(reg),
            _ => None,
        }
    }

    /// `obj.name[key]` or `obj.name[key ± n]` with `obj` and `key` locals (so
    /// nothing runs between the field's read and the index's): the operands of
    /// FieldIndex and FieldSetIndex (registers, the name's constant, the offset).
    pub(crate) fn field_index_operands(&mut self, o: &Expr, k: &Expr) -> Option<(u8, u16, u8, i8)> {
        let ExprKind::Field(obj, name) = &o.kind else { return None };
        let ro = self.local_reg(obj)?;
        let (rk, off) = match offset_key(k) {
            Some((x, off)) => (self.local_reg(x)?, off),
            None => (self.local_reg(k)?, 0),
        };
        Some((ro, self.name_const(&name.name), rk, off))
    }

    fn is_local(&mut self, r: u8) -> bool {
        self.fs().scopes.iter().flatten().any(|l| l.reg == r)
    }

    fn load_int(&mut self, dst: u8, i: i64) {
        if let Ok(val) = i32::try_from(i) {
            self.emit(Op::LoadInt { dst, val });
        } else {
            let k = self.const_value(Value::Int(i));
            self.emit(Op::LoadK { dst, k });
        }
    }

    /// Arguments into consecutive registers after the callee.
    fn args(&mut self, args: &[Expr]) {
        if args.len() > 250 {
            self.error(self.span, "too many arguments (at most 250)");
        }
        let mut rest = args;
        while let Some((a, after)) = rest.split_first() {
            // Arguments that are locals, two or three at a time (one
            // instruction): nothing runs between reading them.
            let run: Vec<u8> = rest.iter().take(3).map_while(|x| self.local_reg(x)).collect();
            if run.len() >= 2 {
                let dst = self.alloc();
                run[1..].iter().for_each(|_| _ = self.alloc());
                self.emit(match run[..] {
                    [a, b] => Op::Move2 { dst, a, b },
                    [a, b, c] => Op::Move3 { dst, a, b, c },
                    _ => unreachable!("two or three"),
                });
                rest = &rest[run.len()..];
                continue;
            }
            let r = self.alloc();
            self.expr_to(a, r);
            rest = after;
        }
    }

    fn list(&mut self, items: &[Expr], dst: u8) {
        // Built in a temporary when it takes pushes after `NewList`: the items
        // that follow may read the variable `dst` is.
        let t = if items.len() > LITERAL_BATCH { self.alloc() } else { dst };
        let first = items.len().min(LITERAL_BATCH);
        let start = self.mark();
        for x in &items[..first] {
            let r = self.alloc();
            self.expr_to(x, r);
        }
        self.emit(Op::NewList { dst: t, start, count: first as u8 });
        self.free_to(start);
        for x in &items[first..] {
            let r = self.expr_any(x);
            self.emit(Op::ListPush { list: t, src: r });
            self.free_to(start);
        }
        if t != dst {
            self.emit(Op::Move { dst, src: t });
        }
    }

    fn map(&mut self, pairs: &[(Expr, Expr)], dst: u8) {
        // As for `list`.
        let t = if pairs.len() > LITERAL_BATCH / 2 { self.alloc() } else { dst };
        let first = pairs.len().min(LITERAL_BATCH / 2);
        let start = self.mark();
        if let Some(keys) = constant_keys(&pairs[..first]) {
            // Only the values go to registers: the template has the keys, hashed.
            for (_, v) in &pairs[..first] {
                let r = self.alloc();
                self.expr_to(v, r);
            }
            let keys = self.map_template(&keys);
            self.emit(Op::NewMapK { dst: t, start, keys });
        } else {
            for (k, v) in &pairs[..first] {
                let rk = self.alloc();
                self.expr_to(k, rk);
                let rv = self.alloc();
                self.expr_to(v, rv);
            }
            self.emit(Op::NewMap { dst: t, start, count: first as u8 });
        }
        self.free_to(start);
        for (k, v) in &pairs[first..] {
            let rk = self.expr_any(k);
            let rv = self.expr_any(v);
            self.emit(Op::SetIndex { obj: t, key: rk, src: rv });
            self.free_to(start);
        }
        if t != dst {
            self.emit(Op::Move { dst, src: t });
        }
    }

    fn list_comp(&mut self, expr: &Expr, key: Option<&Ident>, var: &Ident, iter: &Expr, cond: Option<&Expr>, dst: u8) {
        let list = self.alloc();
        self.emit(Op::NewList { dst: list, start: list, count: 0 });
        self.for_loop(key, var, iter, &mut |c: &mut Compiler| {
            let skip = cond.map(|cnd| c.jump_if_false(cnd));
            let r = c.expr_any(expr);
            c.emit(Op::ListPush { list, src: r });
            if let Some(js) = skip {
                for j in js {
                    c.patch(j);
                }
            }
        });
        self.emit(Op::Move { dst, src: list });
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, dst: u8) {
        // `x + 1`, `x * 2.5`, `2.5 - x`: the literal in the instruction.
        let literal = |e: &Expr| matches!(e.kind, ExprKind::Int(_) | ExprKind::Float(_));
        let (x, lit, rev) =
            if literal(b) || !matches!(a.kind, ExprKind::Float(_)) { (a, b, false) } else { (b, a, true) };
        if let Some(rhs) = self.literal_operand(op, lit, rev) {
            let ra = self.left_operand(x, dst);
            self.emit(rhs.op(op, dst, ra));
            return;
        }
        if let Some((cmp, x, lit)) = literal_compare(op, a, b) {
            let ra = self.left_operand(x, dst);
            let k = self.literal_const(lit).expect("a literal's constant");
            self.emit(Op::CompareK { cmp, dst, a: ra, k });
            return;
        }
        let ra = self.left_operand(a, dst);
        let rb = self.expr_any(b);
        let negate = matches!(op, BinOp::NotIn | BinOp::IsNot);
        let op = match op {
            BinOp::Add => Op::Add { dst, a: ra, b: rb },
            BinOp::Sub => Op::Sub { dst, a: ra, b: rb },
            BinOp::Mul => Op::Mul { dst, a: ra, b: rb },
            BinOp::Div => Op::Div { dst, a: ra, b: rb },
            BinOp::Mod => Op::Mod { dst, a: ra, b: rb },
            BinOp::Pow => Op::Pow { dst, a: ra, b: rb },
            BinOp::Eq => Op::Compare { cmp: Cmp::Eq, dst, a: ra, b: rb },
            BinOp::Ne => Op::Compare { cmp: Cmp::Ne, dst, a: ra, b: rb },
            BinOp::Lt => Op::Compare { cmp: Cmp::Lt, dst, a: ra, b: rb },
            BinOp::Le => Op::Compare { cmp: Cmp::Le, dst, a: ra, b: rb },
            BinOp::Gt => Op::Compare { cmp: Cmp::Lt, dst, a: rb, b: ra },
            BinOp::Ge => Op::Compare { cmp: Cmp::Le, dst, a: rb, b: ra },
            BinOp::In | BinOp::NotIn => Op::In { dst, a: ra, b: rb },
            BinOp::Is | BinOp::IsNot => Op::Is { dst, a: ra, b: rb },
            BinOp::BitAnd => Op::Bitwise { op: BitOp::And, dst, a: ra, b: rb },
            BinOp::BitOr => Op::Bitwise { op: BitOp::Or, dst, a: ra, b: rb },
            BinOp::BitXor => Op::Bitwise { op: BitOp::Xor, dst, a: ra, b: rb },
            BinOp::Shl => Op::Bitwise { op: BitOp::Shl, dst, a: ra, b: rb },
            BinOp::Shr => Op::Bitwise { op: BitOp::Shr, dst, a: ra, b: rb },
        };
        self.emit(op);
        if negate {
            self.emit(Op::Not { dst, src: dst });
        }
    }

    /// Compiles a function body to a new Proto of the current function; returns its index.
    pub(crate) fn function(&mut self, d: &FuncDecl) -> u16 {
        let name = d.name.as_ref().map(|n| n.name.clone()).unwrap_or_default();
        let save = self.span;
        self.begin_func(name, captures::of(&d.params, &d.body), false);
        self.span = d.span;
        let np = d.params.len();
        if np + d.rest.is_some() as usize > 200 {
            self.error(d.span, "too many parameters");
        }
        let mut seen = std::collections::HashSet::new();
        for n in d.params.iter().map(|p| &p.name).chain(&d.rest) {
            if !seen.insert(n.name.as_str()) {
                self.error(n.span, format!("duplicate parameter '{}'", n.name));
            }
        }
        for (i, p) in d.params.iter().enumerate() {
            self.bind_param(&p.name.name, i as u8);
        }
        if let Some(r) = &d.rest {
            self.bind_param(&r.name, np as u8);
        }
        let nparams = np + d.rest.is_some() as usize;
        self.fs().next_reg = nparams;
        self.fs().max_reg = nparams;
        // Parameters that need cells get them first, so that a closure in a
        // default captures the cell; a default then goes into its cell.
        for i in 0..nparams {
            let name = self.fs().scopes[0][i].name.clone();
            if self.fs().cells.contains(&name) {
                self.emit(Op::NewCell { reg: i as u8 });
                self.fs().scopes[0][i].cell = true;
                let info = self.fs().scopes[0][i].info;
                self.fs().debug_locals[info].cell = true;
            }
        }
        let mut nrequired: u8 = 0;
        let mut seen_default = false;
        for (i, p) in d.params.iter().enumerate() {
            match &p.default {
                Some(def) => {
                    seen_default = true;
                    let j = self.emit(Op::JmpIfArg { idx: i as u8, target: 0 });
                    if self.fs().scopes[0][i].cell {
                        let t = self.alloc();
                        self.expr_to(def, t);
                        self.emit(Op::SetCell { cell: i as u8, src: t });
                        self.free_to(t);
                    } else {
                        self.expr_to(def, i as u8);
                    }
                    self.patch(j);
                }
                None if seen_default => {
                    self.error(p.name.span, "a parameter without a default cannot follow one with a default")
                }
                None => nrequired = nrequired.saturating_add(1),
            }
        }
        self.count_entry(d.span, &name_of(d));
        for s in &d.body {
            self.stmt(s);
        }
        self.emit(Op::ReturnNil);
        let proto = self.end_func(d.span, (np as u8, nrequired, d.rest.is_some()));
        self.span = save;
        let f = self.fs();
        f.protos.push(proto);
        let n = f.protos.len();
        self.table_index(n, "nested functions and imports")
    }
}

/// An index `x + n` or `x - n`, `n` a positive int literal of at most 127
/// (`a[i - 1]`, from 1-based code): `x` and the offset, for IndexAdd and its
/// setters, which save the addition's instruction. The offset's sign says
/// which operator a type error names.
pub(crate) fn offset_key(k: &Expr) -> Option<(&Expr, i8)> {
    let ExprKind::Binary(op, x, n) = &k.kind else { return None };
    let ExprKind::Int(n @ 1..=127) = n.kind else { return None };
    match op {
        BinOp::Add => Some((x, n as i8)),
        BinOp::Sub => Some((x, -(n as i8))),
        _ => None,
    }
}

fn name_of(d: &FuncDecl) -> String {
    d.name.as_ref().map(|n| n.name.clone()).unwrap_or_default()
}

/// Evaluating `e` runs no code but its own: no call, channel operation,
/// `yield` or `wait`, which could let other code (or another fiber) assign a
/// global. Field reads, indexing and operators run no user code.
fn runs_no_code(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Nil | ExprKind::Bool(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Str(_) => true,
        ExprKind::Name(_) | ExprKind::Func(_) => true,
        ExprKind::Unary(_, a) | ExprKind::Field(a, _) => runs_no_code(a),
        ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) | ExprKind::Index(a, b) => {
            runs_no_code(a) && runs_no_code(b)
        }
        ExprKind::Range { lo, hi, .. } => runs_no_code(lo) && runs_no_code(hi),
        ExprKind::Cond(c, a, b) => runs_no_code(c) && runs_no_code(a) && runs_no_code(b),
        ExprKind::List(items) => items.iter().all(runs_no_code),
        ExprKind::Map(pairs) => pairs.iter().all(|(k, v)| runs_no_code(k) && runs_no_code(v)),
        _ => false,
    }
}

/// The keys of a map literal's pairs when all are distinct string literals
/// (`{x: 1, y: 2}`): such a literal is built from a template (`NewMapK`).
fn constant_keys(pairs: &[(Expr, Expr)]) -> Option<Vec<&str>> {
    let mut keys = Vec::with_capacity(pairs.len());
    for (k, _) in pairs {
        let ExprKind::Str(s) = &k.kind else { return None };
        if keys.contains(&s.as_str()) {
            return None;
        }
        keys.push(s.as_str());
    }
    (!keys.is_empty()).then_some(keys)
}
