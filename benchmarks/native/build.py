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
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from wheelspec.spec.errors import UserError

from .. import buildcache
from ..drivers import Unavailable

#: Where Debian's libnetty-java puts Netty's jars (the first one present is used).
NETTY_JARS = ("/usr/share/java/netty-common.jar", "/usr/share/java/netty-all.jar")
#: Debian's packaged crates (librust-*-dev); ``$WHEELSPEC_CARGO_REGISTRY`` overrides it.
DEFAULT_CARGO_REGISTRY = "/usr/share/cargo/registry"
#: The crates the Rust peer needs, as directory-name prefixes in the registry.
RUST_CRATES = ("tokio-1.", "tokio-util-0.7")
RUST_BINARY = "wheelspec-native-bench"
BUILD_TIMEOUT_S = buildcache.BUILD_TIMEOUT_S
last_lines = buildcache.last_lines


@dataclasses.dataclass(frozen=True)
class Built:
    """A built driver: ``argv`` runs it (the peer name and its arguments follow); ``version``
    names the toolchain and libraries it was built with."""

    argv: list[str]
    version: str


def cache_dir(build_dir: str | None = None) -> Path:
    """``build_dir`` if given, else ``$XDG_CACHE_HOME/wheelspec/native`` (``~/.cache/...``)."""
    return buildcache.cache_root("native", build_dir)


def _sources(sub: str) -> dict[str, bytes]:
    """The shipped sources under ``sub`` (``java`` or ``rust``), by relative path."""
    try:
        return buildcache.package_sources("wheelspec.benchmarks.native", sub)
    except UserError:
        raise Unavailable(f"the {sub} driver sources are missing from the installed package") from None


def _tool_version(argv: list[str]) -> str:
    try:
        return buildcache.tool_version(argv)
    except UserError as e:
        raise Unavailable(str(e)) from None


def _key(sources: dict[str, bytes], *extra: str) -> str:
    return buildcache.content_key(sources, *extra)


def _build_once(root: Path, name: str, key: str, marker: str, build: Callable[[Path], None]) -> Path:
    """:func:`buildcache.build_once`, its ``UserError`` reported as :class:`Unavailable`."""
    try:
        return buildcache.build_once(root, name, key, marker, build)
    except UserError as e:
        raise Unavailable(str(e)) from None


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

    def build(tmp: Path) -> None:
        src = tmp / "src"
        buildcache.write_sources(src, sources)
        cmd = [javac, "-nowarn", "-d", str(tmp / "classes")]
        if jar is not None:
            cmd += ["-cp", jar]
        cmd += sorted(str(p) for p in src.glob("*.java"))
        buildcache.run_build(cmd, "javac", timeout=BUILD_TIMEOUT_S)

    final = _build_once(cache_dir(build_dir), "java", _key(sources, version, jar_id),
                        "classes/NativeBench.class", build)
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

    def build(tmp: Path) -> None:
        buildcache.write_sources(tmp, sources)
        (tmp / ".cargo").mkdir(exist_ok=True)
        (tmp / ".cargo" / "config.toml").write_text(
            '[source.crates-io]\nreplace-with = "debian"\n\n'
            f'[source.debian]\ndirectory = "{registry}"\n\n[net]\noffline = true\n')
        env = dict(os.environ, CARGO_TARGET_DIR=str(tmp / "target"))
        buildcache.run_build([cargo, "build", "--release", "--offline", "--quiet"],
                             "cargo build --release --offline", cwd=tmp, env=env, timeout=BUILD_TIMEOUT_S)

    final = _build_once(cache_dir(build_dir), "rust",
                        _key(sources, version, str(registry), ','.join(sorted(present))),
                        f"target/release/{RUST_BINARY}", build)
    binary = final / "target" / "release" / RUST_BINARY
    return Built([str(binary)], f"{version}; {_locked_versions(final / 'Cargo.lock')}")


def _locked_versions(lock: Path) -> str:
    """``tokio 1.24.2, tokio-util 0.7.3`` from the build's Cargo.lock."""
    try:
        text = lock.read_text()
    except OSError:
        return "crate versions unknown"
    found = dict(re.findall(r'name = "(tokio(?:-util)?)"\nversion = "([^"]+)"', text))
    return ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "crate versions unknown"
