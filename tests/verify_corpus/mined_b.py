"""Mined verify idioms, second half: install/deploy scripts and runbooks (see `mined.py` for the format)."""

from __future__ import annotations

from tests.verify_corpus.mined import Mined, validate

IDIOMS: tuple[Mined, ...] = ()

validate(IDIOMS)
