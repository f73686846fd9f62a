"""Worker config files as wrangler reads them: JSONC/TOML, the lookup, `--env` inheritance."""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from director.targets.shim.argv import Args


def strip_jsonc(text: str) -> str:
    """JSONC → JSON: drop // and /* */ comments and trailing commas, leaving strings untouched."""
    out: list[str] = []
    pending_comma: int | None = None  # index in `out` of a comma that may turn out to be trailing
    i, n = 0, len(text)
    if text.startswith("\ufeff"):
        i = 1
    while i < n:
        char = text[i]
        if char == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            pending_comma = None
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated /* comment")
            out.append(" ")
            i = end + 2
        elif char.isspace():
            out.append(char)
            i += 1
        else:
            if pending_comma is not None and char in "}]":
                out[pending_comma] = ""
            pending_comma = None
            if char == ",":
                pending_comma = len(out)
            out.append(char)
            i += 1
    return "".join(out)


def parse_jsonc(text: str) -> Any:
    """Parse a JSONC document (wrangler.jsonc allows comments and trailing commas)."""
    return json.loads(strip_jsonc(text))


CONFIG_NAMES = ("wrangler.json", "wrangler.jsonc", "wrangler.toml")


def find_config(start: Path) -> Path | None:
    """wrangler's lookup: each of wrangler.json, .jsonc, .toml searched upwards, in that order."""
    start = start.resolve()
    for name in CONFIG_NAMES:
        for directory in (start, *start.parents):
            candidate = directory / name
            if candidate.is_file():
                return candidate
    return None


def read_config(path: Path) -> dict[str, Any]:
    """A wrangler config file as a dict (TOML or JSON/JSONC)."""
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text) if path.suffix == ".toml" else parse_jsonc(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level is not an object")
    return data


def config_file_name(path: Path | None) -> str:
    """packages/workers-utils/src/config/index.ts `configFileName`."""
    if path is None:
        return "Wrangler configuration"
    return {".toml": "wrangler.toml", ".json": "wrangler.json", ".jsonc": "wrangler.jsonc"}.get(
        path.suffix, "Wrangler configuration"
    )


@dataclass(frozen=True)
class WorkerConfig:
    """What the shim needs from a Worker's config (after `--env` and `--name`)."""

    path: Path | None
    name: str | None
    main: str | None
    workflows: tuple[str, ...]
    workers_dev: bool
    bound: tuple[tuple[str, str], ...] = ()  # (workflow, the Worker that hosts it): cross-script bindings


def worker_config(
    path: Path | None, *, env: str | None = None, name: str | None = None, script: str | None = None
) -> WorkerConfig:
    """Resolve name, entry point, hosted workflows and workers_dev like wrangler does."""
    raw = read_config(path) if path is not None else {}
    section: dict[str, Any] = raw
    if env:
        section = dict(raw.get("env", {}).get(env, {}))
        # Inheritable keys fall back to the top level; `workflows` is not inheritable.
        for key in ("main", "workers_dev", "routes", "route"):
            if key not in section and key in raw:
                section[key] = raw[key]
        if "name" not in section and raw.get("name"):
            section["name"] = f"{raw['name']}-{env}"
    worker_name = name or section.get("name")
    main = script or section.get("main")
    if main and path is not None and not os.path.isabs(main):
        main = str((path.parent / main).resolve())
    hosted = tuple(
        str(w["name"])
        for w in section.get("workflows", []) or []
        if isinstance(w, dict) and w.get("name") and w.get("script_name") in (None, worker_name)
    )
    bound = tuple(
        (str(w["name"]), str(w["script_name"]))
        for w in section.get("workflows", []) or []
        if isinstance(w, dict) and w.get("name") and w.get("script_name") not in (None, worker_name)
    )
    routes = section.get("routes") or section.get("route")
    # packages/wrangler/src/triggers/deploy.ts getSubdomainValues: default on only without routes.
    workers_dev = section.get("workers_dev")
    if workers_dev is None:
        workers_dev = not routes
    return WorkerConfig(
        path=path, name=worker_name, main=main, workflows=hosted, workers_dev=bool(workers_dev), bound=bound
    )


def config_path_for(args: Args, cwd: Path, script: str | None = None) -> Path | None:
    """`--config`, else found from the script's directory or the cwd (resolveWranglerConfigPath)."""
    explicit = args.value("config")
    if explicit:
        return (cwd / explicit).resolve()
    return find_config(cwd / Path(script).parent if script else cwd)
