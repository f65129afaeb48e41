// wheelspec's real-time adapter for Go's runtime timers (time.AfterFunc), written with the Go
// adapter kit's real-time part (wheelspec_realtime.go; this file replaces the kit's timer.go).
//
// The calls the kit leaves open are the runtime's own, except size:
//   add    -> time.AfterFunc(delay, action); the *time.Timer is the handle
//   cancel -> Timer.Stop(): true iff the call stopped the timer, false once it fired or was stopped
//   stop   -> Timer.Stop() on every timer of the run; "unfired" counts those that answer true
//   delay  -> a time.Duration (int64 nanoseconds, at most about 292 years): a delay in ms beyond
//             that range is given as the longest (or shortest) Duration, which Go's when() treats
//             as "never" (or "now") anyway; multiplying it out would wrap around
//   size   -> Go has no public count of pending timers: the adapter counts adds minus fires minus
//             successful Stops. The real-time judge does not judge size, so nothing judged is the
//             adapter's.
package main

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

type goTimers struct {
	mu      sync.Mutex
	all     []*time.Timer
	pending int64
}

// duration is delayMs as a time.Duration, saturated at the type's range instead of wrapping.
func duration(delayMs int64) time.Duration {
	limit := int64(math.MaxInt64 / time.Millisecond)
	if delayMs > limit {
		return time.Duration(math.MaxInt64)
	}
	if delayMs < -limit {
		return time.Duration(math.MinInt64)
	}
	return time.Duration(delayMs) * time.Millisecond
}

func (g *goTimers) Add(delayMs int64, action func()) interface{} {
	atomic.AddInt64(&g.pending, 1)
	t := time.AfterFunc(duration(delayMs), func() {
		atomic.AddInt64(&g.pending, -1)
		action()
	})
	g.mu.Lock()
	g.all = append(g.all, t)
	g.mu.Unlock()
	return t
}

func (g *goTimers) Cancel(handle interface{}) bool {
	stopped := handle.(*time.Timer).Stop()
	if stopped {
		atomic.AddInt64(&g.pending, -1)
	}
	return stopped
}

func (g *goTimers) Size() int64 { return atomic.LoadInt64(&g.pending) }

func (g *goTimers) Stop() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	var left int64
	for _, t := range g.all {
		if t.Stop() {
			left++
		}
	}
	return left
}

func main() {
	ServeRealtime(RtInfo{Name: "go-timers", Version: runtime.Version() + " runtime timers (time.AfterFunc)",
		Profile: "strict", TickMs: 1}, func(RtConfig) RtTimer { return &goTimers{} })
}
