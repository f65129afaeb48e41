// What Netty's HashedWheelTimer and the JDK's ScheduledThreadPoolExecutor share: both fire on
// the real clock, on one worker thread of their own, and offer schedule / cancel / stop.  The
// caller-side workloads (insert, cancel, steady) time the caller's calls; meanwhile the worker
// runs as it would in an application, so a task whose delay elapses during the run fires, and a
// cancel of it then finds nothing: verification accounts for every task as fired exactly once,
// cancelled, or still pending, never two of these.
//
// Fires cannot be driven by a virtual clock, so the fire workloads measure this instead:
//  * fire-jump: a first task blocks the worker; the N tasks are added (not timed); the driver
//    sleeps until every one is due; then it releases the worker and times, on the wall clock,
//    from the release to the N-th fire: fires/s of a backlog in which every task is due.
//  * fire-steps: the same, but the worker is released right after the adds and fires them in real
//    time, one tick at a time (about 2 s of wall time whatever N is); the figure is the worker
//    thread's CPU time from the release to the N-th fire (ThreadMXBean): CPU per fire at 1 ms steps.
// Both include what the worker does to hold a task, not only to run it (Netty moves tasks from
// its submission queue into the wheel on the worker).

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;

abstract class RealTimePeer implements NativeBench.Peer {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    // Written only by the peer's single worker thread; read by the driver after a latch or a join.
    byte[] fired;
    long count, target = Long.MAX_VALUE, lastNs, lastCpuNs;
    CountDownLatch done;
    /** Cancels, over every run of this process, that returned true for a task whose body ran. */
    long raced;

    /** Whether this peer's cancel may return true for a task whose body is already running
     * (FutureTask: the state stays NEW until the body returns); such a task then counts as both
     * cancelled and fired.  False where cancel and expiry race on one state word (Netty). */
    boolean cancelMayRaceRun() { return false; }

    /** A fresh timer with its worker thread running. */
    abstract void open(int tickMs) throws Exception;
    /** One task object per id, made before the clock starts; running it calls fire(id). */
    abstract Object[] tasks(int count);
    abstract Object schedule(Object task, long delayMs);
    abstract boolean cancel(Object handle);
    /** Schedules r to run on the worker as soon as possible. */
    abstract void onWorker(Runnable r);
    /** Stops the timer (joining its worker) and returns how many tasks it still held, not cancelled. */
    abstract int close() throws Exception;
    abstract String name();

    final void fire(int id) {
        fired[id]++;
        if (++count == target) {
            lastNs = System.nanoTime();
            lastCpuNs = MX.getCurrentThreadCpuTime();
            done.countDown();
        }
    }

    public String unsupported(String workload) {
        if (workload.startsWith("fire") && !MX.isThreadCpuTimeSupported())
            return "this JVM cannot measure a thread's CPU time";
        return null;
    }

    public boolean sampled(String workload) { return !workload.startsWith("fire"); }

    public String metric(String workload) {
        String m = baseMetric(workload);
        return raced == 0 ? m : m + "; " + raced + " cancels returned true for a task already running";
    }

    String baseMetric(String workload) {
        switch (workload) {
            case "insert": return "caller's schedule calls, the worker running";
            case "cancel": return "caller's cancel calls, the worker running";
            case "steady": return "caller's schedule + cancel calls of the window, the worker running";
            case "fire-jump": return "real clock: wall time from releasing the blocked worker, every task due, to the last fire";
            default: return "real clock, 1 ms ticks: the worker thread's CPU time from the release to the last fire";
        }
    }

    public double run(NativeBench.Workload w, NativeBench.Sampler lat) throws Exception {
        String who = name() + " " + w.name + " n=" + w.n;
        int cap = w.capacity();
        fired = new byte[cap];
        count = 0;
        target = Long.MAX_VALUE;
        done = new CountDownLatch(1);
        Object[] tasks = tasks(cap);
        Object[] h = new Object[cap];
        open(w.tickMs);
        boolean closed = false;
        try {
            if (w.name.startsWith("fire")) return fireRun(w, tasks, h, who);
            if (w.name.equals("insert")) {
                long t0 = System.nanoTime();
                if (lat == null) {
                    for (int i = 0; i < w.n; i++) h[i] = schedule(tasks[i], w.delays[i]);
                } else {
                    for (int i = 0; i < w.n; i++) {
                        if (lat.due(i)) { long a = System.nanoTime(); h[i] = schedule(tasks[i], w.delays[i]); lat.add(System.nanoTime() - a); }
                        else h[i] = schedule(tasks[i], w.delays[i]);
                    }
                }
                long t1 = System.nanoTime();
                int left = close(); closed = true;
                accountFor(w, w.n, null, left, who);
                return (t1 - t0) / 1e9;
            }
            for (int i = 0; i < w.n; i++) h[i] = schedule(tasks[i], w.delays[i]);
            boolean[] cancelled = new boolean[cap];
            if (w.name.equals("cancel")) {
                int[] order = w.cancelOrder;
                long t0 = System.nanoTime();
                if (lat == null) {
                    for (int i = 0; i < order.length; i++) cancelled[order[i]] = cancel(h[order[i]]);
                } else {
                    for (int i = 0; i < order.length; i++) {
                        if (lat.due(i)) { long a = System.nanoTime(); cancelled[order[i]] = cancel(h[order[i]]); lat.add(System.nanoTime() - a); }
                        else cancelled[order[i]] = cancel(h[order[i]]);
                    }
                }
                long t1 = System.nanoTime();
                int left = close(); closed = true;
                NativeBench.expect(left == 0, who + ": " + left + " tasks still held after cancelling all");
                accountFor(w, w.n, cancelled, left, who);
                return (t1 - t0) / 1e9;
            }
            // steady
            int win = w.windowIds.length;
            for (int s = 0; s < w.warmWindows(); s++) {
                for (int i = s * win; i < (s + 1) * win; i++) h[w.warmIds[i]] = schedule(tasks[w.warmIds[i]], w.warmDelays[i]);
                for (int i = s * win; i < (s + 1) * win; i++) cancelled[w.warmCancels[i]] = cancel(h[w.warmCancels[i]]);
            }
            long t0 = System.nanoTime();
            if (lat == null) {
                for (int i = 0; i < win; i++) h[w.windowIds[i]] = schedule(tasks[w.windowIds[i]], w.windowDelays[i]);
                for (int i = 0; i < win; i++) cancelled[w.cancelOrder[i]] = cancel(h[w.cancelOrder[i]]);
            } else {
                for (int i = 0; i < win; i++) {
                    long a = System.nanoTime(); h[w.windowIds[i]] = schedule(tasks[w.windowIds[i]], w.windowDelays[i]); lat.add(System.nanoTime() - a);
                }
                for (int i = 0; i < win; i++) {
                    long a = System.nanoTime(); cancelled[w.cancelOrder[i]] = cancel(h[w.cancelOrder[i]]); lat.add(System.nanoTime() - a);
                }
            }
            long t1 = System.nanoTime();
            int left = close(); closed = true;
            accountFor(w, cap, cancelled, left, who);
            for (int i = 0; i < win; i++) {
                int id = w.cancelOrder[i];
                NativeBench.expect(cancelled[id] || fired[id] == 1, who + ": the cancel of task " + id + " found it neither pending nor fired");
            }
            return (t1 - t0) / 1e9;
        } finally {
            if (!closed) close();
        }
    }

    /** Tasks 0..added-1 were added: each fired exactly once, or was cancelled (and never fired), or
     * is among the `left` the stopped timer still held. */
    void accountFor(NativeBench.Workload w, int added, boolean[] cancelled, int left, String who) {
        long nFired = 0, nCancelled = 0, both = 0;
        for (int i = 0; i < added; i++) {
            NativeBench.expect(fired[i] <= 1, who + ": task " + i + " fired " + fired[i] + " times");
            boolean c = cancelled != null && cancelled[i];
            if (c && fired[i] == 1) {
                NativeBench.expect(cancelMayRaceRun(), who + ": task " + i + " was cancelled (cancel returned true) and fired");
                both++;
            }
            nFired += fired[i];
            if (c) nCancelled++;
        }
        raced += both;
        NativeBench.expect(nFired == count, who + ": " + count + " fire callbacks but " + nFired + " tasks marked fired");
        NativeBench.expect(nFired + nCancelled - both + left == added, who + ": " + nFired + " fired + " + nCancelled
                           + " cancelled - " + both + " both + " + left + " still held != " + added + " added");
    }

    double fireRun(NativeBench.Workload w, Object[] tasks, Object[] h, String who) throws Exception {
        CountDownLatch blocked = new CountDownLatch(1), release = new CountDownLatch(1);
        long[] workerTid = new long[1];
        onWorker(() -> {
            workerTid[0] = Thread.currentThread().getId();
            blocked.countDown();
            try { release.await(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        });
        blocked.await();
        target = w.n;
        for (int i = 0; i < w.n; i++) h[i] = schedule(tasks[i], w.delays[i]);
        long lastAdd = System.nanoTime();
        boolean jump = w.name.equals("fire-jump");
        if (jump) {
            long dueNs = lastAdd + (w.maxDelay() + 2L * w.tickMs) * 1_000_000L;
            for (long r; (r = dueNs - System.nanoTime()) > 0; ) Thread.sleep(r / 1_000_000L, (int) (r % 1_000_000L));
        }
        long cpu0 = MX.getThreadCpuTime(workerTid[0]);
        long t0 = System.nanoTime();
        release.countDown();
        done.await();
        int left = close();
        NativeBench.expect(left == 0, who + ": " + left + " tasks still held after the last fire");
        accountFor(w, w.n, null, 0, who);
        NativeBench.expect(count == w.n, who + ": fired " + count + " tasks, expected " + w.n);
        return jump ? (lastNs - t0) / 1e9 : (lastCpuNs - cpu0) / 1e9;
    }
}
