//! TCP builtins behind `std/net` (which composes them in csp): resolving names
//! on the I/O pool, listening, accepting, connecting without blocking, and the
//! socket-only methods of a connection stream.

use super::args::{arity, step};
use crate::os::net::{self, Listener, Udp};
use crate::os::stream::Stream;
use crate::vm::builtin::io;
use crate::vm::host::{Class, HostObject, Moving};
use crate::vm::{err, ErrorKind, Fiber, Handle, NativeFn, Obj, Res, Ret, Value, Vm};
use std::net::{SocketAddr, ToSocketAddrs};

pub static LISTENER: Class = Class {
    name: "listener",
    methods: &[("accept", accept), ("addr", addr::<Listener>), ("close", close::<Listener>), ("twin", twin)],
    next: None,
    field: None,
};

pub static UDP: Class = Class {
    name: "udp",
    methods: &[("addr", addr::<Udp>), ("close", close::<Udp>), ("recv", recv), ("send", send)],
    next: None,
    field: None,
};

/// A descriptor is scarcer than memory: abandoned sockets should bring the
/// collection (which closes them) closer.
const SOCKET_SIZE: usize = 64 * 1024;

impl HostObject for Listener {
    fn class(&self) -> &'static Class {
        &LISTENER
    }
    fn size(&self) -> usize {
        SOCKET_SIZE
    }
    fn display(&self, out: &mut String) {
        out.push_str(&format!("<listener {}>", self.addr));
    }
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        Listener::fd(self)
    }
    fn movable(&self) -> Option<Result<(), String>> {
        Some(Ok(()))
    }
    fn take_to_move(&mut self) -> Box<dyn Moving> {
        Box::new(self.take())
    }
}

impl Moving for Listener {
    fn land(self: Box<Self>, _: &[Value]) -> Box<dyn HostObject> {
        self
    }
}

impl HostObject for Udp {
    fn class(&self) -> &'static Class {
        &UDP
    }
    fn size(&self) -> usize {
        SOCKET_SIZE
    }
    fn display(&self, out: &mut String) {
        out.push_str(&format!("<udp {}>", self.addr));
    }
    fn fd(&self) -> Option<std::os::fd::RawFd> {
        Udp::fd(self)
    }
    fn movable(&self) -> Option<Result<(), String>> {
        Some(Ok(()))
    }
    fn take_to_move(&mut self) -> Box<dyn Moving> {
        Box::new(self.take())
    }
}

impl Moving for Udp {
    fn land(self: Box<Self>, _: &[Value]) -> Box<dyn HostObject> {
        self
    }
}

pub fn register(vm: &mut Vm) {
    vm.define_hidden("net.resolve", NativeFn::Full(resolve));
    vm.define_hidden("net.bind", NativeFn::Full(bind));
    vm.define_hidden("net.udp", NativeFn::Full(udp));
    vm.define_hidden("net.dial", NativeFn::Full(dial));
    vm.define_hidden("net.connected", NativeFn::Full(connected));
}

fn str_arg(vm: &Vm, name: &str, v: Value) -> Res<String> {
    match vm.heap.as_str(v) {
        Some(s) => Ok(s.s.to_string()),
        None => err(
            ErrorKind::Type,
            format!("{name}() needs an address string like \"127.0.0.1:8080\", not {}", vm.heap.type_name(v)),
        ),
    }
}

fn socket_addr(vm: &Vm, name: &str, v: Value) -> Res<SocketAddr> {
    let s = str_arg(vm, name, v)?;
    s.parse().or_else(|_| err(ErrorKind::Value, format!("{name}(): {s:?} is not an IP address and port")))
}

/// `resolve("host:port")`: the addresses it names, as "ip:port" strings (on
/// the pool: a DNS lookup may take a while).
fn resolve(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("resolve", args, 1, 1)?;
    let addr = str_arg(vm, "resolve", args[0])?;
    if !addr.contains(':') {
        return err(ErrorKind::Value, format!("{addr:?} has no port: write \"host:port\""));
    }
    let work = move || match addr.to_socket_addrs() {
        Ok(found) => {
            let all: Vec<String> = found.map(|a| a.to_string()).collect();
            if all.is_empty() {
                return Err(format!("cannot resolve {addr}: no address"));
            }
            Ok(all)
        }
        Err(e) => Err(format!("cannot resolve {addr}: {e}")),
    };
    Ok(io(work, |heap, all| {
        let items = all.iter().map(|a| heap.str(a)).collect();
        heap.list(items)
    }))
}

fn bind(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("listen", args, 1, 3)?;
    let addr = socket_addr(vm, "listen", args[0])?;
    let backlog = match args.get(1).copied().unwrap_or(Value::Nil) {
        Value::Nil => None,
        Value::Int(n) if (0..=i32::MAX as i64).contains(&n) => Some(n as i32),
        v => {
            let what = vm.heap.type_name(v);
            return err(ErrorKind::Value, format!("listen() option backlog needs a non-negative int, not {what}"));
        }
    };
    let reuse_port = args.get(2).is_some_and(|v| v.truthy());
    match Listener::bind(addr, backlog, reuse_port) {
        Ok(l) => Ok(Ret::Value(vm.heap.host_object(l))),
        Err(msg) => err(ErrorKind::Io, msg),
    }
}

fn dial(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("connect", args, 1, 1)?;
    let addr = socket_addr(vm, "connect", args[0])?;
    match net::start_connect(addr) {
        Ok(s) => Ok(Ret::Value(vm.heap.host_object(s))),
        Err(msg) => err(ErrorKind::Io, msg),
    }
}

/// `connected(stream, addr)`: the stream once its connect has finished.
fn connected(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("connect", args, 2, 2)?;
    let Value::Obj(h) = args[0] else { return err(ErrorKind::Type, "connect() needs a stream") };
    let addr = str_arg(vm, "connect", args[1])?;
    let Some(fd) = stream_fd(vm, h) else { return err(ErrorKind::Io, format!("cannot connect to {addr}: closed")) };
    step(vm, net::connected(fd, &addr), |_, ()| Ok(args[0]))
}

fn stream_fd(vm: &Vm, h: Handle) -> Option<std::os::fd::RawFd> {
    vm.heap.host::<Stream>(h).and_then(Stream::fd)
}

fn listener(vm: &mut Vm, h: Handle) -> &mut Listener {
    vm.heap.host_mut::<Listener>(h).expect("a listener")
}

fn accept(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    let r = listener(vm, h).accept();
    step(vm, r, |vm, s| Ok(vm.heap.host_object(s)))
}

/// `l.twin()`: another listener on `l`'s address with its own accept queue
/// (SO_REUSEPORT), to send to another isolate so that both serve it.
fn twin(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    match listener(vm, h).twin() {
        Ok(l) => Ok(Ret::Value(vm.heap.host_object(l))),
        Err(msg) => err(ErrorKind::Io, msg),
    }
}

/// What `addr()` and `close()` need of a listener or a UDP socket.
trait Socket: HostObject {
    fn addr(&self) -> &str;
    /// Closes it; the descriptor it had, if it was open.
    fn close_socket(&mut self) -> Option<std::os::fd::RawFd>;
}

impl Socket for Listener {
    fn addr(&self) -> &str {
        &self.addr
    }
    fn close_socket(&mut self) -> Option<std::os::fd::RawFd> {
        let fd = self.fd();
        self.close();
        fd
    }
}

impl Socket for Udp {
    fn addr(&self) -> &str {
        &self.addr
    }
    fn close_socket(&mut self) -> Option<std::os::fd::RawFd> {
        let fd = self.fd();
        self.close();
        fd
    }
}

/// `l.addr()` and `u.addr()`: the address it is bound to.
fn addr<T: Socket>(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    let a = vm.heap.host::<T>(h).expect("a socket").addr().to_string();
    Ok(Ret::Value(vm.heap.string(a)))
}

/// `l.close()` and `u.close()`: a fiber parked in `accept()` or `recv()`
/// wakes and finds it closed.
fn close<T: Socket>(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    if let Some(fd) = vm.heap.host_mut::<T>(h).expect("a socket").close_socket() {
        crate::sched::ops::fd_closing(vm, fd);
    }
    Ok(Ret::Value(Value::Nil))
}

/// The descriptor of connection `h`, or the error for a closed one.
fn socket_fd(vm: &Vm, h: Handle) -> Res<std::os::fd::RawFd> {
    let s = vm.heap.host::<Stream>(h).expect("a stream");
    s.fd().map_or_else(|| err(ErrorKind::Io, format!("{} is closed", s.name)), Ok)
}

/// `s.local_addr()` and `s.peer_addr()` of a TCP connection.
pub fn socket_addr_of(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    let (local, peer) = net::addrs(socket_fd(vm, h)?);
    match if name == "local_addr" { local } else { peer } {
        Some(a) => Ok(Ret::Value(vm.heap.string(a))),
        None => {
            let s = vm.heap.host::<Stream>(h).expect("a stream");
            err(ErrorKind::Io, format!("{} is not a connected socket", s.name))
        }
    }
}

/// `s.shutdown()`: no more writes on a TCP connection.
pub fn shutdown(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 0)?;
    socket_fd(vm, h)?;
    let r = vm.heap.host::<Stream>(h).expect("a stream").shutdown();
    step(vm, r, |_, ()| Ok(Value::Nil))
}

/// `s.set_nodelay(on)` on a TCP connection.
pub fn set_nodelay(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 1, 1)?;
    let fd = socket_fd(vm, h)?;
    net::set_nodelay(fd, args[0].truthy()).map(|()| Ret::Value(Value::Nil)).or_else(|m| err(ErrorKind::Io, m))
}

/// `udp(addr)`: a UDP socket bound to "ip:port" (port 0: any free one).
fn udp(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("udp", args, 1, 1)?;
    let addr = socket_addr(vm, "udp", args[0])?;
    match Udp::bind(addr) {
        Ok(u) => Ok(Ret::Value(vm.heap.host_object(u))),
        Err(msg) => err(ErrorKind::Io, msg),
    }
}

/// Methods of a UDP socket: `send(data, "ip:port")`, `recv(max = 65536)` →
/// `{data, from}`, `addr()`, `close()`.
fn udp_of(vm: &mut Vm, h: Handle) -> &mut Udp {
    vm.heap.host_mut::<Udp>(h).expect("a udp socket")
}

fn send(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 2, 2)?;
    let to = socket_addr(vm, "send", args[1])?;
    let data = super::bytes::data_arg(&vm.heap, "send", args[0])?.to_vec();
    let r = udp_of(vm, h).send(&data, to);
    step(vm, r, |_, ()| Ok(Value::Nil))
}

fn recv(vm: &mut Vm, _: &Fiber, h: Handle, name: &str, args: &[Value]) -> Res<Ret> {
    arity(name, args, 0, 1)?;
    let max = match args.first() {
        None => 65536,
        Some(Value::Int(n)) if *n > 0 => (*n as usize).min(65536),
        Some(v) => {
            let what = vm.heap.type_name(*v);
            return err(ErrorKind::Value, format!("recv() needs a positive int size, not {what}"));
        }
    };
    let r = udp_of(vm, h).recv(max);
    step(vm, r, |vm, (data, from)| {
        let data = vm.heap.bytes(data);
        let from = vm.heap.string(from);
        let mut m = crate::vm::value::Map::default();
        m.insert(crate::vm::Key::Str("data".into()), data);
        m.insert(crate::vm::Key::Str("from".into()), from);
        Ok(Value::Obj(vm.heap.alloc(Obj::Map(m))))
    })
}
