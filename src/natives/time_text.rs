//! `std/time` as text: formatting (strftime, RFC 3339, RFC 2822, RFC 9557),
//! parsing, and durations written Go's way ("1h30m").

use super::args::{arity, text_arg};
use super::time::{ms_arg, ms_value, time_arg, value, zone};
use crate::vm::{err, ErrorKind, Fault, NativeFn, Res, Value, Vm};
use jiff::fmt::strtime;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ZonedDateTime};

pub fn register(vm: &mut Vm) {
    vm.define_hidden("time.format", NativeFn::Value(format_fn));
    vm.define_hidden("time.parse", NativeFn::Value(parse));
    vm.define_hidden("time.parse_duration", NativeFn::Value(parse_duration));
    vm.define_hidden("time.format_duration", NativeFn::Value(format_duration));
}

/// A jiff error as a `value` error naming the function.
pub(crate) fn fail(name: &str, e: jiff::Error) -> Fault {
    match err::<()>(ErrorKind::Value, format!("{name}(): {e}")) {
        Err(f) => f,
        Ok(()) => unreachable!(),
    }
}

/// RFC 3339: `2026-12-01T09:25:44Z` in UTC, else with the offset
/// (`2026-12-01T10:25:44+01:00`); fractional seconds only when not zero.
pub(crate) fn iso(t: &ZonedDateTime) -> String {
    let off = t.offset();
    if off.seconds() == 0 {
        t.timestamp().to_string()
    } else {
        t.timestamp().display_with_offset(off).to_string()
    }
}

/// `t` in the format `f`: a strftime pattern, or the name of a standard one.
pub(crate) fn format(t: &ZonedDateTime, f: &str, name: &str) -> Res<String> {
    match f {
        "rfc3339" | "iso" => Ok(iso(t)),
        "rfc9557" => Ok(t.to_string()),
        "rfc2822" => jiff::fmt::rfc2822::to_string(t).map_err(|e| fail(name, e)),
        _ => strtime::format(micro_f(f).as_bytes(), t).map_err(|e| fail(name, e)),
    }
}

/// `f` with each bare `%f` written `%6f`: six digits, microseconds, as
/// Python's `strftime` (jiff's `%f` trims trailing zeros). `%3f`, `%9f` and
/// `%.f` keep jiff's meaning.
fn micro_f(f: &str) -> std::borrow::Cow<'_, str> {
    if !f.contains("%f") {
        return std::borrow::Cow::Borrowed(f);
    }
    let mut out = String::with_capacity(f.len() + 4);
    let mut chars = f.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            match chars.next() {
                Some('f') => out.push_str("6f"),
                Some(n) => out.push(n),
                None => {}
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `time.format(t, f)`: the same as `t.format(f)`.
fn format_fn(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.format", args, 2, 2)?;
    let t = time_arg(vm, "time.format", args[0])?;
    let f = text_arg(&vm.heap, "time.format", "a format string", args[1])?;
    let s = format(&t, &f, "time.format")?;
    Ok(vm.heap.string(s))
}

/// `time.parse(s, format = nil, zone = "UTC")`. Without a format: RFC 9557
/// (`...[Europe/Paris]`), RFC 3339 / ISO 8601 with an offset or `Z`, or a date
/// and time without one (then in `zone`). With a strftime format: its
/// `%z`/`%Q` if it has one, else `zone`.
fn parse(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "time.parse";
    arity(NAME, args, 1, 3)?;
    let s = text_arg(&vm.heap, NAME, "a string", args[0])?;
    let fmt = match args.get(1) {
        None | Some(Value::Nil) => None,
        Some(v) => Some(text_arg(&vm.heap, NAME, "a format string", *v)?),
    };
    let tz = match args.get(2) {
        None | Some(Value::Nil) => TimeZone::UTC,
        Some(v) => zone(vm, NAME, *v)?,
    };
    let z = match fmt.as_deref() {
        None => parse_iso(&s, tz),
        Some("rfc2822") => jiff::fmt::rfc2822::parse(&s),
        Some("rfc3339" | "iso" | "rfc9557") => parse_iso(&s, tz),
        Some(f) => strtime::parse(f, &s).and_then(|b| match b.offset().is_some() || b.iana_time_zone().is_some() {
            true => b.to_zoned_datetime(),
            false => b.to_datetime().and_then(|dt| tz.to_zoned_datetime(dt)),
        }),
    };
    let z = z.or_else(|e| err(ErrorKind::Value, format!("{NAME}(): cannot parse {s:?}: {e}")))?;
    Ok(value(vm, z))
}

fn parse_iso(s: &str, tz: TimeZone) -> Result<ZonedDateTime, jiff::Error> {
    let p = jiff::fmt::temporal::Pieces::parse(s)?;
    if p.time_zone_annotation().is_some() {
        return s.parse::<ZonedDateTime>();
    }
    match p.to_numeric_offset() {
        // An instant: kept in UTC for `Z` or +00:00, else at its offset.
        Some(off) => {
            let ts = s.parse::<Timestamp>()?;
            let tz = if off.seconds() == 0 { TimeZone::UTC } else { TimeZone::fixed(off) };
            Ok(ts.to_zoned_datetime(tz))
        }
        None => tz.to_zoned_datetime(s.parse::<jiff::civil::DateTime>()?),
    }
}

/// `time.parse_duration("1h30m")`: milliseconds. Units `h m s ms us ns` (and
/// jiff's friendly forms, `2 hours`, and ISO 8601's `PT1H30M`).
fn parse_duration(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.parse_duration", args, 1, 1)?;
    let s = text_arg(&vm.heap, "time.parse_duration", "a string", args[0])?;
    match s.trim().parse::<SignedDuration>() {
        Ok(d) => Ok(ms_value(d)),
        Err(e) => err(ErrorKind::Value, format!("time.parse_duration(): cannot parse {s:?}: {e}")),
    }
}

/// `time.format_duration(ms)`: Go's form, `1h30m`, `2.5s`, `250ms`, zero units left out.
fn format_duration(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.format_duration", args, 1, 1)?;
    let d = ms_arg(vm, "time.format_duration", args[0])?;
    Ok(vm.heap.string(duration_text(d)))
}

fn duration_text(d: SignedDuration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        return "0s".to_string();
    }
    let sign = if ns < 0 { "-" } else { "" };
    let ns = ns.unsigned_abs();
    if ns < 1_000_000_000 {
        // Under a second: the largest unit that keeps a whole part.
        let (unit, per) = match ns {
            n if n >= 1_000_000 => ("ms", 1_000_000),
            n if n >= 1_000 => ("us", 1_000),
            _ => ("ns", 1),
        };
        return format!("{sign}{}{unit}", decimal(ns / per, ns % per, per));
    }
    let secs = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = sign.to_string();
    if h > 0 {
        out += &format!("{h}h");
    }
    if m > 0 {
        out += &format!("{m}m");
    }
    if s > 0 || frac > 0 {
        out += &format!("{}s", decimal(s, frac, 1_000_000_000));
    }
    out
}

/// `whole.frac` with `frac` in units of 1/`per`, trailing zeros dropped.
fn decimal(whole: u128, frac: u128, per: u128) -> String {
    if frac == 0 {
        return whole.to_string();
    }
    let width = per.to_string().len() - 1;
    let digits = format!("{frac:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_go_does() {
        let ms = |n: i64| duration_text(SignedDuration::from_millis(n));
        assert_eq!(ms(5_400_000), "1h30m");
        assert_eq!(ms(2_500), "2.5s");
        assert_eq!(ms(250), "250ms");
        assert_eq!(ms(0), "0s");
        assert_eq!(ms(-90_000), "-1m30s");
        assert_eq!(ms(3_600_001), "1h0.001s");
        assert_eq!(duration_text(SignedDuration::from_nanos(1_500)), "1.5us");
        assert_eq!(duration_text(SignedDuration::from_nanos(7)), "7ns");
    }
}
