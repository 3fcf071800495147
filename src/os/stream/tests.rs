//! The stream's buffer, driven through a socket pair.

use super::*;
use std::io::Write;
use std::os::unix::net::UnixStream;

#[test]
fn a_socket_buffer_grows_only_by_what_arrived() {
    let (ours, mut peer) = UnixStream::pair().unwrap();
    ours.set_nonblocking(true).unwrap();
    let s = Stream::new("socket", Kind::Pipe, std::fs::File::from(std::os::fd::OwnedFd::from(ours)), true, true);
    peer.write_all(&[7; 64]).unwrap();
    match s.read(Some(64), false, usize::MAX, <[u8]>::to_vec) {
        Ok(Step::Done(Some(b))) => assert_eq!(b, vec![7; 64]),
        _ => panic!("64 bytes were ready"),
    }
    // An idle connection keeps its buffer: it must not be a whole CHUNK.
    assert!(s.shared.lock().unwrap().rbuf.capacity() < 4096);
    peer.write_all(b"rest").unwrap();
    match s.read(None, false, usize::MAX, <[u8]>::to_vec) {
        Ok(Step::Block(_)) => {}
        _ => panic!("read() waits for the end of the stream"),
    }
    drop(peer);
    match s.read(None, false, usize::MAX, <[u8]>::to_vec) {
        Ok(Step::Done(Some(b))) => assert_eq!(b, b"rest"),
        _ => panic!("the rest, then the end"),
    }
}

#[test]
fn a_read_past_its_cap_fails_and_keeps_what_it_buffered() {
    let (ours, mut peer) = UnixStream::pair().unwrap();
    ours.set_nonblocking(true).unwrap();
    let s = Stream::new("socket", Kind::Pipe, std::fs::File::from(std::os::fd::OwnedFd::from(ours)), true, true);
    peer.write_all(&[1; 100]).unwrap();
    assert!(matches!(s.read(None, false, 10, <[u8]>::to_vec), Err(Fail::Over)));
    assert!(matches!(s.read_line(None, 10, <[u8]>::to_vec), Err(Fail::Over)));
    // Within the cap the same bytes read as before.
    match s.read(Some(100), false, 100, <[u8]>::to_vec) {
        Ok(Step::Done(Some(b))) => assert_eq!(b, vec![1; 100]),
        _ => panic!("the 100 bytes stayed buffered"),
    }
}
