"""Run events: what the engine tells the operator's view, the JSONL stream and the tests.

Every event is a flat JSON object `{"schema": "director.event/1", "seq": n, "ts": ISO-8601, "type": …, …}`.
Types (documented in docs/events.md):
  run.start {run_id, kind, resumed, target, plan}      run.state {run_id, to, reason}
  inputs {values, how, operator}                       section.start {section, title, markers}
  section.verdict {section, verdict, detail}           step.start {section, block, role, attempt, line}
  step.output {section, block, text}
  step.input {section, block, prompt}  (interactive: the block waits for the operator; None: no longer)
  step.end {section, block, role, exit_code, duration_s, ok, timed_out, waited_for_input}
  gate {section, title, marker, note, sha256, approved, how}
  approval {section, sha256, operator, how, [principal, fingerprint]}   (signed: the verified signer)
  approval.refused {section, approval_id, code, reason}   (a receipt whose signature is not accepted)
  ledger.write {path, changed}                         target {op, detail}
  run.end {run_id, mode, outcome, section, message, exit_code}   (the last line; written after the summary)
In a family run every event of a member also names its `plan`, and the family adds
  family.start {command, plans, jobs}   family.skip {plan, reason}   family.end {members, exit_code}
Verdicts: in-sync, applied, verified, failed, awaiting-approval, will-apply, needs-approval, blocked, skipped.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

from director.exec.secrets import ESCAPE, OPEN_ESCAPE

SCHEMA = "director.event/1"

Event = dict[str, Any]
Listener = Callable[[Event], None]


# Terminal control sequences a block may print (colours, cursor moves, titles, hyperlinks): CSI, OSC
# (ended by BEL or ST), DCS/SOS/PM/APC strings, two-byte escapes, 8-bit CSI. CR, LF and tab are kept (a
# view needs CR to show what a progress bar finally says); every other C0/C1 control goes too. One pattern
# with redaction (`director.exec.secrets`), which looks for secrets in the text as a view shows it.
_ESCAPE = ESCAPE
_OPEN_ESCAPE = OPEN_ESCAPE
_HOLD_MAX = 4096  # an "open" sequence longer than this is not one: drop it


class EscapeFilter:
    """Removes terminal control sequences from a stream cut into chunks anywhere (even inside a sequence)."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk
        self._held = ""
        m = _OPEN_ESCAPE.search(text)
        if m is not None and m.start() < len(text):
            text, self._held = text[: m.start()], text[m.start() :]
            if len(self._held) > _HOLD_MAX:
                self._held = ""
        return _ESCAPE.sub("", text).replace("\x1b", "").replace("\x9b", "")

    def flush(self) -> str:
        """What is left at the end of the stream (an unfinished sequence is dropped)."""
        self._held = ""
        return ""


def clean_text(text: str) -> str:
    """A whole text without control sequences (CR, LF and tab kept)."""
    return EscapeFilter().feed(text)


class Bus:
    """Fans events out to listeners; numbering and time-stamping happen here, once.

    A block's output (`step.output`) and the prompt it waits at (`step.input`) reach every listener
    without terminal control sequences (docs/events.md): the views, the JSONL stream and the tests see the
    same text.
    """

    def __init__(
        self, clock: Callable[[], datetime] | None = None, fields: dict[str, Any] | None = None
    ) -> None:
        self._fields = dict(fields or {})  # in every event (a family member's: its `plan`)
        self._listeners: list[Listener] = []
        self._seq = 0
        self._clock = clock or (lambda: datetime.now(UTC))
        self._filters: dict[tuple[Any, Any], EscapeFilter] = {}
        self._redact: Callable[[str], str] | None = None

    def redact_with(self, redact: Callable[[str], str]) -> None:
        """Mask secrets in every text of every event from now on (`director.exec.secrets.Redactor.redact`,
        read anew for each event: a run learns secrets as it goes): views, `--events` files and tests see
        no secret, whichever field carries it (a reason, a gate's content, a block's output)."""
        self._redact = redact

    def _sanitize(self, type_: str, data: dict[str, Any]) -> None:
        where = (data.get("section"), data.get("block"))
        if type_ == "step.output" and isinstance(data.get("text"), str):
            data["text"] = self._filters.setdefault(where, EscapeFilter()).feed(data["text"])
        elif type_ == "step.input" and isinstance(data.get("prompt"), str):
            data["prompt"] = clean_text(data["prompt"]).replace("\r", "").strip()
        elif type_ in ("step.start", "step.end"):
            self._filters.pop(where, None)

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, type_: str, **data: Any) -> Event:
        self._sanitize(type_, data)
        if self._redact is not None:
            data = {k: _redacted(v, self._redact) for k, v in data.items()}
        self._seq += 1
        event: Event = {
            "schema": SCHEMA,
            "seq": self._seq,
            "ts": self._clock().isoformat(timespec="milliseconds"),
            "type": type_,
            **self._fields,
            **data,
        }
        for listener in self._listeners:
            listener(event)
        return event


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """`value` with every string in it redacted (dicts, lists and tuples walked)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v, redact) for v in value]
    return value


# After these Director may wait (a block runs or streams, a human answers, a retry sleeps, a target works,
# the run ends): what was written so far is flushed then, so a reader following the stream is never behind.
WAIT_EVENTS = frozenset(
    {"step.start", "step.output", "step.input", "step.retry", "gate", "target", "run.state", "run.end"}
)


class Flusher:
    """Flushes a stream after an event Director may wait after, else at most every `every_s` seconds.

    A write and a flush per line made a resume over 1,000 finished sections 2,000 system calls per view;
    between waits nothing is lost by writing them together.
    """

    def __init__(self, stream: IO[str], every_s: float = 0.2, clock: Callable[[], float] = time.monotonic):
        self._stream = stream
        self._every = every_s
        self._clock = clock
        self._last = clock()

    def after(self, event_type: str) -> None:
        now = self._clock()
        if event_type in WAIT_EVENTS or now - self._last >= self._every:
            self._stream.flush()
            self._last = now


class JsonlWriter:
    """Writes each event as one JSON line, so CI can follow a run as it happens (`Flusher`)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._flusher = Flusher(stream)

    def __call__(self, event: Event) -> None:
        self._stream.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        self._flusher.after(event["type"])


# How long `--events FIFO` waits for the FIFO's reader (docs/events.md): opening a FIFO for writing blocks
# until one opens it, which without a reader is forever.
FIFO_WAIT_S = 5.0


def open_sink(
    path: str,
    *,
    wait_s: float = FIFO_WAIT_S,
    clock: Callable[[], float] = time.monotonic,
    sleeper: Callable[[float], None] = time.sleep,
) -> IO[str]:
    """`--events PATH` opened for appending: a file (created if needed), or a FIFO once a process reads it.

    Opened without blocking (a FIFO without a reader is ENXIO at once), tried again for `wait_s` seconds
    while there is no reader, then refused (an OSError naming why); once open, writes block as usual.
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    deadline = clock() + wait_s
    while True:
        try:
            fd = os.open(path, flags, 0o644)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if clock() >= deadline:
                why = f"a FIFO no process reads (waited {wait_s:g} s for one; start its reader first)"
                raise OSError(errno.ENXIO, why) from None
            sleeper(0.05)
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.set_blocking(fd, True)  # a slow reader slows the run down, it never loses an event
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
