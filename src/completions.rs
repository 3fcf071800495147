//! `csp completions bash|zsh|fish`: shell completion scripts, all three
//! generated from one table of commands and options so they cannot drift
//! apart (tests/completions.rs checks the table against `csp --help`).

/// What a command's positional arguments are.
#[derive(Clone, Copy, PartialEq)]
pub enum Args {
    /// Nothing to complete (`repl`, `lsp`, `dap`).
    None,
    /// `*.csp` files (`run FILE`, `check FILE`).
    Scripts,
    /// Directories and `*.csp` files (`test PATH`, `fmt PATH...`).
    Paths,
    /// The shells (`completions SHELL`).
    Shells,
}

pub struct Command {
    pub name: &'static str,
    pub help: &'static str,
    pub args: Args,
    /// Options only this command takes (the common ones are in `OPTIONS`).
    pub flags: &'static [(&'static str, &'static str)],
    /// Takes the common `OPTIONS`.
    pub options: bool,
}

/// What an option's value is: `None` for a switch.
#[derive(Clone, Copy, PartialEq)]
pub enum Value {
    None,
    File,
    Other,
}

pub struct Opt {
    pub name: &'static str,
    pub help: &'static str,
    pub value: Value,
}

const fn cmd(name: &'static str, help: &'static str, args: Args, options: bool) -> Command {
    Command { name, help, args, flags: &[], options }
}

pub const COMMANDS: &[Command] = &[
    cmd("run", "run a script", Args::Scripts, true),
    Command {
        name: "check",
        help: "compile only and report errors and lint warnings",
        args: Args::Scripts,
        flags: &[("--deny-warnings", "exit 1 when there are warnings")],
        options: true,
    },
    Command {
        name: "test",
        help: "run the test_* functions of *_test.csp files",
        args: Args::Paths,
        flags: &[
            ("--jobs", "run N test files at once, a thread each (also -j)"),
            ("--bench", "run the bench_* functions instead, printing ns/op"),
            ("--benchtime", "how long a benchmark runs (default 1s)"),
            ("--json", "a JSON event per line, as go test -json"),
        ],
        options: true,
    },
    cmd("disasm", "print the bytecode", Args::Scripts, true),
    Command {
        name: "fmt",
        help: "format *.csp files in place",
        args: Args::Paths,
        flags: &[("--check", "only list the files that would change")],
        options: false,
    },
    cmd("lsp", "serve the Language Server Protocol on stdin/stdout", Args::None, false),
    cmd("dap", "serve the Debug Adapter Protocol on stdin/stdout", Args::None, false),
    cmd("repl", "start the interactive REPL", Args::None, true),
    cmd("completions", "print shell completions", Args::Shells, false),
    Command {
        name: "build",
        help: "write one executable that runs a script with its modules",
        args: Args::Scripts,
        flags: &[("--output", "the executable to write (also -o)"), ("--offline", "packages only from the cache")],
        options: false,
    },
    Command {
        name: "add",
        help: "add a dependency to csp.toml and pin it in csp.lock",
        args: Args::None,
        flags: &[
            ("--rev", "the git tag, branch or commit"),
            ("--sha256", "an archive's SHA-256"),
            ("--offline", "packages only from the cache"),
        ],
        options: false,
    },
    Command {
        name: "fetch",
        help: "fetch the packages csp.lock pins into the cache",
        args: Args::None,
        flags: &[("--offline", "packages only from the cache")],
        options: false,
    },
    Command {
        name: "update",
        help: "pin packages at their revisions' newest commits",
        args: Args::None,
        flags: &[("--offline", "packages only from the cache")],
        options: false,
    },
];

const fn opt(name: &'static str, help: &'static str, value: Value) -> Opt {
    Opt { name, help, value }
}

/// The options of `csp --help`, taken before the command or before FILE.
pub const OPTIONS: &[Opt] = &[
    opt("--seed", "seed for random() and select", Value::Other),
    opt("--slice-us", "a fiber's time slice in microseconds", Value::Other),
    opt("--trace", "write Chrome trace events to FILE", Value::File),
    opt("--profile", "write a pprof profile to FILE", Value::File),
    opt("--profile-hz", "samples per second of CPU time for --profile", Value::Other),
    opt("--timeout", "cancel the program (or fail a test) after TIME", Value::Other),
    opt("--grace", "how long cancelled cleanup may take", Value::Other),
    opt("--max-memory", "heap limit (bytes, or 512M, 2G)", Value::Other),
    opt("--max-fibers", "most fibers running or waiting at once", Value::Other),
    opt("--isolates", "worker isolates for std/isolate (default: the cores)", Value::Other),
    opt("--run", "csp test: only tests whose file::name contains PATTERN", Value::Other),
    opt("--explore", "run under N schedules", Value::Other),
    opt("--explore-seed", "run under schedule S", Value::Other),
    opt("--coverage", "run/test: write lcov line and branch counts to FILE", Value::File),
    opt("--coverage-std", "with --coverage: count std modules too", Value::None),
    opt("--offline", "packages only from the cache, never fetched", Value::None),
    opt("--help", "print the help", Value::None),
    opt("--version", "print the version", Value::None),
];

pub const SHELLS: &[&str] = &["bash", "zsh", "fish"];

/// The completion script for `shell`, or None for a shell we do not know.
pub fn script(shell: &str) -> Option<String> {
    match shell {
        "bash" => Some(bash()),
        "zsh" => Some(zsh()),
        "fish" => Some(fish()),
        _ => None,
    }
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(" ")
}

fn valued(v: Value) -> String {
    names(OPTIONS.iter().filter(|o| o.value == v).map(|o| o.name))
}

/// The options that take a value, as a shell `case` pattern.
fn takes_value() -> String {
    (valued(Value::File) + " " + &valued(Value::Other)).replace(' ', "|")
}

fn with_args(a: Args) -> String {
    names(COMMANDS.iter().filter(|c| c.args == a).map(|c| c.name))
}

/// Bash: `_csp` finds the command (skipping options and their values), then
/// offers what that command takes.
fn bash() -> String {
    let mut s = String::from("# csp completions for bash: source this file, or `source <(csp completions bash)`\n");
    s += "_csp() {\n    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n";
    s += &format!("    local cmd= i=1 given=0 options='{}'\n", names(OPTIONS.iter().map(|o| o.name)));
    s += "    while [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n        case ${COMP_WORDS[i]} in\n";
    s += &format!("            {}) i=$((i + 1)) ;;\n", takes_value());
    s += "            -*) ;;\n            *) if [ -z \"$cmd\" ]; then cmd=${COMP_WORDS[i]}; else given=$((given + 1)); fi ;;\n";
    s += "        esac\n        i=$((i + 1))\n    done\n    case $prev in\n";
    s += &format!(
        "        {}) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n",
        valued(Value::File).replace(' ', "|")
    );
    s += &format!("        {}) COMPREPLY=(); return ;;\n", valued(Value::Other).replace(' ', "|"));
    s += "    esac\n    local scripts=\"$(compgen -f -X '!*.csp' -- \"$cur\"; compgen -d -- \"$cur\")\"\n";
    s += "    case $cmd in\n        '')\n            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n";
    s += &format!(
        "            else COMPREPLY=($(compgen -W '{}' -- \"$cur\") $scripts); fi ;;\n",
        names(COMMANDS.iter().map(|c| c.name))
    );
    for c in COMMANDS {
        let flags = names(c.flags.iter().map(|f| f.0));
        let all = if c.options { format!("{flags} $options") } else { flags };
        let words = match c.args {
            Args::None => "",
            Args::Scripts => "[ \"$given\" -eq 0 ] && COMPREPLY+=($scripts) || COMPREPLY+=($(compgen -f -- \"$cur\"))",
            Args::Paths => "COMPREPLY+=($scripts)",
            Args::Shells => "COMPREPLY+=($(compgen -W 'bash zsh fish' -- \"$cur\"))",
        };
        s += &format!("        {})\n            COMPREPLY=()\n", c.name);
        s += &format!(
            "            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); else {}; fi ;;\n",
            all.trim(),
            if words.is_empty() { ":" } else { words }
        );
    }
    s += "        *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n    esac\n}\n";
    s += "complete -o filenames -F _csp csp\n";
    s
}

/// zsh: `source <(csp completions zsh)`, or save as `_csp` on `$fpath`.
fn zsh() -> String {
    let esc = |t: &str| t.replace('\'', "'\\''").replace(':', "\\:");
    let mut s = String::from("#compdef csp\n# csp completions for zsh\n_csp() {\n    local -a commands options\n");
    s += "    commands=(\n";
    for c in COMMANDS {
        s += &format!("        '{}:{}'\n", c.name, esc(c.help));
    }
    s += "    )\n    options=(\n";
    for o in OPTIONS {
        s += &format!("        '{}:{}'\n", o.name, esc(o.help));
    }
    s += "    )\n    local cmd= i=2 given=0\n    while (( i < CURRENT )); do\n        case ${words[i]} in\n";
    s += &format!("            {}) (( i++ )) ;;\n", takes_value());
    s += "            -*) ;;\n            *) if [[ -z $cmd ]]; then cmd=${words[i]}; else (( given++ )); fi ;;\n";
    s += "        esac\n        (( i++ ))\n    done\n    case ${words[CURRENT-1]} in\n";
    s += &format!("        {}) _files; return ;;\n", valued(Value::File).replace(' ', "|"));
    s += &format!("        {}) _message 'value'; return ;;\n", valued(Value::Other).replace(' ', "|"));
    s += "    esac\n    case $cmd in\n";
    s += "        '')\n            if [[ $PREFIX == -* ]]; then _describe 'option' options\n";
    s += "            else _describe 'command' commands; _files -g '*.csp'; fi ;;\n";
    for c in COMMANDS {
        s += &format!("        {})\n            local -a flags=(", c.name);
        let flags = c.flags.iter().map(|(f, help)| format!("'{f}:{}'", esc(help)));
        s += &flags.chain(c.options.then(|| "${options[@]}".to_string())).collect::<Vec<_>>().join(" ");
        s += ")\n            if [[ $PREFIX == -* ]]; then _describe 'option' flags\n            else ";
        s += match c.args {
            Args::None => ":",
            Args::Scripts => "if (( given )); then _files; else _files -g '*.csp'; fi",
            Args::Paths => "_files -g '*.csp'",
            Args::Shells => "compadd bash zsh fish",
        };
        s += "; fi ;;\n";
    }
    s += "        *) _files ;;\n    esac\n}\n";
    s += "if [[ $funcstack[1] == _csp ]]; then _csp \"$@\"; else compdef _csp csp; fi\n";
    s
}

/// fish: `csp completions fish > ~/.config/fish/completions/csp.fish`.
fn fish() -> String {
    let esc = |t: &str| t.replace('\\', "\\\\").replace('\'', "\\'");
    let all = names(COMMANDS.iter().map(|c| c.name));
    let mut s = String::from("# csp completions for fish\ncomplete -c csp -f\n");
    for c in COMMANDS {
        s += &format!("complete -c csp -n __fish_use_subcommand -a {} -d '{}'\n", c.name, esc(c.help));
    }
    // Directories and *.csp files (fish's __fish_complete_suffix offers all other files too).
    let scripts = r#"-k -a '(string match -r -- ".+(\.csp|/)\t?\$" (__fish_complete_path (commandline -ct)))'"#;
    s += &format!("complete -c csp -n __fish_use_subcommand {scripts}\n");
    let takes_options = names(COMMANDS.iter().filter(|c| c.options).map(|c| c.name));
    for o in OPTIONS {
        let kind = match o.value {
            Value::None => "",
            Value::File => " -r",
            Value::Other => " -x",
        };
        s += &format!(
            "complete -c csp -n 'not __fish_seen_subcommand_from {all}; or __fish_seen_subcommand_from {takes_options}' -l {}{kind} -d '{}'\n",
            &o.name[2..],
            esc(o.help)
        );
    }
    for c in COMMANDS {
        for (f, help) in c.flags {
            s += &format!(
                "complete -c csp -n '__fish_seen_subcommand_from {}' -l {} -d '{}'\n",
                c.name,
                &f[2..],
                esc(help)
            );
        }
    }
    let with_files = with_args(Args::Scripts) + " " + &with_args(Args::Paths);
    s += &format!("complete -c csp -n '__fish_seen_subcommand_from {with_files}' {scripts}\n");
    s += &format!("complete -c csp -n '__fish_seen_subcommand_from {}' -a 'bash zsh fish'\n", with_args(Args::Shells));
    s
}
