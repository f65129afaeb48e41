"""Building the native peers' drivers on first use, into a cache directory.

The sources ship with the package (``java/``, ``rust/``); what runs is built from them once per
content: the build directory's name carries a hash of the sources and of the toolchain's version,
so an edited driver or a new JDK builds afresh and an unchanged one is reused.  Builds go to a
temporary directory beside their final place and are renamed into it when complete, so a build
that fails or is interrupted never leaves a half-built driver behind, and two processes building
at once both end with a complete one.

* Java (Netty's ``HashedWheelTimer``, the JDK's ``ScheduledThreadPoolExecutor`` and
  ``DelayQueue``): ``javac`` into ``java-<hash>/classes``; Netty's peer is compiled against
  Debian's libnetty-java jar (``/usr/share/java/netty-common.jar``, as the repository's real-time
  Netty adapter finds it) and left out when the jar is missing, so the JDK's peers still run.
* Rust (tokio-util's ``DelayQueue``): ``cargo build --release --offline`` of a copy of the crate in
  ``rust-<hash>/``, with a ``.cargo/config.toml`` there that replaces crates.io by Debian's packaged
  crates (``/usr/share/cargo/registry``, or ``$WHEELSPEC_CARGO_REGISTRY``): no network.

A missing toolchain or a failed build raises :class:`~wheelspec.benchmarks.drivers.Unavailable`
with one line saying what is missing and how to install it; the peer's rows then say so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from ..drivers import Unavailable

#: Where Debian's libnetty-java puts Netty's jars (the first one present is used).
NETTY_JARS = ("/usr/share/java/netty-common.jar", "/usr/share/java/netty-all.jar")
#: Debian's packaged crates (librust-*-dev); ``$WHEELSPEC_CARGO_REGISTRY`` overrides it.
DEFAULT_CARGO_REGISTRY = "/usr/share/cargo/registry"
#: The crates the Rust peer needs, as directory-name prefixes in the registry.
RUST_CRATES = ("tokio-1.", "tokio-util-0.7")
RUST_BINARY = "wheelspec-native-bench"
BUILD_TIMEOUT_S = 900.0


@dataclasses.dataclass(frozen=True)
class Built:
    """A built driver: ``argv`` runs it (the peer name and its arguments follow); ``version``
    names the toolchain and libraries it was built with."""

    argv: list[str]
    version: str


def cache_dir(build_dir: str | None = None) -> Path:
    """``build_dir`` if given, else ``$XDG_CACHE_HOME/wheelspec/native`` (``~/.cache/...``)."""
    if build_dir:
        return Path(build_dir).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "wheelspec" / "native"


def _sources(sub: str) -> dict[str, bytes]:
    """The shipped sources under ``sub`` (``java`` or ``rust``), by relative path."""
    root = resources.files("wheelspec.benchmarks.native").joinpath(sub)
    out: dict[str, bytes] = {}

    def walk(node: object, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):  # type: ignore[attr-defined]
            rel = f"{prefix}{child.name}"
            if child.is_dir():
                if child.name not in ("target", "__pycache__"):
                    walk(child, rel + "/")
            elif not child.name.endswith(".lock"):
                out[rel] = child.read_bytes()
    walk(root, "")
    if not out:
        raise Unavailable(f"the {sub} driver sources are missing from the installed package")
    return out


def _tool_version(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise Unavailable(f"`{' '.join(argv)}` failed: {e}") from None
    return (p.stdout + p.stderr).strip().splitlines()[0] if (p.stdout + p.stderr).strip() else "unknown"


def _key(sources: dict[str, bytes], *extra: str) -> str:
    h = hashlib.sha256()
    for name, data in sorted(sources.items()):
        h.update(name.encode() + b"\0" + data + b"\0")
    for e in extra:
        h.update(e.encode() + b"\0")
    return h.hexdigest()[:16]


def last_lines(text: str, k: int = 3) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-k:]) if lines else "no output"


def _publish(tmp: Path, final: Path) -> None:
    """Move a complete build into place; if another process got there first, keep theirs."""
    try:
        tmp.rename(final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)


def netty_jar() -> str | None:
    return next((j for j in NETTY_JARS if Path(j).is_file()), None)


def build_java(build_dir: str | None = None) -> Built:
    """The Java peers' classes (built if needed); argv is ``java -cp <classes>[:<netty jar>] NativeBench``."""
    java, javac = shutil.which("java"), shutil.which("javac")
    if java is None or javac is None:
        missing = " and ".join(n for n, p in (("java", java), ("javac", javac)) if p is None)
        raise Unavailable(f"{missing} not found on PATH (a JDK 11+ is needed: apt-get install default-jdk-headless)")
    jar = netty_jar()
    sources = _sources("java")
    if jar is None:
        sources = {k: v for k, v in sources.items() if k != "NettyPeer.java"}
    version = _tool_version([javac, "-version"])
    jar_id = "" if jar is None else f"{jar}:{Path(jar).stat().st_size}:{Path(jar).stat().st_mtime_ns}"
    root = cache_dir(build_dir)
    final = root / f"java-{_key(sources, version, jar_id)}"
    if not (final / "classes" / "NativeBench.class").is_file():
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".java-build-", dir=root))
        try:
            src = tmp / "src"
            src.mkdir()
            for name, data in sources.items():
                (src / name).write_bytes(data)
            cmd = [javac, "-nowarn", "-d", str(tmp / "classes")]
            if jar is not None:
                cmd += ["-cp", jar]
            cmd += sorted(str(p) for p in src.glob("*.java"))
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise Unavailable(f"javac took over {BUILD_TIMEOUT_S:.0f} s") from None
            if p.returncode != 0:
                raise Unavailable(f"javac failed: {last_lines(p.stderr + p.stdout)}")
            _publish(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    cp = str(final / "classes") + ("" if jar is None else os.pathsep + jar)
    return Built([java, "-cp", cp, "NativeBench"], version)


def cargo_registry() -> Path:
    return Path(os.environ.get("WHEELSPEC_CARGO_REGISTRY") or DEFAULT_CARGO_REGISTRY)


def build_rust(build_dir: str | None = None) -> Built:
    """The Rust peer's release binary (built offline if needed)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise Unavailable("cargo not found on PATH (a Rust toolchain is needed: apt-get install cargo)")
    registry = cargo_registry()
    present = [p.name for p in registry.iterdir()] if registry.is_dir() else []
    lacking = [c.rstrip(".") for c in RUST_CRATES if not any(n.startswith(c) for n in present)]
    if lacking:
        raise Unavailable(f"Debian's crates {', '.join(lacking)} are not in {registry} "
                          "(apt-get install librust-tokio-dev librust-tokio-util-dev)")
    sources = _sources("rust")
    version = _tool_version([cargo, "--version"])
    root = cache_dir(build_dir)
    final = root / f"rust-{_key(sources, version, str(registry), ','.join(sorted(present)))}"
    binary = final / "target" / "release" / RUST_BINARY
    if not binary.is_file():
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".rust-build-", dir=root))
        try:
            for name, data in sources.items():
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp / name).write_bytes(data)
            (tmp / ".cargo").mkdir(exist_ok=True)
            (tmp / ".cargo" / "config.toml").write_text(
                '[source.crates-io]\nreplace-with = "debian"\n\n'
                f'[source.debian]\ndirectory = "{registry}"\n\n[net]\noffline = true\n')
            cmd = [cargo, "build", "--release", "--offline", "--quiet"]
            env = dict(os.environ, CARGO_TARGET_DIR=str(tmp / "target"))
            try:
                p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise Unavailable(f"cargo build took over {BUILD_TIMEOUT_S:.0f} s") from None
            if p.returncode != 0:
                raise Unavailable(f"cargo build --release --offline failed: {last_lines(p.stderr + p.stdout)}")
            _publish(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return Built([str(binary)], f"{version}; {_locked_versions(final / 'Cargo.lock')}")


def _locked_versions(lock: Path) -> str:
    """``tokio 1.24.2, tokio-util 0.7.3`` from the build's Cargo.lock."""
    try:
        text = lock.read_text()
    except OSError:
        return "crate versions unknown"
    found = dict(re.findall(r'name = "(tokio(?:-util)?)"\nversion = "([^"]+)"', text))
    return ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "crate versions unknown"
