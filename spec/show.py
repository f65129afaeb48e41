"""How records read for people: operations, events, responses, findings and profiles, one line each.

Every judge and report prints through these functions, so an event reads the same in the history
checker's explanation, in a conformance failure message and in ``wheelspec replay``'s table:

* :func:`op`, :func:`event`: ``kind(field=value, ...)``, values as compact JSON
  (:func:`json_short`); :func:`step` prefixes an operation with its index in a run;
* :func:`response`: what an implementation answered (``[events] result ...`` or ``error ...``);
* :func:`op_call`, :func:`event_note`: the terse forms of an interleaving's timeline
  (``watch(1, 5, ('a',))``, ``<complete op=1 via=check>``: positional arguments, no clock);
* :func:`finding` (``[prop] message``), :func:`finding_at_step` (``[prop] step N: message``,
  JUnit's detail) and :func:`finding_line` (``prop: message``, a concurrent run's report);
* :func:`profile`: ``kafka tick 10``, ``strict``;
* :func:`clip`: a text too long for its place, shortened at a word boundary (never inside a
  number) and marked with :data:`ELLIPSIS`; every report that shortens a message uses it;
* :func:`file_safe`: a text as part of a file name;
* :func:`impl_dirname`: an implementation's counterexample folder (``java-toytimer-3f2a91``).

Records are read through ``to_dict`` (and ``kind``), so any object with that shape prints.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from typing import Any

from .profiles import behaviour

#: what a text shortened by :func:`clip` ends with (a space first: a number is never followed by it)
ELLIPSIS = " ..."

# Where a text may be cut when it holds no space early enough: after a separator of a JSON value
# or a list; else anywhere but inside a number (a long word may be cut: the ellipsis says so).
_SEPARATORS = ",;)]}"
#: a number as messages write it: ``-3``, ``1.5``, ``1e-09``, ``1099511627775``
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _boundary(text: str, room: int) -> int:
    """Where :func:`clip` cuts ``text`` to keep at most ``room`` characters: before the last space,
    else after the last separator, else at ``room`` moved back to the start of a number it falls
    inside (forward to its end when that number starts the text)."""
    room = max(1, room)
    end = min(room, len(text) - 1)
    space = max((i for i in range(1, end + 1) if text[i].isspace()), default=0)
    if space:
        return space
    sep = max((i for i in range(1, end + 1) if text[i - 1] in _SEPARATORS), default=0)
    if sep:
        return sep
    for m in NUMBER.finditer(text):
        if m.start() >= room:
            break
        if m.end() > room:  # room falls inside this number: cut before it, or after it if it is first
            return m.start() or m.end()
    return room


def clip(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters; else its longest start ending at a word
    boundary, then :data:`ELLIPSIS` (at most ``limit`` characters in all, for a ``limit`` longer
    than the ellipsis, unless a number that starts the text is longer: it is kept whole).  Never
    cut inside a number: a bound of
    1099511627775 shown as "10995116277" is read as a different bound."""
    if len(text) <= limit:
        return text
    cut = _boundary(text, limit - len(ELLIPSIS))
    return text if cut >= len(text) else text[:cut].rstrip() + ELLIPSIS


def json_short(v: Any, limit: int = 120) -> str:
    """A value quoted for a one-line message (compact JSON, or ``repr``; shortened to ``limit``
    characters at a boundary between values: :func:`clip`)."""
    try:
        s = json.dumps(v, separators=(",", ":"))
    except (TypeError, ValueError):
        s = repr(v)
    return clip(s, limit)


# ESC sequences (CSI such as colours "\x1b[31m", OSC such as titles "\x1b]0;t\x07", or ESC + one
# character) are dropped whole; any other control character is shown as an escape.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_]?)")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` (an adapter's error, stderr tail or message) safe for a terminal and for XML 1.0:
    ESC sequences removed, every other character below 0x20 but newline and tab (and DEL, C1
    controls, lone surrogates, U+FFFE/U+FFFF) shown as ``\\xNN`` / ``\\uNNNN``.  A NUL makes an
    XML file unreadable and a colour code repaints the user's terminal; neither is the
    implementation's finding."""
    return _CONTROL.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                   else f"\\u{ord(m.group()):04x}"), _ANSI.sub("", text))


def file_safe(text: str) -> str:
    """``text`` as part of a file name: every character but letters, digits, ``-``, ``_`` and ``.``
    made ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


#: options of a command line whose next word is a path list, not a name (``java -cp build Main``)
_PATH_OPTIONS = frozenset({"-cp", "-classpath", "--class-path", "--manifest-path"})
#: file extensions dropped from a word of the slug (``mytimer.jar`` reads ``mytimer``)
_EXTENSIONS = re.compile(r"\.(jar|py|js|mjs|cjs|ts|exe|sh|class)$")


def impl_dirname(impl: str) -> str:
    """The one name of an implementation's saved counterexamples' folder (``check``, ``campaign``,
    ``matrix``, the pytest plugin's regressions): a short slug of the ``--impl`` text, then the
    first 6 hex digits of its SHA-256, which tell two texts of the same slug apart.

    The slug keeps at most three words of the command (options and the path list after ``-cp``
    left out), each the last part of a path or of a dotted module, without a file extension:
    ``cmd:java -jar mytimer.jar`` -> ``java-mytimer-<hash>``, ``cmd:/venv/bin/python -m
    pkg.serve reference`` -> ``python-serve-reference-<hash>``, ``mytimer:adapter`` ->
    ``mytimer-adapter-<hash>``.  The full ``--impl`` text is inside each saved file
    (``origin.impl_spec``), which is what ``wheelspec replay FILE`` rebuilds the implementation from."""
    text = impl.strip()
    words: list[str] = []
    try:
        tokens = shlex.split(text.removeprefix("cmd:"))
    except ValueError:
        tokens = text.removeprefix("cmd:").split()
    skip = False
    for token in tokens:
        if skip or token.startswith("-"):
            skip = not skip and token in _PATH_OPTIONS
            continue
        for part in token.split(":"):  # module:factory names both
            word = _EXTENSIONS.sub("", part.rstrip("/").rsplit("/", 1)[-1])
            last = word.rsplit(".", 1)[-1]
            word = word if last.isdigit() else last  # a dotted module by its last part; python3.11 whole
            word = re.sub(r"[^a-z0-9]+", "-", word.lower()).strip("-")[:20].strip("-")
            if word:
                words.append(word)
    slug = "-".join(words[:3]) or "impl"
    return f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def record(d: dict[str, Any]) -> str:
    """``kind(field=value, ...)`` of a record's ``to_dict()``."""
    d = dict(d)
    kind = d.pop("kind")
    return f"{kind}({', '.join(f'{k}={json_short(v)}' for k, v in d.items())})"


def op(o: Any) -> str:
    """An operation: ``add(task=1, delay=5)``."""
    return record(o.to_dict())


def step(i: int, o: Any) -> str:
    """An operation with its index in a run: ``op 3 add(task=1, delay=5)``."""
    return f"op {i} {op(o)}"


def event(e: Any) -> str:
    """An event: ``fire(now=5, task=1, exp=5)``."""
    return record(e.to_dict())


#: the most characters of an implementation's error message a response shows (a range error of
#: the reference, bounds and all, fits; an adapter's stack trace does not)
ERROR_CHARS = 200


def response(r: Any) -> str:
    """An implementation's answer to one request (``error``, ``events``, ``result``)."""
    if r.error is not None:
        return f"error {r.error[0]} ({clip(r.error[1], ERROR_CHARS)})"
    evs = ", ".join(event(e) for e in r.events)
    return f"[{evs}] result {json_short(r.result)}"


def op_call(o: Any) -> str:
    """An operation as an interleaving's timeline shows a call: ``watch(1, 5, ('a',))``."""
    d = o.to_dict()
    kind = d.pop("kind")
    return f"{kind}(" + ", ".join(f"{v!r}" if not isinstance(v, list) else repr(tuple(v)) for v in d.values()) + ")"


def event_note(e: Any) -> str:
    """An event as an interleaving's timeline notes it (the step is the clock): ``<fire task=1 exp=5>``."""
    d = e.to_dict()
    kind = d.pop("kind")
    d.pop("now", None)
    return f"<{kind} " + " ".join(f"{k}={v}" for k, v in d.items()) + ">"


def finding(f: Any) -> str:
    """``[prop] message``."""
    return f"[{f.prop}] {f.message}"


def finding_at_step(f: Any) -> str:
    """``[prop] step N: message`` (a run's finding with its operation index)."""
    return f"[{f.prop}] step {f.step}: {f.message}"


def finding_line(f: Any) -> str:
    """``prop: message`` (how a concurrent run's report lists its findings)."""
    return f"{f.prop}: {f.message}"


def profile(name: str, tick: int | None = None) -> str:
    """A profile as reports name it: ``kafka tick 10`` (only a profile that uses a tick shows it)."""
    try:
        uses_tick = behaviour(name).uses_tick
    except ValueError:  # a name an adapter made up: shown as given
        uses_tick = False
    return name + (f" tick {tick}" if uses_tick and tick else "")
