// wheelspec real-time adapter for Netty's io.netty.util.HashedWheelTimer.
//
// Netty has no virtual clock, so this adapter speaks the real-time extension of protocol v1
// (docs/guides/ADAPTERS.md, "Real-time mode"): one JSON object per line on stdin/stdout.
//   {"id":0,"type":"hello","protocol":1}
//     -> {"id":0,"ok":true,"protocol":1,"name":"netty-hashedwheeltimer","version":...,
//         "capabilities":{"timer":true,"time":"real","profile":"strict","tick_ms":T,"wheel_size":W,...}}
//     (profile strict: never early; the declared tick is the resolution lateness is judged at)
//   {"id":n,"type":"rt_run","tick_ms":T,"wheel_size":W,"run_ms":R,
//    "ops":[{"at":MS,"kind":"add","task":ID,"delay":MS} | {"at":MS,"kind":"cancel","task":ID} | {"at":MS,"kind":"size"}]}
//     -> {"id":n,"ok":true,"ops":[{"t_us":..,"result":..},...],"fires":[{"task":ID,"seq":K,"t_us":..},...],"unfired":N}
//   {"id":n,"type":"bye"} -> {"id":n,"ok":true}
// A fresh HashedWheelTimer runs each schedule; at R ms after the start it is stopped and the
// timeouts it still holds are counted as "unfired". Times are microseconds since the run's start
// (System.nanoTime), taken inside this JVM so that the pipe adds no noise. An add is stamped
// *before* newTimeout is called: Netty computes its deadline after that stamp, so a fire before
// stamp + delay would really be early. "seq" numbers the adds of the run (0, 1, ...): a fire
// names the add that scheduled it, so a superseded or cancelled schedule firing is visible.
// Re-adding a task id that is scheduled cancels its Timeout first (Kafka's entry replacement).
// Every judged value is Netty's: a cancel's result is Timeout.cancel(), a size pendingTimeouts(),
// a fire's time is stamped inside Netty's callback; the adapter's map only translates task ids.
// Diagnostics go to stderr; stdout carries protocol lines only.

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.Version;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

public class NettyAdapter {
    static final int DEFAULT_TICK_MS = 1, DEFAULT_WHEEL = 512;

    public static void main(String[] args) throws Exception {
        warmUp();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Object id = null;
            try {
                Map<String, Object> req = asMap(new Json(line).value());
                id = req.get("id");
                String type = (String) req.get("type");
                if ("hello".equals(type)) {
                    send("{\"id\":" + id + ",\"ok\":true,\"protocol\":1,\"name\":\"netty-hashedwheeltimer\",\"version\":"
                         + quote(nettyVersion()) + ",\"capabilities\":{\"timer\":true,\"purgatory\":false,\"time\":\"real\","
                         + "\"profile\":\"strict\",\"tick_ms\":" + DEFAULT_TICK_MS + ",\"wheel_size\":" + DEFAULT_WHEEL
                         + ",\"configurable\":[\"tick_ms\",\"wheel_size\"]}}");
                } else if ("rt_run".equals(type)) {
                    send(run(id, req));
                } else if ("bye".equals(type)) {
                    send("{\"id\":" + id + ",\"ok\":true}");
                    return;
                } else {
                    send(error(id, "invalid", "unknown request type " + type + " (this adapter is real-time only: hello, rt_run, bye)"));
                }
            } catch (RuntimeException e) {
                send(error(id, "invalid", String.valueOf(e)));
            }
        }
    }

    /** Load and JIT-warm the classes a run uses, so the first measured add is not a class load. */
    static void warmUp() throws InterruptedException {
        HashedWheelTimer t = new HashedWheelTimer(1, TimeUnit.MILLISECONDS, 64);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(200);
        for (int i = 0; i < 200; i++) {
            t.newTimeout(x -> done.countDown(), i % 3, TimeUnit.MILLISECONDS);
            t.newTimeout(x -> { }, 1000, TimeUnit.MILLISECONDS).cancel();
        }
        done.await(5, TimeUnit.SECONDS);
        t.stop();
    }

    static String nettyVersion() {
        for (Version v : Version.identify().values()) return "Netty " + v.artifactVersion();
        return "Netty (unknown version)";
    }

    /** Execute one schedule against a fresh HashedWheelTimer; the response lists every stamp. */
    static String run(Object id, Map<String, Object> req) throws InterruptedException {
        long tickMs = num(req.getOrDefault("tick_ms", (long) DEFAULT_TICK_MS));
        int wheel = (int) num(req.getOrDefault("wheel_size", (long) DEFAULT_WHEEL));
        long runMs = num(req.get("run_ms"));  // the schedule's end, chosen by the runner
        List<Object> ops = asList(req.get("ops"));
        HashedWheelTimer timer = new HashedWheelTimer(r -> {
            Thread t = new Thread(r, "netty-wheel");
            t.setDaemon(true);
            return t;
        }, tickMs, TimeUnit.MILLISECONDS, wheel);
        timer.start();  // the worker's startTime is set here, not by the first newTimeout
        ConcurrentLinkedQueue<long[]> fires = new ConcurrentLinkedQueue<>();
        Map<Long, Timeout> live = new HashMap<>();
        StringBuilder opsOut = new StringBuilder("[");
        long t0 = System.nanoTime();
        int seq = 0;
        for (int i = 0; i < ops.size(); i++) {
            Map<String, Object> op = asMap(ops.get(i));
            long at = num(op.get("at"));
            sleepUntil(t0 + at * 1_000_000L);
            String kind = (String) op.get("kind");
            String result;
            long stamp = System.nanoTime();
            if ("add".equals(kind)) {
                long task = num(op.get("task")), delay = num(op.get("delay"));
                Timeout old = live.remove(task);
                // a re-add's result says whether it cancelled a still-pending earlier schedule
                result = old == null ? "null" : Boolean.toString(old.cancel());
                final long s = seq++;
                final long tk = task;
                stamp = System.nanoTime();
                Timeout to = timer.newTimeout(x -> fires.add(new long[]{tk, s, System.nanoTime()}), delay, TimeUnit.MILLISECONDS);
                live.put(task, to);
            } else if ("cancel".equals(kind)) {
                // Netty's own answer, also for a second cancel (Timeout.cancel() is false once the
                // timeout ran or was cancelled); "live" only translates task ids into Timeouts
                Timeout to = live.get(num(op.get("task")));
                result = to != null && to.cancel() ? "true" : "false";
            } else if ("size".equals(kind)) {
                result = Long.toString(timer.pendingTimeouts());
            } else {
                throw new IllegalArgumentException("op " + i + ": unknown kind " + kind);
            }
            opsOut.append(i == 0 ? "" : ",").append("{\"t_us\":").append((stamp - t0) / 1000).append(",\"result\":").append(result).append("}");
        }
        opsOut.append("]");
        sleepUntil(t0 + runMs * 1_000_000L);
        int unfired = timer.stop().size();
        StringBuilder f = new StringBuilder("[");
        boolean first = true;
        for (long[] e : fires) {
            f.append(first ? "" : ",").append("{\"task\":").append(e[0]).append(",\"seq\":").append(e[1])
             .append(",\"t_us\":").append((e[2] - t0) / 1000).append("}");
            first = false;
        }
        f.append("]");
        return "{\"id\":" + id + ",\"ok\":true,\"ops\":" + opsOut + ",\"fires\":" + f + ",\"unfired\":" + unfired + "}";
    }

    static void sleepUntil(long deadlineNs) {
        long left;
        while ((left = deadlineNs - System.nanoTime()) > 0) LockSupport.parkNanos(left);
    }

    static void send(String s) {
        System.out.print(s + "\n");
        System.out.flush();
    }

    static String error(Object id, String type, String msg) {
        return "{\"id\":" + id + ",\"ok\":false,\"error\":{\"type\":\"" + type + "\",\"message\":" + quote(msg.replace('\n', ' ')) + "}}";
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static long num(Object o) {
        if (!(o instanceof Long)) throw new IllegalArgumentException("expected an integer, got " + o);
        return (Long) o;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        if (!(o instanceof Map)) throw new IllegalArgumentException("expected an object, got " + o);
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object o) {
        if (!(o instanceof List)) throw new IllegalArgumentException("expected a list, got " + o);
        return (List<Object>) o;
    }

    /** A minimal JSON reader (objects, arrays, strings, integers, true/false/null): enough for requests. */
    static final class Json {
        final String s;
        int i;

        Json(String s) { this.s = s; }

        Object value() {
            ws();
            if (i >= s.length()) throw new IllegalArgumentException("truncated JSON");
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++; ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws(); String k = string(); ws(); expect(':');
                    m.put(k, value()); ws();
                    if (s.charAt(i) == ',') { i++; continue; }
                    expect('}'); return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++; ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value()); ws();
                    if (s.charAt(i) == ',') { i++; continue; }
                    expect(']'); return l;
                }
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int j = i;
            if (c == '-') i++;
            while (i < s.length() && Character.isDigit(s.charAt(i))) i++;
            if (j == i || (c == '-' && j + 1 == i)) throw new IllegalArgumentException("bad JSON at " + j);
            return Long.parseLong(s.substring(j, i));
        }

        String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n': b.append('\n'); break;
                        case 't': b.append('\t'); break;
                        case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                        default: b.append(e);
                    }
                } else b.append(c);
            }
            i++;
            return b.toString();
        }

        void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }

        void expect(char c) {
            if (i >= s.length() || s.charAt(i) != c) throw new IllegalArgumentException("expected '" + c + "' at " + i);
            i++;
        }
    }
}
