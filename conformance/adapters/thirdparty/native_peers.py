"""Builders of the third-party peers written in Rust, Java and Go: each returns the adapter's argv,
building it once into the cache (:mod:`wheelspec.benchmarks.buildcache`) from the sources shipped beside this module
(``rust/``, ``java/``, ``go/``) and the adapter kit of its language (``conformance/kits/``), whose
protocol layer is copied in at build time: every peer is written with its language's kit.

* ``tokio-delayqueue``: tokio-util's ``DelayQueue`` on tokio's paused clock; ``cargo build
  --release --offline`` against Debian's packaged crates (``librust-tokio-dev``,
  ``librust-tokio-util-dev`` in ``/usr/share/cargo/registry``, or ``$WHEELSPEC_CARGO_REGISTRY``):
  a ``.cargo/config.toml`` in the build directory replaces crates.io by that directory, no network.
* ``jdk-stpe``: the JDK's ``ScheduledThreadPoolExecutor``, real time; ``javac`` of the Java kit's
  two files and the peer's.
* ``go-timers``: Go's runtime timers (``time.AfterFunc``), real time; ``go build`` of the Go kit's
  files and the peer's, standard library only.

A missing toolchain or crate is a :class:`~wheelspec.spec.errors.UserError` naming what to install.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from wheelspec.benchmarks import buildcache
from wheelspec.spec.errors import UserError

#: Debian's packaged crates (librust-*-dev); ``$WHEELSPEC_CARGO_REGISTRY`` overrides it.
DEFAULT_CARGO_REGISTRY = "/usr/share/cargo/registry"
#: the crates the tokio peer needs, as directory-name prefixes in the registry, and their packages
TOKIO_CRATES = {"tokio-1.": "librust-tokio-dev", "tokio-util-0.7": "librust-tokio-util-dev"}
_HERE = "wheelspec.conformance.adapters.thirdparty"
_KITS = "wheelspec.conformance.kits"


def cargo_registry() -> Path:
    return Path(os.environ.get("WHEELSPEC_CARGO_REGISTRY") or DEFAULT_CARGO_REGISTRY)


def cargo_offline_config(registry: Path) -> str:
    """A ``.cargo/config.toml`` that replaces crates.io by ``registry`` (a directory source) offline."""
    return (f'[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "{registry}"\n\n'
            "[net]\noffline = true\n")


def _kit(lang: str, *names: str) -> dict[str, bytes]:
    """The named files of a language's adapter kit (``conformance/kits/<lang>/``)."""
    files = buildcache.package_sources(_KITS.rsplit(".", 1)[0], f"kits/{lang}")
    missing = [n for n in names if n not in files]
    if missing:
        raise UserError(f"the {lang} adapter kit lacks {', '.join(missing)} in the installed package")
    return {n: files[n] for n in names}


def tokio_delayqueue(cache: str | None = None) -> list[str]:
    """The ``tokio-delayqueue`` adapter's binary, built offline if needed."""
    cargo = buildcache.require_tool("cargo", "a Rust toolchain is needed: apt-get install cargo")
    registry = cargo_registry()
    present = sorted(p.name for p in registry.iterdir()) if registry.is_dir() else []
    lacking = [pkg for prefix, pkg in TOKIO_CRATES.items() if not any(n.startswith(prefix) for n in present)]
    if lacking:
        raise UserError(f"tokio-delayqueue needs Debian's tokio crates in {registry}: "
                        f"apt-get install {' '.join(lacking)}")
    sources = buildcache.package_sources(_HERE, "rust/tokio-delayqueue")
    sources["src/wheelspec_adapter.rs"] = _kit("rust", "src/wheelspec_adapter.rs")["src/wheelspec_adapter.rs"]
    version = buildcache.tool_version([cargo, "--version"])
    binary = "target/release/wheelspec-tokio-delayqueue"

    def build(tmp: Path) -> None:
        buildcache.write_sources(tmp, sources)
        (tmp / ".cargo").mkdir(exist_ok=True)
        (tmp / ".cargo" / "config.toml").write_text(cargo_offline_config(registry))
        env = dict(os.environ, CARGO_TARGET_DIR=str(tmp / "target"))
        buildcache.run_build([cargo, "build", "--release", "--offline", "--quiet"],
                             "cargo build --release --offline (tokio-delayqueue)", cwd=tmp, env=env)

    root = buildcache.cache_root("adapters", cache)
    final = buildcache.build_once(root, "tokio-delayqueue",
                                  buildcache.content_key(sources, version, str(registry), ",".join(present)),
                                  binary, build)
    return [str(final / binary)]


def locked_versions(build_dir: Path) -> str:
    """``tokio 1.24.2, tokio-util 0.7.3`` from a Rust build's Cargo.lock."""
    try:
        text = (build_dir / "Cargo.lock").read_text()
    except OSError:
        return "crate versions unknown"
    found = dict(re.findall(r'name = "(tokio(?:-util)?)"\nversion = "([^"]+)"', text))
    return ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "crate versions unknown"


def _java_peer(main: str, peer_file: str, cache: str | None) -> list[str]:
    java = buildcache.require_tool("java", "a JDK 17+ is needed: apt-get install default-jdk-headless")
    javac = buildcache.require_tool("javac", "a JDK 17+ is needed: apt-get install default-jdk-headless")
    sources = _kit("java", "WheelspecAdapter.java", "WheelspecRealtime.java")
    sources[peer_file] = buildcache.package_sources(_HERE, "java")[peer_file]
    version = buildcache.tool_version([javac, "-version"])

    def build(tmp: Path) -> None:
        buildcache.write_sources(tmp / "src", sources)
        buildcache.run_build([javac, "-nowarn", "-d", str(tmp / "classes"),
                              *sorted(str(tmp / "src" / n) for n in sources)], f"javac ({main})")

    root = buildcache.cache_root("adapters", cache)
    final = buildcache.build_once(root, f"java-{main}", buildcache.content_key(sources, version),
                                  f"classes/{main}.class", build)
    return [java, "-cp", str(final / "classes"), main]


def jdk_stpe(cache: str | None = None) -> list[str]:
    """The ``jdk-stpe`` adapter (ScheduledThreadPoolExecutor, real time), compiled if needed."""
    return _java_peer("StpePeer", "StpePeer.java", cache)


def go_timers(cache: str | None = None) -> list[str]:
    """The ``go-timers`` adapter (Go's runtime timers, real time), built if needed."""
    go = buildcache.require_tool("go", "Go 1.19+ is needed: apt-get install golang-go")
    sources = _kit("go", "go.mod", "wheelspec_adapter.go", "wheelspec_realtime.go")
    sources["timer.go"] = buildcache.package_sources(_HERE, "go")["timer.go"]
    version = buildcache.tool_version([go, "version"])

    def build(tmp: Path) -> None:
        buildcache.write_sources(tmp / "src", sources)
        env = dict(os.environ, GOFLAGS="-mod=mod", GOCACHE=str(tmp / "gocache"), GO111MODULE="on",
                   GOPROXY="off")
        buildcache.run_build([go, "build", "-o", str(tmp / "go-timers"), "."], "go build (go-timers)",
                             cwd=tmp / "src", env=env)
        shutil.rmtree(tmp / "gocache", ignore_errors=True)  # the compiler's cache: not part of the build

    root = buildcache.cache_root("adapters", cache)
    final = buildcache.build_once(root, "go-timers", buildcache.content_key(sources, version), "go-timers", build)
    return [str(final / "go-timers")]
