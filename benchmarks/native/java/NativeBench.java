// wheelspec bench's Java peers: one process runs one (peer, workload, N) cell and prints one line,
//   NATIVE_RESULT {"peer":..., "runs_s":[...], "latency":{...}, ...}
// Usage: java -cp <classes>:<netty-common.jar> NativeBench PEER WORKLOAD FILE TICK_MS REPEAT BUDGET_S WARM MAX_SAMPLES
// FILE holds the workload's arrays exactly as Python's benchmarks/workloads.py made them
// (benchmarks/native/protocol.py writes it): the same delays, cancel orders and advance times.
// Each run builds a fresh structure, times only its operations (System.nanoTime around the loop),
// and verifies what it did after the clock stops; a run that does not verify exits 3 with the
// reason on stderr, so no figure of it is reported.  WARM untimed runs of the same workload come
// first (the JIT compiles the loops the timed runs execute); then up to REPEAT timed runs, fewer
// once BUDGET_S seconds were spent; then, where a per-operation figure means something, one more
// run that times individual operations (every STRIDE-th, at most MAX_SAMPLES of them).

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public final class NativeBench {
    /** A peer: how it runs each workload, what its figure counts. */
    interface Peer {
        String version();
        /** null if the peer can run this workload, else why not (printed as "n/a (why)"). */
        String unsupported(String workload);
        /** What the run's seconds measure (shown beside the figure). */
        String metric(String workload);
        /** Whether timing individual operations means something for this workload. */
        boolean sampled(String workload);
        /** One run on a fresh structure; returns the measured seconds; throws Failed if it does not verify. */
        double run(Workload w, Sampler lat) throws Exception;
    }

    /** A run that did not do what the workload says. */
    static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        Failed(String msg) { super(msg); }
    }

    static void expect(boolean ok, String what) {
        if (!ok) throw new Failed(what);
    }

    /** The workload's arrays (int32, little-endian; see benchmarks/native/protocol.py). */
    static final class Workload {
        final String name; final int n; final int tickMs;
        final int[] delays, cancelOrder, advanceTimes, windowIds, windowDelays, warmIds, warmDelays, warmCancels;

        Workload(String name, int tickMs, int[][] a) {
            this.name = name; this.tickMs = tickMs;
            delays = a[0]; cancelOrder = a[1]; advanceTimes = a[2]; windowIds = a[3];
            windowDelays = a[4]; warmIds = a[5]; warmDelays = a[6]; warmCancels = a[7];
            n = delays.length;
        }

        static Workload read(String name, Path file, int tickMs) throws IOException {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
            byte[] magic = new byte[8];
            b.get(magic);
            if (!new String(magic, java.nio.charset.StandardCharsets.US_ASCII).equals("WSBENCH1"))
                throw new IOException(file + ": not a wheelspec workload file");
            int count = b.getInt();
            int[][] arrays = new int[count][];
            for (int k = 0; k < count; k++) {
                int len = b.getInt();
                arrays[k] = new int[len];
                b.asIntBuffer().get(arrays[k]);
                b.position(b.position() + 4 * len);
            }
            return new Workload(name, tickMs, arrays);
        }

        /** Task ids are 0 .. capacity-1. */
        int capacity() { return n + windowIds.length + warmIds.length; }
        /** What ops/s divides by: adds, cancels or fires; for steady, the window's adds and cancels. */
        long ops() { return name.equals("steady") ? 2L * windowIds.length : n; }
        int maxDelay() { int m = 0; for (int d : delays) m = Math.max(m, d); return m; }
        int warmWindows() { return windowIds.length == 0 ? 0 : warmIds.length / windowIds.length; }
    }

    /** Latencies of individual operations: every stride-th operation is timed on its own. */
    static final class Sampler {
        final long[] ns; final int stride; int k;

        Sampler(long ops, int maxSamples) {
            stride = (int) Math.max(1, (ops + maxSamples - 1) / maxSamples);
            ns = new long[(int) ((ops + stride - 1) / stride)];
        }

        boolean due(long i) { return i % stride == 0 && k < ns.length; }
        void add(long d) { if (k < ns.length) ns[k++] = d; }

        long pct(double q) {
            long[] s = Arrays.copyOf(ns, k);
            Arrays.sort(s);
            int idx = (int) Math.ceil(q * s.length) - 1;   // nearest rank
            return s[Math.max(0, Math.min(s.length - 1, idx))];
        }
    }

    /** Median cost of reading the clock twice back to back: the floor under every sample. */
    static long clockFloor() {
        long[] d = new long[20001];
        for (int i = 0; i < d.length; i++) { long a = System.nanoTime(); d[i] = System.nanoTime() - a; }
        Arrays.sort(d);
        return d[d.length / 2];
    }

    /** Fires of a virtual-clock peer: out[k] is the k-th task fired, stepEnd[j] how many had fired
     * when advance j returned.  Checks every task fired exactly once, at the advance that made it
     * due: expiration in (times[j-1], times[j]], and in expiration order within an advance. */
    static void checkVirtualFires(Workload w, int[] out, int fired, int[] stepEnd, long[] exp, String who) {
        expect(fired == w.n, who + ": " + w.name + " n=" + w.n + ": fired " + fired + " tasks, expected " + w.n);
        boolean[] seen = new boolean[w.n];
        int from = 0;
        for (int j = 0; j < w.advanceTimes.length; j++) {
            long lo = j == 0 ? Long.MIN_VALUE : w.advanceTimes[j - 1], hi = w.advanceTimes[j];
            long prev = Long.MIN_VALUE;
            for (int k = from; k < stepEnd[j]; k++) {
                int id = out[k];
                expect(id >= 0 && id < w.n && !seen[id], who + ": task " + id + " fired twice or is unknown");
                seen[id] = true;
                expect(exp[id] > lo && exp[id] <= hi, who + ": task " + id + " (expiration " + exp[id]
                       + ") fired at the advance to " + hi + ", expected the first advance reaching it");
                expect(exp[id] >= prev, who + ": task " + id + " fired out of expiration order within the advance to " + hi);
                prev = exp[id];
            }
            from = stepEnd[j];
        }
    }

    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 8) {
            System.err.println("usage: NativeBench PEER WORKLOAD FILE TICK_MS REPEAT BUDGET_S WARM MAX_SAMPLES");
            System.exit(2);
        }
        String peerName = args[0], wname = args[1];
        int tick = Integer.parseInt(args[3]), repeat = Integer.parseInt(args[4]), warm = Integer.parseInt(args[6]);
        double budget = Double.parseDouble(args[5]);
        int maxSamples = Integer.parseInt(args[7]);
        // By name, so that the JDK's peers build and run without Netty's jar (NettyPeer.java is
        // compiled only when the jar is there).
        String cls;
        switch (peerName) {
            case "netty": cls = "NettyPeer"; break;
            case "jdk-stpe": cls = "StpePeer"; break;
            case "jdk-delayqueue": cls = "DelayQueuePeer"; break;
            default: System.err.println("unknown peer " + peerName); System.exit(2); return;
        }
        Peer peer = (Peer) Class.forName(cls).getDeclaredConstructor().newInstance();
        String head = "{\"peer\":" + quote(peerName) + ",\"version\":" + quote(peer.version() + "; Java "
                + System.getProperty("java.version") + " " + System.getProperty("java.vm.name")) + ",\"workload\":" + quote(wname);
        String why = peer.unsupported(wname);
        if (why != null) {
            System.out.println("NATIVE_RESULT " + head + ",\"status\":\"n/a\",\"why\":" + quote(why) + "}");
            return;
        }
        Workload w = Workload.read(wname, Path.of(args[2]), tick);
        try {
            for (int i = 0; i < warm; i++) { System.gc(); peer.run(w, null); }
            List<Double> runs = new ArrayList<>();
            double spent = 0;
            for (int i = 0; i < Math.max(1, repeat) && (i == 0 || spent < budget); i++) {
                System.gc();
                double s = peer.run(w, null);
                runs.add(s);
                spent += s;
            }
            String lat = "null";
            if (peer.sampled(wname)) {
                Sampler sm = new Sampler(w.ops(), maxSamples);
                System.gc();
                peer.run(w, sm);
                lat = "{\"method\":\"individual operations, every " + sm.stride + (sm.stride == 1 ? "st" : "th")
                      + ", System.nanoTime before and after each\",\"samples\":" + sm.k + ",\"stride\":" + sm.stride
                      + ",\"p50_ns\":" + sm.pct(0.5) + ",\"p99_ns\":" + sm.pct(0.99) + ",\"p999_ns\":" + sm.pct(0.999)
                      + ",\"clock_floor_ns\":" + clockFloor() + "}";
            }
            StringBuilder rs = new StringBuilder();
            for (double r : runs) rs.append(rs.length() == 0 ? "" : ",").append(r);
            System.out.println("NATIVE_RESULT " + head + ",\"status\":\"ok\",\"n\":" + w.n + ",\"ops\":" + w.ops()
                               + ",\"warm_runs\":" + warm + ",\"runs_s\":[" + rs + "],\"metric\":" + quote(peer.metric(wname))
                               + ",\"latency\":" + lat + "}");
        } catch (Failed f) {
            System.err.println("VERIFY " + f.getMessage());
            System.exit(3);
        }
        System.exit(0);  // real-time peers may leave daemon-less threads behind a failed stop
    }
}
