//! wheelspec adapter kit for Rust, the optional real-time part: for a timer that runs on the wall
//! clock and has no virtual clock to advance (docs/guides/ADAPTERS.md, "Real-time mode"). You write an
//! [`RtTimer`] (add with an action, cancel, size, stop); [`serve_realtime`] speaks the rt_run
//! extension:
//!
//! ```text
//! {"id":0,"type":"hello",...}  -> capabilities with "time":"real" and your profile and tick
//! {"id":n,"type":"rt_run","tick_ms":T,"wheel_size":W,"run_ms":R,
//!  "ops":[{"at":MS,"kind":"add","task":ID,"delay":MS} | {"at":MS,"kind":"cancel","task":ID} | {"at":MS,"kind":"size"}]}
//!   -> {"id":n,"ok":true,"ops":[{"t_us":..,"result":..},...],"fires":[{"task":ID,"seq":K,"t_us":..},...],"unfired":N}
//! {"id":n,"type":"bye"} -> {"id":n,"ok":true}
//! ```
//!
//! A fresh timer from your factory runs each schedule. Every op runs at its "at" (ms after the
//! run's start) and is stamped in this process with `std::time::Instant` (microseconds since the
//! start), so the pipe adds no noise; an add is stamped *before* your `add` is called, so a fire
//! before stamp + delay is really early. "seq" numbers the adds of the run: a fire names the add
//! that scheduled it. A re-add of a task id first cancels its earlier handle (Kafka's entry
//! replacement; the add's result is that cancel's answer, null if there was none). A cancel's
//! result is your `cancel(handle)`; a task id never added answers false. At run_ms your `stop`
//! says how many tasks the timer still held. The layer only translates task ids into your handles.
//!
//! Use it from your `main.rs` with `mod wheelspec_adapter; mod wheelspec_realtime;`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::wheelspec_adapter::{integer, negotiate, quote, serve_lines, Json, Refusal};

/// The action a fire runs: it stamps the fire and queues it (cheap; call it from any thread).
pub type Action = Box<dyn FnOnce() + Send + 'static>;

/// What you fill in for real time: your wall-clock timer, fresh for each schedule.
pub trait RtTimer {
    /// Run `action` once, `delay_ms` from now (0 or negative: due now); return your handle for it.
    fn add(&mut self, delay_ms: i64, action: Action) -> i64;
    /// True iff the task of `handle` was scheduled and will now never run.
    fn cancel(&mut self, handle: i64) -> bool;
    /// The number of tasks your timer holds (not judged in real time).
    fn size(&mut self) -> i64;
    /// Stop at the run's end: no action runs after it returns. How many tasks it still held.
    fn stop(&mut self) -> i64;
}

/// A schedule's timer parameters, from the rt_run request.
#[derive(Clone, Copy, Debug)]
pub struct RtConfig {
    pub tick_ms: i64,
    pub wheel_size: i64,
}

/// What a real-time hello answers: profile "strict" (never early) or "kafka"; `tick_ms` the
/// resolution lateness is judged at; `wheel_size` your wheel's buckets, if it has a fixed number.
pub struct RtInfo {
    pub name: String,
    pub version: String,
    pub profile: String,
    pub tick_ms: i64,
    pub wheel_size: Option<i64>,
    pub configurable: Vec<String>,
}

impl Default for RtInfo {
    fn default() -> Self {
        RtInfo {
            name: String::new(),
            version: "0".to_string(),
            profile: "strict".to_string(),
            tick_ms: 1,
            wheel_size: None,
            configurable: Vec::new(),
        }
    }
}

fn micros_since(t0: Instant) -> i64 {
    t0.elapsed().as_micros() as i64
}

fn sleep_until(t0: Instant, ms: i64) {
    let due = t0 + Duration::from_millis(ms.max(0) as u64);
    let now = Instant::now();
    if due > now {
        std::thread::sleep(due - now);
    }
}

fn rt_run(req: &Json, make: &mut dyn FnMut(&RtConfig) -> Box<dyn RtTimer>) -> Result<String, Refusal> {
    let run_ms = integer(req, "run_ms")?;
    let mut config = RtConfig { tick_ms: 1, wheel_size: 512 };
    if req.get("tick_ms").is_some() {
        config.tick_ms = integer(req, "tick_ms")?;
    }
    if req.get("wheel_size").is_some() {
        config.wheel_size = integer(req, "wheel_size")?;
    }
    let ops = match req.get("ops") {
        Some(Json::Array(ops)) => ops,
        _ => return Err(Refusal::new("invalid", "rt_run: ops must be a list")),
    };
    let mut timer = make(&config);
    // The fires of the run, written by your timer's threads: shared with the actions, so an action
    // your stop() lets slip out still writes somewhere that exists.
    let fires: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let mut live: HashMap<i64, i64> = HashMap::new(); // task id -> your handle of its latest add
    let mut answers: Vec<String> = Vec::with_capacity(ops.len());
    let t0 = Instant::now();
    let mut seq = 0i64;
    for (i, op) in ops.iter().enumerate() {
        if !matches!(op, Json::Object(_)) {
            return Err(Refusal::new("invalid", format!("rt_run: op {i} is not an object")));
        }
        sleep_until(t0, integer(op, "at")?);
        let (stamp, result) = match op.get("kind") {
            Some(Json::Str(k)) if k == "add" => {
                let (task, delay) = (integer(op, "task")?, integer(op, "delay")?);
                let result = match live.remove(&task) {
                    Some(old) => timer.cancel(old).to_string(),
                    None => "null".to_string(),
                };
                let s = seq;
                seq += 1;
                let stamp = micros_since(t0); // before the add: your timer computes its deadline after it
                let sink = Arc::clone(&fires);
                let handle = timer.add(
                    delay,
                    Box::new(move || {
                        let fire = format!("{{\"task\":{task},\"seq\":{s},\"t_us\":{}}}", micros_since(t0));
                        sink.lock().unwrap_or_else(|e| e.into_inner()).push(fire);
                    }),
                );
                live.insert(task, handle);
                (stamp, result)
            }
            Some(Json::Str(k)) if k == "cancel" => {
                let task = integer(op, "task")?;
                let stamp = micros_since(t0);
                let cancelled = match live.get(&task) {
                    Some(&handle) => timer.cancel(handle),
                    None => false,
                };
                (stamp, cancelled.to_string())
            }
            Some(Json::Str(k)) if k == "size" => {
                let stamp = micros_since(t0);
                (stamp, timer.size().to_string())
            }
            other => {
                let kind = match other {
                    Some(Json::Str(k)) => quote(k),
                    _ => "null".to_string(),
                };
                return Err(Refusal::new("invalid", format!("rt_run: op {i}: unknown kind {kind}")));
            }
        };
        answers.push(format!("{{\"t_us\":{stamp},\"result\":{result}}}"));
    }
    sleep_until(t0, run_ms);
    let unfired = timer.stop();
    let fires = fires.lock().unwrap_or_else(|e| e.into_inner());
    Ok(format!(
        "\"ok\":true,\"ops\":[{}],\"fires\":[{}],\"unfired\":{unfired}",
        answers.join(","),
        fires.join(",")
    ))
}

/// Answer hello, rt_run and bye requests from stdin until bye or end of input; `make` is called
/// for every rt_run and returns a fresh timer.
pub fn serve_realtime<F: FnMut(&RtConfig) -> Box<dyn RtTimer>>(info: RtInfo, mut make: F) {
    serve_lines(|req, bye| match req.get("type") {
        Some(Json::Str(t)) if t == "hello" => {
            let configurable: Vec<String> = info.configurable.iter().map(|k| quote(k)).collect();
            let mut caps = format!(
                "{{\"timer\":true,\"purgatory\":false,\"time\":\"real\",\"profile\":{},\"tick_ms\":{},\"configurable\":[{}]",
                quote(&info.profile),
                info.tick_ms,
                configurable.join(",")
            );
            if let Some(w) = info.wheel_size {
                caps += &format!(",\"wheel_size\":{w}");
            }
            Ok(format!(
                "\"ok\":true,\"protocol\":{},\"name\":{},\"version\":{},\"capabilities\":{caps}}}",
                negotiate(req),
                quote(&info.name),
                quote(&info.version)
            ))
        }
        Some(Json::Str(t)) if t == "rt_run" => rt_run(req, &mut make),
        Some(Json::Str(t)) if t == "bye" => {
            *bye = true;
            Ok("\"ok\":true".to_string())
        }
        other => {
            let t = match other {
                Some(Json::Str(t)) => quote(t),
                _ => "null".to_string(),
            };
            Err(Refusal::new(
                "invalid",
                format!("unknown request type {t} (a real-time adapter answers hello, rt_run, bye)"),
            ))
        }
    });
}
