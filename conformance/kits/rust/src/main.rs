//! Your timer behind the wheelspec protocol. Replace `ToyTimer` with calls into your own timer;
//! keep the five methods of `Timer` (wheelspec_adapter.rs).
//! Build: cargo build --release --offline    Run: target/release/toy-timer
//!
//! The toy: a `BinaryHeap` keyed by (expiration, insertion order). Profile "strict": a task fires at
//! the first advance whose time is >= its expiration. Re-adding a scheduled task replaces its entry
//! (a sequence number marks the live one; stale entries are skipped when popped).

mod wheelspec_adapter;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use wheelspec_adapter::{serve, Events, Info, Refusal, Timer};

struct ToyTimer {
    clock: i64,
    seq: i64,
    heap: BinaryHeap<Reverse<(i64, i64, i64)>>, // (exp, seq, task), smallest first
    live: HashMap<i64, i64>,                    // task -> seq of its scheduled entry
}

impl Timer for ToyTimer {
    fn now(&self) -> i64 {
        self.clock
    }

    fn add(&mut self, task: i64, delay: i64, _events: &mut Events) -> Result<i64, Refusal> {
        let exp = self.clock + delay;
        self.seq += 1;
        self.live.insert(task, self.seq);
        self.heap.push(Reverse((exp, self.seq, task)));
        Ok(exp)
    }

    fn cancel(&mut self, task: i64, _events: &mut Events) -> Result<bool, Refusal> {
        Ok(self.live.remove(&task).is_some())
    }

    fn advance(&mut self, time: i64, events: &mut Events) -> Result<(), Refusal> {
        self.clock = time;
        while let Some(&Reverse((exp, seq, task))) = self.heap.peek() {
            if exp > time {
                break;
            }
            self.heap.pop();
            if self.live.get(&task) != Some(&seq) {
                continue; // cancelled or replaced
            }
            self.live.remove(&task);
            events.fire(time, task, exp);
        }
        Ok(())
    }

    fn size(&self) -> i64 {
        self.live.len() as i64
    }
}

fn main() {
    let info = Info {
        name: "rust-toy-heap-timer".into(),
        version: "0.1".into(),
        profile: "strict".into(),
        configurable: vec!["start_ms".into()],
        tick_ms: None,
        wheel_size: None,
        unobservable: vec![],
        // the delays and clock readings it accepts, if fewer than wheelspec's, e.g.
        // Some(wheelspec_adapter::Ranges::delays(1, 4095)) (README.md, "Capabilities")
        ranges: None,
        // a coarse timer's declared granularity in ms (0: none; README.md, "Capabilities")
        lateness_ms: 0,
        earliness_ms: 0,
    };
    serve(info, |config| {
        Box::new(ToyTimer {
            clock: config.start_ms,
            seq: 0,
            heap: BinaryHeap::new(),
            live: HashMap::new(),
        })
    });
}
