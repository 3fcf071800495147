//! TCP: a listening socket, and the connect that starts a connection. A
//! connection is a non-blocking `Stream` (like a pipe end), so reading lines or
//! chunks and writing work on it as on any stream.

use super::stream::{Kind, Step, Stream};
use crate::vm::builtin::{Blocking, Ready};
use std::mem::ManuallyDrop;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, RawFd};

pub struct Listener {
    /// None once closed.
    socket: Option<super::watched::Watched<TcpListener>>,
    pub addr: String,
    /// Accepted connections are TLS server streams (handshake on first use).
    /// (Set by a pool job that reads the certificate files.)
    pub tls: std::sync::Arc<std::sync::OnceLock<std::sync::Arc<rustls::ServerConfig>>>,
    /// Bound with SO_REUSEPORT (`twin` can add listeners on its address);
    /// the backlog asked for, for them.
    reuse_port: bool,
    backlog: Option<i32>,
}

impl Listener {
    /// Binds and listens on `addr` ("127.0.0.1:8080"; port 0 picks a free one),
    /// with a backlog of `backlog`, else 4096 (as Go: the kernel caps it at
    /// net.core.somaxconn; std's 128 makes a burst of clients wait a second
    /// for a retried SYN). std sets
    /// SO_REUSEADDR, so a restarted server can bind while old connections
    /// linger in TIME_WAIT.
    ///
    /// With `reuse_port`, SO_REUSEPORT too: other sockets may listen on the
    /// same address (`twin`), each with its own queue of connections, which
    /// the kernel fills in turn (by a hash of the client's address).
    pub fn bind(addr: SocketAddr, backlog: Option<i32>, reuse_port: bool) -> Result<Listener, String> {
        let failed = |e: std::io::Error| format!("cannot listen on {addr}: {}", crate::os::io_reason(&e));
        let l = if reuse_port { bind_reusing_port(addr) } else { TcpListener::bind(addr) };
        let l = l.map_err(failed)?;
        // listen(2) again on a listening socket sets its backlog (Linux).
        // SAFETY: a plain call on a descriptor `l` owns.
        if unsafe { libc::listen(l.as_raw_fd(), backlog.unwrap_or(4096)) } != 0 {
            return Err(failed(std::io::Error::last_os_error()));
        }
        l.set_nonblocking(true).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let addr = l.local_addr().map_or_else(|_| addr.to_string(), |a| a.to_string());
        let socket = Some(super::watched::Watched::new(l));
        Ok(Listener { socket, addr, tls: Default::default(), reuse_port, backlog })
    }

    /// Another listener on the same address, with its own accept queue, to
    /// serve it from another isolate; TLS as this one's (now or later).
    pub fn twin(&self) -> Result<Listener, String> {
        if self.socket.is_none() {
            return Err(format!("listener on {} is closed", self.addr));
        }
        if !self.reuse_port {
            return Err(format!(
                "listener on {} was not made with {{reuse_port: true}}: only such a listener can have twins",
                self.addr
            ));
        }
        let addr = self.addr.parse().map_err(|_| format!("listener on {} has no address to share", self.addr))?;
        let mut l = Listener::bind(addr, self.backlog, true)?;
        l.tls = self.tls.clone();
        Ok(l)
    }

    /// The next connection, or a wait for one.
    pub fn accept(&self) -> Result<Step<Stream>, String> {
        let Some(l) = &self.socket else { return Err(format!("listener on {} is closed", self.addr)) };
        loop {
            return match l.accept() {
                // Reset by its client while it waited in the queue: Linux still
                // hands it out, with the reset as a pending error (SO_ERROR);
                // take the next instead (as Go's accept skips ECONNABORTED).
                Ok((s, _)) if matches!(s.take_error(), Ok(Some(_)) | Err(_)) => continue,
                Ok((s, peer)) => {
                    let stream = connection(s, &peer.to_string())?;
                    if let Some(config) = self.tls.get() {
                        stream.start_tls(super::tls::Tls::server(config.clone(), &peer.to_string())?)?;
                    }
                    Ok(Step::Done(stream))
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    Ok(Step::Block(Blocking::Ready(l.as_raw_fd(), Ready::Read)))
                }
                // A connection reset before it was accepted: take the next (as Go does).
                Err(e)
                    if matches!(e.kind(), std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::Interrupted) =>
                {
                    continue
                }
                // Too many open files and the like: the listener stays usable, and
                // the pending connection waits until a descriptor is free.
                Err(e) => Err(format!("cannot accept on {}: {}", self.addr, crate::os::io_reason(&e))),
            };
        }
    }

    pub fn fd(&self) -> Option<RawFd> {
        self.socket.as_ref().map(|l| l.as_raw_fd())
    }

    pub fn close(&mut self) {
        self.socket = None;
    }

    /// Its socket and settings, to move to another isolate; this one is
    /// left closed.
    pub fn take(&mut self) -> Listener {
        let (addr, tls) = (self.addr.clone(), self.tls.clone());
        Listener { socket: self.socket.take(), addr, tls, reuse_port: self.reuse_port, backlog: self.backlog }
    }
}

/// A listening socket with SO_REUSEADDR and SO_REUSEPORT set before it binds
/// (std cannot set options before binding).
fn bind_reusing_port(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM.cloexec(), None)?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.bind(&addr.into())?;
    s.listen(128)?;
    Ok(s.into())
}

/// A connected socket as a stream named after its peer.
fn connection(s: TcpStream, peer: &str) -> Result<Stream, String> {
    s.set_nonblocking(true).map_err(|e| format!("cannot use the connection to {peer}: {e}"))?;
    // SAFETY: the descriptor is handed over whole: the stream owns it from here.
    let file = unsafe { std::fs::File::from_raw_fd(s.into_raw_fd()) };
    Ok(socket_stream(&format!("connection to {peer}"), file))
}

fn socket_stream(name: &str, file: std::fs::File) -> Stream {
    let mut s = Stream::new(name, Kind::Pipe, file, true, true);
    s.line_limit = Some(super::stream::SOCKET_LINE_LIMIT);
    s
}

/// Starts connecting to `addr` without waiting; `connected` finishes it.
pub fn start_connect(addr: SocketAddr) -> Result<Stream, String> {
    let s = mio::net::TcpStream::connect(addr)
        .map_err(|e| format!("cannot connect to {addr}: {}", crate::os::io_reason(&e)))?;
    // SAFETY: as in `connection`: the descriptor moves into the stream.
    let file = unsafe { std::fs::File::from_raw_fd(s.into_raw_fd()) };
    Ok(socket_stream(&format!("connection to {addr}"), file))
}

/// Done once the connect started by `start_connect` has succeeded; an error if
/// it failed; a wait while it is in progress.
pub fn connected(fd: RawFd, addr: &str) -> Result<Step<()>, String> {
    let s = borrow(fd);
    let failed = |e: std::io::Error| format!("cannot connect to {addr}: {}", crate::os::io_reason(&e));
    match s.take_error() {
        Ok(Some(e)) | Err(e) => return Err(failed(e)),
        Ok(None) => {}
    }
    match s.peer_addr() {
        Ok(_) => Ok(Step::Done(())),
        Err(e) if e.kind() == std::io::ErrorKind::NotConnected => Ok(Step::Block(Blocking::Ready(fd, Ready::Write))),
        Err(e) => Err(failed(e)),
    }
}

/// The socket behind a stream's descriptor, without taking it over.
fn borrow(fd: RawFd) -> ManuallyDrop<TcpStream> {
    // SAFETY: the stream keeps the descriptor open; ManuallyDrop never closes it.
    ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(fd) })
}

/// `(local, peer)` addresses of a connection's descriptor.
pub fn addrs(fd: RawFd) -> (Option<String>, Option<String>) {
    let s = borrow(fd);
    (s.local_addr().ok().map(|a| a.to_string()), s.peer_addr().ok().map(|a| a.to_string()))
}

/// Ends the writing half: the peer reads the end of the stream.
pub fn shutdown_write(fd: RawFd) -> Result<(), String> {
    borrow(fd).shutdown(std::net::Shutdown::Write).map_err(|e| format!("cannot shut down: {e}"))
}

pub fn set_nodelay(fd: RawFd, on: bool) -> Result<(), String> {
    borrow(fd).set_nodelay(on).map_err(|e| format!("cannot set nodelay: {e}"))
}

/// A UDP socket.
pub struct Udp {
    socket: Option<super::watched::Watched<std::net::UdpSocket>>,
    pub addr: String,
}

impl Udp {
    pub fn bind(addr: SocketAddr) -> Result<Udp, String> {
        let s =
            std::net::UdpSocket::bind(addr).map_err(|e| format!("cannot bind {addr}: {}", crate::os::io_reason(&e)))?;
        s.set_nonblocking(true).map_err(|e| format!("cannot bind {addr}: {e}"))?;
        let addr = s.local_addr().map_or_else(|_| addr.to_string(), |a| a.to_string());
        Ok(Udp { socket: Some(super::watched::Watched::new(s)), addr })
    }

    fn socket(&self) -> Result<&std::net::UdpSocket, String> {
        self.socket.as_deref().ok_or_else(|| format!("udp socket {} is closed", self.addr))
    }

    /// Sends one datagram, or a wait until the socket can take it.
    pub fn send(&self, data: &[u8], to: SocketAddr) -> Result<Step<()>, String> {
        let s = self.socket()?;
        match s.send_to(data, to) {
            Ok(_) => Ok(Step::Done(())),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                Ok(Step::Block(Blocking::Ready(s.as_raw_fd(), Ready::Write)))
            }
            Err(e) => Err(format!("cannot send to {to}: {}", crate::os::io_reason(&e))),
        }
    }

    /// The next datagram (at most `max` bytes of it) and its sender, or a wait.
    pub fn recv(&self, max: usize) -> Result<Step<(Vec<u8>, String)>, String> {
        let s = self.socket()?;
        let mut buf = vec![0; max];
        match s.recv_from(&mut buf) {
            Ok((n, from)) => {
                buf.truncate(n);
                Ok(Step::Done((buf, from.to_string())))
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                Ok(Step::Block(Blocking::Ready(s.as_raw_fd(), Ready::Read)))
            }
            Err(e) => Err(format!("cannot receive on {}: {}", self.addr, crate::os::io_reason(&e))),
        }
    }

    pub fn fd(&self) -> Option<RawFd> {
        self.socket.as_ref().map(|s| s.as_raw_fd())
    }

    pub fn close(&mut self) {
        self.socket = None;
    }

    /// Its socket, to move to another isolate; this one is left closed.
    pub fn take(&mut self) -> Udp {
        Udp { socket: self.socket.take(), addr: self.addr.clone() }
    }
}
