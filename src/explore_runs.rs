//! `--explore N`: a program (or, in `testing/`, each test) run under N
//! schedules, each in a fresh VM, stopping at the first that fails and printing
//! the command line that replays it (`--explore-seed S`). What a schedule
//! varies is the scheduler's business (`sched/explore.rs`); see docs/testing.md.

/// Which schedules to run: `count` of them, numbered from `first`.
#[derive(Clone, Copy, Debug)]
pub struct Schedules {
    pub first: u64,
    pub count: u64,
}

impl Schedules {
    pub fn seeds(self) -> impl Iterator<Item = u64> {
        (0..self.count).map(move |i| self.first.wrapping_add(i))
    }
}

/// `csp run --explore N FILE`: runs the program under each schedule with its
/// output kept; the first run that fails (exit code not 0) shows its output
/// and report and the replay command, and its exit code is returned. `flags`
/// are the options the replay needs besides the seed (`--seed N`); each
/// schedule's runtime is `options`' with that schedule.
pub fn run_program(path: &str, src: &str, schedules: Schedules, flags: &str, options: &crate::embed::Options) -> i32 {
    for (n, seed) in schedules.seeds().enumerate() {
        let mut rt = crate::embed::Runtime::new(crate::embed::Options { explore: Some(seed), ..options.clone() });
        let vm = rt.vm();
        vm.out.capture();
        let out = crate::runner::run_source(vm, path, src, crate::diag::use_color());
        if out.exit_code == 0 {
            continue;
        }
        let stdout = vm.out.take();
        let stderr = vm.out.take_err();
        say_out(&stdout);
        crate::err_print!("{}{}", String::from_utf8_lossy(&stderr), out.stderr);
        let mut replay = format!("csp run {flags}--explore-seed {seed} {}", quote(path));
        for a in &options.args {
            replay.push(' ');
            replay.push_str(&quote(a));
        }
        crate::err_println!(
            "csp: schedule {seed} failed (exit code {}) after {} of {} schedules\nreplay: {replay}",
            out.exit_code,
            n + 1,
            schedules.count
        );
        return out.exit_code;
    }
    crate::err_println!("csp: {} schedules passed ({})", schedules.count, span(schedules));
    0
}

/// "seeds 1-1000" or "seed 7".
pub fn span(s: Schedules) -> String {
    match s.count {
        1 => format!("seed {}", s.first),
        n => format!("seeds {}-{}", s.first, s.first.wrapping_add(n - 1)),
    }
}

fn say_out(bytes: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|_| out.flush());
}

/// A word for a shell command line, quoted when it needs to be.
pub fn quote(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-:+=,@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_the_shell_would_split() {
        assert_eq!(quote("tests/a_test.csp::test_x"), "tests/a_test.csp::test_x");
        assert_eq!(quote("my file.csp"), "'my file.csp'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn seeds_count_from_the_first() {
        let s = Schedules { first: 5, count: 3 };
        assert_eq!(s.seeds().collect::<Vec<_>>(), [5, 6, 7]);
        assert_eq!(span(s), "seeds 5-7");
        assert_eq!(span(Schedules { first: 9, count: 1 }), "seed 9");
    }
}
