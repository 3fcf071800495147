//! The options only `csp test` (and `--coverage` for `csp run`) takes:
//! `-j N`, `--coverage FILE`, `--coverage-std`, `--bench`, `--benchtime TIME`,
//! `--json`; kept apart from `main.rs`'s general ones.

/// What the options asked for.
#[derive(Default, Clone, Debug)]
pub struct Flags {
    /// `-j N`: N test files run at once, each on a thread (0: not given, one).
    pub jobs: usize,
    /// `--coverage FILE`: write lcov counts there.
    pub coverage: Option<String>,
    /// `--coverage-std`: count std modules too.
    pub coverage_std: bool,
    /// `--bench`: run `bench_*` functions instead of `test_*`.
    pub bench: bool,
    /// `--bench=PATTERN`: only benchmarks whose name contains PATTERN.
    pub bench_filter: Option<String>,
    /// `--benchtime TIME`: how long a benchmark's last run must take (default 1 s).
    pub benchtime_ms: Option<u64>,
    /// `--json`: events as JSON lines.
    pub json: bool,
}

impl Flags {
    /// Parses the option at `args[*i]` if it is one of these (advancing `*i`
    /// past its value); None when it is not.
    pub fn parse(&mut self, args: &[String], i: &mut usize) -> Option<Result<(), String>> {
        let next = args.get(*i + 1).cloned();
        let arg = args[*i].as_str();
        let mut value = |ok: bool, needs: &str| {
            if ok {
                *i += 1;
                Ok(())
            } else {
                Err(needs.to_string())
            }
        };
        Some(match arg {
            "-j" | "--jobs" => match next.as_deref().and_then(|s| s.parse::<usize>().ok()).filter(|&n| n > 0) {
                Some(n) => {
                    self.jobs = n;
                    value(true, "")
                }
                None => value(false, "-j needs a positive number of files to run at once"),
            },
            "--coverage" => {
                self.coverage = next.clone();
                value(next.is_some(), "--coverage needs a FILE to write lcov to")
            }
            "--coverage-std" => {
                self.coverage_std = true;
                Ok(())
            }
            "--bench" => {
                self.bench = true;
                Ok(())
            }
            "--benchtime" => {
                self.benchtime_ms = next.as_deref().and_then(crate::limits::parse_millis);
                value(self.benchtime_ms.is_some(), "--benchtime needs a positive time: milliseconds, or 2s, 1m")
            }
            "--json" => {
                self.json = true;
                Ok(())
            }
            a if a.starts_with("--bench=") => {
                self.bench = true;
                self.bench_filter = Some(a["--bench=".len()..].to_string());
                Ok(())
            }
            _ => return None,
        })
    }

    /// The usage mistake in giving these to `cmd`, if any (`trace`: with `--trace` or `--profile`;
    /// `explore`: under `--explore` or `--explore-seed`; `many`: `--explore N`).
    pub fn misuse(&self, cmd: &str, trace: bool, explore: bool, many: bool) -> Option<&'static str> {
        let test_only = self.jobs > 0 || self.bench || self.benchtime_ms.is_some() || self.json;
        if test_only && cmd != "test" {
            return Some("-j, --bench, --benchtime and --json are for `csp test`");
        }
        if self.coverage.is_some() && !matches!(cmd, "run" | "test") {
            return Some("--coverage is for `csp run` and `csp test`");
        }
        if self.coverage_std && self.coverage.is_none() {
            return Some("--coverage-std goes with --coverage FILE");
        }
        if self.jobs > 1 && trace {
            return Some("--trace and --profile record one process: use them without -j");
        }
        if explore && (self.bench || self.json) {
            return Some("--explore runs tests, without --bench or --json");
        }
        if many && cmd == "run" && self.coverage.is_some() {
            return Some("--coverage counts one run: with --explore, give one schedule (--explore-seed S)");
        }
        None
    }
}
