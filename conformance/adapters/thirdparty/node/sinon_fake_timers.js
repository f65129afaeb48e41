#!/usr/bin/env node
// wheelspec adapter for @sinonjs/fake-timers (the virtual clock of Sinon, Jest's modern fake timers
// and most JavaScript test suites), written with wheelspec's JavaScript kit (wheelspec_adapter.js).
//
//   node sinon_fake_timers.js tick   advance with clock.tick(time - now): every timer due in the
//                                    window runs, in order, with clock.now set to its callAt
//   node sinon_fake_timers.js jump   advance with clock.jump(time - now): every due timer's callAt
//                                    is first moved to the destination, then they run there
//
// One clock per reset: FakeTimers.createClock(start_ms) (a clock object, nothing installed on the
// globals). Every judged value is the library's:
//   add     clock.setTimeout(callback, delay); the result is the timer's `callAt`, read from the
//           library's own table (clock.timers, keyed by the id the handle converts to)
//   cancel  clock.countTimers() before and after clock.clearTimeout(handle): true iff the library
//           removed a pending timer (countTimers is the length of its timer heap)
//   advance clock.tick(ms) or clock.jump(ms)
//   fire    the callback reports clock.now read inside it and the callAt the library holds for
//           that timer at that moment
//   size    clock.countTimers()
//   now     clock.now
// The adapter's map (task -> handle) only translates wheelspec's task ids into the library's
// handles; a re-add clears the task's earlier timer with clearTimeout (Kafka's "a re-added task
// replaces its entry") once the library has recorded the new one, so a refused re-add leaves the
// earlier timer scheduled (the protocol: a refused request changes nothing). Task ids and the clock's range are the adapter's (declared
// unobservable); delays go to the library unchecked, so its handling of out-of-range delays is
// judged (`checkDelays: false`).
"use strict";

const FakeTimers = require("@sinonjs/fake-timers");
const { version } = require("@sinonjs/fake-timers/package.json");
const { serve, Refusal } = require("./wheelspec_adapter");

const mode = process.argv[2];
if (mode !== "tick" && mode !== "jump") {
  process.stderr.write("usage: node sinon_fake_timers.js tick|jump\n");
  process.exit(2);
}

class SinonTimer {
  constructor(startMs) {
    this.clock = FakeTimers.createClock(startMs);
    this.handles = new Map();   // task -> {handle, timer}: ids only, never an answer
    this.fire = null;           // the reporter of the request running (the kit passes one per call)
  }

  now() { return this.clock.now; }

  add(task, delay, fire) {
    const clock = this.clock;
    const old = this.handles.get(task);
    const entry = {};
    entry.handle = clock.setTimeout(() => this.fire(clock.now, task, entry.timer.callAt), delay);
    // the library's record of the new timer (its heap and clock.timers hold this object)
    entry.timer = clock.timers.get(Number(entry.handle));
    if (entry.timer === undefined) throw new Refusal("internal", "fake-timers did not record the timer");
    // superseded only now that the new timer exists (setTimeout runs nothing, so the old cannot
    // fire in between; timer ids grow with each setTimeout, so ties keep the same order)
    if (old !== undefined) clock.clearTimeout(old.handle);
    this.handles.set(task, entry);
    return entry.timer.callAt;
  }

  cancel(task, fire) {
    const entry = this.handles.get(task);
    const before = this.clock.countTimers();
    this.clock.clearTimeout(entry.handle);
    return this.clock.countTimers() === before - 1;
  }

  advance(time, fire) {
    const ms = time - this.clock.now;
    this.fire = fire;
    if (mode === "tick") this.clock.tick(ms);
    else this.clock.jump(ms);
  }

  size() { return this.clock.countTimers(); }
}

serve({ name: `sinon-fake-timers-${mode}`, version: `@sinonjs/fake-timers ${version}`, profile: "strict",
        configurable: ["start_ms"], unobservable: ["task-ids", "clock"], checkDelays: false },
      (config) => new SinonTimer(config.start_ms));
