"""Mined verify idioms, first half: Dockerfile HEALTHCHECKs, CI smoke tests (see `mined.py` for the format)."""

from __future__ import annotations

from tests.verify_corpus.mined import Mined, validate

IDIOMS: tuple[Mined, ...] = ()

validate(IDIOMS)
