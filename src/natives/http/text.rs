//! HTTP dates.

use crate::natives::args::arity;
use crate::vm::{Fiber, Res, Ret, Value, Vm};

// Per isolate (a thread each).
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

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(super::http_date(1_796_117_144), "Tue, 01 Dec 2026 09:25:44 GMT");
        assert_eq!(super::http_date(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
