//! `std/url` (docs/url.md) on the `url` crate, which implements the WHATWG
//! URL standard (what browsers do; for resolving references it agrees with
//! RFC 3986 section 5): parsing into a map of parts, resolving references,
//! building from parts, percent-encoding, query strings to and from maps.
//! `std/http` parses request targets and redirect locations with it.

use super::args::{arity, text_arg};
use crate::limits::MAX_STRING;
use crate::vm::object::Obj;
use crate::vm::{err, ErrorKind, Key, NativeFn, Res, Value, Vm};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};
use url::{form_urlencoded, Url};

/// What `url.escape` leaves alone: the unreserved characters (RFC 3986 2.3).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

pub fn register(vm: &mut Vm) {
    vm.define_hidden("url.parse", NativeFn::Value(parse_fn));
    vm.define_hidden("url.resolve", NativeFn::Value(resolve));
    vm.define_hidden("url.build", NativeFn::Value(build));
    vm.define_hidden("url.join_path", NativeFn::Value(join_path));
    vm.define_hidden("url.escape", NativeFn::Value(|vm, a| text_fn(vm, a, "url.escape", escape)));
    vm.define_hidden("url.unescape", NativeFn::Value(|vm, a| unescape_fn(vm, a, "url.unescape", false)));
    vm.define_hidden("url.query_escape", NativeFn::Value(|vm, a| text_fn(vm, a, "url.query_escape", query_escape)));
    vm.define_hidden("url.query_unescape", NativeFn::Value(|vm, a| unescape_fn(vm, a, "url.query_unescape", true)));
    vm.define_hidden("url.parse_query", NativeFn::Value(parse_query));
    vm.define_hidden("url.query_pairs", NativeFn::Value(query_pairs));
    vm.define_hidden("url.encode_query", NativeFn::Value(encode_query));
}

/// `text` parsed as an absolute URL, or a `value` error naming it and why.
fn absolute(name: &str, text: &str) -> Res<Url> {
    Url::parse(text).or_else(|e| err(ErrorKind::Value, format!("{name}(): bad URL {text:?}: {e}")))
}

/// `reference` resolved against `base` (RFC 3986 5.2).
fn joined(name: &str, base: &str, reference: &str) -> Res<Url> {
    let b = absolute(name, base)?;
    b.join(reference)
        .or_else(|e| err(ErrorKind::Value, format!("{name}(): cannot resolve {reference:?} against {base:?}: {e}")))
}

/// `url.parse(s, base = nil)`: the parts of an absolute URL (or of `s`
/// resolved against `base`) as a map: href, scheme, username, password,
/// host, port, path, query, fragment. Absent parts are nil (username "").
fn parse_fn(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("url.parse", args, 1, 2)?;
    let s = text_arg(&vm.heap, "url.parse", "a string URL", args[0])?;
    let u = match args.get(1) {
        None | Some(Value::Nil) => absolute("url.parse", &s)?,
        Some(&b) => joined("url.parse", &text_arg(&vm.heap, "url.parse", "a string base URL", b)?, &s)?,
    };
    Ok(parts(vm, &u))
}

fn parts(vm: &mut Vm, u: &Url) -> Value {
    let mut text = |s: Option<&str>| s.map_or(Value::Nil, |s| vm.heap.str(s));
    let fields = [
        ("href", text(Some(u.as_str()))),
        ("scheme", text(Some(u.scheme()))),
        ("username", text(Some(u.username()))),
        ("password", text(u.password())),
        ("host", text(u.host_str())),
        ("port", u.port().map_or(Value::Nil, |p| Value::Int(p.into()))),
        ("path", text(Some(u.path()))),
        ("query", text(u.query())),
        ("fragment", text(u.fragment())),
    ];
    super::fs::record(&mut vm.heap, &fields)
}

/// `url.resolve(base, reference)`: the URL `reference` names when found in
/// the document at `base` (`"../a"`, `"/x"`, `"//host/y"`, `"?q"`, or a whole URL).
fn resolve(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("url.resolve", args, 2, 2)?;
    let base = text_arg(&vm.heap, "url.resolve", "a string base URL", args[0])?;
    let reference = text_arg(&vm.heap, "url.resolve", "a string reference", args[1])?;
    let u = joined("url.resolve", &base, &reference)?;
    Ok(vm.heap.string(u.into()))
}

/// A string field of `url.build`'s map (None when missing or nil).
fn field(vm: &Vm, m: &crate::vm::value::Map, key: &str) -> Res<Option<String>> {
    match m.get(&Key::Str(key.into())) {
        None | Some(Value::Nil) => Ok(None),
        Some(&v) => match vm.heap.as_str(v) {
            Some(s) => Ok(Some(s.s.to_string())),
            None => err(ErrorKind::Type, format!("url.build() {key} needs a string, not {}", vm.heap.type_name(v))),
        },
    }
}

/// `url.build(parts)`: a URL string from a map shaped like `url.parse`'s
/// (`scheme` required; `query` may also be a map, encoded as by
/// `encode_query`; `href` is ignored). Characters a part may not hold are
/// percent-encoded; the result is normalised as `url.parse` would.
fn build(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const KNOWN: [&str; 9] = ["href", "scheme", "username", "password", "host", "port", "path", "query", "fragment"];
    arity("url.build", args, 1, 1)?;
    let m = match args[0] {
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Map(m) => m.clone(),
            _ => {
                return err(
                    ErrorKind::Type,
                    format!("url.build() needs a map of parts, not {}", vm.heap.type_name(args[0])),
                )
            }
        },
        v => return err(ErrorKind::Type, format!("url.build() needs a map of parts, not {}", vm.heap.type_name(v))),
    };
    for k in m.keys() {
        if !matches!(k, Key::Str(s) if KNOWN.contains(&&**s)) {
            let name = match k {
                Key::Str(s) => format!("{:?}", &**s),
                _ => "named by a non-string".to_string(),
            };
            return err(
                ErrorKind::Value,
                format!("url.build() has no part {name} (it takes {})", KNOWN[1..].join(", ")),
            );
        }
    }
    let Some(scheme) = field(vm, &m, "scheme")? else {
        return err(ErrorKind::Value, "url.build() needs a scheme");
    };
    let bad = |why: String| err(ErrorKind::Value, format!("url.build(): {why}"));
    let host = field(vm, &m, "host")?;
    let path = field(vm, &m, "path")?.unwrap_or_default();
    let start = match &host {
        Some(h) => format!("{scheme}://{h}"),
        None => format!("{scheme}:"),
    };
    let mut u = match Url::parse(&start) {
        Ok(u) => u,
        Err(e) => return bad(format!("bad scheme or host in {start:?}: {e}")),
    };
    if let Some(user) = field(vm, &m, "username")? {
        if u.set_username(&user).is_err() {
            return bad(format!("a {scheme} URL without a host cannot have a username"));
        }
    }
    if let Some(pass) = field(vm, &m, "password")? {
        if u.set_password(Some(&pass)).is_err() {
            return bad(format!("a {scheme} URL without a host cannot have a password"));
        }
    }
    match m.get(&Key::Str("port".into())) {
        None | Some(Value::Nil) => {}
        Some(Value::Int(p)) if (0..=65535).contains(p) => {
            if u.set_port(Some(*p as u16)).is_err() {
                return bad(format!("a {scheme} URL without a host cannot have a port"));
            }
        }
        Some(Value::Int(p)) => return bad(format!("port {p} is not in 0..65535")),
        Some(&v) => {
            return err(ErrorKind::Type, format!("url.build() port needs an int, not {}", vm.heap.type_name(v)))
        }
    }
    if host.is_some() && !path.is_empty() && !path.starts_with('/') {
        u.set_path(&format!("/{path}"));
    } else {
        u.set_path(&path);
    }
    match m.get(&Key::Str("query".into())) {
        None | Some(Value::Nil) => {}
        Some(&q) if vm.heap.as_str(q).is_some() => u.set_query(Some(&vm.heap.as_str(q).expect("a string").s)),
        Some(&q) => u.set_query(Some(&query_text(vm, "url.build", q)?)),
    }
    if let Some(f) = field(vm, &m, "fragment")? {
        u.set_fragment(Some(&f));
    }
    Ok(vm.heap.string(u.into()))
}

/// `url.join_path(base, ...parts)`: `base` with `parts` appended to its path
/// (Go's `url.JoinPath`): one `/` between parts, `.` and `..` resolved, a
/// trailing `/` kept when the last part has one; query and fragment kept.
fn join_path(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("url.join_path", args, 1, usize::MAX)?;
    let base = text_arg(&vm.heap, "url.join_path", "a string base URL", args[0])?;
    let mut u = absolute("url.join_path", &base)?;
    if u.cannot_be_a_base() {
        return err(ErrorKind::Value, format!("url.join_path(): {base:?} has no path to join to"));
    }
    let mut path = u.path().trim_end_matches('/').to_string();
    let mut trailing = u.path().ends_with('/');
    for &a in &args[1..] {
        let part = text_arg(&vm.heap, "url.join_path", "string parts", a)?;
        let inner = part.trim_matches('/');
        if !inner.is_empty() {
            path.push('/');
            // Runs of slashes inside a part become one.
            path.push_str(&inner.split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("/"));
        }
        trailing = part.ends_with('/') || (inner.is_empty() && trailing);
    }
    if trailing || path.is_empty() {
        path.push('/');
    }
    u.set_path(&path);
    Ok(vm.heap.string(u.into()))
}

fn text_fn(vm: &mut Vm, args: &[Value], name: &str, f: fn(&str) -> String) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let s = text_arg(&vm.heap, name, "a string", args[0])?;
    let out = f(&s);
    if out.len() > MAX_STRING {
        return err(ErrorKind::Limit, format!("{name}(): the result would pass {MAX_STRING} bytes"));
    }
    Ok(vm.heap.string(out))
}

/// Percent-encodes every byte but the unreserved characters: a path segment
/// or a query name or value, safe anywhere in a URL.
pub fn escape(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, COMPONENT).to_string()
}

/// Form encoding (application/x-www-form-urlencoded): a space is `+`.
fn query_escape(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// `url.unescape(s)` and `url.query_unescape(s)` (`+` is a space there):
/// percent-decoding that refuses a bad escape or bytes that are not UTF-8.
fn unescape_fn(vm: &mut Vm, args: &[Value], name: &str, plus: bool) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let s = text_arg(&vm.heap, name, "a string", args[0])?;
    match unescape(&s, plus) {
        Ok(t) => Ok(vm.heap.string(t)),
        Err(why) => err(ErrorKind::Value, format!("{name}(): {why}")),
    }
}

pub fn unescape(s: &str, plus: bool) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                match hex
                    .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(x) => out.push(x),
                    None => return Err(format!("bad percent escape in {s:?}")),
                }
                i += 3;
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| format!("{s:?} does not decode to UTF-8 text"))
}

/// The name/value pairs of a query string (a leading `?` dropped), decoded
/// as browsers do: `+` is a space, a bad escape stays as written, bytes that
/// are not UTF-8 become U+FFFD.
fn pairs(vm: &Vm, name: &str, args: &[Value]) -> Res<Vec<(String, String)>> {
    arity(name, args, 1, 1)?;
    let s = text_arg(&vm.heap, name, "a query string", args[0])?;
    let q = s.strip_prefix('?').unwrap_or(&s);
    Ok(form_urlencoded::parse(q.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
}

/// `url.parse_query(s)`: a map of names to values; a name given more than
/// once maps to the list of its values, in order.
fn parse_query(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    let mut grouped: indexmap::IndexMap<String, Vec<String>> = indexmap::IndexMap::new();
    for (k, v) in pairs(vm, "url.parse_query", args)? {
        grouped.entry(k).or_default().push(v);
    }
    let mut m = crate::vm::value::new_map(grouped.len());
    for (k, mut vs) in grouped {
        let v = match vs.len() {
            1 => vm.heap.string(vs.pop().expect("one value")),
            _ => {
                let items = vs.into_iter().map(|v| vm.heap.string(v)).collect();
                vm.heap.list(items)
            }
        };
        m.insert(Key::Str(k.as_str().into()), v);
    }
    Ok(Value::Obj(vm.heap.alloc(Obj::Map(m))))
}

/// `url.query_pairs(s)`: the `[name, value]` pairs in order, repeats kept.
fn query_pairs(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    let pairs = pairs(vm, "url.query_pairs", args)?;
    let items = pairs
        .into_iter()
        .map(|(k, v)| {
            let pair = vec![vm.heap.string(k), vm.heap.string(v)];
            vm.heap.list(pair)
        })
        .collect();
    Ok(vm.heap.list(items))
}

/// `url.encode_query(q)`: a query string (form encoding) from a map or a
/// list of `[name, value]` pairs; a list value repeats the name, nil leaves
/// it out, numbers and bools are written as `str` writes them.
fn encode_query(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("url.encode_query", args, 1, 1)?;
    let s = query_text(vm, "url.encode_query", args[0])?;
    Ok(vm.heap.string(s))
}

fn query_text(vm: &Vm, name: &str, q: Value) -> Res<String> {
    let heap = &vm.heap;
    let mut entries: Vec<(String, Value)> = Vec::new();
    let bad_pair = || err(ErrorKind::Type, format!("{name}() needs a map or a list of [name, value] pairs"));
    match q {
        Value::Obj(h) => match heap.get(h) {
            Obj::Map(m) => {
                for (k, v) in m.iter() {
                    let k = match k {
                        Key::Str(s) => s.to_string(),
                        Key::Int(i) => i.to_string(),
                        Key::Bool(b) => b.to_string(),
                        _ => return err(ErrorKind::Type, format!("{name}() query names are strings")),
                    };
                    entries.push((k, *v));
                }
            }
            Obj::List(l) => {
                for &p in l.iter() {
                    match heap.as_list(p).map(|p| p.to_vec()).as_deref() {
                        Some(&[k, v]) => match heap.as_str(k) {
                            Some(k) => entries.push((k.s.to_string(), v)),
                            None => return bad_pair(),
                        },
                        _ => return bad_pair(),
                    }
                }
            }
            _ => return bad_pair(),
        },
        _ => return bad_pair(),
    }
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in entries {
        let one = |v: Value| -> Res<Option<String>> {
            match v {
                Value::Nil => Ok(None),
                Value::Bool(_) | Value::Int(_) | Value::Float(_) => Ok(Some(crate::display::display(heap, v))),
                Value::Obj(h) if matches!(heap.get(h), Obj::Str(_)) => Ok(Some(crate::display::display(heap, v))),
                _ => err(
                    ErrorKind::Type,
                    format!(
                        "{name}() value of {k:?} needs a string, number, bool, nil or a list of them, not {}",
                        heap.type_name(v)
                    ),
                ),
            }
        };
        match heap.as_list(v) {
            Some(items) => {
                for &item in items.to_vec().iter() {
                    if let Some(s) = one(item)? {
                        out.append_pair(&k, &s);
                    }
                }
            }
            None => {
                if let Some(s) = one(v)? {
                    out.append_pair(&k, &s);
                }
            }
        }
    }
    let s = out.finish();
    if s.len() > MAX_STRING {
        return err(ErrorKind::Limit, format!("{name}(): the query would pass {MAX_STRING} bytes"));
    }
    Ok(s)
}

/// The path, query and authority of an absolute-form request target
/// (`http://host/p?q`, RFC 9112 3.2.2) as `std/url` parses it; None when
/// the target is not an http or https URL with a host.
pub fn absolute_target(target: &str) -> Option<(String, String, String)> {
    let u = Url::parse(target).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    let host = u.host_str().filter(|h| !h.is_empty())?;
    let authority = match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    Some((u.path().to_string(), u.query().unwrap_or("").to_string(), authority))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_unescape() {
        assert_eq!(unescape("a%20b+c", false).unwrap(), "a b+c");
        assert_eq!(unescape("a%20b+c", true).unwrap(), "a b c");
        assert!(unescape("%zz", false).is_err());
        assert!(unescape("%+1", false).is_err());
        assert!(unescape("%4", false).is_err());
        assert!(unescape("%ff", false).is_err());
        assert_eq!(unescape("%C3%A9", false).unwrap(), "é");
    }

    #[test]
    fn escapes() {
        assert_eq!(escape("a b/c~é"), "a%20b%2Fc~%C3%A9");
        assert_eq!(query_escape("a b&c=d~"), "a+b%26c%3Dd%7E");
    }

    #[test]
    fn absolute_targets() {
        let t = absolute_target("http://evil/hello?x=1").unwrap();
        assert_eq!(t, ("/hello".into(), "x=1".into(), "evil".into()));
        let t = absolute_target("HTTP://Example.COM:8080").unwrap();
        assert_eq!(t, ("/".into(), "".into(), "example.com:8080".into()));
        assert!(absolute_target("ftp://x/y").is_none());
        assert!(absolute_target("hello").is_none());
    }
}
