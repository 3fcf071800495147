//! `std/re`: regular expressions on the `regex` crate (Unicode, linear time, no
//! backreferences or look-around). A compiled pattern is a host object (`Pattern`); the
//! module's functions take a pattern string (compiled once into a small cache)
//! or a regex. Positions are character indices, as strings index by character.
//! See docs/text-formats.md.

use crate::limits::{MAX_LIST, MAX_STRING};
use crate::natives::args::arity;
use crate::vm::host::{Class, HostObject};
use crate::vm::object::Obj;
use crate::vm::value::Map;
use crate::vm::{err, ErrorKind, Handle, Heap, Key, NativeFn, Res, Ret, Value, Vm};
use indexmap::IndexMap;
use regex::{Captures, Regex};
use std::cell::RefCell;
use std::rc::Rc;

/// A compiled regular expression, shared with the pattern cache.
pub struct Pattern(Rc<Regex>);

pub static CLASS: Class = Class {
    name: "regex",
    methods: &[
        ("find", |vm, _, h, _, args| method(vm, h, "find", args)),
        ("find_all", |vm, _, h, _, args| method(vm, h, "find_all", args)),
        ("replace", |vm, _, h, _, args| method(vm, h, "replace", args)),
        ("split", |vm, _, h, _, args| method(vm, h, "split", args)),
        ("test", |vm, _, h, _, args| method(vm, h, "test", args)),
    ],
    next: None,
    field: None,
};

impl HostObject for Pattern {
    fn class(&self) -> &'static Class {
        &CLASS
    }
    fn display(&self, out: &mut String) {
        out.push_str("<regex /");
        out.push_str(self.0.as_str());
        out.push_str("/>");
    }
}

/// `find_all` on a text this long asks the heap for its matches first, about
/// `MATCH_BYTES` each (a match map with its text and position).
const COUNT_FROM: usize = 4096;
const MATCH_BYTES: usize = 256;

/// Patterns the module's functions compiled, oldest first.
const CACHE_SIZE: usize = 128;

// Per isolate (a thread each): compiled patterns are `Rc`s of its heap's.
thread_local! {
    static CACHE: RefCell<IndexMap<crate::vm::Str, Rc<Regex>>> = RefCell::new(IndexMap::new());
}

pub fn register(vm: &mut Vm) {
    vm.define_hidden("re.compile", NativeFn::Value(compile_fn));
    vm.define_hidden("re.escape", NativeFn::Value(escape));
    vm.define_hidden("re.test", NativeFn::Full(|vm, _, a| module(vm, "test", "re.test", a)));
    vm.define_hidden("re.find", NativeFn::Full(|vm, _, a| module(vm, "find", "re.find", a)));
    vm.define_hidden("re.find_all", NativeFn::Full(|vm, _, a| module(vm, "find_all", "re.find_all", a)));
    vm.define_hidden("re.replace", NativeFn::Full(|vm, _, a| module(vm, "replace", "re.replace", a)));
    vm.define_hidden("re.split", NativeFn::Full(|vm, _, a| module(vm, "split", "re.split", a)));
}

/// `pattern` compiled, from the cache if it was compiled before; a bad pattern
/// is a `value` error saying what is wrong and where.
pub fn compile(pattern: &str) -> Res<Rc<Regex>> {
    if let Some(r) = CACHE.with(|c| c.borrow().get(pattern).cloned()) {
        return Ok(r);
    }
    let r = match Regex::new(pattern) {
        Ok(r) => Rc::new(r),
        Err(e) => return err(ErrorKind::Value, bad_pattern(pattern, e)),
    };
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_SIZE {
            c.shift_remove_index(0);
        }
        c.insert(pattern.into(), r.clone());
    });
    Ok(r)
}

/// `invalid regex "a(b": unclosed group at character 1`: the parser's reason
/// on one line (the crate's message draws the pattern with a caret under it).
fn bad_pattern(pattern: &str, e: regex::Error) -> String {
    match regex_syntax::Parser::new().parse(pattern) {
        Err(regex_syntax::Error::Parse(e)) => located(pattern, &e.kind().to_string(), e.span().start.offset),
        Err(regex_syntax::Error::Translate(e)) => located(pattern, &e.kind().to_string(), e.span().start.offset),
        _ => format!("invalid regex {pattern:?}: {e}"),
    }
}

fn located(pattern: &str, why: &str, byte: usize) -> String {
    let at = pattern[..byte.min(pattern.len())].chars().count();
    format!("invalid regex {pattern:?}: {why} at character {at}")
}

/// The regex of a module function's pattern argument: a string or a regex.
fn pattern_arg(heap: &Heap, name: &str, v: Value) -> Res<Rc<Regex>> {
    if let Value::Obj(h) = v {
        if let Some(p) = heap.host::<Pattern>(h) {
            return Ok(p.0.clone());
        }
        if let Obj::Str(s) = heap.get(h) {
            return compile(&s.s.clone());
        }
    }
    err(ErrorKind::Type, format!("{name}() needs a pattern string or a regex, not {}", heap.type_name(v)))
}

fn text_arg(heap: &Heap, name: &str, v: Value) -> Res<crate::vm::Str> {
    match heap.as_str(v) {
        Some(s) => Ok(s.s.clone()),
        None => err(ErrorKind::Type, format!("{name}() needs a string, not {}", heap.type_name(v))),
    }
}

/// `re.compile(pattern)`: a regex value.
fn compile_fn(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("re.compile", args, 1, 1)?;
    let r = pattern_arg(&vm.heap, "re.compile", args[0])?;
    Ok(vm.heap.host_object(Pattern(r)))
}

/// `re.escape(s)`: `s` with every metacharacter escaped, to match it literally.
fn escape(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("re.escape", args, 1, 1)?;
    let s = text_arg(&vm.heap, "re.escape", args[0])?;
    Ok(vm.heap.string(regex::escape(&s)))
}

/// How many arguments each operation takes after the pattern.
fn counts(op: &str) -> (usize, usize) {
    match op {
        "replace" => (2, 3),
        "split" => (1, 2),
        _ => (1, 1),
    }
}

/// `re.OP(pattern, ...)`.
fn module(vm: &mut Vm, op: &str, name: &str, args: &[Value]) -> Res<Ret> {
    let (min, max) = counts(op);
    arity(name, args, min + 1, max + 1)?;
    let r = pattern_arg(&vm.heap, name, args[0])?;
    apply(vm, &r, op, name, &args[1..])
}

/// `r.OP(...)`, a method of a regex value.
fn method(vm: &mut Vm, h: Handle, op: &'static str, args: &[Value]) -> Res<Ret> {
    let r = vm.heap.host::<Pattern>(h).expect("receiver is a regex").0.clone();
    let public = match op {
        "test" => "regex.test",
        "find" => "regex.find",
        "find_all" => "regex.find_all",
        "replace" => "regex.replace",
        _ => "regex.split",
    };
    let (min, max) = counts(op);
    arity(public, args, min, max)?;
    apply(vm, &r, op, public, args)
}

/// The operations, their argument counts checked; `name` is the public name.
fn apply(vm: &mut Vm, r: &Regex, op: &str, name: &str, args: &[Value]) -> Res<Ret> {
    let s = text_arg(&vm.heap, name, args[0])?;
    let v = match op {
        "test" => Value::Bool(r.is_match(&s)),
        "find" => {
            let keys = MatchKeys::new(vm);
            let mut pos = CharPos::new(&s);
            match r.captures(&s) {
                Some(c) => match_map(&mut vm.heap, &keys, &mut pos, r, &c),
                None => Value::Nil,
            }
        }
        "find_all" => {
            // A big text may match millions of times: the heap is asked for
            // the result first (counting is a fraction of building), so it
            // stops at the memory limit, not after.
            if s.len() >= COUNT_FROM {
                vm.heap.reserve(r.find_iter(&s).count().saturating_mul(MATCH_BYTES))?;
            }
            let keys = MatchKeys::new(vm);
            let mut pos = CharPos::new(&s);
            let mut out = Vec::new();
            for c in matches(r, &s) {
                if out.len() >= MAX_LIST {
                    return err(ErrorKind::Limit, format!("list too long (more than {MAX_LIST} matches)"));
                }
                out.push(match_map(&mut vm.heap, &keys, &mut pos, r, &c));
            }
            vm.heap.list(out)
        }
        "split" => {
            let limit = match args.get(1) {
                None | Some(Value::Nil) => usize::MAX,
                Some(Value::Int(n)) if *n > 0 => *n as usize,
                Some(Value::Int(n)) => {
                    return err(ErrorKind::Value, format!("{name}() limit must be positive, not {n}"))
                }
                Some(v) => {
                    let t = vm.heap.type_name(*v);
                    return err(ErrorKind::Type, format!("{name}() limit must be an int, not {t}"));
                }
            };
            let mut parts: Vec<&str> = Vec::new();
            let mut last = 0;
            for c in matches(r, &s).take(limit - 1) {
                let m = c.get(0).expect("group 0 always matches");
                parts.push(&s[last..m.start()]);
                last = m.end();
                if parts.len() > MAX_LIST {
                    return err(ErrorKind::Limit, format!("list too long (more than {MAX_LIST} items)"));
                }
            }
            parts.push(&s[last..]);
            vm.heap.reserve(parts.len() * (16 + 32))?;
            let items = parts.into_iter().map(|p| vm.heap.str(p)).collect();
            vm.heap.list(items)
        }
        _ => return replace(vm, r, name, &s, args),
    };
    Ok(Ret::Value(v))
}

/// The successive matches of `r` in `s` as Python's `re` and JavaScript's `/g`
/// find them: after a match the search goes on where it ended, so an empty
/// match right after a non-empty one counts (`a*` in `baaac` matches at 0,
/// 1..4, 4 and 5; the regex crate, like Go, skips the one at 4); after an
/// empty match it goes on a character later.
fn matches<'r, 's>(r: &'r Regex, s: &'s str) -> impl Iterator<Item = Captures<'s>> + use<'r, 's> {
    let mut at = Some(0);
    std::iter::from_fn(move || {
        let c = r.captures_at(s, at?)?;
        let m = c.get(0).expect("group 0 always matches");
        at = if !m.is_empty() { Some(m.end()) } else { s[m.end()..].chars().next().map(|ch| m.end() + ch.len_utf8()) };
        Some(c)
    })
}

/// `replace(s, repl, n?)`: every match (or the first `n`) replaced by the
/// template `repl` (`$1`, `${name}`, `$$`), or by what function `repl` returns
/// for the match (through the prelude's `__re_replace_with`, so it runs as a frame).
fn replace(vm: &mut Vm, r: &Regex, name: &str, s: &str, args: &[Value]) -> Res<Ret> {
    let limit = match args.get(2) {
        None | Some(Value::Nil) => 0,
        Some(Value::Int(n)) if *n >= 0 => *n as usize,
        Some(Value::Int(n)) => return err(ErrorKind::Value, format!("{name}() count must not be negative, not {n}")),
        Some(v) => {
            return err(ErrorKind::Type, format!("{name}() count must be an int, not {}", vm.heap.type_name(*v)))
        }
    };
    let repl = args[1];
    let n = if limit == 0 { usize::MAX } else { limit };
    if let Some(t) = vm.heap.as_str(repl) {
        let t = t.s.clone();
        let (mut out, mut last) = (String::new(), 0);
        for c in matches(r, s).take(n) {
            let m = c.get(0).expect("group 0 always matches");
            out.push_str(&s[last..m.start()]);
            c.expand(&t, &mut out);
            last = m.end();
            if out.len() > MAX_STRING {
                return err(ErrorKind::Limit, format!("string too long (more than {MAX_STRING} bytes)"));
            }
        }
        out.push_str(&s[last..]);
        if out.len() > MAX_STRING {
            return err(ErrorKind::Limit, format!("string too long ({} bytes)", out.len()));
        }
        return Ok(Ret::Value(vm.heap.string(out)));
    }
    if vm.heap.type_name(repl) != "function" {
        let t = vm.heap.type_name(repl);
        return err(ErrorKind::Type, format!("{name}() needs a template string or a function, not {t}"));
    }
    let keys = MatchKeys::new(vm);
    let mut pos = CharPos::new(s);
    let (mut parts, mut found, mut last) = (Vec::new(), Vec::new(), 0);
    for c in matches(r, s).take(n) {
        if found.len() >= MAX_LIST {
            return err(ErrorKind::Limit, format!("list too long (more than {MAX_LIST} matches)"));
        }
        let m = c.get(0).expect("group 0 always matches");
        parts.push(vm.heap.str(&s[last..m.start()]));
        found.push(match_map(&mut vm.heap, &keys, &mut pos, r, &c));
        last = m.end();
    }
    parts.push(vm.heap.str(&s[last..]));
    let Some(helper) = vm.loader.prelude("__re_replace_with") else {
        return err(ErrorKind::Internal, format!("{name}() is unavailable: the prelude is not loaded"));
    };
    let (parts, found) = (vm.heap.list(parts), vm.heap.list(found));
    Ok(Ret::Call(helper, vec![parts, found, repl]))
}

/// The keys of a match map, interned once per call.
struct MatchKeys([crate::vm::Str; 5]);

impl MatchKeys {
    fn new(vm: &mut Vm) -> MatchKeys {
        MatchKeys(["text", "start", "end", "groups", "named"].map(|k| vm.intern(k)))
    }
}

/// `{text, start, end, groups, named}`: the match, its character positions,
/// the texts of groups 1.. (nil where a group took no part) and of the named ones.
fn match_map(heap: &mut Heap, keys: &MatchKeys, pos: &mut CharPos, r: &Regex, c: &Captures) -> Value {
    let whole = c.get(0).expect("group 0 always matches");
    let text = heap.str(whole.as_str());
    let (start, end) = (pos.at(whole.start()), pos.at(whole.end()));
    let groups: Vec<Value> = c.iter().skip(1).map(|g| g.map_or(Value::Nil, |g| heap.str(g.as_str()))).collect();
    let mut named = Map::default();
    for n in r.capture_names().flatten() {
        let v = c.name(n).map_or(Value::Nil, |g| heap.str(g.as_str()));
        named.insert(Key::Str(n.into()), v);
    }
    let groups = heap.list(groups);
    let named = Value::Obj(heap.alloc(Obj::Map(named)));
    let mut m = Map::default();
    let values = [text, Value::Int(start as i64), Value::Int(end as i64), groups, named];
    for (k, v) in keys.0.iter().zip(values) {
        m.insert(Key::Str(k.clone()), v);
    }
    Value::Obj(heap.alloc(Obj::Map(m)))
}

/// Byte offsets of one string to character indices, counting on from the last
/// offset asked for (matches come in order), and free for ASCII.
struct CharPos<'a> {
    s: &'a str,
    ascii: bool,
    byte: usize,
    chars: usize,
}

impl<'a> CharPos<'a> {
    fn new(s: &'a str) -> CharPos<'a> {
        CharPos { s, ascii: s.is_ascii(), byte: 0, chars: 0 }
    }

    fn at(&mut self, byte: usize) -> usize {
        if self.ascii {
            return byte;
        }
        if byte < self.byte {
            (self.byte, self.chars) = (0, 0);
        }
        self.chars += self.s[self.byte..byte].chars().count();
        self.byte = byte;
        self.chars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_positions() {
        let mut p = CharPos::new("héllo wörld");
        assert_eq!(p.at(0), 0);
        assert_eq!(p.at(3), 2);
        assert_eq!(p.at(8), 7);
        assert_eq!(p.at(1), 1);
        assert_eq!(CharPos::new("abc").at(2), 2);
    }

    #[test]
    fn bad_patterns_say_where() {
        let Err(crate::vm::Fault::Error(e)) = compile("ab(c") else { panic!("compiled") };
        assert_eq!(e.1, "invalid regex \"ab(c\": unclosed group at character 2");
        let Err(crate::vm::Fault::Error(e)) = compile("é\\p{Nope}") else { panic!("compiled") };
        assert_eq!(e.1, "invalid regex \"é\\\\p{Nope}\": Unicode property not found at character 1");
    }

    #[test]
    fn the_cache_keeps_the_newest() {
        let a = compile("cache-a").unwrap();
        assert!(Rc::ptr_eq(&a, &compile("cache-a").unwrap()));
        for i in 0..CACHE_SIZE {
            compile(&format!("cache-{i}")).unwrap();
        }
        assert!(!Rc::ptr_eq(&a, &compile("cache-a").unwrap()));
        assert!(CACHE.with(|c| c.borrow().len()) <= CACHE_SIZE);
    }
}
