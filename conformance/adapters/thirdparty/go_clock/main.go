// wheelspec adapter for github.com/benbjohnson/clock's Mock, the fake clock many Go test suites
// use for timers, written with the Go adapter kit (its wheelspec_adapter.go is copied beside this
// file at build time; conformance/adapters/thirdparty/go_clock_peer.py builds it).
//
// Mapping, one Mock per reset:
//   add(task, delay)  -> mock.AfterFunc(delay ms, f); a re-add first Stops the task's timer (Kafka
//                        replaces a scheduled task's entry); the result is now + delay
//   cancel(task)      -> timer.Stop(): the library's own "was it still registered"
//   advance(time)     -> mock.Set(epoch + time ms): the Mock runs, one by one, every timer whose
//                        next time is not after the target, moving its clock to each timer's time
//   size              -> the number of timers the Mock holds (its unexported list, read through
//                        reflect: the library has no public count)
// A fire is reported from inside the library's callback, at the Mock's own Now(), so the time
// judged is the library's. The clock is the library's too (Now() after every call).
package main

import (
	"reflect"
	"time"

	"github.com/benbjohnson/clock"
)

type mockTimer struct {
	mock   *clock.Mock
	timers map[int64]*clock.Timer // task -> its latest timer (the adapter's id map only)
	fire   Fire                   // the fire of the request being answered
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func (m *mockTimer) Now() int64 { return ms(m.mock.Now()) }

func (m *mockTimer) Add(task, delay int64, fire Fire) (int64, error) {
	m.fire = fire
	if old, ok := m.timers[task]; ok {
		old.Stop()
	}
	now := m.Now()
	exp := now + delay
	m.timers[task] = m.mock.AfterFunc(time.Duration(delay)*time.Millisecond, func() {
		m.fire(m.Now(), task, exp)
	})
	return exp, nil
}

func (m *mockTimer) Cancel(task int64, fire Fire) (bool, error) {
	m.fire = fire
	t, ok := m.timers[task]
	if !ok {
		return false, nil // never added since the reset (the kit answers those before calling)
	}
	return t.Stop(), nil
}

func (m *mockTimer) Advance(t int64, fire Fire) error {
	m.fire = fire
	m.mock.Set(time.UnixMilli(t))
	return nil
}

func (m *mockTimer) Size() int64 {
	return int64(reflect.ValueOf(m.mock).Elem().FieldByName("timers").Len())
}

// libVersion is set at build time (-ldflags -X) to the version of the library the build found.
var libVersion = "unknown"

func main() {
	Serve(Info{Name: "benbjohnson-clock-mock", Version: "github.com/benbjohnson/clock " + libVersion,
		Profile: "strict", Configurable: []string{"start_ms"}},
		func(cfg Config) Timer {
			mock := clock.NewMock()
			mock.Set(time.UnixMilli(cfg.StartMs))
			return &mockTimer{mock: mock, timers: map[int64]*clock.Timer{}}
		})
}
