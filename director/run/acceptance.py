"""✔ sections in the world before the plan's first act: a known world for verdicts by contrast.

An acceptance (✔) section runs only after the acts, so Director never saw its checks around an act: a check
that speaks only through its messages stayed "never seen in a known world" and every apply ended
*unconfirmed* (exit 10). Yet one world is known without looking: before the plan's first act nothing the
plan builds exists. So at the first act of a plan whose Live State says nothing exists (`not-created`,
`gone`) -- or, without Live State, whose journal holds no success of any section -- Director runs each ✔
section's checks once, traced, as an observation of that world (`Worlds.saw`: nothing is learned yet, no
row is written, nothing is journaled as a step). When the ✔ section runs after the acts, its checks are
contrasted with that observation as a section's verify is with the one before its act: a path that changed
is learned (before: not held, after: held); one that did not leaves the check to its structure.

When running a check in a world that holds nothing is safe (docs/verify-semantics.md, "✔ sections"): an
acceptance check may *exercise* what the plan built (send it a request, trigger a job), and in a world
where nothing was built an exercise has nothing to reach -- it fails, and that failure is what the
not-held world looks like. What must not run there is a check that writes: a block the analyser reads as
creating or destroying something (`bash.creates`, `bash.destructions`: a redirection into a file, `mkdir`,
`rm`, `sqlite3 db …` writing a file …) is skipped, and so is every block of a section whose fence or title
Director does not run as a check. The observation runs in a subshell of the session before the first act:
it leaves no trace in it.
"""

from __future__ import annotations

from collections.abc import Mapping

from director.plan import bash, contrast, knobs
from director.plan.model import Section, SectionKind
from director.run import fingerprint, session, steps
from director.run.context import Run

# Live State statuses that say nothing the plan builds exists (`director.run.preview.LEDGER_ABSENT`).
_ABSENT = ("not-created", "gone")


def _nothing_exists(run: Run) -> bool:
    """Whether the plan's world holds nothing it builds: its Live State says so, or (without one) no
    section ever succeeded."""
    ls = run.plan.live_state
    if ls is not None and "status" in ls.data:
        return str(ls.data.get("status", "")).split(" ", 1)[0] in _ABSENT
    return not any(
        run.successes.last(f"{s.key}/section") is not None
        for s in run.plan.executable_sections
        if s.kind is not SectionKind.VARIABLES
    )


def _acceptance(run: Run) -> list[Section]:
    """The ✔ sections this run has not verified yet."""
    return [
        s
        for s in run.plan.executable_sections
        if s.kind is SectionKind.NUMBERED
        and knobs.is_check_section(s, run.knobs)
        and s.key not in run.completed_sections
    ]


def writes(text: str) -> bool:
    """Whether a check block may write something (never run in a world it was not meant for)."""
    return bool(bash.creates(text)) or bool(bash.destructions(text))


def before_first_act(run: Run) -> None:
    """Right before this run's first act: observe the ✔ sections in the world that holds nothing yet."""
    if run.acted or not _nothing_exists(run):
        return
    for section in _acceptance(run):
        texts = fingerprint.block_texts(section, run.knobs, run.realized)
        for b in section.verify_blocks:
            text = texts[b.index]
            if writes(text):
                continue
            start = steps.block_session(run.session, b, run.workdir)
            res = run.shell.run(
                text, start, timeout_s=run.cfg.step_timeout_s, on_output=None, trace=True,
                keeps_session=session.kept_by(start, text),
            )  # fmt: skip
            j, _ = steps.judge_block(b, text, res, run.worlds, family="apply", phase="observe")
            run.journal.record_event(
                run.run_id,
                "acceptance-observed",
                {"section": section.key, "block": b.index, "verdict": j.verdict.value, "world": "absent"},
            )


def seen_before(run: Run, section: Section, texts: Mapping[int, str]) -> bool:
    """Whether every check of this ✔ section was observed earlier in this run (before the first act)."""
    blocks = section.verify_blocks
    return bool(blocks) and all(
        run.worlds.before(contrast.block_key(texts[b.index]), "apply") is not None for b in blocks
    )
