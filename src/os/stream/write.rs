//! A stream's writing half: pipes written at once (the reactor finishes
//! what would block), files through a buffer a pool job writes out, sockets
//! through their TLS session.

use super::{Kind, Res, Shared, Step, Stream};
use crate::vm::builtin::Blocking;
use std::io::Write;
use std::os::fd::AsRawFd;

/// Buffered file output is written out past this size.
const WRITE_BUFFER: usize = 64 * 1024;

impl Stream {
    /// Writes all of `data` (buffered for a file until `WRITE_BUFFER` or close).
    pub fn write(&self, data: &[u8]) -> Res<()> {
        self.check(false)?;
        let mut s = match self.lock() {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        let Some(file) = s.file.as_ref().filter(|_| !s.closed) else {
            return Err(format!("{} is closed", self.name));
        };
        if s.tls.is_some() {
            return self.write_tls(&mut s, data);
        }
        match self.kind {
            Kind::Pipe => {
                let mut f: &std::fs::File = file;
                let mut done = 0;
                while done < data.len() {
                    match f.write(&data[done..]) {
                        Ok(n) => done += n,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            let rest = data[done..].to_vec();
                            return Ok(Step::Block(Blocking::Write(file.as_raw_fd(), rest, self.name.to_string())));
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(self.failed("write to", &e)),
                    }
                }
                Ok(Step::Done(()))
            }
            Kind::File => {
                s.wbuf.extend_from_slice(data);
                if s.wbuf.len() < WRITE_BUFFER {
                    return Ok(Step::Done(()));
                }
                drop(s);
                Ok(Step::Block(self.flush_job(false)))
            }
        }
    }

    /// Writes through the TLS session; what the socket cannot take yet is sent
    /// by the reactor from the session's buffer (in order with later writes).
    fn write_tls(&self, s: &mut Shared, data: &[u8]) -> Res<()> {
        let (Some(file), Some(tls)) = (s.file.as_ref(), s.tls.as_mut()) else { unreachable!("a TLS socket") };
        let end = match tls.write(file, data)? {
            Step::Done(None) => return Ok(Step::Done(())),
            Step::Done(Some(end)) => end,
            Step::Block(b) => return Ok(Step::Block(b)),
        };
        let guard = tls.drain_guard();
        let shared = self.shared.clone();
        let drain = move || {
            let _counted = &guard;
            let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
            let s = &mut *s;
            match (s.file.as_ref(), s.tls.as_mut()) {
                (Some(f), Some(tls)) => tls.flushed(f, end),
                _ => Err(std::io::Error::other("it was closed")),
            }
        };
        Ok(Step::Block(Blocking::Drain(file.as_raw_fd(), Box::new(drain), self.name.to_string())))
    }

    /// Writes out buffered output (and with `close`, closes the stream).
    pub fn flush(&self, close: bool) -> Res<()> {
        let mut s = match self.lock() {
            Ok(s) => s,
            Err(b) => return Ok(Step::Block(b)),
        };
        if close {
            s.closed = true;
            let s = &mut *s;
            if let (Some(f), Some(tls)) = (s.file.as_ref(), s.tls.as_mut()) {
                tls.close(f);
            }
        }
        if s.wbuf.is_empty() {
            if close {
                s.file = None;
            }
            return Ok(Step::Done(()));
        }
        drop(s);
        Ok(Step::Block(self.flush_job(close)))
    }

    /// A pool job writing the buffer out (then closing, with `close`).
    fn flush_job(&self, close: bool) -> Blocking {
        let shared = self.shared.clone();
        let name = self.name.to_string();
        Blocking::Io(Box::new(move || {
            let mut s = shared.lock().unwrap_or_else(|p| p.into_inner());
            let data = std::mem::take(&mut s.wbuf);
            let out = match s.file.as_deref() {
                Some(mut f) => {
                    f.write_all(&data).map_err(|e| format!("cannot write {name}: {}", crate::os::io_reason(&e)))
                }
                None => Err(format!("{name} is closed")),
            };
            if close {
                s.file = None;
            }
            Box::new(move |_: &mut crate::vm::Heap| {
                out.map(|()| crate::vm::Value::Nil).map_err(|e| (crate::vm::ErrorKind::Io, e))
            })
        }))
    }
}
