// wheelspec adapter kit for Java, the optional real-time part: for a timer that runs on the wall
// clock and has no virtual clock to advance (docs/guides/ADAPTERS.md, "Real-time mode"). You write an
// RtTimer (add with a callback, cancel, size); serve() speaks the rt_run extension of the protocol:
//   {"id":0,"type":"hello",...}  -> capabilities with "time":"real" and your profile and tick
//   {"id":n,"type":"rt_run","tick_ms":T,"wheel_size":W,"run_ms":R,
//    "ops":[{"at":MS,"kind":"add","task":ID,"delay":MS} | {"at":MS,"kind":"cancel","task":ID} | {"at":MS,"kind":"size"}]}
//     -> {"id":n,"ok":true,"ops":[{"t_us":..,"result":..},...],"fires":[{"task":ID,"seq":K,"t_us":..},...],"unfired":N}
//   {"id":n,"type":"bye"} -> {"id":n,"ok":true}
// A fresh timer from your factory runs each schedule. Every op runs at its "at" (ms after the run's
// start) and is stamped inside this JVM with System.nanoTime (microseconds since the start), so the
// pipe adds no noise; an add is stamped *before* your add is called, so a fire before
// stamp + delay is really early. "seq" numbers the adds of the run (0, 1, ...): a fire names the add
// that scheduled it, so a superseded or cancelled schedule that fires is visible. A re-add of a
// task id first cancels its earlier handle (Kafka's entry replacement; the add's result is that
// cancel's answer, null if there was none). A cancel's result is your cancel(handle); a task id
// never added answers false. At run_ms your stop() says how many tasks the timer still held.
// The layer only translates task ids into your handles: every judged value is your timer's.

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

public final class WheelspecRealtime {
    private WheelspecRealtime() {}

    /** What you fill in: your wall-clock timer, fresh for each schedule. */
    public interface RtTimer {
        /** Schedule {@code action} to run once, {@code delayMs} from now (0 or negative: due now); return its handle. */
        Object add(long delayMs, Runnable action);

        /** Cancel the handle's task; true iff it was scheduled and will now never run (your timer's own answer). */
        boolean cancel(Object handle);

        /** The number of tasks the timer holds (your timer's own count). */
        long size();

        /** Stop the timer at the run's end; return how many tasks it still held, never to run. */
        long stop();
    }

    /** A schedule's timer parameters, from the rt_run request. */
    public record RtConfig(long tickMs, long wheelSize) {}

    /**
     * What the hello answers: {@code profile} "strict" (never early) or "kafka"; {@code tickMs}: the
     * resolution lateness is judged at; {@code wheelSize}: your wheel's buckets, or null;
     * {@code configurable}: which of "tick_ms", "wheel_size" your factory honours.
     */
    public record RtInfo(String name, String version, String profile, long tickMs, Long wheelSize,
                         List<String> configurable) {}

    /** Answer hello, rt_run and bye requests from stdin; {@code makeTimer} is called for every rt_run. */
    public static void serve(RtInfo info, Function<RtConfig, RtTimer> makeTimer) throws IOException, InterruptedException {
        warmUp(info, makeTimer);
        // The adapter part's line loop (ids, refusals, flushing, bye), with this part's requests.
        WheelspecAdapter.serveLines(req -> {
            Object type = req.get("type");
            if ("hello".equals(type)) {
                return hello(info, WheelspecAdapter.negotiate(req));
            }
            if ("rt_run".equals(type)) {
                return run(req, makeTimer);
            }
            if ("bye".equals(type)) {
                return "\"ok\":true";
            }
            throw new WheelspecAdapter.Refusal("invalid", "unknown request type "
                    + WheelspecAdapter.Json.write(type) + " (a real-time adapter answers hello, rt_run, bye)");
        });
    }

    private static String hello(RtInfo info, long protocol) {
        StringBuilder caps = new StringBuilder("{\"timer\":true,\"purgatory\":false,\"time\":\"real\"");
        caps.append(",\"profile\":").append(WheelspecAdapter.Json.quote(info.profile()));
        caps.append(",\"tick_ms\":").append(info.tickMs());
        if (info.wheelSize() != null) {
            caps.append(",\"wheel_size\":").append(info.wheelSize());
        }
        caps.append(",\"configurable\":").append(WheelspecAdapter.Json.write(info.configurable())).append('}');
        return "\"ok\":true,\"protocol\":" + protocol + ",\"name\":" + WheelspecAdapter.Json.quote(info.name())
                + ",\"version\":" + WheelspecAdapter.Json.quote(info.version()) + ",\"capabilities\":" + caps;
    }

    /** Run one schedule against a fresh timer; the body lists every stamp. */
    private static String run(Map<?, ?> req, Function<RtConfig, RtTimer> makeTimer) {
        long runMs = integer(req, "run_ms");
        long tickMs = req.containsKey("tick_ms") ? integer(req, "tick_ms") : 1;
        long wheelSize = req.containsKey("wheel_size") ? integer(req, "wheel_size") : 512;
        if (!(req.get("ops") instanceof List<?> ops)) {
            throw new WheelspecAdapter.Refusal("invalid", "rt_run: ops must be a list");
        }
        RtTimer timer = makeTimer.apply(new RtConfig(tickMs, wheelSize));
        ConcurrentLinkedQueue<long[]> fires = new ConcurrentLinkedQueue<>();
        Map<Long, Object> live = new HashMap<>(); // task id -> your handle of its latest add
        StringBuilder opsOut = new StringBuilder("[");
        long t0 = System.nanoTime();
        long seq = 0;
        for (int i = 0; i < ops.size(); i++) {
            if (!(ops.get(i) instanceof Map<?, ?> op)) {
                throw new WheelspecAdapter.Refusal("invalid", "rt_run: op " + i + " is not an object");
            }
            sleepUntil(t0 + integer(op, "at") * 1_000_000L);
            Object kind = op.get("kind");
            String result;
            long stamp;
            if ("add".equals(kind)) {
                long task = integer(op, "task");
                long delay = integer(op, "delay");
                Object old = live.remove(task);
                result = old == null ? "null" : Boolean.toString(timer.cancel(old));
                final long s = seq++;
                stamp = System.nanoTime(); // before the add: the timer computes its deadline after it
                live.put(task, timer.add(delay, () -> fires.add(new long[] {task, s, System.nanoTime()})));
            } else if ("cancel".equals(kind)) {
                long task = integer(op, "task");
                stamp = System.nanoTime();
                Object handle = live.get(task);
                result = Boolean.toString(handle != null && timer.cancel(handle));
            } else if ("size".equals(kind)) {
                stamp = System.nanoTime();
                result = Long.toString(timer.size());
            } else {
                throw new WheelspecAdapter.Refusal("invalid", "rt_run: op " + i + ": unknown kind "
                        + WheelspecAdapter.Json.write(kind));
            }
            opsOut.append(i == 0 ? "" : ",").append("{\"t_us\":").append((stamp - t0) / 1000)
                    .append(",\"result\":").append(result).append('}');
        }
        opsOut.append(']');
        sleepUntil(t0 + runMs * 1_000_000L);
        long unfired = timer.stop();
        StringBuilder f = new StringBuilder("[");
        for (long[] e : fires) {
            f.append(f.length() > 1 ? "," : "").append("{\"task\":").append(e[0]).append(",\"seq\":").append(e[1])
                    .append(",\"t_us\":").append((e[2] - t0) / 1000).append('}');
        }
        f.append(']');
        return "\"ok\":true,\"ops\":" + opsOut + ",\"fires\":" + f + ",\"unfired\":" + unfired;
    }

    /** Load and JIT-warm your timer's classes and the layer's, so the first measured add is not a class load. */
    private static void warmUp(RtInfo info, Function<RtConfig, RtTimer> makeTimer) throws InterruptedException {
        RtTimer t = makeTimer.apply(new RtConfig(info.tickMs(), info.wheelSize() == null ? 512 : info.wheelSize()));
        CountDownLatch done = new CountDownLatch(200);
        for (int i = 0; i < 200; i++) {
            t.add(i % 3, done::countDown);
            t.cancel(t.add(1000, () -> { }));
            t.size();
        }
        done.await(5, TimeUnit.SECONDS);
        t.stop();
    }

    private static void sleepUntil(long deadlineNs) {
        long left;
        while ((left = deadlineNs - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    private static long integer(Map<?, ?> obj, String field) {
        if (!(obj.get(field) instanceof Long v)) {
            throw new WheelspecAdapter.Refusal("invalid", "rt_run: " + field + " must be an integer, got "
                    + WheelspecAdapter.Json.write(obj.get(field)));
        }
        return v;
    }
}
