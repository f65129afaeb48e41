// Netty's io.netty.util.HashedWheelTimer (Debian's libnetty-java): one wheel of 512 buckets
// (Netty's default) and the workload's tick (1 ms); a round counter per timeout stands for
// delays beyond one turn.  newTimeout() enqueues on a lock-free queue that the worker drains
// into the wheel at each tick (at most 100 000 per tick); cancel() marks the timeout and queues
// it for removal by the worker.

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import io.netty.util.Version;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

final class NettyPeer extends RealTimePeer {
    static final int TICKS_PER_WHEEL = 512;
    HashedWheelTimer timer;

    String name() { return "netty"; }

    public String version() {
        for (Version v : Version.identify().values()) return "Netty HashedWheelTimer " + v.artifactVersion() + ", 512 buckets";
        return "Netty HashedWheelTimer (unknown version), 512 buckets";
    }

    void open(int tickMs) {
        timer = new HashedWheelTimer(Executors.defaultThreadFactory(), tickMs, TimeUnit.MILLISECONDS, TICKS_PER_WHEEL);
        timer.start();
    }

    Object[] tasks(int count) {
        TimerTask[] t = new TimerTask[count];
        for (int i = 0; i < count; i++) {
            final int id = i;
            t[i] = timeout -> fire(id);
        }
        return t;
    }

    Object schedule(Object task, long delayMs) { return timer.newTimeout((TimerTask) task, delayMs, TimeUnit.MILLISECONDS); }
    boolean cancel(Object handle) { return ((Timeout) handle).cancel(); }
    void onWorker(Runnable r) { timer.newTimeout(t -> r.run(), 0, TimeUnit.MILLISECONDS); }

    int close() {
        if (timer == null) return 0;
        int left = timer.stop().size();
        timer = null;
        return left;
    }
}
