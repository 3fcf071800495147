//! A Rust program that embeds csp (docs/embedding.md): it gives a script a
//! host function and a host type, runs it under a memory limit with no
//! network, shows the error of the call it denies, and prints the script's
//! result. `cargo run --release --example embed`

use csp::embed::{object, Caps, HostType, Options, Runtime, Val};

/// A host type: an inventory the script can query and change.
struct Inventory {
    items: Vec<(String, i64)>,
}

impl HostType for Inventory {
    const NAME: &'static str = "inventory";
    const METHODS: &'static [&'static str] = &["count", "take"];

    fn call(&mut self, method: &str, args: Vec<Val>) -> Result<Val, String> {
        let name = args.first().and_then(Val::as_str).ok_or("needs an item name")?;
        let item = self.items.iter_mut().find(|(n, _)| n == name).ok_or(format!("no item {name:?}"))?;
        match method {
            "count" => Ok(Val::Int(item.1)),
            "take" => {
                let n = args.get(1).and_then(Val::as_int).unwrap_or(1);
                if n > item.1 {
                    return Err(format!("only {} {name} left", item.1));
                }
                item.1 -= n;
                Ok(Val::Int(item.1))
            }
            _ => unreachable!("only METHODS are called"),
        }
    }
}

const SCRIPT: &str = r#"
import "std/net"

let inv = open_inventory()
inv.take("apple", 2)
print("apples left:", inv.count("apple"))

// The host gave no network: the call throws a catchable `denied` error.
try {
    net.connect("example.com:80")
} catch e {
    print("denied:", e.kind, "-", e.message)
}

// A host function that blocks runs off the VM's thread; fibers go on.
let prices = [go price("apple"), go price("pear")]
let order = {total: (wait prices[0]) * 2 + (wait prices[1]), left: inv.count("apple")}
order
"#;

fn main() {
    let caps = Caps::none().network(false);
    let mut rt = Runtime::new(Options { max_memory: Some(64 << 20), caps, stdout: true, ..Options::default() });
    rt.register_fn("open_inventory", |_| {
        Ok(object(Inventory { items: vec![("apple".into(), 5), ("pear".into(), 3)] }))
    });
    rt.register_blocking_fn("price", |args| {
        // Stands for a lookup in another service: it takes a while.
        std::thread::sleep(std::time::Duration::from_millis(20));
        match args.first().and_then(Val::as_str) {
            Some("apple") => Ok(Val::Int(3)),
            Some("pear") => Ok(Val::Int(4)),
            other => Err(format!("no price for {other:?}")),
        }
    });
    match rt.eval("shop.csp", SCRIPT) {
        Ok(result) => println!("result: {result:?}"),
        Err(e) => {
            eprint!("{}", e.report);
            std::process::exit(1);
        }
    }
    // Past the limit, the script gets a `memory` error, not the host a crash.
    let err = rt.eval("grow.csp", "let l = []\nwhile true { l.push(\"x\" * 1000000) }").unwrap_err();
    println!("over the limit: {} error", err.kind);
}
