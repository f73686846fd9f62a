"""`director init NAME`: a new plan in this format that lints clean and applies on a fresh machine."""

from __future__ import annotations

import re

from director.plan import markers

TEMPLATE = """\
# {title} — a self-executing plan

> Self-executing Markdown: intent (prose), program (the fenced blocks), ledger (Live State). Written by
> `director init`; it creates a small local resource (a directory with a manifest) so it runs anywhere.

> **Provides / Requires**: **Provides** `store(STORE)`. **Requires** nothing.

## 🤖 Director prompt

You are the Director. Execute this plan:
- Observe-before-act; verify each step before advancing (verified frontier)
- Stop at every 🔴 GATE and 💥 for human "go"
- Write realized values + verify results back into Live State
- Teardown is resumable and **never deletes a bound (upstream) resource**
- Use only the commands in this plan

```
{legend}
```

## Intent

A named store with a manifest. **Acceptance contract:**
1. **Store ready** — the store exists and its manifest names the environment.

## Provisioning Inputs

| # | Question | Options (closed enum) | Default | Sets | Gates |
|---|----------|-----------------------|---------|------|-------|
| 1 | Environment | `dev` / `prod` | `dev` | `ENV` | every name (`*-${{ENV}}`) |

```yaml
# → written into Live State once resolved
resolved_inputs:
  env:         dev
  resolved_by: <human who confirmed>
  resolved_at: <timestamp>
```

## 0. Variables

```bash
export ENV="dev"
export NAME="{slug}"
export STORE="$PWD/${{NAME}}-${{ENV}}"
```

## 1. Store  🟢

```bash
mkdir -p "$STORE"
printf 'name=%s\\nenv=%s\\n' "$NAME" "$ENV" > "$STORE/manifest"
# → Live State: STORE
```
```bash
# ✔ the store exists
[ -f "$STORE/manifest" ] && echo "store $STORE exists" || {{ echo "store missing"; exit 1; }}
```

## 2. Acceptance  ✔

```bash
grep -qx "env=$ENV" "$STORE/manifest" && echo "1: manifest names $ENV" || {{ echo "1: wrong manifest"; exit 1; }}
```

## Live State

```yaml
status:        not-created      # published template - run it to realize state
last_action:   —
last_verified: —
resolved_inputs: {{ env: dev }}
```

| key   | value (filled on apply) |
|-------|-------------------------|
| STORE | `${{NAME}}-${{ENV}}` (the store) |

| ✔ check      | expected                         | observed | result |
|--------------|----------------------------------|----------|--------|
| store ready  | manifest names the environment   | —        | —      |

## Teardown (observe-first, resumable)  💥

```bash
rm -r "$STORE"
```
```bash
# ✔ verify teardown — the store is gone
[ ! -e "$STORE" ] && echo "store gone" || {{ echo "store STILL PRESENT"; exit 1; }}
```
"""


def render(name: str) -> str:
    """The scaffold text for a plan called NAME."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "plan"
    return TEMPLATE.format(title=name, slug=slug, legend=markers.legend())
