// Your timer behind the wheelspec protocol. Replace toyTimer with calls into your own timer; keep
// the five methods of Timer (wheelspec_adapter.go). Build: go build -o toy-timer .
//
// The toy: a binary heap (container/heap) keyed by (expiration, insertion order). Profile
// "strict": a task fires at the first advance whose time is >= its expiration. Re-adding a
// scheduled task replaces its entry (a generation number marks the live one; stale entries are
// skipped when popped).
package main

import "container/heap"

type entry struct{ exp, seq, task int64 }

type entries []entry

func (h entries) Len() int { return len(h) }
func (h entries) Less(i, j int) bool {
	return h[i].exp < h[j].exp || (h[i].exp == h[j].exp && h[i].seq < h[j].seq)
}
func (h entries) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *entries) Push(x interface{}) { *h = append(*h, x.(entry)) }
func (h *entries) Pop() interface{} {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type toyTimer struct {
	clock int64
	heap  entries
	seq   int64
	live  map[int64]int64 // task -> seq of its scheduled entry
}

func (t *toyTimer) Now() int64 { return t.clock }

func (t *toyTimer) Add(task, delay int64, fire Fire) (int64, error) {
	exp := t.clock + delay
	t.seq++
	t.live[task] = t.seq
	heap.Push(&t.heap, entry{exp, t.seq, task})
	return exp, nil
}

func (t *toyTimer) Cancel(task int64, fire Fire) (bool, error) {
	_, scheduled := t.live[task]
	delete(t.live, task)
	return scheduled, nil
}

func (t *toyTimer) Advance(time int64, fire Fire) error {
	t.clock = time
	for len(t.heap) > 0 && t.heap[0].exp <= time {
		e := heap.Pop(&t.heap).(entry)
		if seq, ok := t.live[e.task]; !ok || seq != e.seq {
			continue // cancelled or replaced
		}
		delete(t.live, e.task)
		fire(time, e.task, e.exp)
	}
	return nil
}

func (t *toyTimer) Size() int64 { return int64(len(t.live)) }

func main() {
	// A timer accepting fewer delays than wheelspec's range declares them in Info, e.g.
	// Ranges: Delays(1, 4095) (README.md, "Capabilities").
	Serve(Info{Name: "go-toy-heap-timer", Version: "0.1", Profile: "strict", Configurable: []string{"start_ms"}},
		func(cfg Config) Timer { return &toyTimer{clock: cfg.StartMs, live: map[int64]int64{}} })
}
