//! More string methods: searching from either end, counting, trimming given
//! characters, padding, case, character classes, `split` with a limit, `splitlines`.
//! Positions are character indices, as in `string.rs`.

use super::args::{arity, int_arg, str_arg};
use super::string::text;
use crate::limits::MAX_STRING;
use crate::vm::{err, ErrorKind, Handle, Heap, Res, Value, Vm};

// The methods of this file, in strings' table (`string::CLASS`).

/// `find` and `rfind`.
pub(super) fn find(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let (s, chars) = text(&vm.heap, h);
    let sub = str_arg(&vm.heap, name, args[0])?;
    let b = if name == "find" { s.find(&*sub) } else { s.rfind(&*sub) };
    Ok(Value::Int(b.map_or(-1, |b| char_index(&s, chars, b))))
}

pub(super) fn count(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let (s, chars) = text(&vm.heap, h);
    let sub = str_arg(&vm.heap, name, args[0])?;
    let n = if sub.is_empty() { chars + 1 } else { s.matches(&*sub).count() };
    Ok(Value::Int(n as i64))
}

/// `trim`, `trim_start` and `trim_end`.
pub(super) fn trim(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 1)?;
    let s = text(&vm.heap, h).0;
    let heap = &mut vm.heap;
    let set = match args.first() {
        Some(v) => Some(str_arg(heap, name, *v)?),
        None => None,
    };
    let t = trim_str(&s, name, set.as_deref());
    Ok(if t.len() == s.len() { Value::Obj(h) } else { heap.str(t) })
}

/// `pad_start`, `pad_end` and `center`.
pub(super) fn pad(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 1, 2)?;
    let (s, chars) = text(&vm.heap, h);
    let heap = &mut vm.heap;
    let n = int_arg(heap, name, args[0])?;
    let fill = match args.get(1) {
        Some(v) => str_arg(heap, name, *v)?,
        None => " ".into(),
    };
    if fill.is_empty() {
        return err(ErrorKind::Value, format!("{name}() fill must not be empty"));
    }
    let pad = (n.max(0) as usize).saturating_sub(chars);
    if s.len() as u128 + pad as u128 * 4 > MAX_STRING as u128 {
        return err(ErrorKind::Limit, format!("{name}() result too long ({n} characters)"));
    }
    heap.reserve(s.len() + pad * fill.len())?;
    let (left, right) = match name {
        "pad_start" => (pad, 0),
        "pad_end" => (0, pad),
        _ => (pad / 2, pad - pad / 2),
    };
    let out = format!("{}{s}{}", fill_of(&fill, left), fill_of(&fill, right));
    Ok(heap.string(out))
}

pub(super) fn title(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let s = text(&vm.heap, h).0;
    let mut out = String::with_capacity(s.len());
    let mut after_letter = false;
    for c in s.chars() {
        if after_letter {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        after_letter = c.is_alphabetic() || c == '\'';
    }
    Ok(vm.heap.string(out))
}

pub(super) fn capitalize(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let s = text(&vm.heap, h).0;
    let mut it = s.chars();
    let out = match it.next() {
        Some(c) => c.to_uppercase().chain(it.as_str().to_lowercase().chars()).collect(),
        None => String::new(),
    };
    Ok(vm.heap.string(out))
}

/// `is_digit`, `is_alpha` and `is_space`.
pub(super) fn is_class(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let s = text(&vm.heap, h).0;
    let class: fn(char) -> bool = match name {
        "is_digit" => |c| c.is_ascii_digit(),
        "is_alpha" => char::is_alphabetic,
        _ => char::is_whitespace,
    };
    Ok(Value::Bool(!s.is_empty() && s.chars().all(class)))
}

pub(super) fn split(vm: &mut Vm, h: Handle, _: &str, args: &[Value]) -> Res<Value> {
    let (s, chars) = text(&vm.heap, h);
    split_str(&mut vm.heap, &s, chars == s.len(), args)
}

pub(super) fn splitlines(vm: &mut Vm, h: Handle, name: &str, args: &[Value]) -> Res<Value> {
    arity(name, args, 0, 0)?;
    let s = text(&vm.heap, h).0;
    let heap = &mut vm.heap;
    let items = lines(&s).map(|l| heap.str(l)).collect();
    Ok(heap.list(items))
}

/// The character index of byte offset `b`.
fn char_index(s: &str, chars: usize, b: usize) -> i64 {
    if chars == s.len() {
        b as i64
    } else {
        s[..b].chars().count() as i64
    }
}

/// `trim`, `trim_start`, `trim_end`: whitespace, or any of the characters in `set`.
fn trim_str<'a>(s: &'a str, name: &str, set: Option<&str>) -> &'a str {
    let hit = |c: char| set.map_or(c.is_whitespace(), |set| set.contains(c));
    match name {
        "trim_start" => s.trim_start_matches(hit),
        "trim_end" => s.trim_end_matches(hit),
        _ => s.trim_matches(hit),
    }
}

/// `n` characters of `fill` repeated (cut short at the end), as JavaScript's `padStart`.
fn fill_of(fill: &str, n: usize) -> String {
    fill.chars().cycle().take(n).collect()
}

/// `s.split(sep?, limit?)`: at most `limit` splits (Python's `maxsplit`; negative: no
/// limit). No separator or `nil` splits on runs of whitespace; an empty one into characters.
/// `ascii`: `s` is known to be ASCII, so its parts are.
fn split_str(heap: &mut Heap, s: &str, ascii: bool, args: &[Value]) -> Res<Value> {
    arity("split", args, 0, 2)?;
    let limit = match args.get(1) {
        Some(v) => int_arg(heap, "split", *v)?,
        None => -1,
    };
    let limit = if limit < 0 { usize::MAX } else { limit as usize };
    let sep = match args.first() {
        None | Some(Value::Nil) => None,
        Some(v) => Some(str_arg(heap, "split", *v)?),
    };
    // The heap is asked before the parts are made: the parts of a big string
    // must not be built past the memory limit (issue 37). A big string's are
    // counted first, so that not even their list is made past it; a short
    // one's list is small, and a second pass cost a fifth of splitting a line.
    let big = s.len() > SHORT_TEXT;
    if big {
        heap.reserve(match sep.as_deref() {
            None => Words::new(s, ascii, limit).count() * PART_BYTES,
            Some("") => chars_bytes(s.chars().take(limit.saturating_add(1))),
            Some(sep) => (Matches::new(s, sep).take(limit).count() + 1) * PART_BYTES,
        })?;
    }
    let parts: Vec<&str> = match sep.as_deref() {
        None => Words::new(s, ascii, limit).collect(),
        Some("") => {
            let mut parts: Vec<&str> = Vec::new();
            let mut it = s.char_indices().peekable();
            while let Some((b, c)) = it.next() {
                if parts.len() == limit {
                    parts.push(&s[b..]);
                    break;
                }
                parts.push(&s[b..b + c.len_utf8()]);
                if it.peek().is_none() {
                    break;
                }
            }
            parts
        }
        Some(sep) => {
            let mut parts = Vec::new();
            let mut start = 0;
            for at in Matches::new(s, sep).take(limit) {
                parts.push(&s[start..at]);
                start = at + sep.len();
            }
            parts.push(&s[start..]);
            parts
        }
    };
    if !big {
        heap.reserve(parts.len() * PART_BYTES)?;
    }
    let items = match ascii {
        true => parts.into_iter().map(|p| heap.ascii_str(p)).collect(),
        false => parts.into_iter().map(|p| heap.str(p)).collect(),
    };
    Ok(heap.list(items))
}

/// `split()`'s parts: the runs of text between whitespace (Unicode's
/// White_Space), at most `limit` of them and then the rest (its trailing
/// whitespace kept, as Python's `maxsplit`). ASCII text is scanned byte by
/// byte; decoding each character cost a third of splitting words.
struct Words<'a> {
    rest: &'a str,
    ascii: bool,
    left: usize,
}

impl<'a> Words<'a> {
    fn new(s: &'a str, ascii: bool, limit: usize) -> Words<'a> {
        let mut w = Words { rest: s, ascii, left: limit };
        w.skip_space();
        w
    }

    fn skip_space(&mut self) {
        self.rest = match self.ascii {
            true => &self.rest[self.rest.bytes().position(|b| !ascii_space(b)).unwrap_or(self.rest.len())..],
            false => self.rest.trim_start(),
        };
    }
}

/// Is `b` White_Space, for ASCII text (`char::is_whitespace`'s ASCII part)?
fn ascii_space(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        if self.left == 0 {
            return Some(std::mem::take(&mut self.rest));
        }
        self.left -= 1;
        let end = match self.ascii {
            true => self.rest.bytes().position(ascii_space),
            false => self.rest.find(char::is_whitespace),
        };
        let (word, rest) = self.rest.split_at(end.unwrap_or(self.rest.len()));
        self.rest = rest;
        self.skip_space();
        Some(word)
    }
}

/// The byte offsets of `sep`'s non-overlapping occurrences in `s`, left to
/// right: memchr for a one-byte separator (a line's `,` or a text's `\n`),
/// else one memmem searcher for both of `split`'s passes. `str::splitn` set
/// up a Two-Way searcher per call and stepped it byte by byte: splitting
/// short lines spent more there than in making the parts.
#[allow(clippy::large_enum_variant)] // one on the stack per call: boxing would cost an allocation
enum Matches<'a> {
    Byte(memchr::Memchr<'a>),
    Bytes(memchr::memmem::FindIter<'a, 'a>),
}

impl<'a> Matches<'a> {
    fn new(s: &'a str, sep: &'a str) -> Matches<'a> {
        match sep.as_bytes() {
            &[b] => Matches::Byte(memchr::memchr_iter(b, s.as_bytes())),
            sep => Matches::Bytes(memchr::memmem::find_iter(s.as_bytes(), sep)),
        }
    }
}

impl Iterator for Matches<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            Matches::Byte(it) => it.next(),
            Matches::Bytes(it) => it.next(),
        }
    }
}

/// What a list of new strings holds per item: its slot and the string's object.
const PART_BYTES: usize = 16 + 32;

/// Text up to this long is split in one pass (see `split_str`).
const SHORT_TEXT: usize = 4096;

/// What a list of these characters as strings holds: ASCII ones are shared.
pub(super) fn chars_bytes(chars: impl Iterator<Item = char>) -> usize {
    chars.map(|c| if c.is_ascii() { 16 } else { PART_BYTES }).sum()
}

/// Lines split at `\n`, `\r\n` or `\r`, without their ends; no empty last line
/// for text ending in a newline.
fn lines(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match rest.find(['\n', '\r']) {
            None => Some(std::mem::take(&mut rest)),
            Some(i) => {
                let line = &rest[..i];
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
                Some(line)
            }
        }
    })
}
