"""What the shim prints, shaped like wrangler 4.86's own output (sources named next to each)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from director.targets.local import Deployment

# packages/wrangler/src/core/handle-errors.ts adds this note to every API (ParseError) failure.
BUG_NOTE = (
    "\nIf you think this is a bug, please open an issue at: "
    "https://github.com/cloudflare/workers-sdk/issues/new/choose"
)
# packages/wrangler/src/utils/worker-not-found-error.ts: the API's message for code 10007.
WORKER_NOT_FOUND = "This Worker does not exist on your account."
WORKER_NOT_FOUND_CODE = 10007
# The API's not-found for a workflow: code 10200 (packages/wrangler/src/deploy/check-workflow-conflicts.ts);
# the text is the API's own (not in wrangler's source), as quoted from live runs in public logs.
WORKFLOW_NOT_FOUND = "workflows.api.error.workflow.not_found"
WORKFLOW_NOT_FOUND_CODE = 10200
# packages/wrangler/src/deploy/index.ts and versions/deployments/list.ts.
NEED_NAME_DEPLOY = (
    "You need to provide a name when publishing a worker. Either pass it as a cli arg with "
    '`--name <name>` or in your config file as `name = "<name>"`'
)
NEED_NAME_LIST = (
    "You need to provide a name for your Worker. Either pass it as a cli arg with `--name <name>` "
    'or in your configuration file as `name = "<name>"`'
)
# packages/wrangler/src/workflows/commands/list.ts, remote branch, page 1.
NO_WORKFLOWS = "There are no deployed Workflows in this account"


def out(text: str = "") -> None:
    """One line to stdout, flushed (child processes share the stream)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    """Text to stderr, flushed."""
    sys.stderr.write(text)
    sys.stderr.flush()


def format_error(text: str, notes: Sequence[str] = ()) -> str:
    """esbuild's `formatMessagesSync` shape wrangler uses for errors (no colour, no wrapping)."""
    body = "".join("\n".join("  " + line for line in note.split("\n")) + "\n" for note in notes)
    return f"✘ [ERROR] {text}\n\n{body}" + ("\n" if notes else "")


def api_error(resource: str, message: str, code: int) -> None:
    """How wrangler reports a failed API call (cfetch/index.ts throwFetchError + handle-errors.ts)."""
    text = f"A request to the Cloudflare API ({resource}) failed."
    err(format_error(text, [f"{message} [code: {code}]", BUG_NOTE]))


def warn(text: str) -> None:
    """logger.warn's shape."""
    err(f"▲ [WARNING] {text}\n\n")


def note(text: str) -> None:
    """A Director line (stderr, so stdout stays shaped like wrangler's)."""
    err(f"[director] {text}\n")


# --- deployments list ------------------------------------------------------------------------------


def format_labelled(
    view: dict[str, str], *, indentation: int = 0, right: bool = False, spacer: int = 2
) -> str:
    """packages/wrangler/src/utils/render-labelled-values.ts (without colours)."""
    labels = [label + ":" for label in view]
    align = max(len(label) for label in labels)
    lines = []
    for label, value in zip(labels, view.values(), strict=True):
        pad = " " * (align - len(label)) if right else ""
        value_lines = value.split("\n")
        first = " " * (align + spacer - len(label) - len(pad)) + value_lines[0]
        rest = [" " * (align + spacer + indentation) + line for line in value_lines[1:]]
        lines.append(" " * indentation + pad + label + "\n".join([first, *rest]))
    return re.sub(r"^\s+$", "", "\n".join(lines), flags=re.MULTILINE)


def render_deployments(deployments: Sequence[Deployment]) -> str:
    """packages/wrangler/src/versions/deployments/list.ts text output."""
    blocks = []
    for deployment in deployments:
        details = format_labelled(
            {"Created": deployment.time, "Tag": "-", "Message": deployment.message or "-"},
            indentation=4,
            right=True,
        )
        blocks.append(
            format_labelled(
                {
                    "Created": deployment.time,
                    "Author": deployment.author,
                    "Source": "Upload",  # a deploy's triggered_by annotation is "upload"
                    "Message": "-",
                    "Version(s)": f"(100%) {deployment.version_id}\n{details}",
                }
            )
        )
    return "\n\n".join(blocks)


def deployments_json(deployments: Sequence[Deployment]) -> list[dict[str, Any]]:
    """The API objects `deployments list --json` prints."""
    return [
        {
            "id": d.id,
            "source": d.source,
            "strategy": "percentage",
            "author_email": d.author,
            "created_on": d.time,
            "annotations": {"workers/triggered_by": "upload"},
            "versions": [{"version_id": d.version_id, "percentage": 100}],
        }
        for d in deployments
    ]


# --- workflows -------------------------------------------------------------------------------------


_OUTPUT_LINE = re.compile(r"^(\s+Output:\s+)(.+)$")


def account_step_outputs(text: str) -> str:
    """Render describe's step outputs the way the account API shows them (structured ones as strings)."""
    # The local explorer API returns a step's output as the value itself, so describe prints
    # {"a":1}; the account API returns structured outputs serialised as a string, which describe's
    # JSON.stringify prints as "{\"a\":1}". Evidence: the plan's dogfood-derived grep for
    # reservedOnAttempt\":2 and the API schema's `output: string | number`. Objects and arrays are
    # re-encoded; scalars, null and truncated outputs are left alone.
    lines = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        match = _OUTPUT_LINE.match(body)
        if match:
            try:
                value = json.loads(match.group(2))
            except ValueError:
                value = None
            if isinstance(value, dict | list):
                encoded = json.dumps(match.group(2), ensure_ascii=False)
                line = match.group(1) + encoded + line[len(body) :]
        lines.append(line)
    return "".join(lines)


def filter_rows(text: str, hidden: Sequence[str]) -> str:
    """Drop table rows whose first cell names a deleted workflow."""
    kept = []
    for line in text.splitlines(keepends=True):
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 2 and cells[1] in hidden:
            continue
        kept.append(line)
    return "".join(kept)
