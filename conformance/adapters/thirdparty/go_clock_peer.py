"""Builder of the ``go-clock-mock`` peer: ``github.com/benbjohnson/clock``'s ``Mock`` behind the
Go adapter kit (``go_clock/main.go``).

The library comes from Debian (``golang-github-benbjohnson-clock-dev``, sources under
``/usr/share/gocode/src``; ``$WHEELSPEC_GOCODE`` overrides the root): the build's ``go.mod``
replaces the module by that directory, with the module proxy off, so nothing is downloaded.  The
kit's protocol layer (``conformance/kits/go/wheelspec_adapter.go``) is copied beside the adapter:
the adapter is written with the kit, as a user's would be.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from wheelspec.benchmarks import buildcache as bc
from wheelspec.spec.errors import UserError

MODULE = "github.com/benbjohnson/clock"
DEBIAN_PACKAGE = "golang-github-benbjohnson-clock-dev"
DEFAULT_GOCODE = "/usr/share/gocode/src"


def library_dir() -> Path:
    d = Path(os.environ.get("WHEELSPEC_GOCODE", DEFAULT_GOCODE)) / MODULE
    if not (d / "clock.go").is_file():
        raise UserError(f"{MODULE} not found in {d.parent.parent.parent} (apt-get install {DEBIAN_PACKAGE})")
    return d


def library_version() -> str:
    """The Debian package's version, or "unknown" (a library directory given by hand)."""
    try:
        p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", DEBIAN_PACKAGE],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "unknown"


def go_clock_mock() -> list[str]:
    """argv of the built adapter (built on first use)."""
    go = bc.require_tool("go", "apt-get install golang-go")
    lib = library_dir()
    version = library_version()
    sources = dict(bc.package_sources("wheelspec.conformance.adapters.thirdparty", "go_clock"))
    kit = bc.package_sources("wheelspec.conformance", "kits/go")
    sources["wheelspec_adapter.go"] = kit["wheelspec_adapter.go"]
    sources["go.mod"] = (f"module wheelspec-go-clock-mock\n\ngo 1.19\n\nrequire {MODULE} v1.3.0\n\n"
                         f"replace {MODULE} => {lib}\n").encode()
    key = bc.content_key(sources, bc.tool_version([go, "version"]), str(lib), version)

    def build(tmp: Path) -> None:
        bc.write_sources(tmp, sources)
        env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}
        bc.run_build([go, "build", "-ldflags", f"-X main.libVersion={version}", "-o", "adapter", "."],
                     "building the go-clock-mock adapter (go build)", cwd=tmp, env=env)

    return [str(bc.build_once(bc.cache_root(), "go-clock-mock", key, "adapter", build) / "adapter")]
