"""What a step and a section are, for the memo: the exact text that runs, the values it reads, the inputs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from director.plan import bash, knobs
from director.plan.model import Section

Templates = dict[int, tuple[str, str]]  # template block index -> (target path, content)


def sha(obj: Any) -> str:
    """sha256 of a JSON-able value, key order ignored: of `json.dumps(obj, sort_keys=True,
    ensure_ascii=False)` as UTF-8, hashed a piece at a time (a session value near its 16 MiB limit is not
    copied whole twice more). A value bash gave as bytes that are not UTF-8 (held as lone surrogates,
    `surrogateescape`) is hashed as those bytes."""
    digest = hashlib.sha256()
    for chunk in json.JSONEncoder(sort_keys=True, ensure_ascii=False).iterencode(obj):
        digest.update(chunk.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def block_texts(
    section: Section, knob_values: Mapping[str, str], realized: Mapping[str, str]
) -> dict[int, str]:
    """The exact text each executable block of a section runs (knobs in §0, realized placeholders)."""
    return {
        b.index: knobs.block_text(section, b, dict(knob_values), dict(realized))
        for b in section.executable_blocks
    }


def seen(session: Mapping[str, str], family: Mapping[str, str]) -> Mapping[str, str]:
    """The variables a step's fingerprint may read: the session's, and what a family passes every block
    (`DIRECTOR_PROVIDED_*`; `Shell.family_values`): §0 reading a provider's value as its default is not in
    sync once the provider's value changed (a resumed member would go on with the value it first saw)."""
    return {**family, **session} if family else session


def read_values(text: str, session: Mapping[str, str], is_secret: Callable[[str], bool]) -> dict[str, str]:
    """Values of the variables a block reads (not those it sets itself); never a secret's."""
    return {n: session[n] for n in bash.inputs(text) if n in session and not is_secret(n)}


def step(
    text: str, knob_values: Mapping[str, str], session: Mapping[str, str], is_secret: Callable[[str], bool]
) -> str:
    """A step's fingerprint: its text, the inputs, the values it reads."""
    return sha({"text": text, "inputs": dict(knob_values), "vars": read_values(text, session, is_secret)})


def section(
    texts: Mapping[int, str],
    templates: Templates,
    knob_values: Mapping[str, str],
    session: Mapping[str, str],
    is_secret: Callable[[str], bool],
) -> str:
    """A section's fingerprint: its steps' and its regenerated files'."""
    return sha(
        {
            "steps": [step(texts[i], knob_values, session, is_secret) for i in sorted(texts)],
            "templates": {str(i): list(v) for i, v in sorted(templates.items())},
        }
    )
