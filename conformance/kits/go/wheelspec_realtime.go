// wheelspec adapter kit for Go, the optional real-time part: for a timer that runs on the wall
// clock and has no virtual clock to advance (docs/guides/ADAPTERS.md, "Real-time mode"). You write an
// RtTimer (add with a callback, cancel, size, stop); ServeRealtime speaks the rt_run extension:
//
//	{"id":0,"type":"hello",...}  -> capabilities with "time":"real" and your profile and tick
//	{"id":n,"type":"rt_run","tick_ms":T,"wheel_size":W,"run_ms":R,
//	 "ops":[{"at":MS,"kind":"add","task":ID,"delay":MS} | {"at":MS,"kind":"cancel","task":ID} | {"at":MS,"kind":"size"}]}
//	  -> {"id":n,"ok":true,"ops":[{"t_us":..,"result":..},...],"fires":[{"task":ID,"seq":K,"t_us":..},...],"unfired":N}
//	{"id":n,"type":"bye"} -> {"id":n,"ok":true}
//
// A fresh timer from your factory runs each schedule. Every op runs at its "at" (ms after the run's
// start) and is stamped in this process with Go's monotonic clock (microseconds since the start),
// so the pipe adds no noise; an add is stamped *before* your Add is called, so a fire before
// stamp + delay is really early. "seq" numbers the adds of the run: a fire names the add that
// scheduled it. A re-add of a task id first cancels its earlier handle (Kafka's entry replacement;
// the add's result is that cancel's answer, null if there was none). A cancel's result is your
// Cancel(handle); a task id never added answers false. At run_ms your Stop says how many tasks the
// timer still held. The layer only translates task ids into your handles.
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// RtTimer is what you fill in for real time: your wall-clock timer, fresh for each schedule.
type RtTimer interface {
	Add(delayMs int64, action func()) interface{} // run action once, delayMs from now; return its handle
	Cancel(handle interface{}) bool               // true iff the task was scheduled and will now never run
	Size() int64                                  // the number of tasks the timer holds
	Stop() int64                                  // stop at the run's end; how many tasks it still held
}

// RtConfig is a schedule's timer parameters, from the rt_run request.
type RtConfig struct{ TickMs, WheelSize int64 }

// RtInfo is what a real-time hello answers: Profile "strict" (never early) or "kafka"; TickMs the
// resolution lateness is judged at; WheelSize your wheel's buckets, or nil.
type RtInfo struct {
	Name, Version, Profile string
	TickMs                 int64
	WheelSize              *int64
	Configurable           []string
}

type rtFire struct{ task, seq, us int64 }

func rtRun(req map[string]interface{}, makeTimer func(RtConfig) RtTimer) (string, error) {
	runMs, err := field(req, "run_ms")
	if err != nil {
		return "", err
	}
	cfg := RtConfig{TickMs: 1, WheelSize: 512}
	if _, ok := req["tick_ms"]; ok {
		if cfg.TickMs, err = field(req, "tick_ms"); err != nil {
			return "", err
		}
	}
	if _, ok := req["wheel_size"]; ok {
		if cfg.WheelSize, err = field(req, "wheel_size"); err != nil {
			return "", err
		}
	}
	ops, ok := req["ops"].([]interface{})
	if !ok {
		return "", &Refusal{"invalid", "rt_run: ops must be a list"}
	}
	timer := makeTimer(cfg)
	var mu sync.Mutex
	var fires []rtFire
	live := map[int64]interface{}{} // task id -> your handle of its latest add
	var out strings.Builder
	out.WriteString(`"ok":true,"ops":[`)
	t0 := time.Now()
	var seq int64
	for i, raw := range ops {
		op, ok := raw.(map[string]interface{})
		if !ok {
			return "", &Refusal{"invalid", fmt.Sprintf("rt_run: op %d is not an object", i)}
		}
		at, err := field(op, "at")
		if err != nil {
			return "", err
		}
		if d := time.Until(t0.Add(time.Duration(at) * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
		var result string
		var stamp time.Duration
		switch op["kind"] {
		case "add":
			task, err1 := field(op, "task")
			delay, err2 := field(op, "delay")
			if err1 != nil || err2 != nil {
				return "", &Refusal{"invalid", fmt.Sprintf("rt_run: op %d: add needs integer task and delay", i)}
			}
			result = "null"
			if old, had := live[task]; had {
				delete(live, task)
				result = fmt.Sprint(timer.Cancel(old))
			}
			s := seq
			seq++
			stamp = time.Since(t0) // before the add: the timer computes its deadline after it
			live[task] = timer.Add(delay, func() {
				us := time.Since(t0).Microseconds()
				mu.Lock()
				fires = append(fires, rtFire{task, s, us})
				mu.Unlock()
			})
		case "cancel":
			task, err := field(op, "task")
			if err != nil {
				return "", err
			}
			stamp = time.Since(t0)
			handle, had := live[task]
			result = fmt.Sprint(had && timer.Cancel(handle))
		case "size":
			stamp = time.Since(t0)
			result = fmt.Sprint(timer.Size())
		default:
			return "", &Refusal{"invalid", fmt.Sprintf("rt_run: op %d: unknown kind %v", i, op["kind"])}
		}
		if i > 0 {
			out.WriteByte(',')
		}
		fmt.Fprintf(&out, `{"t_us":%d,"result":%s}`, stamp.Microseconds(), result)
	}
	if d := time.Until(t0.Add(time.Duration(runMs) * time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	unfired := timer.Stop()
	mu.Lock()
	defer mu.Unlock()
	out.WriteString(`],"fires":[`)
	for k, f := range fires {
		if k > 0 {
			out.WriteByte(',')
		}
		fmt.Fprintf(&out, `{"task":%d,"seq":%d,"t_us":%d}`, f.task, f.seq, f.us)
	}
	fmt.Fprintf(&out, `],"unfired":%d`, unfired)
	return out.String(), nil
}

// ServeRealtime answers hello, rt_run and bye requests from stdin until bye or end of input;
// makeTimer is called for every rt_run.
func ServeRealtime(info RtInfo, makeTimer func(RtConfig) RtTimer) {
	if info.Configurable == nil {
		info.Configurable = []string{}
	}
	serveLines(func(req map[string]interface{}) (map[string]interface{}, bool) {
		switch req["type"] {
		case "hello":
			caps := map[string]interface{}{"timer": true, "purgatory": false, "time": "real",
				"profile": info.Profile, "tick_ms": info.TickMs, "configurable": info.Configurable}
			if info.WheelSize != nil {
				caps["wheel_size"] = *info.WheelSize
			}
			return map[string]interface{}{"ok": true, "protocol": Negotiate(req), "name": info.Name,
				"version": info.Version, "capabilities": caps}, false
		case "rt_run":
			body, err := rtRun(req, makeTimer)
			if err != nil {
				return errorResponse(err), false
			}
			// rtRun writes its answer's fields as JSON text (thousands of numbers, no map per op)
			var resp map[string]interface{}
			dec := json.NewDecoder(strings.NewReader("{" + body + "}"))
			dec.UseNumber()
			if err := dec.Decode(&resp); err != nil {
				return errorResponse(fmt.Errorf("rt_run answer: %v", err)), false
			}
			return resp, false
		case "bye":
			return map[string]interface{}{"ok": true}, true
		}
		return errorResponse(&Refusal{"invalid", fmt.Sprintf("unknown request type %q (a real-time adapter answers hello, rt_run, bye)", req["type"])}), false
	})
}
