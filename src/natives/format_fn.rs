//! `format(fmt, ...args)` and `fmt.format(...args)`: Python's `str.format`
//! mini-language (see docs/format.md). Fields are `{}`, `{0}`, `{name}` (a key of
//! the map passed last), with `.key`/`[i]` lookups, `!r`/`!s` and a `:spec`.

use super::args::{arity, str_arg};
use crate::display::{display, fmt_float, repr};
use crate::limits::MAX_STRING;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Heap, Key, Res, Value, Vm};

const MAX_PRECISION: usize = 10_000; // digits of a float; more is never useful

pub fn register(vm: &mut Vm) {
    vm.define_native("format", format);
}

fn format(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("format", args, 1, usize::MAX)?;
    let f = str_arg(&vm.heap, "format", args[0])?;
    let s = format_str(&vm.heap, &f, &args[1..])?;
    Ok(vm.heap.string(s))
}

/// `fmt.format(...args)`, the string method.
pub fn method(heap: &mut Heap, fmt: &str, args: &[Value]) -> Res<Value> {
    let s = format_str(heap, fmt, args)?;
    Ok(heap.string(s))
}

fn fail<T>(msg: impl std::fmt::Display) -> Res<T> {
    err(ErrorKind::Value, format!("format(): {msg}"))
}

/// The arguments and how fields have numbered them so far.
struct Fields<'a> {
    heap: &'a Heap,
    args: &'a [Value],
    next: usize,
    auto: bool,
    manual: bool,
}

pub fn format_str(heap: &Heap, fmt: &str, args: &[Value]) -> Res<String> {
    let mut fields = Fields { heap, args, next: 0, auto: false, manual: false };
    let mut out = String::new();
    expand(&mut fields, fmt, &mut out, 0)?;
    Ok(out)
}

/// Appends `fmt` with its fields replaced; `depth` 1 is a spec's nested field.
fn expand(fields: &mut Fields, fmt: &str, out: &mut String, depth: u32) -> Res<()> {
    let mut rest = fmt;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            return fail("single '}' in the format string (write '}}' for a literal '}')");
        }
        let mut level = 0;
        let Some(end) = tail.find(|c| {
            level += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            level == 0
        }) else {
            return fail("'{' is never closed (write '{{' for a literal '{')");
        };
        field(fields, &tail[1..end], out, depth)?;
        if out.len() > MAX_STRING {
            return err(ErrorKind::Limit, format!("format(): result too long ({} bytes)", out.len()));
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(())
}

/// One replacement field, without its braces: `name[!conv][:spec]`.
fn field(fields: &mut Fields, text: &str, out: &mut String, depth: u32) -> Res<()> {
    let mut in_index = false;
    let name_end = text
        .find(|c| {
            match c {
                '[' => in_index = true,
                ']' => in_index = false,
                _ => {}
            }
            !in_index && (c == '!' || c == ':')
        })
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(name_end);
    let (conv, spec) = match rest.strip_prefix('!') {
        Some(r) => {
            let mut cs = r.chars();
            let c = cs.next();
            let after = cs.as_str();
            if !matches!(c, Some('r' | 's')) || !(after.is_empty() || after.starts_with(':')) {
                return fail(format!(
                    "unknown conversion '!{}' in {{{text}}} (use !r or !s)",
                    r.split(':').next().unwrap_or("")
                ));
            }
            (c, after.strip_prefix(':').unwrap_or(""))
        }
        None => (None, rest.strip_prefix(':').unwrap_or("")),
    };
    let v = lookup(fields, name, text)?;
    let spec = if spec.contains(['{', '}']) {
        if depth > 0 {
            return fail("a field inside a format spec cannot have fields in its own spec");
        }
        let mut s = String::new();
        expand(fields, spec, &mut s, 1)?;
        s
    } else {
        spec.to_string()
    };
    let heap = fields.heap;
    let spec = parse_spec(&spec)?;
    // The padding is made before the heap sees it: a width past the memory
    // left is refused first, in bytes of its fill (the format fuzzer's
    // `{2:>116633330}` padded 116 MB under a 64 MB limit, and a three-byte
    // fill at a third of that width 288 MB).
    let fill_bytes = spec.fill.map_or(1, char::len_utf8);
    let bytes = spec.width.saturating_mul(fill_bytes);
    if bytes > heap.headroom() {
        return err(ErrorKind::Memory, heap.over_message(bytes));
    }
    let s = match conv {
        Some('r') => format_text(&repr(heap, v), &spec)?,
        Some(_) => format_text(&display(heap, v), &spec)?,
        None => format_value(heap, v, &spec)?,
    };
    out.push_str(&s);
    Ok(())
}

/// The value a field name refers to: an argument, then `.key` and `[index]` steps.
fn lookup(fields: &mut Fields, name: &str, text: &str) -> Res<Value> {
    let first_end = name.find(['.', '[']).unwrap_or(name.len());
    let (first, mut path) = name.split_at(first_end);
    let mut v = if first.is_empty() {
        if fields.manual {
            return fail("cannot switch from numbered fields ({0}) to automatic ones ({})");
        }
        fields.auto = true;
        fields.next += 1;
        positional(fields, fields.next - 1)?
    } else if first.bytes().all(|b| b.is_ascii_digit()) {
        if fields.auto {
            return fail("cannot switch from automatic fields ({}) to numbered ones ({0})");
        }
        fields.manual = true;
        positional(fields, first.parse().unwrap_or(usize::MAX))?
    } else {
        let map = fields
            .args
            .last()
            .copied()
            .filter(|&m| matches!(m, Value::Obj(h) if matches!(fields.heap.get(h), Obj::Map(_))));
        let Some(map) = map else {
            return fail(format!("no argument named '{first}' (pass a map of names as the last argument)"));
        };
        key(fields.heap, map, first).or_else(|_| fail(format!("no argument named '{first}' in the map")))?
    };
    while !path.is_empty() {
        let (step, rest) = if let Some(p) = path.strip_prefix('.') {
            let end = p.find(['.', '[']).unwrap_or(p.len());
            (&p[..end], &p[end..])
        } else if let Some(p) = path.strip_prefix('[') {
            let Some(end) = p.find(']') else { return fail(format!("'[' without ']' in {{{text}}}")) };
            (&p[..end], &p[end + 1..])
        } else {
            // `{0[a]x}`: a key ends only at `.`, `[` or the spec (the fuzzer's
            // `{4[a]\u{35d}]}` sliced a character in two here).
            return fail(format!("'.' or '[' expected after ']' in {{{text}}}"));
        };
        if step.is_empty() {
            return fail(format!("empty key in {{{text}}}"));
        }
        v = key(fields.heap, v, step)?;
        path = rest;
    }
    Ok(v)
}

fn positional(fields: &Fields, i: usize) -> Res<Value> {
    match fields.args.get(i) {
        Some(v) => Ok(*v),
        None => {
            let (n, field) = (fields.args.len(), if fields.auto { String::new() } else { i.to_string() });
            fail(format!("no argument {i} for field {{{field}}} ({n} given)"))
        }
    }
}

/// `v.step`/`v[step]`: a map key (an int key if `step` is digits and the map has
/// it) or a list index.
fn key(heap: &Heap, v: Value, step: &str) -> Res<Value> {
    let Value::Obj(h) = v else {
        return fail(format!("cannot look up '{step}' in {}", heap.type_name(v)));
    };
    let int = step.parse::<i64>().ok();
    let found = match heap.get(h) {
        Obj::Map(m) => int.and_then(|i| m.get(&Key::Int(i))).or_else(|| m.get(&Key::Str(step.into()))).copied(),
        Obj::List(l) => int.and_then(|i| super::resolve_index(i, l.len())).map(|i| l[i]),
        _ => return fail(format!("cannot look up '{step}' in {}", heap.type_name(v))),
    };
    found.map_or_else(|| fail(format!("no key or index '{step}' in {}", heap.type_name(v))), Ok)
}

/// `[[fill]align][sign][#][0][width][,|_][.precision][type]`.
#[derive(Default)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: Option<char>,
    alt: bool,
    zero: bool,
    width: usize,
    group: Option<char>,
    prec: Option<usize>,
    ty: Option<char>,
}

fn parse_spec(s: &str) -> Res<Spec> {
    let cs: Vec<char> = s.chars().collect();
    let mut spec = Spec::default();
    let is_align = |c: Option<&char>| matches!(c, Some('<' | '>' | '^' | '='));
    let mut i = 0;
    if cs.len() >= 2 && is_align(cs.get(1)) {
        (spec.fill, spec.align, i) = (Some(cs[0]), Some(cs[1]), 2);
    } else if is_align(cs.first()) {
        (spec.align, i) = (Some(cs[0]), 1);
    }
    if let Some(&c @ ('+' | '-' | ' ')) = cs.get(i) {
        (spec.sign, i) = (Some(c), i + 1);
    }
    if cs.get(i) == Some(&'#') {
        (spec.alt, i) = (true, i + 1);
    }
    if cs.get(i) == Some(&'0') {
        (spec.zero, i) = (true, i + 1);
    }
    let number = |i: &mut usize, what: &str, max: usize| -> Res<Option<usize>> {
        let start = *i;
        while cs.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
        if *i == start {
            return Ok(None);
        }
        let n: String = cs[start..*i].iter().collect();
        match n.parse::<usize>() {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => err(ErrorKind::Limit, format!("format(): {what} {n} is too large")),
        }
    };
    spec.width = number(&mut i, "width", MAX_STRING)?.unwrap_or(0);
    if let Some(&c @ (',' | '_')) = cs.get(i) {
        (spec.group, i) = (Some(c), i + 1);
    }
    if cs.get(i) == Some(&'.') {
        i += 1;
        spec.prec = number(&mut i, "precision", MAX_PRECISION)?;
        if spec.prec.is_none() {
            return fail(format!("missing precision after '.' in format spec '{s}'"));
        }
    }
    if let (Some(&c), true) = (cs.get(i), i + 1 == cs.len()) {
        if !"bcdeEfFgGosxX%".contains(c) {
            return fail(format!("unknown format type '{c}' in format spec '{s}'"));
        }
        (spec.ty, i) = (Some(c), i + 1);
    }
    if i < cs.len() {
        return fail(format!("invalid format spec '{s}'"));
    }
    Ok(spec)
}

fn format_value(heap: &Heap, v: Value, spec: &Spec) -> Res<String> {
    match v {
        Value::Int(i) => format_int(i, spec),
        Value::Float(f) => format_float(f, spec),
        _ => match (heap.as_str(v), spec.ty) {
            (Some(s), _) => format_text(&s.s, spec),
            (None, None | Some('s')) => format_text(&display(heap, v), spec),
            (None, Some(t)) => mismatch(heap.type_name(v), t),
        },
    }
}

fn mismatch<T>(kind: &str, ty: char) -> Res<T> {
    let hint = match ty {
        's' => "a string",
        'b' | 'c' | 'd' | 'o' | 'x' | 'X' => "an int",
        _ => "a number",
    };
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    fail(format!("format type '{ty}' needs {hint}, not {article} {kind}"))
}

/// A string's spec: width, alignment (left by default) and precision (a cut).
fn format_text(s: &str, spec: &Spec) -> Res<String> {
    if let Some(t) = spec.ty.filter(|&t| t != 's') {
        return mismatch("string", t);
    }
    let bad = [
        (spec.sign.is_some(), "a sign"),
        (spec.alt, "'#'"),
        (spec.group.is_some(), "grouping"),
        (spec.align == Some('='), "'=' alignment"),
    ];
    if let Some((_, what)) = bad.iter().find(|(b, _)| *b) {
        return fail(format!("{what} is not allowed with a string"));
    }
    let s = match spec.prec {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    };
    let fill = spec.fill.unwrap_or(if spec.zero { '0' } else { ' ' });
    Ok(pad("", &s, spec.width, spec.align.unwrap_or('<'), fill))
}

fn format_int(i: i64, spec: &Spec) -> Res<String> {
    let ty = spec.ty.unwrap_or('d');
    if matches!(ty, 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%') {
        return format_float(i as f64, spec);
    }
    if ty == 's' {
        return mismatch("int", 's');
    }
    if spec.prec.is_some() {
        return fail("precision is not allowed with an integer (use type 'f' for decimals)");
    }
    let n = i.unsigned_abs();
    let (digits, prefix, every) = match ty {
        'b' => (format!("{n:b}"), "0b", 4),
        'o' => (format!("{n:o}"), "0o", 4),
        'x' => (format!("{n:x}"), "0x", 4),
        'X' => (format!("{n:X}"), "0X", 4),
        'c' => {
            if spec.sign.is_some() || spec.alt || spec.group.is_some() {
                return fail("a sign, '#' or grouping is not allowed with type 'c'");
            }
            let Some(c) = u32::try_from(i).ok().and_then(char::from_u32) else {
                return fail(format!("{i} is not a Unicode code point (type 'c')"));
            };
            // Aligned, filled and zero-padded as a number, as Python does (`{:05c}` is `0000A`).
            return Ok(number(false, "", "", &c.to_string(), 3, spec));
        }
        _ => (n.to_string(), "", 3),
    };
    if every == 4 && spec.group == Some(',') {
        return fail(format!("',' grouping is not allowed with type '{ty}' (use '_')"));
    }
    let prefix = if spec.alt { prefix } else { "" };
    Ok(number(i < 0, prefix, &digits, "", every, spec))
}

fn format_float(f: f64, spec: &Spec) -> Res<String> {
    let ty = spec.ty;
    if let Some(t) = ty.filter(|t| !"eEfFgG%".contains(*t)) {
        return mismatch("float", t);
    }
    let upper = matches!(ty, Some('E' | 'F' | 'G'));
    let x = f.abs();
    let mut body = if !f.is_finite() {
        let s = if f.is_nan() { "nan" } else { "inf" };
        format!("{s}{}", if ty == Some('%') { "%" } else { "" })
    } else {
        let p = spec.prec.unwrap_or(6);
        match ty {
            None if spec.prec.is_none() => fmt_float(x),
            None => general(x, p.max(1), spec.alt, true),
            Some('f' | 'F') => format!("{x:.p$}"),
            Some('e' | 'E') => sci(x, p),
            Some('%') => format!("{:.p$}%", x * 100.0),
            _ => general(x, p.max(1), spec.alt, false),
        }
    };
    if spec.alt && f.is_finite() && !body.contains('.') {
        let at = body.find(['e', '%']).unwrap_or(body.len());
        body.insert(at, '.');
    }
    if upper {
        body = body.to_uppercase();
    }
    let int_len = body.bytes().take_while(u8::is_ascii_digit).count();
    let (digits, rest) = body.split_at(int_len);
    Ok(number(f.is_sign_negative() && !f.is_nan(), "", digits, rest, 3, spec))
}

/// `x` with `p - 1` digits after the point in exponent form, exponent signed and at
/// least two digits (`1.50e+03`), as C and Python write it.
fn sci(x: f64, p: usize) -> String {
    let s = format!("{x:.p$e}");
    let (mantissa, exp) = s.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an int");
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// Type `g` (and no type with a precision, `none`): `p` significant digits, fixed
/// or exponent form by the exponent, trailing zeros dropped unless `#`.
fn general(x: f64, p: usize, alt: bool, none: bool) -> String {
    let exp = if x == 0.0 { 0 } else { sci(x, p - 1).split_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0) };
    // With no type, Python keeps a digit after the point, so it switches a step sooner.
    let limit = if none { p as i32 - 1 } else { p as i32 };
    let mut s = if (-4..limit).contains(&exp) {
        let decimals = (p as i32 - 1 - exp) as usize;
        format!("{x:.decimals$}")
    } else {
        sci(x, p - 1)
    };
    if !alt {
        let at = s.find('e').unwrap_or(s.len());
        let (mantissa, exp) = s.split_at(at);
        let mantissa =
            if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
        s = format!("{mantissa}{exp}");
    }
    if none && !s.contains(['.', 'e']) {
        s.push_str(".0");
    }
    s
}

/// Joins sign, prefix, grouped digits and the rest, padded as the spec says.
fn number(neg: bool, prefix: &str, digits: &str, rest: &str, every: usize, spec: &Spec) -> String {
    let sign = match (neg, spec.sign) {
        (true, _) => "-",
        (false, Some('+')) => "+",
        (false, Some(' ')) => " ",
        _ => "",
    };
    let head = format!("{sign}{prefix}");
    let fill = spec.fill.unwrap_or(if spec.zero { '0' } else { ' ' });
    let align = spec.align.unwrap_or(if spec.zero { '=' } else { '>' });
    let Some(sep) = spec.group else {
        return pad(&head, &format!("{digits}{rest}"), spec.width, align, fill);
    };
    // Zero padding with grouping adds grouped zeros (`00,001,234`): the fewest digits that fill.
    let target = spec.width.saturating_sub(head.len() + rest.chars().count());
    let grouped_len = |m: usize| m + m.saturating_sub(1) / every;
    let mut m = digits.len().max(target * every / (every + 1));
    while fill == '0' && align == '=' && grouped_len(m) < target {
        m += 1;
    }
    let zero_filled = fill == '0' && align == '=';
    let zeros = if zero_filled { m - digits.len() } else { 0 };
    // Made in one allocation: a wide zero padding is the whole result, and
    // copies of it (the zeros, grouped, joined, padded) made the format
    // fuzzer's `{:066666263_}` peak at 266 MB under a 64 MB limit.
    let n = zeros + digits.len();
    let mut out = String::with_capacity(head.len() + n + n.saturating_sub(1) / every * sep.len_utf8() + rest.len());
    if zero_filled {
        out.push_str(&head);
    }
    group(zeros, digits, sep, every, &mut out);
    out.push_str(rest);
    if zero_filled {
        // The grouped zeros reach the width: nothing is left to pad.
        return out;
    }
    pad(&head, &out, spec.width, align, fill)
}

/// Appends `zeros` zeros then the ASCII `digits` to `out`, with `sep` before
/// each group of `every` counted from the right. Whole groups of zeros are
/// appended a piece at a time: a width of millions (`{:066666263_}`) is the
/// whole result, and a character at a time took 1.6 s for 133 MB.
fn group(zeros: usize, digits: &str, sep: char, every: usize, out: &mut String) {
    let n = zeros + digits.len();
    let push = |out: &mut String, i: usize, c: char| {
        if i > 0 && (n - i).is_multiple_of(every) {
            out.push(sep);
        }
        out.push(c);
    };
    // Zeros up to the first group boundary...
    let mut i = 0;
    while i < zeros && (i == 0 || !(n - i).is_multiple_of(every)) {
        push(out, i, '0');
        i += 1;
    }
    // ...then whole groups, each a separator and `every` zeros...
    let whole = (zeros - i) / every;
    if whole > 0 {
        let piece: String = std::iter::once(sep).chain(std::iter::repeat_n('0', every)).collect();
        for _ in 0..whole {
            out.push_str(&piece);
        }
        i += whole * every;
    }
    // ...and the rest one at a time.
    for c in std::iter::repeat_n('0', zeros - i).chain(digits.chars()) {
        push(out, i, c);
        i += 1;
    }
}

/// `head` (sign and prefix) then `body`, filled to `width` characters; `=` puts
/// the fill between them.
fn pad(head: &str, body: &str, width: usize, align: char, fill: char) -> String {
    let len = head.chars().count() + body.chars().count();
    let n = width.saturating_sub(len);
    let (before, between, after) = match align {
        '<' => (0, 0, n),
        '^' => (n / 2, 0, n - n / 2),
        '=' => (0, n, 0),
        _ => (n, 0, 0),
    };
    // One allocation: a wide padding is the whole result.
    let mut out = String::with_capacity(head.len() + body.len() + n * fill.len_utf8());
    out.extend(std::iter::repeat_n(fill, before));
    out.push_str(head);
    out.extend(std::iter::repeat_n(fill, between));
    out.push_str(body);
    out.extend(std::iter::repeat_n(fill, after));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[Value]) -> String {
        format_str(&crate::natives::vm().heap, fmt, args).unwrap()
    }

    #[test]
    fn a_width_past_the_memory_left_is_refused_before_padding() {
        let mut vm = crate::natives::vm();
        vm.heap.set_limit(1 << 20);
        let r = format_str(&vm.heap, "{:>2000000}", &[Value::Int(1)]);
        assert!(matches!(r, Err(crate::vm::Fault::Error(e)) if e.0 == ErrorKind::Memory));
        assert_eq!(format_str(&vm.heap, "{:>5}", &[Value::Int(1)]).ok().as_deref(), Some("    1"));
        // A fill of three bytes needs three times the room.
        assert_eq!(format_str(&vm.heap, "{:>400000}", &[Value::Int(1)]).map(|s| s.len()).ok(), Some(400_000));
        let r = format_str(&vm.heap, "{:\u{f3ea}>400000}", &[Value::Int(1)]);
        assert!(matches!(r, Err(crate::vm::Fault::Error(e)) if e.0 == ErrorKind::Memory));
        assert_eq!(format_str(&vm.heap, "{:*^6}", &[Value::Int(1)]).ok().as_deref(), Some("**1***"));
        assert_eq!(format_str(&vm.heap, "{:0=+5}", &[Value::Int(1)]).ok().as_deref(), Some("+0001"));
    }

    #[test]
    fn numbers_match_python() {
        use Value::{Float as F, Int as I};
        assert_eq!(f("{:,}", &[I(i64::MIN)]), "-9,223,372,036,854,775,808");
        assert_eq!(f("{:#b}", &[I(-5)]), "-0b101");
        assert_eq!(f("{:.3}", &[F(1.0)]), "1.0");
        assert_eq!(f("{:.1}", &[F(1.0)]), "1e+00");
        assert_eq!(f("{:g}", &[F(123456789.0)]), "1.23457e+08");
        assert_eq!(f("{:.3e}", &[F(9.9996)]), "1.000e+01");
        assert_eq!(f("{:e}", &[F(1e-300)]), "1.000000e-300");
        assert_eq!(f("{:_}", &[I(12345)]), "12_345");
        assert_eq!(f("{:x<+6}", &[I(3)]), "+3xxxx");
        let grouped = |d: &str, sep, every| {
            let mut out = String::new();
            group(0, d, sep, every, &mut out);
            out
        };
        assert_eq!(grouped("1234567", ',', 3), "1,234,567");
        assert_eq!(grouped("123", ',', 3), "123");
        assert_eq!(grouped("11111111", '_', 4), "1111_1111");
        // Zeros grouped a piece at a time read as zeros grouped one at a time.
        for (zeros, digits, every) in (0..30).flat_map(|z| ["", "7", "123456"].map(move |d| (z, d, 3 + z % 2))) {
            let all = "0".repeat(zeros) + digits;
            let mut out = String::new();
            group(zeros, digits, '_', every, &mut out);
            assert_eq!(out, grouped(&all, '_', every), "{zeros} zeros, {digits:?}, every {every}");
        }
        assert_eq!(f("{:09_}", &[I(-12345)]), "-0_012_345");
        assert_eq!(f("{:010,}", &[I(1234)]), "00,001,234");
        assert_eq!(pad("-", "5", 4, '=', '0'), "-005");
        assert_eq!(pad("", "é", 4, '^', '·'), "·é··");
    }
}
