//! TLS on a non-blocking socket (rustls, ring provider). A `Tls` is the session
//! of one connection stream: rustls is driven with `read_tls`/`write_tls`, and
//! whatever the socket cannot take yet waits here (never on the VM's thread):
//! reads park in the reactor for readability (or writability while the
//! handshake must send), a write that fills the socket is finished by the
//! reactor from this buffer (`Blocking::Drain`), so records never interleave.
//! Configurations are built from PEM files on the I/O pool (`config.rs`).

use super::stream::Step;
use crate::vm::builtin::{Blocking, Ready};
use rustls::pki_types::ServerName;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub use super::tls_config::{client_config, server_config};

/// Plaintext taken from rustls at a time.
const PLAIN_CHUNK: usize = 32 * 1024;
/// Ciphertext read from the socket at a time (rustls alone reads 4 KiB).
const READ_AHEAD: usize = 64 * 1024;

pub struct Tls {
    conn: rustls::Connection,
    /// The peer's address, for messages.
    peer: String,
    /// Ciphertext read but not yet handed to rustls, from `inpos` on (freed
    /// once handed over: idle connections hold no buffer).
    inbuf: Vec<u8>,
    inpos: usize,
    records: Records,
    /// Ciphertext the socket has not taken yet, from `pos` on.
    out: Vec<u8>,
    pos: usize,
    /// Ciphertext bytes queued and sent since the start: a write is done when
    /// `sent` reaches the `queued` it ended at.
    queued: u64,
    sent: u64,
    /// Writes the reactor is finishing (then `out` drains without a reader's help).
    draining: Arc<AtomicUsize>,
    /// The handshake is done and its last message sent.
    established: bool,
    /// close_notify queued: no more writes.
    shut: bool,
    /// A TLS failure ends the session: later operations report it again.
    failed: Option<String>,
}

/// Counts a write the reactor is finishing, for as long as it waits.
pub struct DrainGuard(Arc<AtomicUsize>);

impl Drop for DrainGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Tls {
    /// The client side; the handshake starts with the first operation.
    pub fn client(config: Arc<rustls::ClientConfig>, name: ServerName<'static>, peer: &str) -> Result<Tls, String> {
        let conn = rustls::ClientConnection::new(config, name)
            .map_err(|e| format!("TLS handshake with {peer} failed: {e}"))?;
        Ok(Tls::new(conn.into(), peer))
    }

    /// The server side; the handshake runs on the first read or write.
    pub fn server(config: Arc<rustls::ServerConfig>, peer: &str) -> Result<Tls, String> {
        let conn = rustls::ServerConnection::new(config).map_err(|e| format!("TLS with {peer} failed: {e}"))?;
        Ok(Tls::new(conn.into(), peer))
    }

    fn new(conn: rustls::Connection, peer: &str) -> Tls {
        Tls {
            conn,
            peer: peer.to_string(),
            inbuf: Vec::new(),
            inpos: 0,
            records: Records::default(),
            out: Vec::new(),
            pos: 0,
            queued: 0,
            sent: 0,
            draining: Arc::default(),
            established: false,
            shut: false,
            failed: None,
        }
    }

    /// Bytes already read off the socket before TLS started (STARTTLS: the
    /// peer's first handshake bytes may be in the stream's buffer).
    pub fn feed(&mut self, mut data: &[u8]) -> Result<(), String> {
        self.records.pass(data);
        while !data.is_empty() {
            self.conn.read_tls(&mut data).map_err(|e| self.handshake_failed(&e.to_string()))?;
            if let Err(e) = self.conn.process_new_packets() {
                return Err(self.handshake_failed(&e.to_string()));
            }
        }
        Ok(())
    }

    /// Runs the handshake: done once it is complete and its last message sent.
    pub fn handshake(&mut self, sock: &File) -> Result<Step<()>, String> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let fd = sock.as_raw_fd();
        while !self.established {
            self.queue();
            match self.send(sock) {
                Ok(true) => {}
                Ok(false) => return Ok(Step::Block(Blocking::Ready(fd, Ready::Write))),
                Err(e) => return Err(self.handshake_failed(&crate::os::io_reason(&e))),
            }
            if !self.conn.is_handshaking() {
                self.established = true;
                break;
            }
            match self.recv(sock)? {
                None => return Ok(Step::Block(Blocking::Ready(fd, Ready::Read))),
                Some(0) => return Err(self.handshake_failed("the connection was closed")),
                Some(_) => {}
            }
        }
        Ok(Step::Done(()))
    }

    /// Plaintext onto the end of `buf`: the count (0 at the end), or a wait.
    pub fn read(&mut self, sock: &File, buf: &mut Vec<u8>) -> Result<Step<usize>, String> {
        if let Step::Block(b) = self.handshake(sock)? {
            return Ok(Step::Block(b));
        }
        loop {
            if let Some(n) = self.plaintext(buf)? {
                return Ok(Step::Done(n));
            }
            // Replies owed to the peer (alerts, key updates) and a cancelled
            // write's rest go out first; a writer the reactor is finishing
            // sends them too, so a read waits for the socket only without one
            // (two peers both writing a lot must still read each other).
            self.queue();
            let all_sent = self.send(sock).unwrap_or(true);
            if !all_sent && self.draining.load(Ordering::Relaxed) == 0 {
                return Ok(Step::Block(Blocking::Ready(sock.as_raw_fd(), Ready::Write)));
            }
            if self.recv(sock)?.is_none() {
                return Ok(Step::Block(Blocking::Ready(sock.as_raw_fd(), Ready::Read)));
            }
        }
    }

    /// All the plaintext rustls has (Some(0): the end), None when it has none.
    fn plaintext(&mut self, buf: &mut Vec<u8>) -> Result<Option<usize>, String> {
        let start = buf.len();
        loop {
            let at = buf.len();
            buf.resize(at + PLAIN_CHUNK, 0);
            let r = self.conn.reader().read(&mut buf[at..]);
            buf.truncate(at + *r.as_ref().unwrap_or(&0));
            match r {
                Ok(n) if n > 0 => {}
                // The end: close_notify, or (as Go and browsers accept) the
                // socket closed without it between two records.
                Ok(_) => return Ok(Some(buf.len() - start)),
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                    if buf.len() == start && !self.records.at_boundary() {
                        return Err(format!("connection to {} ended in the middle of a TLS record", self.peer));
                    }
                    return Ok(Some(buf.len() - start));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(Some(buf.len() - start).filter(|&n| n > 0)),
                Err(e) => return Err(format!("cannot read connection to {}: {e}", self.peer)),
            }
        }
    }

    /// Encrypts all of `data` and sends what the socket takes: Done(None) when
    /// all is sent, Done(Some(end)) when the rest must wait (see `flushed`), or a
    /// wait for the handshake (nothing of `data` taken yet).
    pub fn write(&mut self, sock: &File, data: &[u8]) -> Result<Step<Option<u64>>, String> {
        if let Step::Block(b) = self.handshake(sock)? {
            return Ok(Step::Block(b));
        }
        if self.shut {
            return Err(format!("cannot write to connection to {}: it was shut down", self.peer));
        }
        let mut done = 0;
        while done < data.len() {
            let n = self.conn.writer().write(&data[done..]).map_err(|e| self.write_failed(&e))?;
            self.queue();
            if n == 0 {
                return Err(self.write_failed(&ErrorKind::WriteZero.into()));
            }
            done += n;
        }
        let end = self.queued;
        match self.send(sock) {
            Ok(true) => Ok(Step::Done(None)),
            Ok(false) => Ok(Step::Done(Some(end))),
            Err(e) => Err(self.write_failed(&e)),
        }
    }

    /// For the reactor: sends more; true once everything up to `end` is sent.
    pub fn flushed(&mut self, sock: &File, end: u64) -> std::io::Result<bool> {
        self.send(sock)?;
        Ok(self.sent >= end)
    }

    /// Counts a write the reactor finishes until the guard is dropped.
    pub fn drain_guard(&self) -> DrainGuard {
        self.draining.fetch_add(1, Ordering::Relaxed);
        DrainGuard(self.draining.clone())
    }

    /// Sends close_notify: Done once it (and what was queued before it) is sent.
    pub fn shutdown(&mut self, sock: &File) -> Result<Step<()>, String> {
        if !self.shut {
            self.shut = true;
            self.conn.send_close_notify();
            self.queue();
        }
        match self.send(sock) {
            Ok(true) => Ok(Step::Done(())),
            Ok(false) => Ok(Step::Block(Blocking::Ready(sock.as_raw_fd(), Ready::Write))),
            Err(e) => Err(self.write_failed(&e)),
        }
    }

    /// Before closing: close_notify, if the socket takes it now (a close never waits).
    pub fn close(&mut self, sock: &File) {
        if self.established && !self.shut && self.failed.is_none() {
            let _ = self.shutdown(sock);
        }
    }

    /// Moves the records rustls has ready into `out`.
    fn queue(&mut self) {
        while self.conn.wants_write() {
            let before = self.out.len();
            // Writing into a Vec cannot fail.
            let _ = self.conn.write_tls(&mut self.out);
            self.queued += (self.out.len() - before) as u64;
        }
    }

    /// Writes `out` as the socket takes it; true when all of it is sent.
    fn send(&mut self, mut sock: &File) -> std::io::Result<bool> {
        while self.pos < self.out.len() {
            match sock.write(&self.out[self.pos..]) {
                Ok(n) => {
                    self.pos += n;
                    self.sent += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    // Dropping the sent part once it is most of the buffer
                    // keeps the copying linear.
                    if self.pos > self.out.len() / 2 {
                        self.out.drain(..self.pos);
                        self.pos = 0;
                    }
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.pos = 0;
        Ok(true)
    }

    /// Reads ciphertext and decrypts it: the count read (0: the socket's
    /// end), None when there is nothing to read now.
    fn recv(&mut self, sock: &File) -> Result<Option<usize>, String> {
        if self.inpos == self.inbuf.len() {
            self.inbuf.clear();
            self.inpos = 0;
            match super::read::read_up_to(sock, &mut self.inbuf, READ_AHEAD) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.inbuf = Vec::new();
                    return Ok(None);
                }
                Err(e) if !self.established => return Err(self.handshake_failed(&crate::os::io_reason(&e))),
                Err(e) => return Err(format!("cannot read connection to {}: {}", self.peer, crate::os::io_reason(&e))),
            }
        }
        // An empty slice tells rustls the socket's end.
        let n = self.conn.read_tls(&mut &self.inbuf[self.inpos..]).map_err(|e| self.failed(&e.to_string()))?;
        self.records.pass(&self.inbuf[self.inpos..self.inpos + n]);
        self.inpos += n;
        if self.inpos == self.inbuf.len() {
            self.inbuf = Vec::new();
            self.inpos = 0;
        }
        if let Err(e) = self.conn.process_new_packets() {
            let msg = self.failed(&e.to_string());
            // The alert rustls queued tells the peer why, if the socket takes it.
            self.queue();
            let _ = self.send(sock);
            return Err(msg);
        }
        Ok(Some(n))
    }

    /// Ends the session with this reason.
    fn failed(&mut self, why: &str) -> String {
        if !self.established {
            return self.handshake_failed(why);
        }
        let msg = format!("TLS error on the connection to {}: {why}", self.peer);
        self.failed = Some(msg.clone());
        msg
    }

    fn handshake_failed(&mut self, why: &str) -> String {
        let msg = format!("TLS handshake with {} failed: {why}", self.peer);
        self.failed = Some(msg.clone());
        msg
    }

    fn write_failed(&self, e: &std::io::Error) -> String {
        format!("cannot write to connection to {}: {}", self.peer, crate::os::io_reason(e))
    }
}

/// Where the incoming bytes are in the record layer (headers are read, bodies
/// skipped), to tell a socket closed between records from one closed in the
/// middle of a record (a truncation, an error as in Go).
#[derive(Default)]
struct Records {
    header: [u8; 5],
    have: usize,
    body_left: usize,
}

impl Records {
    fn pass(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.body_left > 0 {
                let k = self.body_left.min(data.len());
                self.body_left -= k;
                data = &data[k..];
                continue;
            }
            self.header[self.have] = data[0];
            self.have += 1;
            data = &data[1..];
            if self.have == 5 {
                self.body_left = u16::from_be_bytes([self.header[3], self.header[4]]) as usize;
                self.have = 0;
            }
        }
    }

    fn at_boundary(&self) -> bool {
        self.have == 0 && self.body_left == 0
    }
}

/// The name to check the server's certificate against: a host name or an IP
/// address (the host part of "host:port" by default).
pub fn server_name(name: &str) -> Result<ServerName<'static>, String> {
    let bare = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
    ServerName::try_from(bare.to_string()).map_err(|_| format!("{name:?} is not a valid TLS server name"))
}

/// The host part of "host:port" ("[::1]:443" → "::1").
pub fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_boundaries() {
        let mut r = Records::default();
        assert!(r.at_boundary());
        r.pass(&[23, 3, 3, 0, 4, 1, 2]);
        assert!(!r.at_boundary());
        r.pass(&[3, 4, 23, 3]);
        assert!(!r.at_boundary());
        r.pass(&[3, 0, 0]);
        assert!(r.at_boundary());
    }

    #[test]
    fn host_part_and_names() {
        assert_eq!(host_of("example.com:443"), "example.com");
        assert_eq!(host_of("[::1]:443"), "::1");
        assert_eq!(host_of("127.0.0.1:8443"), "127.0.0.1");
        assert!(server_name("localhost").is_ok());
        assert!(server_name("::1").is_ok());
        assert!(server_name("bad name!").is_err());
    }
}
