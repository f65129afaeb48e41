// wheelspec adapter kit for Go (standard library only): the protocol layer.
//
// Serve speaks wheelspec protocol v2 (docs/guides/PROTOCOL.md, section 10) on stdin/stdout, one JSON object
// per line, or v1 to a runner that offers only v1, and hands every valid timer operation to a Timer
// you write (see timer.go). It answers every refusal the protocol defines before your timer is
// called: values outside wheelspec's ranges (`range`, section 4.4), an advance back in time
// (`invalid`), purgatory operations (`unsupported`) and requests it cannot decode (`invalid`). A
// cancel of a task never added since the reset is Kafka's no-op under v2 (result false, your timer
// is not called) and `unknown-id` under v1. Return a *Refusal error from your timer to refuse
// something yourself; any other error (or a panic) is answered `internal`.
//
// Requests are read in order and each is answered, flushed, before the next is read, however many
// wait unread: under v2 the hello declares "pipeline": 64, so the runner may send that many ahead.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// wheelspec's ranges (docs/guides/PROTOCOL.md, section 4.4; the Python source is spec/limits.py)
const (
	MaxDelay         int64 = 1<<40 - 1
	MaxTime          int64 = 1<<43 - 1
	MaxID            int64 = 1<<31 - 1
	MaxTick          int64 = 1 << 20
	MinWheel         int64 = 2
	MaxWheel         int64 = 1 << 16
	MaxPurgeInterval int64 = 1<<31 - 1
)

// Fire reports that the timer handed task (expiration exp) to its action at clock now.
type Fire func(now, task, exp int64)

// Timer is what you fill in: the calls into your timer. The layer calls it only with values
// inside wheelspec's ranges.
type Timer interface {
	Now() int64                                      // the clock reading
	Add(task, delay int64, fire Fire) (int64, error) // (re)schedule task; returns now + delay; an error keeps the old entry
	Cancel(task int64, fire Fire) (bool, error)      // true iff a scheduled, not yet fired entry was removed
	Advance(time int64, fire Fire) error             // move the clock to time and fire what is due
	Size() int64                                     // the number of scheduled tasks
}

// Config is a reset's configuration (docs/guides/PROTOCOL.md, section 2.2).
type Config struct {
	TickMs, WheelSize, StartMs, PurgeInterval int64
}

// Info is what the hello answers: your timer's name and the capabilities it claims.
type Info struct {
	Name, Version string
	Profile       string   // "strict", "kafka" or "strict-gt"
	Configurable  []string // reset keys your factory honours (at least "start_ms")
	TickMs        *int64   // your fixed tick, if any
	WheelSize     *int64   // your fixed number of buckets per wheel, if any
	Unobservable  []string // what your adapter cannot read from your timer (docs/guides/ADAPTERS.md)
	Ranges        *Ranges  // what your timer accepts, if less than wheelspec's (nil: wheelspec's, "bounded")
	// A coarse timer's declared granularity (0: none; docs/guides/PROTOCOL.md, section 5, "A declared
	// granularity"): how many ms a task may fire after the moment its profile says it must have
	// fired by, and before its earliest time. Judged as property "granularity".
	LatenessMs, EarlinessMs int64
}

// Ranges is a declared range (docs/guides/PROTOCOL.md, section 4.4, "A declared range"): the delays and
// clock readings your timer accepts, inclusive, inside wheelspec's. The hello declares it as
// "ranges": {"delay": [lo, hi], "time": [lo, hi]}; the layer refuses ("range") a delay or an
// advance outside it before your timer is called, and wheelspec reports it once.
type Ranges struct {
	Delay, Time [2]int64
}

// Delays is a declared range of delays [lo, hi] and every clock reading wheelspec allows.
func Delays(lo, hi int64) *Ranges {
	return &Ranges{Delay: [2]int64{lo, hi}, Time: [2]int64{0, MaxTime}}
}

// Pipeline is how many requests the runner may send ahead under v2 (the line loop answers them in order).
const Pipeline = 64

// Negotiate is the version to answer a hello with: 2 if the runner offers it in "protocols", else 1.
func Negotiate(hello map[string]interface{}) int64 {
	offered, _ := hello["protocols"].([]interface{})
	for _, v := range offered {
		if n, ok := v.(json.Number); ok && n.String() == "2" {
			return 2
		}
	}
	return 1
}

// Refusal is an error response: Type is one of the protocol's error types.
type Refusal struct{ Type, Message string }

func (r *Refusal) Error() string { return r.Type + ": " + r.Message }

// InRange is the range helper: value if it lies in [lo, hi], else a `range` refusal naming name.
func InRange(name string, value, lo, hi int64) (int64, error) {
	if value < lo || value > hi {
		return 0, &Refusal{"range", fmt.Sprintf("%s %d outside [%d, %d]", name, value, lo, hi)}
	}
	return value, nil
}

var purgatoryOps = map[string]bool{"watch": true, "set_completable": true, "check": true,
	"cancel_for_key": true, "force_complete": true, "watched": true, "num_delayed": true}

// field reads an integer field of a decoded object (json.Number), or refuses the request.
func field(obj map[string]interface{}, name string) (int64, error) {
	raw, ok := obj[name]
	if !ok {
		return 0, &Refusal{"invalid", "missing field " + name}
	}
	num, ok := raw.(json.Number)
	if !ok {
		return 0, &Refusal{"invalid", name + " must be an integer"}
	}
	v, err := num.Int64()
	if err != nil {
		return 0, &Refusal{"invalid", name + " must be a 64-bit integer, got " + num.String()}
	}
	return v, nil
}

func checkConfig(raw interface{}) (Config, error) {
	cfg := Config{TickMs: 1, WheelSize: 20, StartMs: 0, PurgeInterval: 1000}
	obj, ok := raw.(map[string]interface{})
	if !ok {
		return cfg, &Refusal{"invalid", "reset: config must be an object"}
	}
	bounds := map[string][2]int64{"tick_ms": {1, MaxTick}, "wheel_size": {MinWheel, MaxWheel},
		"start_ms": {0, MaxTime}, "purge_interval": {0, MaxPurgeInterval}}
	for key := range obj {
		b, known := bounds[key]
		if !known {
			return cfg, &Refusal{"invalid", fmt.Sprintf("reset: unknown config key %q", key)}
		}
		v, err := field(obj, key)
		if err == nil && (v < b[0] || v > b[1]) {
			err = &Refusal{"invalid", fmt.Sprintf("reset: %s %d outside [%d, %d]", key, v, b[0], b[1])}
		}
		if err != nil {
			return cfg, err
		}
		switch key {
		case "tick_ms":
			cfg.TickMs = v
		case "wheel_size":
			cfg.WheelSize = v
		case "start_ms":
			cfg.StartMs = v
		case "purge_interval":
			cfg.PurgeInterval = v
		}
	}
	return cfg, nil
}

type adapter struct {
	info  Info
	make  func(Config) Timer
	timer Timer
	known map[int64]bool // task ids added since the reset
	proto int64          // the version agreed in the hello
}

func (a *adapter) apply(op map[string]interface{}) (map[string]interface{}, error) {
	if a.timer == nil {
		return nil, &Refusal{"invalid", "an op before the first reset"}
	}
	events := []interface{}{}
	fire := func(now, task, exp int64) {
		events = append(events, map[string]interface{}{"kind": "fire", "now": now, "task": task, "exp": exp})
	}
	kind, _ := op["kind"].(string)
	var result interface{}
	switch kind {
	case "add":
		task, err := field(op, "task")
		if err == nil {
			task, err = InRange("task", task, 0, MaxID)
		}
		var delay int64
		if err == nil {
			delay, err = field(op, "delay")
		}
		if err == nil {
			delay, err = InRange("delay", delay, -MaxDelay, MaxDelay)
		}
		if r := a.info.Ranges; err == nil && r != nil { // the declared range: the timer sees only what it accepts
			delay, err = InRange("delay", delay, r.Delay[0], r.Delay[1])
		}
		var exp int64
		if err == nil {
			exp, err = a.timer.Add(task, delay, fire)
		}
		if err != nil {
			return nil, err
		}
		a.known[task] = true
		result = exp
	case "cancel":
		task, err := field(op, "task")
		if err == nil {
			task, err = InRange("task", task, 0, MaxID)
		}
		if err == nil && !a.known[task] {
			if a.proto >= 2 {
				result = false // Kafka's TimerTask.cancel() of a task never added: a no-op
				break
			}
			err = &Refusal{"unknown-id", fmt.Sprintf("cancel: unknown task id %d", task)}
		}
		var removed bool
		if err == nil {
			removed, err = a.timer.Cancel(task, fire)
		}
		if err != nil {
			return nil, err
		}
		result = removed
	case "advance":
		time, err := field(op, "time")
		if err == nil {
			time, err = InRange("time", time, 0, MaxTime)
		}
		if r := a.info.Ranges; err == nil && r != nil {
			time, err = InRange("time", time, r.Time[0], r.Time[1])
		}
		if err == nil && time < a.timer.Now() {
			err = &Refusal{"invalid", fmt.Sprintf("advance to %d is before the current time %d", time, a.timer.Now())}
		}
		if err == nil {
			err = a.timer.Advance(time, fire)
		}
		if err != nil {
			return nil, err
		}
	case "size":
		result = a.timer.Size()
	default:
		if purgatoryOps[kind] {
			return nil, &Refusal{"unsupported", fmt.Sprintf("%s is not offered by %s (timer only)", kind, a.info.Name)}
		}
		return nil, &Refusal{"invalid", fmt.Sprintf("unknown op kind %q", op["kind"])}
	}
	return map[string]interface{}{"ok": true, "now": a.timer.Now(), "events": events, "result": result}, nil
}

func (a *adapter) handle(req map[string]interface{}) (resp map[string]interface{}, bye bool) {
	defer func() {
		if p := recover(); p != nil {
			resp = errorResponse(&Refusal{"internal", fmt.Sprint(p)})
		}
	}()
	var err error
	switch req["type"] {
	case "hello":
		a.proto = Negotiate(req)
		unobservable := a.info.Unobservable
		if unobservable == nil {
			unobservable = []string{}
		}
		caps := map[string]interface{}{"timer": true, "purgatory": false, "time": "virtual",
			"profile": a.info.Profile, "configurable": a.info.Configurable, "ranges": "bounded",
			"unobservable": unobservable}
		if r := a.info.Ranges; r != nil {
			caps["ranges"] = map[string]interface{}{"delay": r.Delay, "time": r.Time}
		}
		if a.proto >= 2 {
			caps["pipeline"] = Pipeline
		}
		if a.info.TickMs != nil {
			caps["tick_ms"] = *a.info.TickMs
		}
		if a.info.WheelSize != nil {
			caps["wheel_size"] = *a.info.WheelSize
		}
		if a.info.LatenessMs != 0 {
			caps["lateness_ms"] = a.info.LatenessMs
		}
		if a.info.EarlinessMs != 0 {
			caps["earliness_ms"] = a.info.EarlinessMs
		}
		return map[string]interface{}{"ok": true, "protocol": a.proto, "name": a.info.Name,
			"version": a.info.Version, "capabilities": caps}, false
	case "reset":
		var cfg Config
		if cfg, err = checkConfig(req["config"]); err == nil {
			a.timer = a.make(cfg)
			a.known = map[int64]bool{}
			return map[string]interface{}{"ok": true}, false
		}
	case "op":
		op, ok := req["op"].(map[string]interface{})
		if !ok {
			err = &Refusal{"invalid", "op must be an object"}
		} else if resp, err = a.apply(op); err == nil {
			return resp, false
		}
	case "bye":
		return map[string]interface{}{"ok": true}, true
	default:
		err = &Refusal{"invalid", fmt.Sprintf("unknown request type %q", req["type"])}
	}
	return errorResponse(err), false
}

func errorResponse(err error) map[string]interface{} {
	r, ok := err.(*Refusal)
	if !ok {
		r = &Refusal{"internal", err.Error()}
	}
	msg := strings.NewReplacer("\n", " ", "\r", " ").Replace(r.Message)
	return map[string]interface{}{"ok": false, "error": map[string]interface{}{"type": r.Type, "message": msg}}
}

// Serve answers requests from stdin until `bye` or end of input. makeTimer returns a fresh, empty
// timer whose clock reads cfg.StartMs; it is called at every reset.
func Serve(info Info, makeTimer func(Config) Timer) {
	if info.Profile == "" {
		info.Profile = "strict"
	}
	if info.Configurable == nil {
		info.Configurable = []string{"start_ms"}
	}
	a := &adapter{info: info, make: makeTimer, known: map[int64]bool{}, proto: 1}
	serveLines(a.handle)
}

// serveLines reads one JSON request per line from stdin and writes handle's answer to each, in
// order and flushed, until handle says bye or the input ends. A line that is not a JSON object is
// answered invalid (id null); integers are decoded as json.Number, so they stay exact. The
// real-time part (wheelspec_realtime.go) serves its requests through it too.
func serveLines(handle func(req map[string]interface{}) (resp map[string]interface{}, bye bool)) {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req map[string]interface{}
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber() // integers stay exact (int64), never float64
			var resp map[string]interface{}
			bye := false
			if err := dec.Decode(&req); err != nil {
				resp = errorResponse(&Refusal{"invalid", "request is not a JSON object"})
				resp["id"] = nil
			} else {
				resp, bye = handle(req)
				resp["id"] = req["id"]
			}
			data, _ := json.Marshal(resp)
			out.Write(data)
			out.WriteByte('\n')
			out.Flush() // an unflushed response looks like a hang
			if bye {
				return
			}
		}
		if readErr == io.EOF {
			return
		} else if readErr != nil {
			fmt.Fprintln(os.Stderr, "reading stdin:", readErr)
			os.Exit(1)
		}
	}
}
