//! The byte-level half of `std/ws` (docs/ws.md): a WebSocket frame made in
//! one piece (RFC 6455 5.2: header, length, masking key, masked payload) and
//! the XOR of a payload with its masking key, the two loops over every byte
//! of a message that would be slow in csp. Everything else (the handshake,
//! reading frames, fragments, control frames, the close handshake) is csp in
//! `std/ws.csp`; the handshake's SHA-1 and base64 are std/hash's and
//! std/base64's.

use super::args::arity;
use super::bytes::{check_len, data_arg};
use crate::vm::{err, ErrorKind, NativeFn, Res, Value, Vm};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("ws.frame", NativeFn::Value(frame));
    vm.define_hidden("ws.mask", NativeFn::Value(mask));
}

/// XORs `data` in place with the 4-byte masking `key`, repeated (RFC 6455 5.3).
fn apply_mask(data: &mut [u8], key: [u8; 4]) {
    let word = u32::from_ne_bytes(key);
    let mut chunks = data.chunks_exact_mut(4);
    for c in &mut chunks {
        let x = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) ^ word;
        c.copy_from_slice(&x.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= key[i];
    }
}

/// `__ws_frame(first, payload, masked)`: one frame as bytes. `first` is the
/// first byte (FIN, RSV and opcode), `payload` a string or bytes; with
/// `masked` (a client's frames) a fresh random key from the operating system
/// masks the payload.
fn frame(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("ws.frame", args, 3, 3)?;
    let first = match args[0] {
        Value::Int(n @ 0..=255) => n as u8,
        v => return err(ErrorKind::Value, format!("ws.frame() needs a first byte, not {}", vm.heap.type_name(v))),
    };
    let payload = data_arg(&vm.heap, "ws.frame", args[1])?;
    let masked = args[2].truthy();
    let n = payload.len();
    check_len(n + 14)?;
    let mut out = Vec::with_capacity(n + 14);
    out.push(first);
    let m = if masked { 0x80 } else { 0 };
    if n < 126 {
        out.push(m | n as u8);
    } else if n <= 0xffff {
        out.push(m | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(m | 127);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    if masked {
        let mut key = [0u8; 4];
        getrandom::getrandom(&mut key)
            .or_else(|e| err(ErrorKind::Io, format!("the operating system gave no random bytes: {e}")))?;
        out.extend_from_slice(&key);
        let start = out.len();
        out.extend_from_slice(payload);
        apply_mask(&mut out[start..], key);
    } else {
        out.extend_from_slice(payload);
    }
    Ok(vm.heap.bytes(out))
}

/// `__ws_mask(data, key)`: `data` (bytes) XORed with the 4-byte `key`: a
/// received frame's payload unmasked.
fn mask(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("ws.mask", args, 2, 2)?;
    let key: [u8; 4] = match vm.heap.as_bytes(args[1]).map(<[u8; 4]>::try_from) {
        Some(Ok(k)) => k,
        _ => return err(ErrorKind::Value, "ws.mask() needs a 4-byte key".to_string()),
    };
    let mut data = data_arg(&vm.heap, "ws.mask", args[0])?.to_vec();
    apply_mask(&mut data, key);
    Ok(vm.heap.bytes(data))
}

#[cfg(test)]
mod tests {
    use super::apply_mask;

    #[test]
    fn masking_twice_gives_the_data_back_at_every_length() {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        for n in 0..20 {
            let data: Vec<u8> = (0..n as u8).collect();
            let mut m = data.clone();
            apply_mask(&mut m, key);
            for (i, b) in m.iter().enumerate() {
                assert_eq!(*b, data[i] ^ key[i % 4]);
            }
            apply_mask(&mut m, key);
            assert_eq!(m, data);
        }
        // RFC 6455 5.7: "Hello" masked with 37 fa 21 3d.
        let mut hello = b"Hello".to_vec();
        apply_mask(&mut hello, key);
        assert_eq!(hello, [0x7f, 0x9f, 0x4d, 0x51, 0x58]);
    }
}
