// wheelspec adapter kit for JavaScript, optional part: a timer that runs on the wall clock.
//
// A timer with no virtual clock (Node's own setTimeout, a wheel ticking on a real interval) cannot
// be driven by `advance`: wheelspec judges it in real-time mode (`wheelspec realtime --impl
// "cmd:node my_adapter.js"`), where the adapter itself performs a whole schedule at wall-clock
// offsets and reports when everything happened (docs/guides/ADAPTERS.md, "Real-time mode" and the Netty
// section, whose NettyAdapter.java speaks the same requests):
//
//   {"id":0,"type":"hello","protocol":1,...}
//     -> {"id":0,"ok":true,"protocol":1,"name":..,"capabilities":{"timer":true,"time":"real","profile":..,"tick_ms":..}}
//   {"id":n,"type":"rt_run","tick_ms":T,"wheel_size":W,"run_ms":R,
//    "ops":[{"at":MS,"kind":"add","task":ID,"delay":MS} | {"at":MS,"kind":"cancel","task":ID} | {"at":MS,"kind":"size"}]}
//     -> {"id":n,"ok":true,"ops":[{"t_us":..,"result":..},...],"fires":[{"task":ID,"seq":K,"t_us":..},...],"unfired":N}
//   {"id":n,"type":"bye"} -> {"id":n,"ok":true}
//
// You write only the timer calls (see serveRealtime below); this module does the rest:
// * a fresh timer per schedule (`makeTimer({tick_ms, wheel_size})`);
// * each operation at its `at` (ms after the run's start), stamped with process.hrtime.bigint()
//   inside this process, so the pipe adds no noise; an add is stamped just *before* your `add`
//   call, so `stamp + delay` is a lower bound of your timer's own deadline and a fire before it
//   is really early;
// * a fire names the add that scheduled it (`seq`: the adds of the run numbered 0, 1, ...), so a
//   superseded or cancelled schedule that fires shows;
// * a re-add of a task whose latest schedule exists cancels that schedule first with your
//   `cancel` and reports its answer (Kafka's "a re-added task replaces its entry"); a `cancel`
//   asks your `cancel` about the task's latest schedule, also a second time (your timer answers
//   false then), and answers false for a task never added;
// * at `run_ms` your `stop` says how many schedules your timer still held (`unfired`).
//
// Waiting between operations uses Node's setTimeout, so nothing blocks the event loop your timer
// may need. Requests are handled one at a time, in order (a run finishes before the next line is
// read). Diagnostics go to stderr; stdout carries protocol lines only.
"use strict";

const readline = require("readline");

const t0ns = () => process.hrtime.bigint();

/** Wait until `deadline` (hrtime ns) without blocking the event loop. */
function sleepUntil(deadline) {
  const leftMs = Number(deadline - t0ns()) / 1e6;
  if (leftMs <= 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, Math.ceil(leftMs)));
}

/**
 * Run one `rt_run` request against a fresh timer; the response object (without `id`).
 * Every judged value comes from the timer: a cancel's result is `cancel(handle)`, a size
 * `size()`, a fire's time is stamped inside the timer's callback; `latest` only translates task
 * ids into the timer's handles.
 */
async function runSchedule(req, makeTimer, defaults) {
  if (!Array.isArray(req.ops) || !Number.isInteger(req.run_ms)) throw new Error("rt_run needs ops (a list) and run_ms");
  const timer = makeTimer({ tick_ms: req.tick_ms ?? defaults.tick_ms, wheel_size: req.wheel_size ?? defaults.wheel_size });
  const fires = [];
  const ops = [];
  const latest = new Map();   // task -> the timer's handle of its latest schedule
  let seq = 0;
  const start = t0ns();
  const us = (t) => Number((t - start) / 1000n);
  for (let i = 0; i < req.ops.length; i++) {
    const op = req.ops[i];
    if (!Number.isInteger(op.at)) throw new Error(`op ${i}: "at" must be an integer`);
    await sleepUntil(start + BigInt(op.at) * 1000000n);
    let stamp;
    let result;
    if (op.kind === "add") {
      const old = latest.get(op.task);
      // a re-add's result says whether it cancelled a still-pending earlier schedule
      result = old === undefined ? null : Boolean(timer.cancel(old));
      const s = seq++;
      const task = op.task;
      stamp = t0ns();
      latest.set(task, timer.add(task, op.delay, () => { fires.push({ task, seq: s, t_us: us(t0ns()) }); }));
    } else if (op.kind === "cancel") {
      stamp = t0ns();
      const h = latest.get(op.task);
      result = h === undefined ? false : Boolean(timer.cancel(h));
    } else if (op.kind === "size") {
      stamp = t0ns();
      result = timer.size ? timer.size() : null;
    } else {
      throw new Error(`op ${i}: unknown kind ${JSON.stringify(op.kind)}`);
    }
    ops.push({ t_us: us(stamp), result });
  }
  await sleepUntil(start + BigInt(req.run_ms) * 1000000n);
  const unfired = timer.stop ? timer.stop() : null;
  return { ok: true, ops, fires, unfired };
}

/**
 * Serve the real-time protocol until `bye` or end of input.
 *
 * `info`: {name, version, profile ("strict": never early; "kafka": early by up to tick - 1 ms),
 * tick_ms (your resolution: lateness is judged at it), wheel_size, configurable (e.g. ["tick_ms"]
 * if makeTimer honours the request's tick)}.
 * `makeTimer({tick_ms, wheel_size})` returns a fresh timer with
 *   add(task, delay, callback) -> a handle; your timer must call callback() when it runs the task
 *   cancel(handle)             -> your timer's answer: true iff the schedule was still pending
 *   size()                     -> your timer's count of pending schedules (optional)
 *   stop()                     -> stop the timer, return how many schedules it still held (optional)
 * `warmUp()` (optional) runs before the hello is answered, so that the first measured operation
 * is not a cold start.
 */
async function serveRealtime(info, makeTimer, warmUp) {
  if (warmUp) await warmUp();
  const defaults = { tick_ms: info.tick_ms ?? 1, wheel_size: info.wheel_size ?? 512 };
  const capabilities = { timer: true, purgatory: false, time: "real", profile: info.profile || "strict",
                         tick_ms: defaults.tick_ms, wheel_size: defaults.wheel_size,
                         configurable: info.configurable || [] };
  const send = (msg) => new Promise((resolve) => process.stdout.write(JSON.stringify(msg) + "\n", resolve));
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {  // one request at a time, in order
    if (!line.trim()) continue;
    let id = null;
    try {
      const req = JSON.parse(line);
      id = req.id;
      if (req.type === "hello") {
        await send({ id, ok: true, protocol: 1, name: info.name, version: info.version || "0", capabilities });
      } else if (req.type === "rt_run") {
        await send({ id, ...(await runSchedule(req, makeTimer, defaults)) });
      } else if (req.type === "bye") {
        await send({ id, ok: true });
        process.exit(0);
      } else {
        await send({ id, ok: false, error: { type: "invalid", message: `unknown request type ${JSON.stringify(req.type)} (real-time only: hello, rt_run, bye)` } });
      }
    } catch (e) {
      await send({ id, ok: false, error: { type: "invalid", message: String(e && e.message ? e.message : e).replace(/[\r\n]+/g, " ") } });
    }
  }
  process.exit(0);
}

module.exports = { serveRealtime, runSchedule };
