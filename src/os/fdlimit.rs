//! The descriptor limit: raised at start-up so that thousands of connections
//! work out of the box.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit, as Go and Node do: the
/// usual soft limit (1024) is a relic of `select(2)`, which csp never uses;
/// the hard limit is the administrator's ceiling and stays. Failure is ignored
/// (the program runs with the limit it had).
pub fn raise() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit read and write the one struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 || lim.rlim_cur >= lim.rlim_max {
            return;
        }
        lim.rlim_cur = lim.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
            // An unlimited hard limit is refused above the kernel's nr_open.
            if let Some(n) = std::fs::read_to_string("/proc/sys/fs/nr_open").ok().and_then(|s| s.trim().parse().ok()) {
                lim.rlim_cur = n;
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
        }
    }
}
