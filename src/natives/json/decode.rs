//! `json_decode`'s parser: values built bottom-up on an explicit stack (no
//! Rust recursion), nesting stopped at `limits::MAX_DEPTH`.

use crate::limits::MAX_DEPTH;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Heap, Key, Res, Value};

/// An array or object being decoded; an object holds the key its next value gets.
enum Partial {
    List(Vec<Value>),
    Map(crate::vm::value::Map, crate::vm::Str),
}

pub(super) struct Parser<'a> {
    pub(super) src: &'a str,
    pub(super) pos: usize,
}

impl Parser<'_> {
    pub(super) fn parse(mut self, heap: &mut Heap) -> Res<Value> {
        let mut stack: Vec<Partial> = Vec::new();
        'value: loop {
            self.skip_ws();
            let mut value = match self.peek() {
                Some(b'[') | Some(b'{') if stack.len() >= MAX_DEPTH => {
                    return self.fail_as(ErrorKind::Limit, &format!("nesting deeper than {MAX_DEPTH}"));
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        heap.list(Vec::new())
                    } else {
                        stack.push(Partial::List(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Obj(heap.alloc(Obj::Map(crate::vm::value::new_map(0))))
                    } else {
                        let key = self.key()?;
                        stack.push(Partial::Map(crate::vm::value::new_map(0), key));
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    let s = self.string()?;
                    heap.string(s)
                }
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.word("true", Value::Bool(true))?,
                Some(b'f') => self.word("false", Value::Bool(false))?,
                Some(b'n') => self.word("null", Value::Nil)?,
                _ => return self.unexpected(),
            };
            // Attach the finished value to the open containers, closing those that end.
            loop {
                self.skip_ws();
                match stack.last_mut() {
                    None => {
                        if self.pos < self.src.len() {
                            return self.fail("unexpected trailing characters");
                        }
                        return Ok(value);
                    }
                    Some(Partial::List(items)) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let Some(Partial::List(items)) = stack.pop() else { unreachable!() };
                                value = heap.list(items);
                            }
                            _ => return self.fail_here("expected ',' or ']'"),
                        }
                    }
                    Some(Partial::Map(map, key)) => {
                        map.insert(Key::Str(key.clone()), value);
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                *key = self.key()?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let Some(Partial::Map(map, _)) = stack.pop() else { unreachable!() };
                                value = Value::Obj(heap.alloc(Obj::Map(map)));
                            }
                            _ => return self.fail_here("expected ',' or '}'"),
                        }
                    }
                }
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// An object key and the `:` after it.
    fn key(&mut self) -> Res<crate::vm::Str> {
        if self.peek() != Some(b'"') {
            return self.fail_here("expected a string key");
        }
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return self.fail_here("expected ':'");
        }
        self.pos += 1;
        Ok(key.into())
    }

    fn word(&mut self, word: &str, v: Value) -> Res<Value> {
        if self.src[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            self.unexpected()
        }
    }

    fn number(&mut self) -> Res<Value> {
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let digits = |p: &mut Self| {
            let s = p.pos;
            while p.peek().is_some_and(|b| b.is_ascii_digit()) {
                p.pos += 1;
            }
            p.pos - s
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return self.fail_here("expected a digit"),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.pos += 1;
            if digits(self) == 0 {
                return self.fail_here("expected a digit after '.'");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integral = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return self.fail_here("expected a digit in the exponent");
            }
        }
        let text = std::str::from_utf8(&bytes[start..self.pos]).expect("ASCII digits");
        if integral {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Int(i));
            }
        }
        Ok(Value::Float(text.parse::<f64>().expect("validated JSON number")))
    }

    /// A string literal starting at the opening quote.
    fn string(&mut self) -> Res<String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.src[run..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.pos += 1;
                            out.push(self.unicode_escape()?);
                            continue;
                        }
                        _ => return self.fail_here("invalid escape"),
                    };
                    self.pos += 1;
                    out.push(c);
                }
                Some(_) => return self.fail_here("control character in string"),
                None => return self.fail_here("unterminated string"),
            }
        }
    }

    /// The `XXXX` of `\uXXXX` (already past the `u`), joining surrogate pairs.
    fn unicode_escape(&mut self) -> Res<char> {
        let start = self.pos;
        let hi = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !self.src[self.pos..].starts_with("\\u") {
                self.pos = start;
                return self.fail_here("unpaired surrogate in \\u escape");
            }
            self.pos += 2;
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                self.pos = start;
                return self.fail_here("unpaired surrogate in \\u escape");
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            hi
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => {
                self.pos = start;
                self.fail_here("unpaired surrogate in \\u escape")
            }
        }
    }

    fn hex4(&mut self) -> Res<u32> {
        let hex = self.src.as_bytes().get(self.pos..self.pos + 4);
        match hex.and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u32::from_str_radix(h, 16).ok()) {
            Some(v) if hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => {
                self.pos += 4;
                Ok(v)
            }
            _ => self.fail_here("expected 4 hex digits in \\u escape"),
        }
    }

    fn unexpected<T>(&self) -> Res<T> {
        match self.src[self.pos..].chars().next() {
            Some(c) => self.fail(&format!("unexpected character {c:?}")),
            None => self.fail("unexpected end of input"),
        }
    }

    /// An error about the current position, saying so when that is the end.
    fn fail_here<T>(&self, what: &str) -> Res<T> {
        if self.pos >= self.src.len() {
            return self.fail(&format!("unexpected end of input ({what})"));
        }
        self.fail(what)
    }

    fn fail<T>(&self, what: &str) -> Res<T> {
        self.fail_as(ErrorKind::Value, what)
    }

    /// `fail` with an error kind other than `Value` (a limit).
    fn fail_as<T>(&self, kind: ErrorKind, what: &str) -> Res<T> {
        let before = &self.src[..self.pos];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        err(kind, format!("invalid JSON at line {line} column {col}: {what}"))
    }
}
