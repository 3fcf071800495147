//! `--max-memory` over every isolate of a runtime (docs/isolates.md,
//! "Limits"). Each heap publishes what it holds after each of its
//! collections; its own limit is what the others leave of the total. Before
//! a heap reports a `memory` error, it asks the other isolates to collect
//! (their garbage may be what fills the budget) and waits a little for them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Asks an isolate to collect (from any thread): it wakes and collects.
pub type Ask = Arc<dyn Fn() + Send + Sync>;

/// How long an isolate about to fail waits for the others' collections.
const WAIT: Duration = Duration::from_millis(250);

/// The runtime's memory, shared by its isolates.
pub struct Budget {
    /// `--max-memory`.
    pub total: usize,
    parts: Mutex<Vec<Part>>,
    /// Bumped by each request to collect.
    asks: AtomicU64,
}

#[derive(Default)]
struct Part {
    /// Bytes held after the isolate's last collection.
    held: usize,
    /// The request it last answered (with a collection).
    answered: u64,
    ask: Option<Ask>,
    /// The thread it runs on: one on the asker's own thread cannot answer
    /// while it waits (`--isolates 1`; its scheduler collects it instead).
    thread: Option<std::thread::ThreadId>,
}

/// One heap's part of a budget.
pub struct Share {
    budget: Arc<Budget>,
    slot: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Budget {
    pub fn new(total: usize) -> Arc<Budget> {
        Arc::new(Budget { total, parts: Mutex::default(), asks: AtomicU64::new(0) })
    }

    /// A part for one more isolate's heap.
    pub fn join(self: &Arc<Budget>) -> Share {
        let mut parts = lock(&self.parts);
        parts.push(Part { thread: Some(std::thread::current().id()), ..Part::default() });
        Share { budget: self.clone(), slot: parts.len() - 1 }
    }
}

impl Share {
    /// After a collection: this heap holds `held`; the limit it has now.
    pub fn publish(&self, held: usize) -> usize {
        let answered = self.budget.asks.load(Ordering::Acquire);
        let mut parts = lock(&self.budget.parts);
        let me = &mut parts[self.slot];
        me.held = held;
        me.answered = answered;
        self.left(&parts)
    }

    /// How this isolate is asked to collect (it can be asked once it has a
    /// way to be woken: when it takes part in isolates).
    pub fn on_ask(&self, ask: Ask) {
        lock(&self.budget.parts)[self.slot].ask = Some(ask);
    }

    /// Asks every other isolate to collect and waits (a little) for their
    /// answers; the limit this heap has then. Only on the way to a `memory`
    /// error, so the wait is rare.
    pub fn ask_others(&self) -> usize {
        let asks: Vec<Ask> = {
            let parts = lock(&self.budget.parts);
            let others = parts.iter().enumerate().filter(|&(i, _)| i != self.slot);
            others.filter_map(|(_, p)| p.ask.clone()).collect()
        };
        if asks.is_empty() {
            return self.left(&lock(&self.budget.parts));
        }
        let n = self.budget.asks.fetch_add(1, Ordering::AcqRel) + 1;
        for ask in &asks {
            ask();
        }
        let until = Instant::now() + WAIT;
        loop {
            let parts = lock(&self.budget.parts);
            let me = parts[self.slot].thread;
            let away = |p: &Part| p.ask.is_some() && p.answered < n && p.thread != me;
            let waiting = parts.iter().enumerate().any(|(i, p)| i != self.slot && away(p));
            if !waiting || Instant::now() >= until {
                return self.left(&parts);
            }
            drop(parts);
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// The limit this heap has now (after isolates on its thread collected).
    pub fn limit_now(&self) -> usize {
        self.left(&lock(&self.budget.parts))
    }

    /// What the other isolates leave of the total.
    fn left(&self, parts: &[Part]) -> usize {
        let others: usize = parts.iter().enumerate().filter(|&(i, _)| i != self.slot).map(|(_, p)| p.held).sum();
        self.budget.total.saturating_sub(others)
    }

    pub fn total(&self) -> usize {
        self.budget.total
    }
}

impl Drop for Share {
    /// An isolate that ends holds nothing.
    fn drop(&mut self) {
        let mut parts = lock(&self.budget.parts);
        parts[self.slot] = Part { thread: parts[self.slot].thread, ..Part::default() };
    }
}
