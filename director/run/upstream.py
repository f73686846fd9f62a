"""The upstream guard: a teardown never destroys a resource the plan only discovered (bound, not created).

Two defences. Before anything runs, the teardown's commands are read by the bash analyser: a command that
deletes, drops, truncates or overwrites a word naming an upstream resource -- by its variable, its value,
a glob that matches it, or a directory that holds it -- is refused (exit 9). And while the teardown runs,
Requires-discovery's probes are run again after each block: one that passed before and fails now stops
the teardown at once (exit 9).
"""

from __future__ import annotations

import fnmatch
import re

from director.errors import UpstreamGuard
from director.ledger import cells
from director.plan import bash
from director.plan.model import Block, KVRow, Plan, Section, SectionKind
from director.plan.verify import Judgement, Verdict
from director.run import fingerprint, steps
from director.run.context import Run
from director.state.lifecycle import RunState

Probe = tuple[Section, Block, str]  # a discovery block and the text it runs


def upstream_rows(plan: Plan) -> list[KVRow]:
    """Key/value rows the format marks as discovered upstream resources (bound, not created here)."""
    ls = plan.live_state
    return [r for r in (ls.kv_rows if ls else ()) if "discovered" in r.value.lower()]


def upstream_names(plan: Plan, env: dict[str, str]) -> dict[str, str]:
    """Upstream resources by variable (`bound:VALUE` for ledger rows): what teardown must not touch."""
    names = {var: env[var] for var in cells.discovered_vars(plan) if env.get(var)}
    for row in upstream_rows(plan):
        for lit in re.findall(r"`([^`]+)`", row.value):
            for part in re.split(r"[,\s]+", lit):
                val = part.split("=", 1)[-1]
                if val and val not in {"—", "-"}:
                    names.setdefault(f"bound:{val}", val)
    return names


def names_resource(word: bash.Word, var: str, value: str, env: dict[str, str]) -> bool:
    """Whether a destroyed word names `value`: as its variable, its expansion, a glob or a parent dir."""
    if not var.startswith("bound:") and word.whole_var == var:
        return True
    expanded = re.sub(
        r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)",
        lambda m: env.get(m.group(1) or m.group(2), m.group(0)),
        word.pattern,
    )
    if "$" in expanded:
        return False
    if expanded == value:
        return True
    if word.glob and fnmatch.fnmatchcase(value, expanded):
        return True
    return value.startswith(expanded.rstrip("/") + "/") and len(expanded.rstrip("/")) > 1


def refuse_destroying_commands(run: Run, td: Section, texts: dict[int, str]) -> None:
    """Refuse, before anything runs, a teardown command that destroys a bound upstream resource."""
    env = dict(run.session.variables)
    names = upstream_names(run.plan, env)
    if not names:
        return
    functions = frozenset(
        n for s in run.plan.sections for b in s.executable_blocks for n in bash.function_names(b.text)
    )
    for b in td.act_blocks:
        for d in bash.destructions(texts[b.index], plan_functions=functions):
            for w in d.targets:
                for var, val in names.items():
                    if names_resource(w, var, val, env):
                        raise UpstreamGuard(
                            f"{run.pf.path}:{b.body_start + d.row + 1}: teardown command `{d.what}` would "
                            f"destroy the bound upstream resource {val!r} ({var.removeprefix('bound:')}, "
                            "discovered in Requires-discovery, not created by this plan); Director will "
                            "not run it"
                        )


def _probe(run: Run, block: Block, text: str) -> Judgement:
    """Run a read-only probe in a copy of the session (its state is not kept) and judge it."""
    r = run.shell.run(text, run.session, timeout_s=run.cfg.step_timeout_s, on_output=None, trace=True)
    return steps.judge_block(block, text, r)[0]


def observe(run: Run) -> list[Probe]:
    """Requires-discovery's probes, run read-only: those that pass name upstream resources that exist."""
    present: list[Probe] = []
    for section in run.plan.sections:
        if section.kind is not SectionKind.DISCOVERY:
            continue
        texts = fingerprint.block_texts(section, run.knobs, run.realized)
        for b in section.executable_blocks:
            if _probe(run, b, texts[b.index]).verdict is Verdict.PASSED:
                present.append((section, b, texts[b.index]))
    if present:
        run.journal.record_event(
            run.run_id,
            "upstream-observed",
            {"probes": [f"{s.key}@{b.span.first_line}" for s, b, _ in present]},
        )
    return present


def recheck(run: Run, td: Section, after: Block, present: list[Probe]) -> None:
    """After a teardown block: an upstream probe that passed and fails now stops the run (exit 9)."""
    for section, b, text in present:
        j = _probe(run, b, text)
        if j.verdict is Verdict.PASSED:
            continue
        msg = (
            f"{run.pf.path}:{after.span.first_line}: after this teardown block, the upstream resource "
            f"probed by {section.title} (plan line {b.span.first_line}) is no longer there "
            f"({j.observed or j.reason}); Director stopped the teardown at once"
        )
        run.journal.record_event(run.run_id, "upstream-lost", {"probe": b.span.first_line})
        run.finish(RunState.FAILED, td.key, msg, ledger=False)
        raise UpstreamGuard(msg)
