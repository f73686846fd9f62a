"""Every JSON document Director prints, checked against the schema it declares (director/schemas/).

Tests that read Director's JSON go through `validated` / `validated_lines` (or the `validate_json`
fixture of tests/conftest.py), so a field added to an output without a schema change fails the test that
produced it (the schemas are closed: `additionalProperties: false`).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from director import schemas


@functools.cache
def _registry() -> Registry[Any]:
    """Every shipped schema by its `$id` (a family's status refers to the status schema by it)."""
    return Registry().with_resources(
        (schemas.load(n)["$id"], Resource.from_contents(schemas.load(n))) for n in schemas.NAMES
    )


@functools.cache  # checking a schema costs ~50 ms: tests that poll an event stream validate it often
def _validator(name: str) -> Draft202012Validator:
    schema = schemas.load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=_registry())


def check(document: Any, name: str | None = None) -> None:
    """Raise AssertionError naming every violation of the document's schema."""
    assert isinstance(document, dict), f"not a JSON object: {document!r}"
    which = name or schemas.name_for(document)
    errors = sorted(_validator(which).iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, f"{which}.json: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors[:10]
    )


def validated(text: str, name: str | None = None) -> Any:
    """`json.loads(text)`, checked against its schema."""
    document = json.loads(text)
    check(document, name)
    return document


def validated_lines(text: str, name: str | None = None) -> list[Any]:
    """JSON Lines (`audit --jsonl`, `--events`), each line checked against its schema."""
    out = []
    for line in text.splitlines():
        if line.strip():
            out.append(validated(line, name))
    return out


RFC3339 = schemas.load("status")["$defs"]["timestamp"]["pattern"]
