#!/usr/bin/env node
// wheelspec real-time adapter for Node's own timers (setTimeout / clearTimeout of the running
// node), written with the real-time part of wheelspec's JavaScript kit (wheelspec_realtime.js).
//
// Node has no virtual clock: wheelspec judges it on the wall clock (`wheelspec realtime --impl
// node-timers`). Every judged value is Node's:
//   add     setTimeout(callback, delay) (stamped by the kit just before the call)
//   cancel  whether Node still held the Timeout: `!timeout._destroyed`, Node's own flag, set by
//           clearTimeout and after a one-shot callback has run (lib/internal/timers.js,
//           listOnTimeout); then clearTimeout(timeout). clearTimeout itself returns nothing. Node
//           runs callbacks on this one thread, so a Timeout is never half-run when this is read
//   fire    the callback, stamped with process.hrtime.bigint() inside it
//   size    process.getActiveResourcesInfo(): Node's count of active "Timeout" resources (not
//           judged: real-time mode has no size property)
//   stop    at the run's end, the Timeouts Node still holds (not destroyed) are counted and cleared
// Node's libuv loop clock has a resolution of 1 ms: the hello declares tick 1.
"use strict";

const { serveRealtime } = require("./wheelspec_realtime");

function makeTimer() {
  const made = [];   // every Timeout of the run, to count and clear at its end
  return {
    add(task, delay, callback) {
      const t = setTimeout(callback, delay);
      made.push(t);
      return t;
    },
    cancel(t) {
      const pending = !t._destroyed;
      clearTimeout(t);
      return pending;
    },
    size() { return process.getActiveResourcesInfo().filter((r) => r === "Timeout").length; },
    stop() {
      let n = 0;
      for (const t of made) {
        if (!t._destroyed) { n++; clearTimeout(t); }
      }
      return n;
    },
  };
}

/** Warm the timer code with a few hundred timers, so the first measured add is not a cold start. */
function warmUp() {
  return new Promise((resolve) => {
    let left = 200;
    for (let i = 0; i < 200; i++) {
      setTimeout(() => { if (--left === 0) resolve(); }, i % 3);
      clearTimeout(setTimeout(() => {}, 1000));
    }
  });
}

serveRealtime({ name: "node-timers", version: `Node.js ${process.version}`, profile: "strict", tick_ms: 1 },
              makeTimer, warmUp);
