//! tokio-util's `DelayQueue` behind the wheelspec protocol, on tokio's paused clock.
//!
//! Written with the Rust adapter kit: `wheelspec_adapter.rs` is the kit's protocol layer, this file
//! fills in its five calls. One current-thread runtime, its clock paused from the start
//! (`start_paused`), serves the whole process; every reset builds a fresh `DelayQueue` in it and
//! notes the paused clock's reading as the reset's `start_ms`.
//!
//! * `add`: `DelayQueue::insert(task, delay)` (a negative delay: `insert_at` an instant that far in
//!   the past, which the queue normalises to "already expired"), keeping the returned `Key`; a
//!   task already in the queue is then taken out with `remove(key)` (Kafka's callers cancel and
//!   re-add), only once the new item is in: an insert that panics (a deadline past the wheel's
//!   range) leaves the task's earlier item in the queue. The result is `now + delay`, the
//!   protocol's definition of the expiration.
//! * `cancel`: `remove(key)` if the key is still in the queue. tokio-util 0.7.3 has no `try_remove`
//!   and `remove` panics on a key it no longer holds (and slab keys are reused), so the adapter
//!   keeps the keys the queue has not handed out yet: a key leaves that map exactly when
//!   `poll_expired` returns its item, so the result (true iff the key was still in the queue) is the
//!   queue's own answer, read from what it returned.
//! * `advance`: `tokio::time::advance` to the target, then `poll_expired` until it is pending; a
//!   fire's time is the paused clock's reading when the item comes out (`Instant::now()`).
//! * `size`: `DelayQueue::len()`.
//!
//! Nothing judged is computed here: fire times are the clock's, the order is the queue's, the
//! size is the queue's.

mod wheelspec_adapter;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::time::Instant;
use tokio_util::time::delay_queue::{Expired, Key};
use tokio_util::time::DelayQueue;

use wheelspec_adapter::{serve, Events, Info, Refusal, Timer};

/// One `poll_expired` call inside the runtime, its answer returned as is (Debian's rustc 1.63 has
/// no `std::future::poll_fn`).
struct PollExpired<'a>(&'a mut DelayQueue<i64>);

impl Future for PollExpired<'_> {
    type Output = Poll<Option<Expired<i64>>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(self.0.poll_expired(cx))
    }
}

struct TokioDelayQueue {
    rt: &'static Runtime,
    queue: DelayQueue<i64>,
    /// task -> (the key `insert` returned, the expiration reported by `add`), for the items the
    /// queue has not handed out yet
    keys: HashMap<i64, (Key, i64)>,
    /// the paused clock's reading at the reset, and the reset's start_ms
    base: Instant,
    start_ms: i64,
}

impl TokioDelayQueue {
    fn clock(&self) -> i64 {
        let _in = self.rt.enter();
        self.start_ms + Instant::now().duration_since(self.base).as_millis() as i64
    }
}

impl Timer for TokioDelayQueue {
    fn now(&self) -> i64 {
        self.clock()
    }

    fn add(&mut self, task: i64, delay: i64, _events: &mut Events) -> Result<i64, Refusal> {
        let exp = self.clock() + delay;
        let _in = self.rt.enter();
        let key = if delay >= 0 {
            self.queue.insert(task, Duration::from_millis(delay as u64))
        } else {
            // in the past: the queue normalises any deadline before its start to "expired"
            let when = Instant::now().checked_sub(Duration::from_millis(delay.unsigned_abs())).unwrap_or(self.base);
            self.queue.insert_at(task, when)
        };
        // the earlier item is superseded only now that the new one is in (a stack per slot: taking
        // it out after the push leaves the others in the order they would have had)
        if let Some((old, _)) = self.keys.insert(task, (key, exp)) {
            self.queue.remove(&old);
        }
        Ok(exp)
    }

    fn cancel(&mut self, task: i64, _events: &mut Events) -> Result<bool, Refusal> {
        let _in = self.rt.enter();
        match self.keys.remove(&task) {
            Some((key, _)) => {
                self.queue.remove(&key);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn advance(&mut self, time: i64, events: &mut Events) -> Result<(), Refusal> {
        let step = Duration::from_millis((time - self.clock()) as u64);
        let rt = self.rt;
        let mut out: Vec<i64> = Vec::new();
        let queue = &mut self.queue;
        rt.block_on(async {
            tokio::time::advance(step).await;
            // Pending can mean "nothing due" or "the queue's own Sleep, reset to an already passed
            // deadline, is not registered with the driver yet": on Pending yield once and poll
            // again; Pending right after a yield (or None: empty) ends the advance.
            let mut yielded = false;
            loop {
                match PollExpired(queue).await {
                    Poll::Ready(Some(expired)) => {
                        out.push(expired.into_inner());
                        yielded = false;
                    }
                    Poll::Pending if !yielded => {
                        tokio::task::yield_now().await;
                        yielded = true;
                    }
                    _ => break,
                }
            }
        });
        // all items out of one advance come out at the same clock reading: the clock does not
        // move while the queue is drained
        let now = self.clock();
        for task in out {
            let exp = self.keys.remove(&task).map(|(_, e)| e).unwrap_or(i64::MIN);
            events.fire(now, task, exp);
        }
        Ok(())
    }

    fn size(&self) -> i64 {
        self.queue.len() as i64
    }
}

fn main() {
    let rt: &'static Runtime = Box::leak(Box::new(
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread tokio runtime"),
    ));
    let info = Info {
        name: "tokio-delayqueue".into(),
        version: "tokio-util 0.7 DelayQueue, tokio 1 paused clock".into(),
        profile: "strict".into(),
        configurable: vec!["start_ms".into()],
        tick_ms: None,
        wheel_size: None,
        unobservable: vec![],
        ranges: None,
        lateness_ms: 0,
        earliness_ms: 0,
    };
    serve(info, move |config| {
        let _in = rt.enter();
        Box::new(TokioDelayQueue {
            rt,
            queue: DelayQueue::new(),
            keys: HashMap::new(),
            base: Instant::now(),
            start_ms: config.start_ms,
        })
    });
}
