// The JDK's java.util.concurrent.ScheduledThreadPoolExecutor with one thread: a binary heap
// (DelayedWorkQueue) under one lock.  setRemoveOnCancelPolicy(true), so that a cancel takes the
// task out of the heap (O(log n): each task knows its heap index) as a timer's cancel does; the
// JDK's default leaves cancelled tasks in the heap until their delay elapses.

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

final class StpePeer extends RealTimePeer {
    ScheduledThreadPoolExecutor ex;

    String name() { return "jdk-stpe"; }
    public String version() { return "java.util.concurrent.ScheduledThreadPoolExecutor, 1 thread, remove on cancel"; }

    void open(int tickMs) {
        ex = new ScheduledThreadPoolExecutor(1);
        ex.setRemoveOnCancelPolicy(true);
        ex.prestartAllCoreThreads();
    }

    Object[] tasks(int count) {
        Runnable[] t = new Runnable[count];
        for (int i = 0; i < count; i++) {
            final int id = i;
            t[i] = () -> fire(id);
        }
        return t;
    }

    Object schedule(Object task, long delayMs) { return ex.schedule((Runnable) task, delayMs, TimeUnit.MILLISECONDS); }
    boolean cancel(Object handle) { return ((Future<?>) handle).cancel(false); }
    @Override boolean cancelMayRaceRun() { return true; }  // FutureTask.cancel while the body runs
    void onWorker(Runnable r) { ex.execute(r); }

    int close() throws InterruptedException {
        if (ex == null) return 0;
        // Park the worker first: shutdownNow() would otherwise find a due task the worker has just
        // taken out of the heap, neither held nor run (the pool cancels it once stopping).
        CountDownLatch parked = new CountDownLatch(1), never = new CountDownLatch(1);
        ex.execute(() -> {
            parked.countDown();
            try { never.await(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        });
        parked.await();
        int left = ex.getQueue().size();
        ex.shutdownNow();  // interrupts the parked worker
        ex.awaitTermination(1, TimeUnit.MINUTES);
        ex = null;
        return left;
    }
}
