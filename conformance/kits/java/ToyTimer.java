// Your timer behind the wheelspec protocol. Replace the body of ToyTimer with calls into your own
// timer; keep the five methods of WheelspecAdapter.Timer.
// Build: javac -d build *.java    Run: java -cp build ToyTimer
//
// The toy: a java.util.PriorityQueue keyed by (expiration, insertion order). Profile "strict": a
// task fires at the first advance whose time is >= its expiration. Re-adding a scheduled task
// replaces its entry (a sequence number marks the live one; stale entries are skipped when polled).

import java.io.IOException;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

public final class ToyTimer implements WheelspecAdapter.Timer {
    private record Entry(long exp, long seq, long task) {}

    private long clock;
    private long seq;
    private final PriorityQueue<Entry> queue =
            new PriorityQueue<>(Comparator.comparingLong(Entry::exp).thenComparingLong(Entry::seq));
    private final Map<Long, Long> live = new HashMap<>(); // task -> seq of its scheduled entry

    public ToyTimer(long startMs) {
        this.clock = startMs;
    }

    @Override
    public long now() {
        return clock;
    }

    @Override
    public long add(long task, long delay, WheelspecAdapter.Fire fire) {
        long exp = clock + delay;
        seq++;
        live.put(task, seq);
        queue.add(new Entry(exp, seq, task));
        return exp;
    }

    @Override
    public boolean cancel(long task, WheelspecAdapter.Fire fire) {
        return live.remove(task) != null;
    }

    @Override
    public void advance(long time, WheelspecAdapter.Fire fire) {
        clock = time;
        while (!queue.isEmpty() && queue.peek().exp() <= time) {
            Entry e = queue.poll();
            Long liveSeq = live.get(e.task());
            if (liveSeq == null || liveSeq != e.seq()) {
                continue; // cancelled or replaced
            }
            live.remove(e.task());
            fire.fire(time, e.task(), e.exp());
        }
    }

    @Override
    public long size() {
        return live.size();
    }

    public static void main(String[] args) throws IOException {
        WheelspecAdapter.serve(new WheelspecAdapter.Info("java-toy-heap-timer", "0.1", "strict"),
                config -> new ToyTimer(config.startMs()));
    }
}
