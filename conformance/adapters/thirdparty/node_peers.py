"""Builders of the JavaScript peers: ``sinon-tick``, ``sinon-jump``, ``timer-wheel`` (virtual time)
and ``node-timers`` (real time).

The adapters (``node/*.js``, written with the JavaScript adapter kit, ``conformance/kits/javascript``)
and ``node/package.json`` (every npm package of the tree pinned to an exact version) ship in the
package.  The first use installs them with ``npm install --no-audit --no-fund`` into a cache
directory (:mod:`wheelspec.benchmarks.buildcache`, area ``adapters``) named by a hash of package.json, the adapters,
the kit files and node's version, beside a copy of the kit's layer files, so that each adapter's
``require("./wheelspec_adapter")`` finds the kit.  Later uses reuse it: no network.

A missing ``node`` or ``npm``, or a failed install (no access to the npm registry), is a
:class:`~wheelspec.spec.errors.UserError` of one line naming what to install.
"""

from __future__ import annotations

from pathlib import Path

from wheelspec.benchmarks import buildcache

#: the kit's files the adapters require (the kit's toy timer and README are not copied)
KIT_FILES = ("wheelspec_adapter.js", "wheelspec_realtime.js")
#: written by npm when the install completed: the build's marker
MARKER = "node_modules/.package-lock.json"


def install_dir() -> Path:
    """The directory holding the adapters, the kit files and ``node_modules``; installed on first use."""
    buildcache.require_tool("node", "install Node.js: apt-get install nodejs")
    npm = buildcache.require_tool("npm", "install npm: apt-get install npm")
    sources = buildcache.package_sources("wheelspec.conformance.adapters.thirdparty", "node")
    kit = buildcache.package_sources("wheelspec.conformance", "kits/javascript")
    files = {**sources, **{name: kit[name] for name in KIT_FILES}}
    key = buildcache.content_key(files, buildcache.tool_version(["node", "--version"]))

    def build(tmp: Path) -> None:
        buildcache.write_sources(tmp, files)
        buildcache.run_build([npm, "install", "--no-audit", "--no-fund", "--ignore-scripts"],
                             "npm install of the JavaScript peers' packages (node/package.json; needs the "
                             "npm registry or npm's cache)", cwd=tmp)

    return buildcache.build_once(buildcache.cache_root("adapters"), "node-peers", key, MARKER, build)


def _node(script: str, *args: str) -> list[str]:
    node = buildcache.require_tool("node", "install Node.js: apt-get install nodejs")
    return [node, str(install_dir() / script), *args]


def sinon_tick() -> list[str]:
    """``@sinonjs/fake-timers`` advanced with ``clock.tick``."""
    return _node("sinon_fake_timers.js", "tick")


def sinon_jump() -> list[str]:
    """``@sinonjs/fake-timers`` advanced with ``clock.jump``."""
    return _node("sinon_fake_timers.js", "jump")


def timer_wheel() -> list[str]:
    """npm ``timer-wheel``'s ``ReschedulingTimerWheel`` on a virtual ``Date.now``."""
    return _node("timer_wheel.js")


def node_timers() -> list[str]:
    """Node's own ``setTimeout`` / ``clearTimeout``, in real time."""
    return _node("node_timers.js")
