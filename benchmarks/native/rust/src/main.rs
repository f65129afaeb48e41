//! wheelspec bench's Rust peer: tokio-util's `DelayQueue` on tokio's paused clock.
//!
//! One process runs one (workload, N) cell and prints one line,
//! `NATIVE_RESULT {"peer":"tokio-delayqueue", "runs_s":[...], "latency":{...}, ...}`.
//! Usage: `wheelspec-native-bench tokio-delayqueue WORKLOAD FILE TICK_MS REPEAT BUDGET_S WARM MAX_SAMPLES`
//! (the arguments of the Java peers; TICK_MS is unused: the queue's wheel has a fixed 1 ms
//! resolution).  FILE holds the workload's arrays as Python's `benchmarks/workloads.py` made
//! them (`benchmarks/native/protocol.py` writes it).  The runtime is current-thread with its
//! clock paused: `tokio::time::advance` moves virtual time, so the fire workloads advance 1 ms at
//! a time (or once) exactly as the engine's do, then drain `poll_expired` until it is pending.
//! Each run uses a fresh queue, is timed with `std::time::Instant` (the real clock) around its
//! operations only, and is verified after the clock stops; a run that does not verify exits 3
//! with the reason on stderr.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio_util::time::delay_queue::{Expired, Key};
use tokio_util::time::DelayQueue;

/// One `poll_expired` call inside the runtime, its answer returned as is (Debian's rustc 1.63
/// has no `std::future::poll_fn`).
struct PollExpired<'a>(&'a mut DelayQueue<u32>);

impl Future for PollExpired<'_> {
    type Output = Poll<Option<Expired<u32>>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(self.0.poll_expired(cx))
    }
}

struct Workload {
    name: String,
    n: usize,
    delays: Vec<u32>,
    cancel_order: Vec<u32>,
    advance_times: Vec<u32>,
    window_ids: Vec<u32>,
    window_delays: Vec<u32>,
    warm_ids: Vec<u32>,
    warm_delays: Vec<u32>,
    warm_cancels: Vec<u32>,
}

impl Workload {
    fn read(name: &str, path: &str) -> Workload {
        let b = std::fs::read(path).unwrap_or_else(|e| die(&format!("cannot read {path}: {e}")));
        if b.len() < 12 || &b[..8] != b"WSBENCH1" {
            die(&format!("{path}: not a wheelspec workload file"));
        }
        let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let count = word(8) as usize;
        let mut at = 12;
        let mut arrays = Vec::with_capacity(count);
        for _ in 0..count {
            let len = word(at) as usize;
            at += 4;
            arrays.push((0..len).map(|k| word(at + 4 * k)).collect::<Vec<u32>>());
            at += 4 * len;
        }
        let mut it = arrays.into_iter();
        let mut next = || it.next().unwrap_or_default();
        let delays = next();
        Workload {
            name: name.to_string(),
            n: delays.len(),
            delays,
            cancel_order: next(),
            advance_times: next(),
            window_ids: next(),
            window_delays: next(),
            warm_ids: next(),
            warm_delays: next(),
            warm_cancels: next(),
        }
    }

    fn capacity(&self) -> usize {
        self.n + self.window_ids.len() + self.warm_ids.len()
    }

    fn ops(&self) -> u64 {
        if self.name == "steady" { 2 * self.window_ids.len() as u64 } else { self.n as u64 }
    }
}

/// Latencies of individual operations: every `stride`-th operation is timed on its own.
struct Sampler {
    ns: Vec<u64>,
    stride: u64,
    cap: usize,
}

impl Sampler {
    fn new(ops: u64, max_samples: u64) -> Sampler {
        let stride = ((ops + max_samples - 1) / max_samples).max(1);
        let cap = ((ops + stride - 1) / stride) as usize;
        Sampler { ns: Vec::with_capacity(cap), stride, cap }
    }
    fn due(&self, i: u64) -> bool {
        i % self.stride == 0 && self.ns.len() < self.cap
    }
    fn add(&mut self, d: Duration) {
        if self.ns.len() < self.cap {
            self.ns.push(d.as_nanos() as u64);
        }
    }
    fn pct(&self, q: f64) -> u64 {
        let mut s = self.ns.clone();
        s.sort_unstable();
        if s.is_empty() {
            return 0;
        }
        let idx = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1; // nearest rank
        s[idx]
    }
}

fn die(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(2)
}

fn expect(ok: bool, what: impl FnOnce() -> String) {
    if !ok {
        eprintln!("VERIFY {}", what());
        std::process::exit(3);
    }
}

/// Median cost of reading the clock twice back to back: the floor under every sample.
fn clock_floor() -> u64 {
    let mut d: Vec<u64> = (0..20001)
        .map(|_| {
            let a = Instant::now();
            a.elapsed().as_nanos() as u64
        })
        .collect();
    d.sort_unstable();
    d[d.len() / 2]
}

/// Time `op`, sampled: every stride-th call is timed on its own when a sampler is given.
macro_rules! op {
    ($lat:expr, $i:expr, $body:expr) => {
        match $lat {
            Some(ref mut s) if s.due($i as u64) => {
                let a = Instant::now();
                let r = $body;
                s.add(a.elapsed());
                r
            }
            _ => $body,
        }
    };
}

fn ms(d: u32) -> Duration {
    Duration::from_millis(d as u64)
}

/// One run on a fresh queue; returns the seconds its operations took.
async fn run(w: &Workload, mut lat: Option<&mut Sampler>) -> f64 {
    let who = format!("tokio-delayqueue {} n={}", w.name, w.n);
    let cap = w.capacity();
    let mut dq: DelayQueue<u32> = DelayQueue::with_capacity(cap);
    let mut keys: Vec<Option<Key>> = vec![None; cap];
    match w.name.as_str() {
        "insert" => {
            let t0 = Instant::now();
            for i in 0..w.n {
                keys[i] = Some(op!(lat, i, dq.insert(i as u32, ms(w.delays[i]))));
            }
            let s = t0.elapsed().as_secs_f64();
            expect(dq.len() == w.n, || format!("{who}: len() is {} after {} inserts", dq.len(), w.n));
            s
        }
        "cancel" => {
            for i in 0..w.n {
                keys[i] = Some(dq.insert(i as u32, ms(w.delays[i])));
            }
            let mut found = 0usize;
            let t0 = Instant::now();
            for (k, &id) in w.cancel_order.iter().enumerate() {
                let key = keys[id as usize].take().unwrap_or_else(|| die("cancel order names a task twice"));
                if op!(lat, k, dq.remove(&key)).into_inner() == id {
                    found += 1;
                }
            }
            let s = t0.elapsed().as_secs_f64();
            expect(found == w.n, || format!("{who}: {} removes returned another task", w.n - found));
            expect(dq.is_empty(), || format!("{who}: len() is {} after removing all", dq.len()));
            s
        }
        "steady" => {
            for i in 0..w.n {
                keys[i] = Some(dq.insert(i as u32, ms(w.delays[i])));
            }
            let win = w.window_ids.len();
            for s in 0..w.warm_ids.len() / win.max(1) {
                for i in s * win..(s + 1) * win {
                    keys[w.warm_ids[i] as usize] = Some(dq.insert(w.warm_ids[i], ms(w.warm_delays[i])));
                }
                for i in s * win..(s + 1) * win {
                    let id = w.warm_cancels[i];
                    let key = keys[id as usize].take().unwrap_or_else(|| die("warm-up cancels a task not pending"));
                    expect(dq.remove(&key).into_inner() == id, || format!("{who}: a warm-up remove returned another task"));
                }
            }
            let mut found = 0usize;
            let t0 = Instant::now();
            for i in 0..win {
                keys[w.window_ids[i] as usize] = Some(op!(lat, i, dq.insert(w.window_ids[i], ms(w.window_delays[i]))));
            }
            for i in 0..win {
                let id = w.cancel_order[i];
                let key = keys[id as usize].take().unwrap_or_else(|| die("the window cancels a task not pending"));
                if op!(lat, win + i, dq.remove(&key)).into_inner() == id {
                    found += 1;
                }
            }
            let s = t0.elapsed().as_secs_f64();
            expect(found == win, || format!("{who}: {} removes returned another task", win - found));
            expect(dq.len() == w.n, || format!("{who}: len() is {}, expected {}", dq.len(), w.n));
            s
        }
        _ => {
            // fire-steps, fire-jump: all inserted at one virtual instant, so expiration = delay.
            for i in 0..w.n {
                keys[i] = Some(dq.insert(i as u32, ms(w.delays[i])));
            }
            let mut out: Vec<u32> = Vec::with_capacity(w.n);
            let mut step_end: Vec<usize> = Vec::with_capacity(w.advance_times.len());
            let mut now = 0u32;
            let mut fires = 0u64;
            let t0 = Instant::now();
            for &t in &w.advance_times {
                tokio::time::advance(ms(t - now)).await;
                now = t;
                // Pending can mean "nothing due" or "the queue's own Sleep, reset to a deadline
                // that has passed, is not fired yet": the runtime's time driver fires it when the
                // task yields.  So on Pending, yield once and poll again; Pending right after a
                // yield (or None: empty) ends the advance.  A consumer awaiting the queue's stream
                // goes through the same wake-up.
                let mut yielded = false;
                loop {
                    let polled = op!(lat, fires, PollExpired(&mut dq).await);
                    match polled {
                        Poll::Ready(Some(e)) => {
                            out.push(e.into_inner());
                            fires += 1;
                            yielded = false;
                        }
                        Poll::Pending if !yielded => {
                            tokio::task::yield_now().await;
                            yielded = true;
                        }
                        _ => break,
                    }
                }
                step_end.push(out.len());
            }
            let s = t0.elapsed().as_secs_f64();
            // Every task fired exactly once, at the first advance that reached its expiration.
            expect(out.len() == w.n, || format!("{who}: fired {} tasks, expected {}", out.len(), w.n));
            let mut seen = vec![false; w.n];
            let mut from = 0;
            for (j, &end) in step_end.iter().enumerate() {
                let lo = if j == 0 { 0 } else { w.advance_times[j - 1] };
                let hi = w.advance_times[j];
                for &id in &out[from..end] {
                    let id = id as usize;
                    expect(id < w.n && !seen[id], || format!("{who}: task {id} fired twice or is unknown"));
                    seen[id] = true;
                    let e = w.delays[id];
                    expect((j == 0 || e > lo) && e <= hi, || {
                        format!("{who}: task {id} (expiration {e}) fired at the advance to {hi}, expected the first advance reaching it")
                    });
                }
                from = end;
            }
            expect(dq.is_empty(), || format!("{who}: len() is {} after all fired", dq.len()));
            s
        }
    }
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 9 || args[1] != "tokio-delayqueue" {
        die("usage: wheelspec-native-bench tokio-delayqueue WORKLOAD FILE TICK_MS REPEAT BUDGET_S WARM MAX_SAMPLES");
    }
    let num = |k: usize| -> f64 { args[k].parse().unwrap_or_else(|_| die(&format!("bad argument {}", args[k]))) };
    let (repeat, budget, warm, max_samples) = (num(5) as usize, num(6), num(7) as usize, num(8) as u64);
    let w = Workload::read(&args[2], &args[3]);
    let metric = match w.name.as_str() {
        "insert" => "insert() calls",
        "cancel" => "remove(key) calls",
        "steady" => "insert() + remove(key) calls of the window",
        _ => "paused clock: tokio::time::advance, then poll_expired until pending, per advance; ops = fires",
    };
    for _ in 0..warm {
        run(&w, None).await;
    }
    let mut runs = Vec::new();
    let mut spent = 0.0;
    while runs.is_empty() || (runs.len() < repeat.max(1) && spent < budget) {
        let s = run(&w, None).await;
        runs.push(s);
        spent += s;
    }
    let mut sm = Sampler::new(w.ops(), max_samples.max(1));
    run(&w, Some(&mut sm)).await;
    let what = if w.name.starts_with("fire") { "poll_expired calls that returned a task" } else { "operations" };
    let lat = format!(
        "{{\"method\":\"individual {what}, every {}{}, std::time::Instant before and after each\",\"samples\":{},\"stride\":{},\"p50_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"clock_floor_ns\":{}}}",
        sm.stride,
        if sm.stride == 1 { "st" } else { "th" },
        sm.ns.len(),
        sm.stride,
        sm.pct(0.5),
        sm.pct(0.99),
        sm.pct(0.999),
        clock_floor()
    );
    let runs_s: Vec<String> = runs.iter().map(|r| format!("{r}")).collect();
    println!(
        "NATIVE_RESULT {{\"peer\":\"tokio-delayqueue\",\"version\":{},\"workload\":{},\"status\":\"ok\",\"n\":{},\"ops\":{},\"warm_runs\":{warm},\"runs_s\":[{}],\"metric\":{},\"latency\":{lat}}}",
        quote("tokio-util DelayQueue on tokio's paused clock, current-thread runtime"),
        quote(&w.name),
        w.n,
        w.ops(),
        runs_s.join(","),
        quote(metric)
    );
}
