#!/usr/bin/env node
// Your timer behind the wheelspec protocol. Replace ToyTimer with calls into your own timer; keep
// the five methods. Run: node timer.js (wheelspec check --impl "cmd:node timer.js").
//
// The toy: a binary heap keyed by (expiration, insertion order). Profile "strict": a task fires at
// the first advance whose time is >= its expiration. Re-adding a scheduled task replaces its
// entry (a generation number marks the live one; stale entries are skipped when popped).
"use strict";

const { serve } = require("./wheelspec_adapter");

class ToyTimer {
  constructor(startMs) {
    this.clock = startMs;
    this.heap = [];          // entries {exp, seq, task, gen}
    this.seq = 0;
    this.live = new Map();   // task -> generation of its scheduled entry
  }

  now() { return this.clock; }

  add(task, delay, fire) {
    const exp = this.clock + delay;
    const gen = this.seq++;
    this.live.set(task, gen);
    this.push({ exp, seq: gen, task, gen });
    return exp;
  }

  cancel(task, fire) { return this.live.delete(task); }

  advance(time, fire) {
    this.clock = time;
    while (this.heap.length > 0 && this.heap[0].exp <= time) {
      const e = this.pop();
      if (this.live.get(e.task) !== e.gen) continue;  // cancelled or replaced
      this.live.delete(e.task);
      fire(time, e.task, e.exp);
    }
  }

  size() { return this.live.size; }

  // -- the heap ---------------------------------------------------------------------------------
  less(a, b) { return a.exp < b.exp || (a.exp === b.exp && a.seq < b.seq); }

  push(e) {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  pop() {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l], h[m])) m = l;
        if (r < h.length && this.less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

serve({ name: "javascript-toy-heap-timer", version: "0.1", profile: "strict", configurable: ["start_ms"] },
      (config) => new ToyTimer(config.start_ms));
