//! wheelspec adapter kit for Rust (standard library only): the protocol layer.
//!
//! [`serve`] speaks wheelspec protocol v2 (docs/guides/PROTOCOL.md, section 10) on stdin/stdout, one JSON
//! object per line, or v1 to a runner that offers only v1, and hands every valid timer operation to
//! a [`Timer`] you write (see main.rs). It answers every refusal the protocol defines before your
//! timer is called: values outside wheelspec's ranges (`range`, section 4.4), an advance back in
//! time (`invalid`), purgatory operations (`unsupported`) and requests it cannot decode
//! (`invalid`). A cancel of a task never added since the reset is Kafka's no-op under v2 (result
//! `false`, your timer is not called) and `unknown-id` under v1. Return `Err(Refusal)` from your
//! timer to refuse something yourself; a panic is answered `internal`.
//!
//! Requests are read in order and each is answered, flushed, before the next is read, however many
//! wait unread: under v2 the hello declares `"pipeline": 64`, so the runner may send that many ahead.

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufRead, Write};

// wheelspec's ranges (docs/guides/PROTOCOL.md, section 4.4; the Python source is spec/limits.py)
pub const MAX_DELAY: i64 = (1 << 40) - 1;
pub const MAX_TIME: i64 = (1 << 43) - 1;
pub const MAX_ID: i64 = (1 << 31) - 1;
pub const MAX_TICK: i64 = 1 << 20;
pub const MIN_WHEEL: i64 = 2;
pub const MAX_WHEEL: i64 = 1 << 16;
pub const MAX_PURGE_INTERVAL: i64 = (1 << 31) - 1;
const PURGATORY_OPS: [&str; 7] = [
    "watch",
    "set_completable",
    "check",
    "cancel_for_key",
    "force_complete",
    "watched",
    "num_delayed",
];

/// An error response: `kind` is one of the protocol's error types.
#[derive(Debug)]
pub struct Refusal {
    pub kind: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            kind,
            message: message.into(),
        }
    }
}

/// The range helper: `value` if it lies in `[lo, hi]`, else a `range` refusal naming `name`.
pub fn in_range(name: &str, value: i64, lo: i64, hi: i64) -> Result<i64, Refusal> {
    if value < lo || value > hi {
        return Err(Refusal::new(
            "range",
            format!("{name} {value} outside [{lo}, {hi}]"),
        ));
    }
    Ok(value)
}

/// Collects the `fire` events of one request: `fire(now, task, exp)` reports that the timer handed
/// `task` (expiration `exp`) to its action at clock `now`.
#[derive(Default)]
pub struct Events(Vec<(i64, i64, i64)>);

impl Events {
    pub fn fire(&mut self, now: i64, task: i64, exp: i64) {
        self.0.push((now, task, exp));
    }
}

/// What you fill in: the calls into your timer. Called only with values inside wheelspec's ranges.
pub trait Timer {
    /// The clock reading.
    fn now(&self) -> i64;
    /// Schedule (or re-schedule: the old entry must never fire) `task`; returns now + delay. An
    /// `Err(Refusal)` must leave the task's old entry scheduled (decide before you replace it).
    fn add(&mut self, task: i64, delay: i64, events: &mut Events) -> Result<i64, Refusal>;
    /// True iff a scheduled, not yet fired entry was removed.
    fn cancel(&mut self, task: i64, events: &mut Events) -> Result<bool, Refusal>;
    /// Move the clock to `time` (never backwards) and fire what is due.
    fn advance(&mut self, time: i64, events: &mut Events) -> Result<(), Refusal>;
    /// The number of scheduled tasks.
    fn size(&self) -> i64;
}

/// A reset's configuration (docs/guides/PROTOCOL.md, section 2.2).
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub tick_ms: i64,
    pub wheel_size: i64,
    pub start_ms: i64,
    pub purge_interval: i64,
}

/// How many requests the runner may send ahead under v2 (the line loop answers them in order).
pub const PIPELINE: i64 = 64;

/// The version to answer a hello with: 2 if the runner offers it in `protocols`, else 1.
pub fn negotiate(hello: &Json) -> i64 {
    match hello.get("protocols") {
        Some(Json::Array(offered)) if offered.contains(&Json::Int(2)) => 2,
        _ => 1,
    }
}

/// What the hello answers: your timer's name and the capabilities it claims.
#[derive(Default)]
pub struct Info {
    pub name: String,
    pub version: String,
    /// "strict", "kafka" or "strict-gt"
    pub profile: String,
    /// the reset keys your factory honours (at least "start_ms")
    pub configurable: Vec<String>,
    /// your fixed tick and wheel size, if any
    pub tick_ms: Option<i64>,
    pub wheel_size: Option<i64>,
    /// what your adapter cannot read from your timer (docs/guides/ADAPTERS.md); usually empty
    pub unobservable: Vec<String>,
    /// the delays and clock readings your timer accepts, if fewer than wheelspec's (None:
    /// wheelspec's, "bounded"); docs/guides/PROTOCOL.md, section 4.4, "A declared range"
    pub ranges: Option<Ranges>,
    /// a coarse timer's declared granularity, in ms (0: none): a task may fire up to `lateness_ms`
    /// after the moment its profile says it must have fired by, and up to `earliness_ms` before
    /// its earliest time; judged as property `granularity` (docs/guides/PROTOCOL.md, section 5)
    pub lateness_ms: i64,
    pub earliness_ms: i64,
}

/// A declared range, inclusive, inside wheelspec's: the hello declares it as
/// `"ranges": {"delay": [lo, hi], "time": [lo, hi]}`, this layer refuses (`range`) a delay or an
/// advance outside it before your timer is called, and wheelspec reports it once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranges {
    pub delay: (i64, i64),
    pub time: (i64, i64),
}

impl Ranges {
    /// Delays `[lo, hi]`, every clock reading wheelspec allows.
    #[allow(dead_code)] // (a toy that declares no range does not call it)
    pub fn delays(lo: i64, hi: i64) -> Ranges {
        Ranges { delay: (lo, hi), time: (0, MAX_TIME) }
    }

    fn json(&self) -> String {
        format!(
            "{{\"delay\":[{},{}],\"time\":[{},{}]}}",
            self.delay.0, self.delay.1, self.time.0, self.time.1
        )
    }
}

// ---- just enough JSON for the protocol ------------------------------------------------------------
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m.get(key),
            _ => None,
        }
    }
}

pub fn quote(v: &str) -> String {
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

struct Reader<'a> {
    s: &'a [u8],
    p: usize,
}

impl<'a> Reader<'a> {
    fn fail(&self, what: &str) -> Refusal {
        Refusal::new(
            "invalid",
            format!("request is not JSON: {what} at byte {}", self.p),
        )
    }
    fn space(&mut self) {
        while self.p < self.s.len() && matches!(self.s[self.p], b' ' | b'\t' | b'\r' | b'\n') {
            self.p += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.p).copied()
    }
    fn expect(&mut self, c: u8) -> Result<(), Refusal> {
        if self.peek() != Some(c) {
            return Err(self.fail(&format!("expected '{}'", c as char)));
        }
        self.p += 1;
        Ok(())
    }
    fn word(&mut self, w: &str) -> bool {
        if self.s[self.p..].starts_with(w.as_bytes()) {
            self.p += w.len();
            return true;
        }
        false
    }
    fn value(&mut self, depth: usize) -> Result<Json, Refusal> {
        if depth > 64 {
            return Err(self.fail("nested too deeply"));
        }
        self.space();
        match self.peek() {
            None => Err(self.fail("unexpected end")),
            Some(b'{') => {
                self.p += 1;
                let mut m = BTreeMap::new();
                self.space();
                if self.peek() == Some(b'}') {
                    self.p += 1;
                    return Ok(Json::Object(m));
                }
                loop {
                    self.space();
                    if self.peek() != Some(b'"') {
                        return Err(self.fail("expected a key"));
                    }
                    let key = self.string()?;
                    self.space();
                    self.expect(b':')?;
                    let v = self.value(depth + 1)?;
                    m.insert(key, v);
                    self.space();
                    if self.peek() == Some(b',') {
                        self.p += 1;
                        continue;
                    }
                    self.expect(b'}')?;
                    return Ok(Json::Object(m));
                }
            }
            Some(b'[') => {
                self.p += 1;
                let mut a = Vec::new();
                self.space();
                if self.peek() == Some(b']') {
                    self.p += 1;
                    return Ok(Json::Array(a));
                }
                loop {
                    a.push(self.value(depth + 1)?);
                    self.space();
                    if self.peek() == Some(b',') {
                        self.p += 1;
                        continue;
                    }
                    self.expect(b']')?;
                    return Ok(Json::Array(a));
                }
            }
            Some(b'"') => Ok(Json::Str(self.string()?)),
            _ if self.word("true") => Ok(Json::Bool(true)),
            _ if self.word("false") => Ok(Json::Bool(false)),
            _ if self.word("null") => Ok(Json::Null),
            _ => self.number(),
        }
    }
    fn string(&mut self) -> Result<String, Refusal> {
        self.p += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            let c = self
                .peek()
                .ok_or_else(|| self.fail("unterminated string"))?;
            self.p += 1;
            match c {
                b'"' => {
                    return String::from_utf8(out).map_err(|_| self.fail("string is not UTF-8"))
                }
                b'\\' => {
                    let e = self
                        .peek()
                        .ok_or_else(|| self.fail("unterminated string"))?;
                    self.p += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = self
                                .s
                                .get(self.p..self.p + 4)
                                .ok_or_else(|| self.fail("bad \\u escape"))?;
                            let code = std::str::from_utf8(hex)
                                .ok()
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .ok_or_else(|| self.fail("bad \\u escape"))?;
                            self.p += 4;
                            let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                            out.extend_from_slice(ch.to_string().as_bytes());
                        }
                        other => out.push(other), // '"', '\\', '/'
                    }
                }
                other => out.push(other),
            }
        }
    }
    fn number(&mut self) -> Result<Json, Refusal> {
        let start = self.p;
        while self.p < self.s.len() && b"+-0123456789.eE".contains(&self.s[self.p]) {
            self.p += 1;
        }
        let t = std::str::from_utf8(&self.s[start..self.p]).unwrap_or("");
        if t.is_empty() {
            return Err(self.fail("unexpected character"));
        }
        if t.contains(|c| matches!(c, '.' | 'e' | 'E')) {
            t.parse::<f64>()
                .map(Json::Float)
                .map_err(|_| self.fail(&format!("bad number {t}")))
        } else {
            t.parse::<i64>()
                .map(Json::Int)
                .map_err(|_| self.fail(&format!("bad number {t}")))
        }
    }
}

pub fn parse(text: &str) -> Result<Json, Refusal> {
    let mut r = Reader {
        s: text.as_bytes(),
        p: 0,
    };
    let v = r.value(0)?;
    r.space();
    if r.p != r.s.len() {
        return Err(r.fail("trailing characters"));
    }
    Ok(v)
}

// ---- the protocol layer ---------------------------------------------------------------------------
/// The integer `field` of the object `obj`, or an `invalid` refusal naming it.
pub fn integer(obj: &Json, field: &str) -> Result<i64, Refusal> {
    match obj.get(field) {
        None => Err(Refusal::new("invalid", format!("missing field {field}"))),
        Some(Json::Int(v)) => Ok(*v),
        Some(_) => Err(Refusal::new(
            "invalid",
            format!("{field} must be an integer"),
        )),
    }
}

fn read_config(raw: Option<&Json>) -> Result<Config, Refusal> {
    let obj = match raw {
        Some(o @ Json::Object(_)) => o,
        _ => return Err(Refusal::new("invalid", "reset: config must be an object")),
    };
    let mut c = Config {
        tick_ms: 1,
        wheel_size: 20,
        start_ms: 0,
        purge_interval: 1000,
    };
    if let Json::Object(m) = obj {
        for key in m.keys() {
            let (slot, lo, hi) = match key.as_str() {
                "tick_ms" => (&mut c.tick_ms, 1, MAX_TICK),
                "wheel_size" => (&mut c.wheel_size, MIN_WHEEL, MAX_WHEEL),
                "start_ms" => (&mut c.start_ms, 0, MAX_TIME),
                "purge_interval" => (&mut c.purge_interval, 0, MAX_PURGE_INTERVAL),
                _ => {
                    return Err(Refusal::new(
                        "invalid",
                        format!("reset: unknown config key {}", quote(key)),
                    ))
                }
            };
            let v = integer(obj, key)?;
            if v < lo || v > hi {
                return Err(Refusal::new(
                    "invalid",
                    format!("reset: {key} {v} outside [{lo}, {hi}]"),
                ));
            }
            *slot = v;
        }
    }
    Ok(c)
}

struct Session<F: FnMut(&Config) -> Box<dyn Timer>> {
    info: Info,
    make: F,
    timer: Option<Box<dyn Timer>>,
    known: HashSet<i64>, // task ids added since the reset
    protocol: i64,       // the version agreed in the hello
}

impl<F: FnMut(&Config) -> Box<dyn Timer>> Session<F> {
    /// The body of an ok response (without the id), or a refusal; `bye` is set on "bye".
    fn handle(&mut self, req: &Json, bye: &mut bool) -> Result<String, Refusal> {
        match req.get("type") {
            Some(Json::Str(t)) if t == "hello" => {
                self.protocol = negotiate(req);
                let info = &self.info;
                let configurable: Vec<String> =
                    info.configurable.iter().map(|k| quote(k)).collect();
                let mut caps = format!(
                    "{{\"timer\":true,\"purgatory\":false,\"time\":\"virtual\",\"profile\":{},\"configurable\":[{}],\"ranges\":{}",
                    quote(&info.profile),
                    configurable.join(","),
                    info.ranges.map_or("\"bounded\"".to_string(), |r| r.json())
                );
                if let Some(t) = info.tick_ms {
                    caps += &format!(",\"tick_ms\":{t}");
                }
                if let Some(w) = info.wheel_size {
                    caps += &format!(",\"wheel_size\":{w}");
                }
                if info.lateness_ms != 0 {
                    caps += &format!(",\"lateness_ms\":{}", info.lateness_ms);
                }
                if info.earliness_ms != 0 {
                    caps += &format!(",\"earliness_ms\":{}", info.earliness_ms);
                }
                let unobservable: Vec<String> = info.unobservable.iter().map(|k| quote(k)).collect();
                caps += &format!(",\"unobservable\":[{}]", unobservable.join(","));
                if self.protocol >= 2 {
                    caps += &format!(",\"pipeline\":{PIPELINE}");
                }
                Ok(format!(
                    "\"ok\":true,\"protocol\":{},\"name\":{},\"version\":{},\"capabilities\":{caps}}}",
                    self.protocol,
                    quote(&info.name),
                    quote(&info.version)
                ))
            }
            Some(Json::Str(t)) if t == "reset" => {
                let config = read_config(req.get("config"))?;
                self.timer = Some((self.make)(&config));
                self.known.clear();
                Ok("\"ok\":true".into())
            }
            Some(Json::Str(t)) if t == "op" => match req.get("op") {
                Some(op @ Json::Object(_)) => self.apply(op),
                _ => Err(Refusal::new("invalid", "op must be an object")),
            },
            Some(Json::Str(t)) if t == "bye" => {
                *bye = true;
                Ok("\"ok\":true".into())
            }
            _ => Err(Refusal::new("invalid", "unknown request type")),
        }
    }

    fn apply(&mut self, op: &Json) -> Result<String, Refusal> {
        let timer = self
            .timer
            .as_mut()
            .ok_or_else(|| Refusal::new("invalid", "an op before the first reset"))?;
        let mut events = Events::default();
        let kind = match op.get("kind") {
            Some(Json::Str(k)) => k.as_str(),
            _ => "",
        };
        let result = match kind {
            "add" => {
                let task = in_range("task", integer(op, "task")?, 0, MAX_ID)?;
                let mut delay = in_range("delay", integer(op, "delay")?, -MAX_DELAY, MAX_DELAY)?;
                if let Some(r) = self.info.ranges {
                    // the declared range: the timer sees only what it accepts
                    delay = in_range("delay", delay, r.delay.0, r.delay.1)?;
                }
                let exp = timer.add(task, delay, &mut events)?;
                self.known.insert(task);
                exp.to_string()
            }
            "cancel" => {
                let task = in_range("task", integer(op, "task")?, 0, MAX_ID)?;
                if self.known.contains(&task) {
                    timer.cancel(task, &mut events)?.to_string()
                } else if self.protocol >= 2 {
                    "false".into() // Kafka's TimerTask.cancel() of a task never added: a no-op
                } else {
                    return Err(Refusal::new(
                        "unknown-id",
                        format!("cancel: unknown task id {task}"),
                    ));
                }
            }
            "advance" => {
                let mut time = in_range("time", integer(op, "time")?, 0, MAX_TIME)?;
                if let Some(r) = self.info.ranges {
                    time = in_range("time", time, r.time.0, r.time.1)?;
                }
                if time < timer.now() {
                    let now = timer.now();
                    return Err(Refusal::new(
                        "invalid",
                        format!("advance to {time} is before the current time {now}"),
                    ));
                }
                timer.advance(time, &mut events)?;
                "null".into()
            }
            "size" => timer.size().to_string(),
            k if PURGATORY_OPS.contains(&k) => {
                return Err(Refusal::new(
                    "unsupported",
                    format!("{k} is not offered by {} (timer only)", self.info.name),
                ))
            }
            k => {
                return Err(Refusal::new(
                    "invalid",
                    format!("unknown op kind {}", quote(k)),
                ))
            }
        };
        let events: Vec<String> = events
            .0
            .iter()
            .map(|(now, task, exp)| {
                format!("{{\"kind\":\"fire\",\"now\":{now},\"task\":{task},\"exp\":{exp}}}")
            })
            .collect();
        Ok(format!(
            "\"ok\":true,\"now\":{},\"events\":[{}],\"result\":{result}",
            timer.now(),
            events.join(",")
        ))
    }
}

/// The line loop under every server of this kit: one request per line from stdin, one answer per
/// line to stdout, flushed at once. `handle` returns the body of an ok answer (without the id) or
/// a refusal, and sets `bye` to end the loop; a panic inside it is answered `internal`. Lines are
/// read and answered in order until "bye" or end of input.
pub fn serve_lines(mut handle: impl FnMut(&Json, &mut bool) -> Result<String, Refusal>) {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("reading stdin: {e}");
                std::process::exit(1);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let mut bye = false;
        let mut id = "null".to_string();
        let body = parse(&line).and_then(|req| {
            if let Some(Json::Int(i)) = req.get("id") {
                id = i.to_string();
            }
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                handle(&req, &mut bye)
            }));
            answer.unwrap_or_else(|_| {
                Err(Refusal::new("internal", "the timer panicked (see stderr)"))
            })
        });
        let body = body.unwrap_or_else(|r| {
            let message = r.message.replace(|c| c == '\n' || c == '\r', " ");
            format!(
                "\"ok\":false,\"error\":{{\"type\":{},\"message\":{}}}",
                quote(r.kind),
                quote(&message)
            )
        });
        // an unflushed response looks like a hang
        if writeln!(out, "{{\"id\":{id},{body}}}")
            .and_then(|_| out.flush())
            .is_err()
        {
            std::process::exit(1);
        }
        if bye {
            break;
        }
    }
}

/// Answer requests from stdin until "bye" or end of input; `make` is called at every reset and
/// returns a fresh, empty timer whose clock reads `config.start_ms`.
pub fn serve<F: FnMut(&Config) -> Box<dyn Timer>>(info: Info, make: F) {
    let mut session = Session {
        info,
        make,
        timer: None,
        known: HashSet::new(),
        protocol: 1,
    };
    serve_lines(|req, bye| session.handle(req, bye));
}
