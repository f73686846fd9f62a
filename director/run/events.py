"""Run events: what the engine tells the operator's view, the JSONL stream and the tests.

Every event is a flat JSON object `{"schema": "director.event/1", "seq": n, "ts": ISO-8601, "type": …, …}`.
Types (documented in docs/events.md):
  run.start {run_id, kind, resumed, target, plan}      run.state {run_id, to, reason}
  inputs {values, how, operator}                       section.start {section, title, markers}
  section.verdict {section, verdict, detail}           step.start {section, block, role, attempt, line}
  step.output {section, block, text}
  step.input {section, block, prompt}  (interactive: the block waits for the operator; None: no longer)
  step.end {section, block, role, exit_code, duration_s, ok, timed_out, waited_for_input}
  gate {section, title, marker, note, sha256, approved, how}   approval {section, sha256, operator, how}
  ledger.write {path, changed}                         target {op, detail}
  run.end {run_id, mode, outcome, section, message, exit_code}   (the last line; written after the summary)
Verdicts: in-sync, applied, verified, failed, awaiting-approval, will-apply, needs-approval, blocked, skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

SCHEMA = "director.event/1"

Event = dict[str, Any]
Listener = Callable[[Event], None]


class Bus:
    """Fans events out to listeners; numbering and time-stamping happen here, once."""

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        self._listeners: list[Listener] = []
        self._seq = 0
        self._clock = clock or (lambda: datetime.now(UTC))

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, type_: str, **data: Any) -> Event:
        self._seq += 1
        event: Event = {
            "schema": SCHEMA,
            "seq": self._seq,
            "ts": self._clock().isoformat(timespec="milliseconds"),
            "type": type_,
            **data,
        }
        for listener in self._listeners:
            listener(event)
        return event


class JsonlWriter:
    """Writes each event as one JSON line, flushed, so CI can follow a run as it happens."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def __call__(self, event: Event) -> None:
        self._stream.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        self._stream.flush()
