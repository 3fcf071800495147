//! What a resource leaves behind when it moves to another isolate
//! (docs/isolates.md, "Resources that move"): a marker with the resource's
//! type and name, whose every use throws an error naming the crossing.

use crate::vm::host::{Class, HostObject};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub struct Moved {
    /// Tells this marker from a later one in the same heap slot (`restore`).
    pub id: u64,
    class: &'static Class,
    /// How it printed before it moved: `<listener 127.0.0.1:8080>`.
    shown: String,
    /// How it crossed: "passed to isolate.run at main.csp:12".
    crossing: String,
}

impl Moved {
    pub fn new(left: &dyn HostObject, crossing: &str) -> Moved {
        let mut shown = String::new();
        left.display(&mut shown);
        static IDS: AtomicU64 = AtomicU64::new(0);
        let id = IDS.fetch_add(1, Ordering::Relaxed);
        Moved { id, class: class_named(left.class().name), shown, crossing: crossing.to_string() }
    }
}

impl HostObject for Moved {
    fn class(&self) -> &'static Class {
        self.class
    }
    fn display(&self, out: &mut String) {
        out.push_str(self.shown.trim_end_matches('>'));
        out.push_str(" (moved)>");
    }
    fn unusable(&self) -> Option<String> {
        Some(format!(
            "{} moved to another isolate ({}): it belongs to that isolate now and cannot be used here",
            self.shown, self.crossing
        ))
    }
}

/// A class with the moved resource's name (so `type()` still says
/// "listener") and no methods, fields or iteration: its own class's methods
/// read their object without a type check, so the marker must not have it.
/// One per resource kind for the process's life (a handful).
fn class_named(name: &'static str) -> &'static Class {
    static CLASSES: Mutex<Vec<&'static Class>> = Mutex::new(Vec::new());
    let mut classes = CLASSES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = classes.iter().find(|c| c.name == name) {
        return c;
    }
    let c: &'static Class = Box::leak(Box::new(Class { name, methods: &[], next: None, field: None }));
    classes.push(c);
    c
}
