"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests import jsonschemas


@pytest.fixture
def validate_json() -> Callable[..., Any]:
    """`validate_json(text_or_document, name=None)`: the parsed document, checked against its schema."""

    def validate(doc: Any, name: str | None = None) -> Any:
        if isinstance(doc, str):
            return jsonschemas.validated(doc, name)
        jsonschemas.check(doc, name)
        return doc

    return validate
