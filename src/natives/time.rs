//! `std/time`: a time value (a host object, an instant and a time zone, on
//! jiff's `ZonedDateTime`), its fields and methods, and the module's
//! constructors. Durations are plain numbers of milliseconds, like `sleep`'s.
//! Formatting, parsing and duration text are in `time_text.rs`.

use super::args::{arity, text_arg};
use super::time_text::{self, fail};
use crate::vm::host::{Class, HostObject};
use crate::vm::value::Handle;
use crate::vm::{err, ErrorKind, Heap, NativeFn, Res, Ret, Value, Vm};
use jiff::tz::{Offset, TimeZone};
use jiff::{SignedDuration, Span, Timestamp, ZonedDateTime};
use std::cmp::Ordering;

/// Fields and methods, for completion.
pub const MEMBERS: &[&str] = &[
    "add",
    "add_date",
    "after",
    "before",
    "day",
    "format",
    "hour",
    "in",
    "iso",
    "local",
    "minute",
    "month",
    "ms",
    "ns",
    "offset",
    "second",
    "start_of_day",
    "sub",
    "unix",
    "unix_ms",
    "utc",
    "weekday",
    "yday",
    "year",
    "zone",
];

pub fn register(vm: &mut Vm) {
    vm.define_hidden("time.now", NativeFn::Value(now));
    vm.define_hidden("time.utc", NativeFn::Value(utc));
    vm.define_hidden("time.unix", NativeFn::Value(unix));
    vm.define_hidden("time.unix_ms", NativeFn::Value(unix_ms));
    vm.define_hidden("time.date", NativeFn::Value(date));
    vm.define_hidden("time.since", NativeFn::Value(since));
    vm.define_hidden("time.until", NativeFn::Value(until));
    time_text::register(vm);
}

/// A new time value on the heap.
pub(crate) fn value(vm: &mut Vm, z: ZonedDateTime) -> Value {
    vm.heap.host_object(Time(z))
}

/// A time argument, or a type error naming the function.
pub(crate) fn time_arg(vm: &Vm, name: &str, v: Value) -> Res<ZonedDateTime> {
    if let Some(t) = time_of(&vm.heap, v) {
        return Ok(t.clone());
    }
    err(ErrorKind::Type, format!("{name}() needs a time, not {}", vm.heap.type_name(v)))
}

/// The zone called `name`: "local", "UTC", a fixed offset ("+02:00", "-0530")
/// or an IANA name looked up in the time zone database.
pub(crate) fn zone(vm: &Vm, fname: &str, v: Value) -> Res<TimeZone> {
    let name = text_arg(&vm.heap, fname, "a zone name string", v)?;
    match name.as_str() {
        "local" | "Local" => return Ok(TimeZone::system()),
        "UTC" | "utc" | "Z" => return Ok(TimeZone::UTC),
        _ => {}
    }
    if let Some(off) = fixed_offset(&name) {
        return Ok(TimeZone::fixed(off));
    }
    TimeZone::get(&name).or_else(|_| err(ErrorKind::Value, format!("{fname}(): unknown time zone '{name}'")))
}

/// "+HH", "+HH:MM" or "+HHMM" (or with "-").
fn fixed_offset(s: &str) -> Option<Offset> {
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = s[1..].chars().filter(|c| *c != ':').collect();
    if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let h: i32 = digits[..2].parse().ok()?;
    let m: i32 = if digits.len() == 4 { digits[2..].parse().ok()? } else { 0 };
    if h > 25 || m > 59 {
        return None;
    }
    Offset::from_seconds(sign * (h * 3600 + m * 60)).ok()
}

/// The optional zone argument at `i` (local when absent or nil).
fn zone_at(vm: &Vm, fname: &str, args: &[Value], i: usize) -> Res<TimeZone> {
    match args.get(i) {
        None | Some(Value::Nil) => Ok(TimeZone::system()),
        Some(v) => zone(vm, fname, *v),
    }
}

/// A duration as a number of milliseconds: an int when whole, else a float.
pub(crate) fn ms_value(d: SignedDuration) -> Value {
    let ns = d.as_nanos();
    if ns % 1_000_000 == 0 {
        Value::Int((ns / 1_000_000) as i64)
    } else {
        Value::Float(d.as_millis_f64())
    }
}

/// A number of milliseconds as a duration.
pub(crate) fn ms_arg(vm: &Vm, fname: &str, v: Value) -> Res<SignedDuration> {
    match v {
        Value::Int(ms) => Ok(SignedDuration::from_millis(ms)),
        Value::Float(f) => SignedDuration::try_from_nanos_i128((f * 1e6).round() as i128)
            .filter(|_| f.is_finite())
            .map_or_else(|| err(ErrorKind::Value, format!("{fname}(): {f} ms is not a duration")), Ok),
        _ => err(ErrorKind::Type, format!("{fname}() needs a number of milliseconds, not {}", vm.heap.type_name(v))),
    }
}

/// `time.now(zone = "local")`: the current time.
fn now(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.now", args, 0, 1)?;
    let tz = zone_at(vm, "time.now", args, 0)?;
    Ok(value(vm, Timestamp::now().to_zoned_datetime(tz)))
}

/// `time.utc()`: the current time in UTC.
fn utc(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.utc", args, 0, 0)?;
    Ok(value(vm, Timestamp::now().to_zoned_datetime(TimeZone::UTC)))
}

/// `time.unix(secs, zone = "local")`: the time `secs` (int or float) after the epoch.
fn unix(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.unix", args, 1, 2)?;
    let ts = match args[0] {
        Value::Int(s) => Timestamp::from_second(s).ok(),
        Value::Float(f) => SignedDuration::try_from_secs_f64(f).and_then(Timestamp::from_duration).ok(),
        v => {
            return err(ErrorKind::Type, format!("time.unix() needs a number of seconds, not {}", vm.heap.type_name(v)))
        }
    };
    let Some(ts) = ts else {
        let n = crate::display::display(&vm.heap, args[0]);
        return err(ErrorKind::Value, format!("time.unix(): {n} seconds is outside the years -9999..9999"));
    };
    let tz = zone_at(vm, "time.unix", args, 1)?;
    Ok(value(vm, ts.to_zoned_datetime(tz)))
}

/// `time.unix_ms(ms, zone = "local")`: the time `ms` milliseconds after the epoch (JavaScript's numbers).
fn unix_ms(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.unix_ms", args, 1, 2)?;
    let d = ms_arg(vm, "time.unix_ms", args[0])?;
    let ts = Timestamp::from_duration(d).map_err(|e| fail("time.unix_ms", e))?;
    let tz = zone_at(vm, "time.unix_ms", args, 1)?;
    Ok(value(vm, ts.to_zoned_datetime(tz)))
}

/// `time.date(y, m, d, h = 0, mi = 0, s = 0, zone = "local")`; the zone may
/// follow any of the numbers. `s` may be a float.
fn date(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    const NAME: &str = "time.date";
    arity(NAME, args, 3, 7)?;
    let (nums, tz) = match args.last() {
        Some(v) if vm.heap.as_str(*v).is_some() || matches!(v, Value::Nil) => (&args[..args.len() - 1], *v),
        _ => (args, Value::Nil),
    };
    if nums.len() < 3 || nums.len() > 6 {
        return err(
            ErrorKind::Type,
            format!("{NAME}() takes year, month, day, then optional hour, minute, second and zone"),
        );
    }
    let tz = zone_at(vm, NAME, &[tz], 0)?;
    let mut parts = [0i64; 5];
    for (i, v) in nums.iter().take(5).enumerate() {
        parts[i] = match v {
            Value::Int(n) => *n,
            v => return err(ErrorKind::Type, format!("{NAME}() needs int parts, not {}", vm.heap.type_name(*v))),
        };
    }
    let (sec, ns) = match nums.get(5) {
        None => (0, 0),
        Some(Value::Int(s)) => (*s, 0),
        Some(Value::Float(f)) if *f >= 0.0 && *f < 60.0 => {
            (f.trunc() as i64, ((f.fract() * 1e9).round() as i64).min(999_999_999))
        }
        Some(Value::Float(f)) => return err(ErrorKind::Value, format!("{NAME}(): second {f} is not in 0..60")),
        Some(v) => {
            return err(ErrorKind::Type, format!("{NAME}() needs a number of seconds, not {}", vm.heap.type_name(*v)))
        }
    };
    let [y, mo, d, h, mi] = parts;
    let small = |what: &str, n: i64, lo: i64, hi: i64| -> Res<i64> {
        if n < lo || n > hi {
            return err(ErrorKind::Value, format!("{NAME}(): {what} {n} is not in {lo}..{hi}"));
        }
        Ok(n)
    };
    let y = small("year", y, -9999, 9999)?;
    let mo = small("month", mo, 1, 12)?;
    let h = small("hour", h, 0, 23)?;
    let mi = small("minute", mi, 0, 59)?;
    let sec = small("second", sec, 0, 59)?;
    let days = jiff::civil::Date::new(y as i16, mo as i8, 1).map(|d| d.days_in_month()).unwrap_or(31);
    let d = match d {
        d if d >= 1 && d <= i64::from(days) => d,
        d => {
            return err(
                ErrorKind::Value,
                format!("{NAME}(): day {d} is not in 1..{days} ({y}-{mo:02} has {days} days)"),
            )
        }
    };
    let dt = jiff::civil::DateTime::new(y as i16, mo as i8, d as i8, h as i8, mi as i8, sec as i8, ns as i32)
        .map_err(|e| fail(NAME, e))?;
    let z = tz.to_zoned_datetime(dt).map_err(|e| fail(NAME, e))?;
    Ok(value(vm, z))
}

/// `time.since(t)`: milliseconds from `t` to now.
fn since(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.since", args, 1, 1)?;
    let t = time_arg(vm, "time.since", args[0])?;
    Ok(ms_value(Timestamp::now().duration_since(t.timestamp())))
}

/// `time.until(t)`: milliseconds from now to `t`.
fn until(vm: &mut Vm, args: &[Value]) -> Res<Value> {
    arity("time.until", args, 1, 1)?;
    let t = time_arg(vm, "time.until", args[0])?;
    Ok(ms_value(t.timestamp().duration_since(Timestamp::now())))
}

/// The time `v` holds, if it is a time.
pub(crate) fn time_of(heap: &Heap, v: Value) -> Option<&ZonedDateTime> {
    let Value::Obj(h) = v else { return None };
    heap.host::<Time>(h).map(|t| &t.0)
}

fn get(vm: &Vm, h: Handle) -> &ZonedDateTime {
    time_of(&vm.heap, Value::Obj(h)).expect("not a time")
}

/// `t.name`: the parts of a time in its zone.
fn field(vm: &mut Vm, h: Handle, name: &str) -> Option<Value> {
    let t = get(vm, h);
    let int = |n: i64| Some(Value::Int(n));
    match name {
        "year" => int(t.year().into()),
        "month" => int(t.month().into()),
        "day" => int(t.day().into()),
        "hour" => int(t.hour().into()),
        "minute" => int(t.minute().into()),
        "second" => int(t.second().into()),
        "ms" => int(t.millisecond().into()),
        "ns" => int(t.subsec_nanosecond().into()),
        "weekday" => int(t.weekday().to_monday_one_offset().into()),
        "yday" => int(t.day_of_year().into()),
        "offset" => int(t.offset().seconds().into()),
        "unix" => {
            let ts = t.timestamp();
            Some(Value::Float(ts.as_second() as f64 + f64::from(ts.subsec_nanosecond()) / 1e9))
        }
        "unix_ms" => int(t.timestamp().as_millisecond()),
        "zone" => {
            let z = zone_name(t);
            Some(vm.heap.string(z))
        }
        _ => None,
    }
}

/// The zone's IANA name, or its offset for a fixed zone.
pub(crate) fn zone_name(t: &ZonedDateTime) -> String {
    match t.time_zone().iana_name() {
        Some(n) => n.to_string(),
        None => {
            let s = t.offset().seconds();
            let sign = if s < 0 { '-' } else { '+' };
            format!("{sign}{:02}:{:02}", s.abs() / 3600, s.abs() / 60 % 60)
        }
    }
}

/// A method of a time value: `$f(vm, t, args)` with the receiver's time.
macro_rules! method {
    ($name:literal, $f:expr) => {
        ($name, |vm, _, h, _, args| {
            let t = get(vm, h).clone();
            $f(vm, t, args).map(Ret::Value)
        })
    };
}

pub static CLASS: Class = Class {
    name: "time",
    methods: &[
        method!("add", add),
        method!("add_date", add_date),
        method!("after", |vm, t, args| order(vm, t, "time.after", args, Ordering::Greater)),
        method!("before", |vm, t, args| order(vm, t, "time.before", args, Ordering::Less)),
        method!("format", format),
        method!("in", |vm: &mut Vm, t: ZonedDateTime, args: &[Value]| {
            arity("time.in", args, 1, 1)?;
            let tz = zone(vm, "time.in", args[0])?;
            Ok(value(vm, t.with_time_zone(tz)))
        }),
        method!("iso", |vm: &mut Vm, t, args| {
            arity("time.iso", args, 0, 0)?;
            Ok(vm.heap.string(time_text::iso(&t)))
        }),
        method!("local", |vm, t: ZonedDateTime, args| {
            arity("time.local", args, 0, 0)?;
            Ok(value(vm, t.with_time_zone(TimeZone::system())))
        }),
        method!("start_of_day", |vm, t: ZonedDateTime, args| {
            arity("time.start_of_day", args, 0, 0)?;
            let z = t.start_of_day().map_err(|e| fail("time.start_of_day", e))?;
            Ok(value(vm, z))
        }),
        method!("sub", sub),
        method!("utc", |vm, t: ZonedDateTime, args| {
            arity("time.utc", args, 0, 0)?;
            Ok(value(vm, t.with_time_zone(TimeZone::UTC)))
        }),
    ],
    next: None,
    field: Some(field),
};

/// An instant and a time zone (`Obj::Host`).
pub struct Time(ZonedDateTime);

impl HostObject for Time {
    fn class(&self) -> &'static Class {
        &CLASS
    }
    fn display(&self, out: &mut String) {
        use std::fmt::Write;
        write!(out, "{}", self.0).unwrap();
    }
    fn equals(&self, other: &dyn HostObject) -> bool {
        other.downcast_ref::<Time>().is_some_and(|o| o.0 == self.0)
    }
    fn compare(&self, other: &dyn HostObject) -> Option<Ordering> {
        other.downcast_ref::<Time>().map(|o| self.0.cmp(&o.0))
    }
}

fn add(vm: &mut Vm, t: ZonedDateTime, args: &[Value]) -> Res<Value> {
    arity("time.add", args, 1, 1)?;
    let d = ms_arg(vm, "time.add", args[0])?;
    let z = t.checked_add(d).map_err(|e| fail("time.add", e))?;
    Ok(value(vm, z))
}

fn sub(vm: &mut Vm, t: ZonedDateTime, args: &[Value]) -> Res<Value> {
    arity("time.sub", args, 1, 1)?;
    if let Ok(other) = time_arg(vm, "time.sub", args[0]) {
        return Ok(ms_value(t.duration_since(&other)));
    }
    let d = ms_arg(vm, "time.sub", args[0]).or_else(|_| {
        err(
            ErrorKind::Type,
            format!("time.sub() needs a time or a number of milliseconds, not {}", vm.heap.type_name(args[0])),
        )
    })?;
    let z = t.checked_sub(d).map_err(|e| fail("time.sub", e))?;
    Ok(value(vm, z))
}

fn add_date(vm: &mut Vm, t: ZonedDateTime, args: &[Value]) -> Res<Value> {
    arity("time.add_date", args, 1, 3)?;
    let mut n = [0i64; 3];
    for (i, v) in args.iter().enumerate() {
        n[i] = super::args::int_arg(&vm.heap, "time.add_date", *v)?;
    }
    let span = Span::new().try_years(n[0]).and_then(|s| s.try_months(n[1])).and_then(|s| s.try_days(n[2]));
    let z = span.and_then(|s| t.checked_add(s)).map_err(|e| fail("time.add_date", e))?;
    Ok(value(vm, z))
}

/// `t.before(u)` (`want` Less) and `t.after(u)` (Greater).
fn order(vm: &mut Vm, t: ZonedDateTime, name: &str, args: &[Value], want: Ordering) -> Res<Value> {
    arity(name, args, 1, 1)?;
    let other = time_arg(vm, name, args[0])?;
    Ok(Value::Bool(t.cmp(&other) == want))
}

fn format(vm: &mut Vm, t: ZonedDateTime, args: &[Value]) -> Res<Value> {
    arity("time.format", args, 1, 1)?;
    let f = text_arg(&vm.heap, "time.format", "a format string", args[0])?;
    let s = time_text::format(&t, &f, "time.format")?;
    Ok(vm.heap.string(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled database (used when the machine has none) is in the binary.
    #[test]
    fn bundled_zones() {
        let db = jiff::tz::TimeZoneDatabase::bundled();
        let paris = db.get("Europe/Paris").expect("bundled Europe/Paris");
        let ts = Timestamp::from_second(1_782_900_000).unwrap();
        assert_eq!(paris.to_offset(ts).seconds(), 7200);
    }

    /// Every name offered for completion is a field or a method.
    #[test]
    fn members_exist() {
        let mut vm = crate::natives::vm();
        let t = value(&mut vm, Timestamp::UNIX_EPOCH.to_zoned_datetime(TimeZone::UTC));
        let Value::Obj(h) = t else { unreachable!() };
        for name in MEMBERS {
            if field(&mut vm, h, name).is_none() {
                assert!(CLASS.method(name).is_some(), "{name}");
            }
        }
    }

    #[test]
    fn fixed_offsets() {
        let secs = |s: &str| fixed_offset(s).map(|o| o.seconds());
        assert_eq!(secs("+05:30"), Some(19800));
        assert_eq!(secs("-0800"), Some(-28800));
        assert_eq!(secs("+01"), Some(3600));
        assert_eq!(secs("+1"), None);
        assert_eq!(secs("Europe/Paris"), None);
        assert_eq!(secs("+05:61"), None);
    }
}
