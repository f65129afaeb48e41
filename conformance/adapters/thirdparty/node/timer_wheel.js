#!/usr/bin/env node
// wheelspec adapter for the npm package `timer-wheel` (a hierarchical timing wheel after Caffeine's,
// by way of the Transitory cache), written with wheelspec's JavaScript kit (wheelspec_adapter.js).
//
// The library (src/TimerWheel.ts): five layers of 64, 64, 32, 4 and 1 buckets spanning 2^10,
// 2^16, 2^22, 2^27 and 2^29 ms each, so its finest bucket (its tick) is 1024 ms; times are kept
// relative to `base`, the Date.now() of its construction, and shifted with `>>>` (32-bit).
// `schedule(data, delay)` files a node at `localTime + delay` where localTime = Date.now() - base;
// `advance(localTime)` sets the wheel's time and walks the buckets between the previous time and
// the new one, returning the expired data. ReschedulingTimerWheel keys nodes by their data, so a
// second schedule of one task replaces the first (Kafka's entry replacement) and `unschedule(data)`
// answers whether it removed a scheduled node.
//
// Driven virtually: Date.now, the only clock the library reads, returns the adapter's clock, and
// an advance calls wheel.advance(time - base). Every judged value is the library's:
//   add     wheel.schedule(task, delay); the result is the node's `time` (+ base), read from the
//           wheel's own map of scheduled nodes (ReschedulingTimerWheel.items)
//   cancel  wheel.unschedule(task)
//   fire    each datum advance() returns, in its order, at the wheel's time; the expiration is the
//           node's `time`, recorded by the library's own hook expireNode(node), which advance()
//           calls for each node just before returning it
//   size    wheel.items.size (the library deletes a node from it when it expires or is unscheduled)
//   now     the wheel's `time` (+ base): what its last advance set
// Task ids and the clock are the adapter's (declared unobservable). The library checks no value
// (any JavaScript number is scheduled), so the hello declares ranges "unbounded".
"use strict";

let virtualNow = 0;
// the library's only clock (TimerWheel's constructor and its `localTime` getter read it)
Date.now = () => virtualNow;

const { ReschedulingTimerWheel } = require("timer-wheel");
const { version } = require("timer-wheel/package.json");
const { serve } = require("./wheelspec_adapter");

/** ReschedulingTimerWheel, observed through its protected hook `expireNode`. */
class ObservedWheel extends ReschedulingTimerWheel {
  constructor() {
    super();
    this.expiredTimes = [];   // node.time of each node advance() expired, in order
  }

  expireNode(node) {
    this.expiredTimes.push(node.time);
    super.expireNode(node);
  }
}

class TimerWheelAdapter {
  constructor(startMs) {
    virtualNow = startMs;
    this.wheel = new ObservedWheel();   // its base is Date.now() = startMs
    this.base = startMs;
  }

  now() { return this.wheel.time + this.base; }

  add(task, delay, fire) {
    this.wheel.schedule(task, delay);
    return this.wheel.items.get(task).time + this.base;
  }

  cancel(task, fire) { return this.wheel.unschedule(task); }

  advance(time, fire) {
    virtualNow = time;
    this.wheel.expiredTimes = [];
    const expired = this.wheel.advance(time - this.base);
    const times = this.wheel.expiredTimes;
    const now = this.now();
    expired.forEach((task, i) => fire(now, task, times[i] + this.base));
  }

  size() { return this.wheel.items.size; }
}

serve({ name: "timer-wheel", version: `timer-wheel ${version}`, profile: "strict", configurable: ["start_ms"],
        tick_ms: 1024, wheel_size: 64, unobservable: ["task-ids", "clock"], ranges: "unbounded",
        checkDelays: false },
      (config) => new TimerWheelAdapter(config.start_ms));
