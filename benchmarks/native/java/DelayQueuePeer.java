// java.util.concurrent.DelayQueue (a lock around a binary heap, java.util.PriorityQueue) on a
// virtual clock: an element's getDelay() is measured against DelayQueuePeer.now, a field the
// driver sets, so an "advance" is assigning now and then poll()ing until poll() returns null,
// exactly as a consumer drains what is due.  Every workload runs as the engine's does.
// Cancel is DelayQueue.remove(task): a linear scan of the heap (PriorityQueue.remove(Object)),
// which is what the API offers; its cost grows with N.  Task objects (id, expiration) are made
// before the clock starts, as a caller of offer() would hold them already.

import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

final class DelayQueuePeer implements NativeBench.Peer {
    /** The virtual clock, in ms. */
    static long now;

    static final class Task implements Delayed {
        final int id; final long exp;
        Task(int id, long exp) { this.id = id; this.exp = exp; }
        @Override public long getDelay(TimeUnit unit) { return unit.convert(exp - now, TimeUnit.MILLISECONDS); }
        @Override public int compareTo(Delayed o) { return Long.compare(exp, ((Task) o).exp); }
    }

    public String version() { return "java.util.concurrent.DelayQueue"; }
    public String unsupported(String workload) { return null; }
    public boolean sampled(String workload) { return true; }

    public String metric(String workload) {
        switch (workload) {
            case "insert": return "offer() calls";
            case "cancel": return "remove(task) calls (a linear scan of the heap)";
            case "steady": return "offer() + remove(task) calls of the window";
            default: return "virtual clock: set now, poll() until null, per advance; ops = fires";
        }
    }

    public double run(NativeBench.Workload w, NativeBench.Sampler lat) {
        now = 0;
        DelayQueue<Task> q = new DelayQueue<>();
        Task[] tasks = new Task[w.capacity()];
        for (int i = 0; i < w.n; i++) tasks[i] = new Task(i, w.delays[i]);
        String who = "jdk-delayqueue " + w.name + " n=" + w.n;
        switch (w.name) {
            case "insert": {
                long t0 = System.nanoTime();
                if (lat == null) {
                    for (int i = 0; i < w.n; i++) q.offer(tasks[i]);
                } else {
                    for (int i = 0; i < w.n; i++) {
                        if (lat.due(i)) { long a = System.nanoTime(); q.offer(tasks[i]); lat.add(System.nanoTime() - a); }
                        else q.offer(tasks[i]);
                    }
                }
                long t1 = System.nanoTime();
                NativeBench.expect(q.size() == w.n, who + ": size() is " + q.size() + " after " + w.n + " offers");
                return (t1 - t0) / 1e9;
            }
            case "cancel": {
                for (int i = 0; i < w.n; i++) q.offer(tasks[i]);
                int found = 0;
                int[] order = w.cancelOrder;
                long t0 = System.nanoTime();
                if (lat == null) {
                    for (int i = 0; i < order.length; i++) if (q.remove(tasks[order[i]])) found++;
                } else {
                    for (int i = 0; i < order.length; i++) {
                        if (lat.due(i)) {
                            long a = System.nanoTime(); boolean ok = q.remove(tasks[order[i]]); lat.add(System.nanoTime() - a);
                            if (ok) found++;
                        } else if (q.remove(tasks[order[i]])) found++;
                    }
                }
                long t1 = System.nanoTime();
                NativeBench.expect(found == w.n, who + ": " + (w.n - found) + " removes found no task");
                NativeBench.expect(q.isEmpty(), who + ": size() is " + q.size() + " after removing all");
                return (t1 - t0) / 1e9;
            }
            case "steady": {
                for (int i = 0; i < w.n; i++) q.offer(tasks[i]);
                int win = w.windowIds.length;
                for (int i = 0; i < w.warmIds.length; i++) tasks[w.warmIds[i]] = new Task(w.warmIds[i], w.warmDelays[i]);
                for (int i = 0; i < win; i++) tasks[w.windowIds[i]] = new Task(w.windowIds[i], w.windowDelays[i]);
                for (int s = 0; s < w.warmWindows(); s++) {
                    for (int i = s * win; i < (s + 1) * win; i++) q.offer(tasks[w.warmIds[i]]);
                    int missed = 0;
                    for (int i = s * win; i < (s + 1) * win; i++) if (!q.remove(tasks[w.warmCancels[i]])) missed++;
                    NativeBench.expect(missed == 0, who + ": " + missed + " warm-up removes found no task");
                }
                int found = 0;
                long t0 = System.nanoTime();
                if (lat == null) {
                    for (int i = 0; i < win; i++) q.offer(tasks[w.windowIds[i]]);
                    for (int i = 0; i < win; i++) if (q.remove(tasks[w.cancelOrder[i]])) found++;
                } else {
                    for (int i = 0; i < win; i++) {
                        long a = System.nanoTime(); q.offer(tasks[w.windowIds[i]]); lat.add(System.nanoTime() - a);
                    }
                    for (int i = 0; i < win; i++) {
                        long a = System.nanoTime(); boolean ok = q.remove(tasks[w.cancelOrder[i]]); lat.add(System.nanoTime() - a);
                        if (ok) found++;
                    }
                }
                long t1 = System.nanoTime();
                NativeBench.expect(found == win, who + ": " + (win - found) + " removes found no task");
                NativeBench.expect(q.size() == w.n, who + ": size() is " + q.size() + ", expected " + w.n);
                return (t1 - t0) / 1e9;
            }
            default: {  // fire-steps, fire-jump
                for (int i = 0; i < w.n; i++) q.offer(tasks[i]);
                long[] exp = new long[w.n];
                for (int i = 0; i < w.n; i++) exp[i] = w.delays[i];
                int[] out = new int[w.n];
                int[] stepEnd = new int[w.advanceTimes.length];
                int k = 0;
                long fires = 0;
                long t0 = System.nanoTime();
                for (int j = 0; j < w.advanceTimes.length; j++) {
                    now = w.advanceTimes[j];
                    Task x;
                    if (lat == null) {
                        while ((x = q.poll()) != null) { if (k < out.length) out[k] = x.id; k++; }
                    } else {
                        for (;;) {
                            boolean take = lat.due(fires);
                            long a = take ? System.nanoTime() : 0;
                            x = q.poll();
                            if (x == null) break;
                            if (take) lat.add(System.nanoTime() - a);
                            fires++;
                            if (k < out.length) out[k] = x.id;
                            k++;
                        }
                    }
                    stepEnd[j] = Math.min(k, out.length);
                }
                long t1 = System.nanoTime();
                NativeBench.checkVirtualFires(w, out, k, stepEnd, exp, "jdk-delayqueue");
                NativeBench.expect(q.isEmpty(), who + ": size() is " + q.size() + " after all fired");
                return (t1 - t0) / 1e9;
            }
        }
    }
}
