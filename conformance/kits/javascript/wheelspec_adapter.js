// wheelspec adapter kit for JavaScript (Node, no npm dependencies): the protocol layer.
//
// Speaks wheelspec protocol v2, or v1 to a runner that offers only v1 (docs/guides/PROTOCOL.md, sections
// 2.1 and 10), on stdin/stdout, one JSON object per line, and hands every valid timer operation to
// a timer object you write (see timer.js):
//
//   now()                       -> the timer's clock reading
//   add(task, delay, fire)      -> the expiration now + delay; schedule (or re-schedule) `task`
//                                  (a refused re-add must leave the old entry scheduled)
//   cancel(task, fire)          -> true iff a scheduled, not yet fired entry was removed
//   advance(time, fire)         -> move the clock to `time` and fire what is due
//   size()                      -> the number of scheduled tasks
//
// `fire(now, task, exp)` reports that the timer handed `task` (expiration `exp`) to its action.
// This layer answers every refusal the protocol defines before your timer is called: values
// outside wheelspec's ranges (`range`, section 4.4), an advance back in time (`invalid`), a cancel
// of a task never added since the reset (v1: `unknown-id`; v2: Kafka's no-op, result false, no
// event), purgatory operations (`unsupported`) and requests it cannot decode (`invalid`). Throw
// `new Refusal(type, message)` from your timer to refuse something yourself; any other exception
// is answered `internal`.
//
// Under v2 the hello declares `pipeline: 64`: the runner may send up to 64 requests before reading
// an answer. This layer keeps that promise because it handles each line to the end, synchronously,
// before the next one is read (readline emits lines in order; one stdout write per answer), so
// answers leave in request order however many wait. Keep your timer's calls synchronous: a timer
// that answered from a callback or a promise could reorder them.
"use strict";

const readline = require("readline");

// wheelspec's ranges (docs/guides/PROTOCOL.md, section 4.4; the Python source is spec/limits.py)
const MAX_DELAY = 2 ** 40 - 1;
const MAX_TIME = 2 ** 43 - 1;
const MAX_ID = 2 ** 31 - 1;
const MAX_TICK = 2 ** 20;
const MIN_WHEEL = 2;
const MAX_WHEEL = 2 ** 16;
const MAX_PURGE_INTERVAL = 2 ** 31 - 1;
const PURGATORY_OPS = new Set(["watch", "set_completable", "check", "cancel_for_key", "force_complete",
                               "watched", "num_delayed", "resubmit"]);
// the protocol versions this layer speaks, newest last (docs/guides/PROTOCOL.md, section 10)
const PROTOCOLS = [1, 2];
// how many requests a v2 runner may send before reading the first answer (capability `pipeline`)
const PIPELINE = 64;

class Refusal extends Error {
  constructor(type, message) { super(message); this.type = type; }
}

/** The range helper: `value` if it is an integer in [lo, hi], else a `range` refusal naming `name`. */
function inRange(name, value, lo, hi) {
  if (!Number.isInteger(value)) throw new Refusal("invalid", `${name} must be an integer, got ${JSON.stringify(value)}`);
  if (value < lo || value > hi) throw new Refusal("range", `${name} ${value} outside [${lo}, ${hi}]`);
  return value;
}

const ranges = {
  task: (v) => inRange("task", v, 0, MAX_ID),
  delay: (v) => inRange("delay", v, -MAX_DELAY, MAX_DELAY),
  time: (v) => inRange("time", v, 0, MAX_TIME),
};

// reset keys -> [lo, hi]
const CONFIG_RANGES = {
  tick_ms: [1, MAX_TICK], wheel_size: [MIN_WHEEL, MAX_WHEEL], start_ms: [0, MAX_TIME],
  purge_interval: [0, MAX_PURGE_INTERVAL],
};

/** Check a reset's configuration; a refused reset is `invalid` (docs/guides/PROTOCOL.md, section 2.2). */
function checkConfig(config) {
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new Refusal("invalid", "reset: config must be an object");
  }
  const out = { tick_ms: 1, wheel_size: 20, start_ms: 0, purge_interval: 1000 };
  for (const [key, value] of Object.entries(config)) {
    if (!(key in CONFIG_RANGES)) throw new Refusal("invalid", `reset: unknown config key ${JSON.stringify(key)}`);
    const [lo, hi] = CONFIG_RANGES[key];
    if (!Number.isInteger(value) || value < lo || value > hi) {
      throw new Refusal("invalid", `reset: ${key} ${JSON.stringify(value)} outside [${lo}, ${hi}]`);
    }
    out[key] = value;
  }
  return out;
}

/**
 * The protocol version to answer a hello with: the newest one this layer speaks among those the
 * runner offers in `protocols` (a runner that sends only `protocol` offers that one).
 */
function negotiate(req) {
  const offered = Array.isArray(req.protocols) ? req.protocols : [req.protocol === undefined ? 1 : req.protocol];
  const common = PROTOCOLS.filter((v) => offered.includes(v));
  return common.length > 0 ? common[common.length - 1] : 1;
}

/**
 * Serve the protocol until `bye` or end of input.
 *
 * `info`: {name, version, profile ("strict", "kafka" or "strict-gt"), configurable (reset keys your
 * factory honours; at least "start_ms"), tick_ms, wheel_size (your fixed values, if any)}, and for
 * an adapter of a library it does not own: unobservable (property names the library cannot report,
 * plus "task-ids" / "clock" when the adapter owns them: docs/guides/ADAPTERS.md), ranges ("unbounded" for
 * a timer that accepts any value by design, or the delays and clock readings your timer accepts,
 * `{delay: [lo, hi], time: [lo, hi]}`, either key optional: this layer then refuses (`range`) a
 * delay or an advance outside them before your timer is called; docs/guides/PROTOCOL.md, section 4.4,
 * "A declared range"), lateness_ms / earliness_ms (a coarse timer's declared granularity: how many ms
 * a task may fire after the moment its profile says it must have fired by / before its earliest
 * time; docs/guides/PROTOCOL.md, section 5, "A declared granularity") and checkDelays (false: hand every integer delay to the
 * timer, so that its own handling of out-of-range delays is judged).
 * `makeTimer(config)`: a fresh, empty timer whose clock reads config.start_ms (called at each reset).
 */
function serve(info, makeTimer) {
  const capabilities = { timer: true, purgatory: false, time: "virtual", profile: info.profile || "strict",
                         configurable: info.configurable || ["start_ms"], ranges: info.ranges || "bounded" };
  if (info.tick_ms !== undefined) capabilities.tick_ms = info.tick_ms;
  if (info.wheel_size !== undefined) capabilities.wheel_size = info.wheel_size;
  if (info.unobservable !== undefined) capabilities.unobservable = info.unobservable;
  // a declared granularity (docs/guides/PROTOCOL.md, section 5): judged as property `granularity`
  if (info.lateness_ms) capabilities.lateness_ms = info.lateness_ms;
  if (info.earliness_ms) capabilities.earliness_ms = info.earliness_ms;
  const declared = typeof info.ranges === "object" && info.ranges !== null ? info.ranges : {};
  const wheelspecDelay = info.checkDelays === false
    ? (v) => inRange("delay", v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
    : ranges.delay;
  // a declared range: the timer sees only the delays and clock readings it accepts
  const within = (name, check) => (declared[name] === undefined ? check
    : (v) => inRange(name, check(v), declared[name][0], declared[name][1]));
  const checkDelay = within("delay", wheelspecDelay);
  const checkTime = within("time", ranges.time);
  let protocol = 1;       // agreed in the hello
  let timer = null;
  let known = new Set();  // task ids added since the reset

  function apply(op) {
    if (op === null || typeof op !== "object") throw new Refusal("invalid", "op must be an object");
    if (timer === null) throw new Refusal("invalid", "an op before the first reset");
    const events = [];
    const fire = (now, task, exp) => { events.push({ kind: "fire", now, task, exp }); };
    let result;
    switch (op.kind) {
      case "add": {
        const task = ranges.task(op.task), delay = checkDelay(op.delay);
        result = timer.add(task, delay, fire);
        known.add(task);
        break;
      }
      case "cancel": {
        const task = ranges.task(op.task);
        if (!known.has(task)) {
          // v2: Kafka's TimerTask.cancel() of a task never scheduled is a no-op (section 10)
          if (protocol >= 2) { result = false; break; }
          throw new Refusal("unknown-id", `cancel: unknown task id ${task}`);
        }
        result = Boolean(timer.cancel(task, fire));
        break;
      }
      case "advance": {
        const time = checkTime(op.time);
        if (time < timer.now()) throw new Refusal("invalid", `advance to ${time} is before the current time ${timer.now()}`);
        timer.advance(time, fire);
        result = null;
        break;
      }
      case "size":
        result = timer.size();
        break;
      default:
        if (PURGATORY_OPS.has(op.kind)) throw new Refusal("unsupported", `${op.kind} is not offered by ${info.name} (timer only)`);
        throw new Refusal("invalid", `unknown op kind ${JSON.stringify(op.kind)}`);
    }
    return { now: timer.now(), events, result };
  }

  const send = (msg) => { process.stdout.write(JSON.stringify(msg) + "\n"); };
  const refuse = (id, type, message) => {
    send({ id, ok: false, error: { type, message: String(message).replace(/[\r\n]+/g, " ") } });
  };
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on("line", (line) => {
    if (!line.trim()) return;
    let req;
    try { req = JSON.parse(line); } catch (e) { refuse(null, "invalid", "request is not JSON"); return; }
    const id = req.id;
    try {
      switch (req.type) {
        case "hello": {
          protocol = negotiate(req);
          const caps = protocol >= 2 ? { ...capabilities, pipeline: PIPELINE } : capabilities;
          send({ id, ok: true, protocol, name: info.name, version: info.version || "0", capabilities: caps });
          break;
        }
        case "reset": {
          const config = checkConfig(req.config);
          timer = makeTimer(config);
          known = new Set();
          send({ id, ok: true });
          break;
        }
        case "op": {
          const { now, events, result } = apply(req.op);
          send({ id, ok: true, now, events, result });
          break;
        }
        case "bye":
          rl.close();
          // exit once the answer is written (an open stdin would keep Node running)
          process.stdout.write(JSON.stringify({ id, ok: true }) + "\n", () => process.exit(0));
          break;
        default:
          refuse(id, "invalid", `unknown request type ${JSON.stringify(req.type)}`);
      }
    } catch (e) {
      if (e instanceof Refusal) refuse(id, e.type, e.message);
      else refuse(id, "internal", e && e.stack ? e.stack.split("\n")[0] : String(e));
    }
  });
}

module.exports = { serve, negotiate, Refusal, ranges, inRange, MAX_DELAY, MAX_TIME, MAX_ID, PIPELINE };
