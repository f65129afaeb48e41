// wheelspec's real-time adapter for the JDK's java.util.concurrent.ScheduledThreadPoolExecutor,
// written with the Java adapter kit's real-time part (WheelspecRealtime.java, WheelspecAdapter.java).
//
// One core thread, setRemoveOnCancelPolicy(true): a cancelled task leaves the executor's heap
// (DelayedWorkQueue) at once, so getQueue().size() counts exactly the tasks still to run (the
// JDK's default, false, leaves a cancelled task in the heap until its delay elapses). The three
// calls the kit leaves open are the executor's own:
//   add    -> schedule(action, delay, MILLISECONDS), the ScheduledFuture is the handle
//   cancel -> ScheduledFuture.cancel(false): false once the task ran, started or was cancelled
//   size   -> getQueue().size()
// At the run's end the worker is parked first (a task it already took out of the heap is then
// either finished or not taken), the heap is counted as "unfired", and the pool is shut down.

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

public final class StpePeer implements WheelspecRealtime.RtTimer {
    private final ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1);

    StpePeer() {
        ex.setRemoveOnCancelPolicy(true);
        ex.prestartAllCoreThreads();
    }

    @Override
    public Object add(long delayMs, Runnable action) {
        return ex.schedule(action, delayMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public boolean cancel(Object handle) {
        return ((ScheduledFuture<?>) handle).cancel(false);
    }

    @Override
    public long size() {
        return ex.getQueue().size();
    }

    @Override
    public long stop() {
        CountDownLatch parked = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        ex.execute(() -> {
            parked.countDown();
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            parked.await();
            long left = ex.getQueue().size();
            ex.shutdownNow(); // interrupts the parked worker
            ex.awaitTermination(1, TimeUnit.MINUTES);
            return left;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping the executor", e);
        }
    }

    public static void main(String[] args) throws Exception {
        String jdk = System.getProperty("java.version");
        WheelspecRealtime.serve(new WheelspecRealtime.RtInfo("jdk-stpe",
                "JDK " + jdk + " ScheduledThreadPoolExecutor, 1 thread, removeOnCancel", "strict", 1, null, List.of()),
                config -> new StpePeer());
    }
}
