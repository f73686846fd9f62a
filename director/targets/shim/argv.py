"""The shim's reading of a wrangler command line: positionals vs options (as yargs splits them), and
which commands are account operations it emulates."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

#: Options that take a value (wrangler 4.86 global options and those of the commands the shim reads);
#: needed to tell a positional (a workflow name) from an option's value.
VALUE_FLAGS = frozenset(
    {
        "config", "env", "env-file", "cwd", "name", "message", "tag", "outdir", "outfile", "port",
        "inspector-port", "inspector-ip", "ip", "id", "type", "payload", "status", "page", "per-page",
        "truncate-output-limit", "compatibility-date", "compatibility-flags", "compatibility-flag",
        "var", "define", "alias", "routes", "route", "triggers", "schedule", "schedules",
        "jsx-factory", "jsx-fragment", "tsconfig", "assets", "site", "site-include", "site-exclude",
        "dispatch-namespace", "containers-rollout", "persist-to", "log-level", "upstream-protocol",
        "local-protocol", "host", "local-upstream", "https-key-path", "https-cert-path", "metafile",
        "script", "experimental-json-config", "account-id",
    }
)  # fmt: skip
SHORT_ALIASES = {"c": "config", "e": "env", "v": "version", "h": "help", "j": "experimental-json-config"}
INSTANCE_SUBCOMMANDS = frozenset(
    {"list", "describe", "send-event", "terminate", "pause", "resume", "restart"}
)
MUTATING = frozenset({"trigger", "delete", "send-event", "terminate", "pause", "resume", "restart"})


def kebab(name: str) -> str:
    """yargs accepts `--dryRun` for `--dry-run`; compare in one spelling."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "-" + m.group(1).lower(), name)


@dataclass(frozen=True)
class Args:
    """A wrangler command line, split into positionals and options (enough to route it)."""

    argv: tuple[str, ...]
    positionals: tuple[str, ...]
    options: dict[str, list[str | bool]] = field(default_factory=dict)

    def value(self, name: str) -> str | None:
        """The last string value given for an option."""
        for found in reversed(self.options.get(name, [])):
            if isinstance(found, str):
                return found
        return None

    def flag(self, name: str) -> bool:
        """A boolean option's effective value (`--x`, `--x=true`, `--no-x`, `--x=false`)."""
        values = self.options.get(name)
        if not values:
            return False
        last = values[-1]
        if isinstance(last, bool):
            return last
        return last.lower() not in ("false", "0", "no", "")


def parse_args(argv: Sequence[str]) -> Args:
    """Split argv like yargs would for routing purposes (unknown options are treated as booleans)."""
    positionals: list[str] = []
    options: dict[str, list[str | bool]] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            positionals.extend(argv[i + 1 :])
            break
        if token.startswith("--") and len(token) > 2:
            name, eq, val = token[2:].partition("=")
            name = kebab(name)
            if eq:
                options.setdefault(name, []).append(val)
            elif name.startswith("no-") and name[3:] not in VALUE_FLAGS:
                options.setdefault(name[3:], []).append(False)
            elif name in VALUE_FLAGS and i + 1 < len(argv):
                options.setdefault(name, []).append(argv[i + 1])
                i += 1
            else:
                options.setdefault(name, []).append(True)
        elif token.startswith("-") and len(token) > 1 and not token[1].isdigit():
            name, eq, val = token[1:].partition("=")
            name = SHORT_ALIASES.get(name, name)
            if eq:
                options.setdefault(name, []).append(val)
            elif name in VALUE_FLAGS and i + 1 < len(argv):
                options.setdefault(name, []).append(argv[i + 1])
                i += 1
            else:
                options.setdefault(name, []).append(True)
        else:
            positionals.append(token)
        i += 1
    return Args(argv=tuple(argv), positionals=tuple(positionals), options=options)


@dataclass(frozen=True)
class Route:
    """What the shim does with a command: `kind` plus the workflow name for routed workflow commands."""

    kind: str  # passthrough | deploy | delete | deployments-list | workflows-list | workflow | unavailable
    workflow: str | None = None


def classify(args: Args) -> Route:
    """Decide which commands are account operations (emulated) and which pass through."""
    pos = args.positionals
    if not pos or args.flag("help") or args.flag("version"):
        return Route("passthrough")
    command = pos[0]
    if command in ("deploy", "delete"):
        return Route("passthrough") if args.flag("dry-run") else Route(command)
    if command == "deployments" and pos[1:2] == ("list",):
        return Route("deployments-list")
    if command == "workflows" and not args.flag("local"):
        sub = pos[1] if len(pos) > 1 else None
        if sub == "list":
            return Route("workflows-list")
        if sub in ("describe", "trigger", "delete") and len(pos) > 2:
            return Route("workflow", pos[2])
        if sub == "instances" and len(pos) > 2:
            if pos[2] == "terminate-all":
                # wrangler 4.86 has no --local for it (instances/terminate-all.ts): account only.
                return Route("unavailable")
            if pos[2] in INSTANCE_SUBCOMMANDS and len(pos) > 3:
                return Route("workflow", pos[3])
        return Route("passthrough")
    if pos[:2] == ("d1", "info") or pos[:3] in (("r2", "bucket", "info"), ("kv", "namespace", "list")):
        return Route("unavailable")
    return Route("passthrough")


def with_local(argv: Sequence[str], port: int) -> list[str]:
    """argv plus `--local --port P`, kept before a `--` separator."""
    extra = ["--local", "--port", str(port)]
    items = list(argv)
    if "--" in items:
        cut = items.index("--")
        return items[:cut] + extra + items[cut:]
    return items + extra


def without_options(argv: Sequence[str], names: frozenset[str]) -> list[str]:
    """argv minus some value options (both `--x v` and `--x=v`)."""
    out: list[str] = []
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        if token.startswith("--"):
            name, eq, _ = token[2:].partition("=")
            if kebab(name) in names:
                skip = not eq
                continue
        out.append(token)
    return out
