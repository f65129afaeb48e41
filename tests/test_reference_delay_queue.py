"""The reference delay queue polls buckets in exactly java.util.PriorityQueue's order (SEMANTICS.md,
"Ordering", O4).

Buckets are compared by expiration only, so among equal expirations the poll order is the JDK
binary heap's, which is not first-in-first-out.  ``tests/fixtures/reference_jdk_priority_queue.json``
holds fixed offer/poll sequences with many ties and the order OpenJDK 17 polled them in (recorded
by the Java program below).  The first test replays them on :class:`DelayQueue`; the second reruns
the Java program when a JDK is installed, so the recording itself is checked against a real JDK.
"""

from __future__ import annotations

import heapq
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from wheelspec.reference import DelayQueue, ManualClock
from wheelspec.reference.bucket import TaskCounter, TimerTaskList

FIXTURE = Path(__file__).parent / "fixtures" / "reference_jdk_priority_queue.json"

JAVA = """\
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.PriorityQueue;

/** Poll order of java.util.PriorityQueue for buckets compared by expiration only. */
public class PQOrder {
    static final class Bucket implements Comparable<Bucket> {
        final long expiration;
        final int id;
        Bucket(long expiration, int id) { this.expiration = expiration; this.id = id; }
        @Override public int compareTo(Bucket other) { return Long.compare(expiration, other.expiration); }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            PriorityQueue<Bucket> q = new PriorityQueue<>();
            StringBuilder polled = new StringBuilder();
            for (String tok : line.trim().split(" ")) {
                if (tok.equals("p")) {
                    Bucket b = q.poll();
                    polled.append(b == null ? -1 : b.id).append(' ');
                } else {
                    String[] kv = tok.split(":");
                    q.add(new Bucket(Long.parseLong(kv[0]), Integer.parseInt(kv[1])));
                }
            }
            out.append(polled.toString().trim()).append('\\n');
        }
        System.out.print(out);
    }
}
"""


def make_sequences(seed: int = 2026, count: int = 300) -> list[str]:
    """Offers ``expiration:id`` (expirations 0-4: many ties) and polls ``p``, then a full drain."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        toks, n, live = [], 0, 0
        for _ in range(rng.randint(3, 60)):
            if live and rng.random() < 0.3:
                toks.append("p")
                live -= 1
            else:
                toks.append(f"{rng.randint(0, 4)}:{n}")
                n += 1
                live += 1
        toks += ["p"] * live
        out.append(" ".join(toks))
    return out


def reference_order(sequence: str) -> list[int]:
    clock = ManualClock(1000)  # every expiration 0-4 is due: poll() returns the heap head
    q = DelayQueue(clock)
    ids: dict[int, int] = {}
    polled = []
    for tok in sequence.split():
        if tok == "p":
            b = q.poll()
            polled.append(-1 if b is None else ids[id(b)])
        else:
            exp, n = map(int, tok.split(":"))
            b = TimerTaskList(TaskCounter())
            b.set_expiration(exp)
            ids[id(b)] = n
            q.offer(b)
    return polled


def fifo_order(sequence: str) -> list[int]:
    """What a queue breaking ties by arrival would poll (MockTimer's choice, not the JDK's)."""
    heap: list[tuple[int, int]] = []
    out = []
    for tok in sequence.split():
        if tok == "p":
            out.append(heapq.heappop(heap)[1] if heap else -1)
        else:
            exp, n = map(int, tok.split(":"))
            heapq.heappush(heap, (exp, n))
    return out


def jdk_orders(sequences: list[str], workdir: Path) -> list[list[int]]:
    (workdir / "PQOrder.java").write_text(JAVA)
    subprocess.run(["javac", "PQOrder.java"], cwd=workdir, check=True, timeout=100)
    out = subprocess.run(["java", "-cp", ".", "PQOrder"], cwd=workdir, input="\n".join(sequences) + "\n",
                         capture_output=True, text=True, check=True, timeout=100).stdout
    return [[int(x) for x in line.split()] for line in out.splitlines()]


def test_reference_delay_queue_polls_in_the_jdk_order():
    data = json.loads(FIXTURE.read_text())
    assert data["sequences"] == make_sequences()
    mismatches = [i for i, (s, want) in enumerate(zip(data["sequences"], data["orders"]))
                  if reference_order(s) != want]
    assert not mismatches, f"{len(mismatches)} sequences differ from the JDK, first: {data['sequences'][mismatches[0]]}"
    # the recording is not trivial: a first-in-first-out tie-break would poll many differently
    differ = sum(fifo_order(s) != o for s, o in zip(data["sequences"], data["orders"]))
    assert differ > len(data["sequences"]) // 4, differ


@pytest.mark.slow
@pytest.mark.external("java")
def test_recorded_orders_are_the_jdk_s(tmp_path):
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.fail("no JDK on PATH: this test re-derives the recorded orders with java.util.PriorityQueue "
                    "(Java 17 is assumed; apt-get install -y openjdk-17-jdk-headless)")
    data = json.loads(FIXTURE.read_text())
    assert jdk_orders(data["sequences"], tmp_path) == data["orders"]


if __name__ == "__main__":  # regenerate the fixture: python tests/test_reference_delay_queue.py
    import tempfile

    seqs = make_sequences()
    with tempfile.TemporaryDirectory() as d:
        orders = jdk_orders(seqs, Path(d))
    FIXTURE.write_text(json.dumps({"jdk": subprocess.run(["java", "-version"], capture_output=True, text=True)
                                   .stderr.splitlines()[0], "sequences": seqs, "orders": orders}) + "\n")
    print(f"wrote {FIXTURE} ({len(seqs)} sequences)")
