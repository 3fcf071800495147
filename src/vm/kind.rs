//! What kind of failure an error value is (`e.kind`): every runtime error names
//! one; and `Fault`, how an operation fails (an error of a kind, or a thrown value).

/// The kind of a runtime error. `name()` is what `e.kind` gives in csp.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ErrorKind {
    /// Wrong operand or argument types, calling a non-function, no such method or
    /// field, wrong number of arguments.
    Type,
    /// A list, string or bytes index out of range.
    Index,
    /// A value that cannot be a map key (a float, a list, ...).
    Key,
    /// The right type but a bad value: argument ranges, a negative waitgroup
    /// counter, destructuring length, text that is not JSON.
    Value,
    /// Integer overflow.
    Overflow,
    /// Integer division or remainder by zero.
    ZeroDivision,
    /// Send on, or close of, a closed channel; close of nil; a closed database.
    Closed,
    /// The error a cancelled fiber gets at its suspension points.
    Cancelled,
    /// The error `co.close()` raises at the coroutine's suspended `yield`.
    CoroutineClosed,
    /// Resuming a running or finished coroutine.
    Coroutine,
    /// Locking a mutex this fiber already holds.
    Lock,
    /// A time limit ran out (`async.timeout`).
    Timeout,
    /// File or stdin I/O failed.
    Io,
    /// The database refused a statement (`std/sqlite`): bad SQL, a constraint
    /// violated, a busy or read-only database, an interrupted query.
    Sql,
    /// A peer broke its protocol's rules (`std/ws`: a frame RFC 6455 forbids, a
    /// handshake that is not a WebSocket one).
    Protocol,
    /// The host that embeds csp does not give the script this access (files
    /// outside the allowed folders, the network, processes, the environment).
    Denied,
    /// Too many nested calls.
    StackOverflow,
    /// A resource limit: string, list or JSON too long, nesting too deep.
    Limit,
    /// The heap would pass `--max-memory`.
    Memory,
    /// A `go` would pass `--max-fibers` live fibers.
    Fibers,
    /// No fiber can make progress. A deadlock ends the program with its own
    /// report (exit 3) rather than throwing, so no error value has this kind yet.
    Deadlock,
    /// A failed `assert()`.
    Assert,
    /// Made by `error(msg)`.
    User,
    /// A bug in the interpreter, not in the program.
    Internal,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 24] = [
        ErrorKind::Type,
        ErrorKind::Index,
        ErrorKind::Key,
        ErrorKind::Value,
        ErrorKind::Overflow,
        ErrorKind::ZeroDivision,
        ErrorKind::Closed,
        ErrorKind::Cancelled,
        ErrorKind::CoroutineClosed,
        ErrorKind::Coroutine,
        ErrorKind::Lock,
        ErrorKind::Timeout,
        ErrorKind::Io,
        ErrorKind::Sql,
        ErrorKind::Protocol,
        ErrorKind::Denied,
        ErrorKind::StackOverflow,
        ErrorKind::Limit,
        ErrorKind::Memory,
        ErrorKind::Fibers,
        ErrorKind::Deadlock,
        ErrorKind::Assert,
        ErrorKind::User,
        ErrorKind::Internal,
    ];

    /// The kind's name, as `e.kind` reads it.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::Type => "type",
            ErrorKind::Index => "index",
            ErrorKind::Key => "key",
            ErrorKind::Value => "value",
            ErrorKind::Overflow => "overflow",
            ErrorKind::ZeroDivision => "zero_division",
            ErrorKind::Closed => "closed",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::CoroutineClosed => "coroutine_closed",
            ErrorKind::Coroutine => "coroutine",
            ErrorKind::Lock => "lock",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Io => "io",
            ErrorKind::Sql => "sql",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Denied => "denied",
            ErrorKind::StackOverflow => "stack_overflow",
            ErrorKind::Limit => "limit",
            ErrorKind::Memory => "memory",
            ErrorKind::Fibers => "fibers",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::Assert => "assert",
            ErrorKind::User => "user",
            ErrorKind::Internal => "internal",
        }
    }

    /// The diagnostic code of an uncaught error of this kind: `csp::runtime::NAME`.
    pub fn code(&self) -> &'static str {
        match self {
            ErrorKind::Type => "csp::runtime::type",
            ErrorKind::Index => "csp::runtime::index",
            ErrorKind::Key => "csp::runtime::key",
            ErrorKind::Value => "csp::runtime::value",
            ErrorKind::Overflow => "csp::runtime::overflow",
            ErrorKind::ZeroDivision => "csp::runtime::zero_division",
            ErrorKind::Closed => "csp::runtime::closed",
            ErrorKind::Cancelled => "csp::runtime::cancelled",
            ErrorKind::CoroutineClosed => "csp::runtime::coroutine_closed",
            ErrorKind::Coroutine => "csp::runtime::coroutine",
            ErrorKind::Lock => "csp::runtime::lock",
            ErrorKind::Timeout => "csp::runtime::timeout",
            ErrorKind::Io => "csp::runtime::io",
            ErrorKind::Sql => "csp::runtime::sql",
            ErrorKind::Protocol => "csp::runtime::protocol",
            ErrorKind::Denied => "csp::runtime::denied",
            ErrorKind::StackOverflow => "csp::runtime::stack_overflow",
            ErrorKind::Limit => "csp::runtime::limit",
            ErrorKind::Memory => "csp::runtime::memory",
            ErrorKind::Fibers => "csp::runtime::fibers",
            ErrorKind::Deadlock => "csp::runtime::deadlock",
            ErrorKind::Assert => "csp::runtime::assert",
            ErrorKind::User => "csp::runtime::user",
            ErrorKind::Internal => "csp::runtime::internal",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    #[test]
    fn names_are_distinct_and_codes_match() {
        let mut names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        for k in ErrorKind::ALL {
            assert_eq!(k.code(), format!("csp::runtime::{}", k.name()));
            assert!(k.name().bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{k:?}");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}

/// Why an operation failed: a runtime error of some kind with its message (becomes
/// an error value with a trace) or a value thrown as is.
#[derive(Debug)]
pub enum Fault {
    /// Boxed, so results of builtins and operations stay small (they are returned
    /// on every call; a wide `Err` makes every `Ok` pay for it).
    Error(Box<(ErrorKind, String)>),
    Throw(super::value::Value),
    /// A big allocation fits under `--max-memory` only if garbage is
    /// collected (see `Heap::reserve`): the instruction runs again after a
    /// collection, which only happens between slices.
    Collect,
    /// The running fiber reached a debugger's `Op::Trap` (its pc is on it):
    /// `run` hands it to the debugger (vm/debug.rs), never thrown.
    Trap,
}

pub type Res<T> = Result<T, Fault>;

/// Shorthand for a runtime error result of kind `kind`.
pub fn err<T>(kind: ErrorKind, msg: impl Into<String>) -> Res<T> {
    Err(Fault::Error(Box::new((kind, msg.into()))))
}
