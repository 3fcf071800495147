//! HTTP dates and percent-encoding.

use crate::natives::arity;
use crate::vm::{err, ErrorKind, Fiber, Res, Ret, Value, Vm};

thread_local! {
    /// The Date header of the current second (formatted once a second).
    static DATE: std::cell::RefCell<(u64, std::rc::Rc<str>)> = std::cell::RefCell::new((u64::MAX, "".into()));
}

/// `__http_date()`: the time now as an HTTP date (`Tue, 01 Dec 2026 09:25:44 GMT`),
/// formatted once a second (a server sends it with every response).
pub(super) fn date(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("date", args, 0, 0)?;
    let text = now_date();
    Ok(Ret::Value(vm.heap.str(&text)))
}

/// The current second's HTTP date.
pub(super) fn now_date() -> std::rc::Rc<str> {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    DATE.with(|d| {
        let mut d = d.borrow_mut();
        if d.0 != secs {
            *d = (secs, http_date(secs).into());
        }
        d.1.clone()
    })
}

/// IMF-fixdate (RFC 9110 5.6.7) of `secs` since the epoch.
fn http_date(secs: u64) -> String {
    let (days, rem) = (secs / 86400, secs % 86400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let wd = DAYS[(days % 7) as usize];
    format!("{wd}, {day:02} {} {year} {h:02}:{m:02}:{s:02} GMT", MONTHS[month as usize - 1])
}

/// `__http_unescape(s)`: percent-decoding (and `+` as a space, as in a
/// query); a `value` error for a bad escape or bytes that are not UTF-8.
pub(super) fn unescape(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("unescape", args, 1, 1)?;
    let s = crate::natives::text_arg(&vm.heap, "http.unescape", "a string", args[0])?;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(x) => out.push(x),
                    None => return err(ErrorKind::Value, format!("bad percent escape in {s:?}")),
                }
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(t) => Ok(Ret::Value(vm.heap.string(t))),
        Err(_) => err(ErrorKind::Value, format!("{s:?} does not decode to UTF-8 text")),
    }
}

/// `__http_escape(s)`: percent-encodes everything but unreserved characters
/// (RFC 3986 2.3), for a query value or a path segment.
pub(super) fn escape(vm: &mut Vm, _: &Fiber, args: &[Value]) -> Res<Ret> {
    arity("escape", args, 1, 1)?;
    let s = crate::natives::text_arg(&vm.heap, "http.escape", "a string", args[0])?;
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(Ret::Value(vm.heap.string(out)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(super::http_date(1_796_117_144), "Tue, 01 Dec 2026 09:25:44 GMT");
        assert_eq!(super::http_date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
