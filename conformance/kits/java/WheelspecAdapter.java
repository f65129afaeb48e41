// wheelspec adapter kit for Java (17+, no dependencies, no build tool beyond javac): the protocol layer.
//
// serve() speaks wheelspec protocol v2 (docs/guides/PROTOCOL.md, section 10) on stdin/stdout, one JSON
// object per line, or v1 to a runner that offers only v1, and hands every valid timer operation to
// a Timer you write (see ToyTimer.java). It answers every refusal the protocol defines before your
// timer is called: values outside wheelspec's ranges ("range", section 4.4), an advance back in
// time ("invalid"), purgatory operations ("unsupported") and requests it cannot decode
// ("invalid"). A cancel of a task never added since the reset is Kafka's no-op under v2 (result
// false, your timer is not called) and "unknown-id" under v1. Throw a Refusal from your timer to
// refuse something yourself; any other exception is answered "internal".
//
// Requests are read in order and each is answered, flushed, before the next is read, however many
// wait unread: the hello declares "pipeline": 64 under v2, so the runner may send that many ahead.
// The real-time part (WheelspecRealtime.java, optional) speaks the rt_run extension instead.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

public final class WheelspecAdapter {
    // wheelspec's ranges (docs/guides/PROTOCOL.md, section 4.4; the Python source is spec/limits.py)
    public static final long MAX_DELAY = (1L << 40) - 1;
    public static final long MAX_TIME = (1L << 43) - 1;
    public static final long MAX_ID = (1L << 31) - 1;
    public static final long MAX_TICK = 1L << 20;
    public static final long MIN_WHEEL = 2;
    public static final long MAX_WHEEL = 1L << 16;
    public static final long MAX_PURGE_INTERVAL = (1L << 31) - 1;
    private static final Set<String> PURGATORY_OPS = Set.of(
            "watch", "set_completable", "check", "cancel_for_key", "force_complete", "watched", "num_delayed");

    private WheelspecAdapter() {}

    /** Reports that the timer handed {@code task} (expiration {@code exp}) to its action at clock {@code now}. */
    public interface Fire {
        void fire(long now, long task, long exp);
    }

    /** What you fill in: the calls into your timer. Called only with values inside wheelspec's ranges. */
    public interface Timer {
        /** The clock reading. */
        long now();

        /**
         * Schedule (or re-schedule: the old entry must never fire) {@code task}; returns now + delay.
         * A Refusal thrown here must leave the task's old entry scheduled (decide before you replace it).
         */
        long add(long task, long delay, Fire fire);

        /** True iff a scheduled, not yet fired entry was removed. */
        boolean cancel(long task, Fire fire);

        /** Move the clock to {@code time} (never backwards) and fire what is due. */
        void advance(long time, Fire fire);

        /** The number of scheduled tasks. */
        long size();
    }

    /** A reset's configuration (docs/guides/PROTOCOL.md, section 2.2). */
    public record Config(long tickMs, long wheelSize, long startMs, long purgeInterval) {}

    /**
     * What the hello answers: your timer's name and the capabilities it claims. {@code profile}:
     * "strict", "kafka" or "strict-gt"; {@code configurable}: the reset keys your factory honours (at
     * least "start_ms"); {@code tickMs} / {@code wheelSize}: your fixed values, or null;
     * {@code unobservable}: what your adapter cannot read from your timer (docs/guides/ADAPTERS.md);
     * {@code ranges}: the delays and clock readings your timer accepts, if fewer than wheelspec's
     * (null: wheelspec's, "bounded"; {@link #withRanges}); {@code granularity}: a coarse timer's
     * declared lateness and earliness, or null ({@link #withGranularity}).
     */
    public record Info(String name, String version, String profile, List<String> configurable,
                       Long tickMs, Long wheelSize, List<String> unobservable, Ranges ranges,
                       Granularity granularity) {
        public Info(String name, String version, String profile) {
            this(name, version, profile, List.of("start_ms"), null, null, List.of(), null, null);
        }

        public Info(String name, String version, String profile, List<String> configurable, Long tickMs,
                    Long wheelSize) {
            this(name, version, profile, configurable, tickMs, wheelSize, List.of(), null, null);
        }

        public Info(String name, String version, String profile, List<String> configurable, Long tickMs,
                    Long wheelSize, List<String> unobservable) {
            this(name, version, profile, configurable, tickMs, wheelSize, unobservable, null, null);
        }

        public Info(String name, String version, String profile, List<String> configurable, Long tickMs,
                    Long wheelSize, List<String> unobservable, Ranges ranges) {
            this(name, version, profile, configurable, tickMs, wheelSize, unobservable, ranges, null);
        }

        /** This Info declaring {@code ranges} (docs/guides/PROTOCOL.md, section 4.4, "A declared range"). */
        public Info withRanges(Ranges ranges) {
            return new Info(name, version, profile, configurable, tickMs, wheelSize, unobservable, ranges, granularity);
        }

        /** This Info declaring a granularity (docs/guides/PROTOCOL.md, section 5, "A declared granularity"). */
        public Info withGranularity(long latenessMs, long earlinessMs) {
            return new Info(name, version, profile, configurable, tickMs, wheelSize, unobservable, ranges,
                            new Granularity(latenessMs, earlinessMs));
        }
    }

    /**
     * A coarse timer's declared granularity (docs/guides/PROTOCOL.md, section 5, "A declared granularity"):
     * a task may fire up to {@code latenessMs} after the moment its profile says it must have fired
     * by, and up to {@code earlinessMs} before its earliest time; judged as property "granularity".
     */
    public record Granularity(long latenessMs, long earlinessMs) {
        String json() {
            return (latenessMs != 0 ? ",\"lateness_ms\":" + latenessMs : "")
                    + (earlinessMs != 0 ? ",\"earliness_ms\":" + earlinessMs : "");
        }
    }

    /**
     * A declared range (docs/guides/PROTOCOL.md, section 4.4, "A declared range"): the delays and clock
     * readings your timer accepts, inclusive, inside wheelspec's. The hello declares it as
     * {@code "ranges": {"delay": [lo, hi], "time": [lo, hi]}}; this layer refuses ("range") a delay
     * or an advance outside it before your timer is called, and wheelspec reports it once.
     */
    public record Ranges(long delayLo, long delayHi, long timeLo, long timeHi) {
        /** Delays {@code [lo, hi]}, every clock reading wheelspec allows. */
        public static Ranges delays(long lo, long hi) {
            return new Ranges(lo, hi, 0, MAX_TIME);
        }

        String json() {
            return "{\"delay\":[" + delayLo + "," + delayHi + "],\"time\":[" + timeLo + "," + timeHi + "]}";
        }
    }

    /** The protocol versions the kit speaks, newest last. */
    public static final List<Long> PROTOCOLS = List.of(1L, 2L);
    /** How many requests the runner may send ahead under v2 (the line loop answers them in order). */
    public static final long PIPELINE = 64;

    /** The version to answer a hello with: 2 if the runner offers it in "protocols", else 1. */
    public static long negotiate(Map<?, ?> hello) {
        return hello.get("protocols") instanceof List<?> offered && offered.contains(2L) ? 2 : 1;
    }

    /** An error response; {@code type} is one of the protocol's error types. */
    public static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        public final String type;

        public Refusal(String type, String message) {
            super(message);
            this.type = type;
        }
    }

    /** The range helper: {@code value} if it lies in [lo, hi], else a "range" refusal naming {@code name}. */
    public static long inRange(String name, long value, long lo, long hi) {
        if (value < lo || value > hi) {
            throw new Refusal("range", name + " " + value + " outside [" + lo + ", " + hi + "]");
        }
        return value;
    }

    /** Answer requests from stdin until "bye" or end of input; {@code makeTimer} is called at every reset. */
    public static void serve(Info info, Function<Config, Timer> makeTimer) throws IOException {
        serveLines(new Session(info, makeTimer)::handle);
    }

    /** What answers one request: the body of an ok response (without the id), or a thrown Refusal. */
    @FunctionalInterface
    public interface Handler {
        String handle(Map<?, ?> request);
    }

    /**
     * The line loop of both parts of the kit (this one and WheelspecRealtime): one JSON request per
     * line from stdin, one response per line to stdout, flushed at once; a Refusal becomes an error
     * response, any other exception an "internal" one; "bye" (answered) or the end of input ends it.
     */
    public static void serveLines(Handler handler) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            Object id = null;
            String response;
            boolean bye = false;
            try {
                Object parsed = Json.parse(line);
                if (!(parsed instanceof Map<?, ?> req)) {
                    throw new Refusal("invalid", "request is not a JSON object");
                }
                id = req.get("id");
                bye = "bye".equals(req.get("type"));
                response = handler.handle(req);
            } catch (Refusal r) {
                response = "\"ok\":false,\"error\":{\"type\":" + Json.quote(r.type) + ",\"message\":"
                        + Json.quote(String.valueOf(r.getMessage())) + "}";
            } catch (RuntimeException e) {
                response = "\"ok\":false,\"error\":{\"type\":\"internal\",\"message\":" + Json.quote(e.toString()) + "}";
            }
            out.print("{\"id\":" + Json.write(id) + "," + response + "}\n");
            out.flush(); // an unflushed response looks like a hang
            if (bye) {
                return;
            }
        }
    }

    /** One session: the timer of the last reset and the task ids added since. */
    private static final class Session {
        private final Info info;
        private final Function<Config, Timer> makeTimer;
        private Timer timer;
        private long protocol = 1;
        private final Set<Long> known = new HashSet<>();

        Session(Info info, Function<Config, Timer> makeTimer) {
            this.info = info;
            this.makeTimer = makeTimer;
        }

        /** The body of an ok response (without the id), or a Refusal. */
        String handle(Map<?, ?> req) {
            Object type = req.get("type");
            if ("hello".equals(type)) {
                protocol = negotiate(req);
                StringBuilder caps = new StringBuilder("{\"timer\":true,\"purgatory\":false,\"time\":\"virtual\"");
                caps.append(",\"profile\":").append(Json.quote(info.profile()));
                caps.append(",\"configurable\":").append(Json.write(info.configurable()));
                caps.append(",\"ranges\":").append(info.ranges() == null ? "\"bounded\"" : info.ranges().json());
                if (info.granularity() != null) {
                    caps.append(info.granularity().json());
                }
                if (info.tickMs() != null) {
                    caps.append(",\"tick_ms\":").append(info.tickMs());
                }
                if (info.wheelSize() != null) {
                    caps.append(",\"wheel_size\":").append(info.wheelSize());
                }
                caps.append(",\"unobservable\":").append(Json.write(info.unobservable()));
                if (protocol >= 2) {
                    caps.append(",\"pipeline\":").append(PIPELINE);
                }
                return "\"ok\":true,\"protocol\":" + protocol + ",\"name\":" + Json.quote(info.name()) + ",\"version\":"
                        + Json.quote(info.version()) + ",\"capabilities\":" + caps + "}";
            }
            if ("reset".equals(type)) {
                Config config = config(req.get("config"));
                timer = makeTimer.apply(config);
                known.clear();
                return "\"ok\":true";
            }
            if ("op".equals(type)) {
                if (!(req.get("op") instanceof Map<?, ?> op)) {
                    throw new Refusal("invalid", "op must be an object");
                }
                return apply(op);
            }
            if ("bye".equals(type)) {
                return "\"ok\":true";
            }
            throw new Refusal("invalid", "unknown request type " + Json.write(type));
        }

        private String apply(Map<?, ?> op) {
            if (timer == null) {
                throw new Refusal("invalid", "an op before the first reset");
            }
            StringBuilder events = new StringBuilder();
            Fire fire = (now, task, exp) -> events.append(events.length() == 0 ? "" : ",")
                    .append("{\"kind\":\"fire\",\"now\":").append(now).append(",\"task\":").append(task)
                    .append(",\"exp\":").append(exp).append('}');
            Object kind = op.get("kind");
            String result;
            if ("add".equals(kind)) {
                long task = inRange("task", integer(op, "task"), 0, MAX_ID);
                long delay = inRange("delay", integer(op, "delay"), -MAX_DELAY, MAX_DELAY);
                if (info.ranges() != null) { // the declared range: the timer sees only what it accepts
                    inRange("delay", delay, info.ranges().delayLo(), info.ranges().delayHi());
                }
                result = Long.toString(timer.add(task, delay, fire));
                known.add(task);
            } else if ("cancel".equals(kind)) {
                long task = inRange("task", integer(op, "task"), 0, MAX_ID);
                if (known.contains(task)) {
                    result = Boolean.toString(timer.cancel(task, fire));
                } else if (protocol >= 2) {
                    result = "false"; // Kafka's TimerTask.cancel() of a task never added: a no-op
                } else {
                    throw new Refusal("unknown-id", "cancel: unknown task id " + task);
                }
            } else if ("advance".equals(kind)) {
                long time = inRange("time", integer(op, "time"), 0, MAX_TIME);
                if (info.ranges() != null) {
                    inRange("time", time, info.ranges().timeLo(), info.ranges().timeHi());
                }
                if (time < timer.now()) {
                    throw new Refusal("invalid", "advance to " + time + " is before the current time " + timer.now());
                }
                timer.advance(time, fire);
                result = "null";
            } else if ("size".equals(kind)) {
                result = Long.toString(timer.size());
            } else if (PURGATORY_OPS.contains(kind)) {
                throw new Refusal("unsupported", kind + " is not offered by " + info.name() + " (timer only)");
            } else {
                throw new Refusal("invalid", "unknown op kind " + Json.write(kind));
            }
            return "\"ok\":true,\"now\":" + timer.now() + ",\"events\":[" + events + "],\"result\":" + result;
        }

        private static long integer(Map<?, ?> obj, String field) {
            if (!obj.containsKey(field)) {
                throw new Refusal("invalid", "missing field " + field);
            }
            if (!(obj.get(field) instanceof Long v)) {
                throw new Refusal("invalid", field + " must be an integer, got " + Json.write(obj.get(field)));
            }
            return v;
        }

        private static Config config(Object raw) {
            if (!(raw instanceof Map<?, ?> obj)) {
                throw new Refusal("invalid", "reset: config must be an object");
            }
            long[] values = {1, 20, 0, 1000};
            String[] keys = {"tick_ms", "wheel_size", "start_ms", "purge_interval"};
            long[][] bounds = {{1, MAX_TICK}, {MIN_WHEEL, MAX_WHEEL}, {0, MAX_TIME}, {0, MAX_PURGE_INTERVAL}};
            for (Object key : obj.keySet()) {
                int i = List.of(keys).indexOf(key);
                if (i < 0) {
                    throw new Refusal("invalid", "reset: unknown config key " + Json.write(key));
                }
                long v = integer(obj, keys[i]);
                if (v < bounds[i][0] || v > bounds[i][1]) {
                    throw new Refusal("invalid", "reset: " + keys[i] + " " + v + " outside [" + bounds[i][0]
                            + ", " + bounds[i][1] + "]");
                }
                values[i] = v;
            }
            return new Config(values[0], values[1], values[2], values[3]);
        }
    }

    /**
     * Just enough JSON for the protocol: objects (LinkedHashMap), arrays (ArrayList), strings,
     * integers (Long), other numbers (Double), true/false and null.
     */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            Json p = new Json(text);
            Object v = p.value(0);
            p.space();
            if (p.i != p.s.length()) {
                throw p.error("trailing characters");
            }
            return v;
        }

        private Refusal error(String what) {
            return new Refusal("invalid", "request is not JSON: " + what + " at character " + i);
        }

        private void space() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        private Object value(int depth) {
            if (depth > 64) {
                throw error("nested too deeply");
            }
            space();
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                space();
                if (i < s.length() && s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    space();
                    if (i >= s.length() || s.charAt(i) != '"') {
                        throw error("expected a key");
                    }
                    String k = string();
                    space();
                    expect(':');
                    m.put(k, value(depth + 1));
                    space();
                    if (i < s.length() && s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect('}');
                    return m;
                }
            }
            if (c == '[') {
                List<Object> a = new ArrayList<>();
                i++;
                space();
                if (i < s.length() && s.charAt(i) == ']') {
                    i++;
                    return a;
                }
                while (true) {
                    a.add(value(depth + 1));
                    space();
                    if (i < s.length() && s.charAt(i) == ',') {
                        i++;
                        continue;
                    }
                    expect(']');
                    return a;
                }
            }
            if (c == '"') {
                return string();
            }
            if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            return number();
        }

        private void expect(char c) {
            if (i >= s.length() || s.charAt(i) != c) {
                throw error("expected '" + c + "'");
            }
            i++;
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++; // the opening quote
            while (true) {
                if (i >= s.length()) {
                    throw error("unterminated string");
                }
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (i >= s.length()) {
                    throw error("unterminated string");
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        if (i + 4 > s.length()) {
                            throw error("bad \\u escape");
                        }
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e); // '"', '\\', '/'
                }
            }
        }

        private Object number() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            String t = s.substring(start, i);
            if (t.isEmpty()) {
                throw error("unexpected character");
            }
            try {
                if (t.indexOf('.') < 0 && t.indexOf('e') < 0 && t.indexOf('E') < 0) {
                    return Long.parseLong(t);
                }
                return Double.parseDouble(t);
            } catch (NumberFormatException e) {
                throw error("bad number " + t);
            }
        }

        /** A JSON string literal. */
        static String quote(String v) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : v.toCharArray()) {
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\r' -> b.append("\\r");
                    case '\t' -> b.append("\\t");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            return b.append('"').toString();
        }

        /** A JSON text for what {@link #parse} returns (and lists of strings). */
        static String write(Object v) {
            if (v == null) {
                return "null";
            }
            if (v instanceof String str) {
                return quote(str);
            }
            if (v instanceof List<?> list) {
                StringBuilder b = new StringBuilder("[");
                for (Object o : list) {
                    b.append(b.length() > 1 ? "," : "").append(write(o));
                }
                return b.append(']').toString();
            }
            if (v instanceof Map<?, ?> map) {
                StringBuilder b = new StringBuilder("{");
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    b.append(b.length() > 1 ? "," : "").append(quote(String.valueOf(e.getKey()))).append(':')
                            .append(write(e.getValue()));
                }
                return b.append('}').toString();
            }
            return v.toString(); // Long, Double, Boolean
        }
    }
}
