//! TLS builtins behind `std/net`: starting a client or server session on a
//! connection stream, the client's handshake, and a listener's certificate.
//! Configurations read PEM files (and the system's roots), so they are built
//! on the I/O pool, which attaches the result itself (it holds the stream's
//! or listener's shared state, never a heap handle).

use super::args::{arity, step};
use crate::os::tls::{self, Tls};
use crate::vm::builtin::{io, io_kind};
use crate::vm::value::Map;
use crate::vm::{err, ErrorKind, Fiber, Key, NativeFn, Obj, Res, Ret, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("net.tls_client", NativeFn::Full(tls_client));
    vm.define_hidden("net.tls_server", NativeFn::Full(tls_server));
    vm.define_hidden("net.tls_listen", NativeFn::Full(tls_listen));
    vm.define_hidden("net.handshake", NativeFn::Full(handshake));
}

use super::stream_methods::conn_arg as stream;

/// The options map (None for `true`).
fn opts<'a>(vm: &'a Vm, name: &str, v: Value, shape: &str) -> Res<Option<&'a Map>> {
    match v {
        Value::Bool(true) => Ok(None),
        Value::Obj(h) => match vm.heap.get(h) {
            Obj::Map(m) => Ok(Some(m)),
            _ => err(ErrorKind::Type, format!("{name}() tls option needs {shape}, not {}", vm.heap.type_name(v))),
        },
        _ => err(ErrorKind::Type, format!("{name}() tls option needs {shape}, not {}", vm.heap.type_name(v))),
    }
}

/// A string field of the options (None when missing or nil).
fn field(vm: &Vm, name: &str, m: Option<&Map>, key: &str) -> Res<Option<String>> {
    match m.and_then(|m| m.get(&Key::Str(key.into()))) {
        None | Some(Value::Nil) => Ok(None),
        Some(v) => match vm.heap.as_str(*v) {
            Some(s) => Ok(Some(s.s.to_string())),
            None => err(ErrorKind::Type, format!("{name}() tls.{key} needs a string, not {}", vm.heap.type_name(*v))),
        },
    }
}

/// `tls_client(conn, true | {ca, server_name}, "host:port")`: a client session
/// on the connection (trusting `ca`'s certificates, or the system's), checking
/// the server's certificate against `server_name` (default: the host part).
fn tls_client(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("connect", args, 3, 3)?;
    let s = stream(vm, "connect", args[0])?;
    let m = opts(vm, "connect", args[1], "true or {ca: path, server_name: name}")?;
    let ca = field(vm, "connect", m, "ca")?;
    let Some(addr) = vm.heap.as_str(args[2]).map(|a| a.s.to_string()) else {
        return err(ErrorKind::Type, "connect() needs an address string");
    };
    let name = field(vm, "connect", m, "server_name")?.unwrap_or_else(|| tls::host_of(&addr).to_string());
    let server_name = tls::server_name(&name).or_else(|e| err(ErrorKind::Value, e))?;
    let start = s.tls_starter();
    let work = move || {
        let config = tls::client_config(ca.as_deref())?;
        start(Tls::client(config, server_name, &addr)?)
    };
    Ok(io(work, |_, ()| Value::Nil))
}

/// The certificate and key file paths of a server's options.
fn cert_key(vm: &Vm, name: &str, v: Value) -> Res<(String, String)> {
    let shape = "{cert: path, key: path}";
    let m = opts(vm, name, v, shape)?;
    match (field(vm, name, m, "cert")?, field(vm, name, m, "key")?) {
        (Some(c), Some(k)) => Ok((c, k)),
        _ => err(ErrorKind::Value, format!("{name}() tls option needs {shape}")),
    }
}

/// `tls_server(conn, {cert, key})`: a server session on an accepted
/// connection (STARTTLS); its handshake runs on the first read or write.
fn tls_server(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("tls", args, 2, 2)?;
    let s = stream(vm, "tls", args[0])?;
    let (cert, key) = cert_key(vm, "tls", args[1])?;
    let peer = s.fd().and_then(|fd| crate::os::net::addrs(fd).1).unwrap_or_default();
    let start = s.tls_starter();
    let work = move || start(Tls::server(tls::server_config(&cert, &key)?, &peer)?);
    Ok(io(work, |_, ()| Value::Nil))
}

/// `tls_listen(listener, {cert, key})`: connections it accepts from now on
/// are TLS server streams.
fn tls_listen(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("listen", args, 2, 2)?;
    let slot = match args[0] {
        Value::Obj(h) => vm.heap.host::<crate::os::net::Listener>(h).map(|l| l.tls.clone()),
        _ => None,
    };
    let Some(slot) = slot else { return err(ErrorKind::Type, "listen() needs a listener") };
    let (cert, key) = cert_key(vm, "listen", args[1])?;
    // One certificate per listener: a second would be silently ignored.
    let already = || {
        (
            ErrorKind::Value,
            "the listener already serves TLS: give its certificate once, to net.listen or to http.serve".to_string(),
        )
    };
    if slot.get().is_some() {
        let (kind, msg) = already();
        return err(kind, msg);
    }
    let work = move || {
        let config = tls::server_config(&cert, &key).map_err(|e| (ErrorKind::Io, e))?;
        slot.set(config).map_err(|_| already())
    };
    Ok(io_kind(work, |_, ()| Value::Nil))
}

/// `handshake(conn)`: the connection once its TLS handshake is over.
fn handshake(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("connect", args, 1, 1)?;
    let r = stream(vm, "connect", args[0])?.handshake();
    step(vm, r, |_, ()| Ok(args[0]))
}
