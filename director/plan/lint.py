"""Plan findings that are not parse errors: the plan runs, but something in it is weak or inconsistent.

Every code has one severity (`RULES`, documented in docs/lint.md): *error* (the run will misbehave: stop
midway, or a conditional gate can never apply), *warning* (weak or inconsistent, the team decides; the
seed plan keeps four on purpose), *info* (a note). A finding is silenced for one line by a comment
naming its code: `<!-- director-lint: disable=CODE[,CODE…] -->` or `# director-lint: disable=CODE` on the
line before it (inside a bash block, a bash comment), or the same bash comment at the end of its line;
`disable-file=CODE` anywhere silences the code for the whole plan (`all` silences every code).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from director.plan import bash, checkrows, hints, markers
from director.plan.markers import MarkerRule
from director.plan.model import BlockRole, Plan, Section, SectionKind, section_label
from director.plan.source import swallowed_fences
from director.plan.templates import stray_rules, target_variables, unlocated_rules


class Severity(enum.StrEnum):
    """How much a finding matters to CI: `director lint` exits 1 on errors (on warnings too with --strict)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


_ERR, _WARN, _INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# Every lint code, its severity and what it is about (docs/lint.md has an example of each).
RULES: dict[str, tuple[Severity, str]] = {
    "missing-verify": (_ERR, "a 🟢/🟡/⏳ section without a verify block: nothing to observe"),
    "unknown-knob": (_ERR, "a conditional marker or template rule names a knob no input sets"),
    "unknown-knob-value": (_ERR, "a conditional marker names a value the knob cannot take: it never applies"),
    "template-no-value": (_ERR, "a template rule whose line has no value to rewrite: the run stops there"),
    "template-knob-incomplete": (_ERR, "a knob-mapping rule misses one of the knob's options: the run stops"),
    "unclosed-fence": (_ERR, "a fence not closed before the next one opens: the blocks between are its text"),
    "unverified-act": (_WARN, "a section acts but never verifies"),
    "missing-marker": (_WARN, "a section with act blocks but no marker"),
    "missing-teardown": (_WARN, "no `## Teardown` section"),
    "teardown-without-verify": (_WARN, "the Teardown has no verify block"),
    "empty-teardown": (_WARN, "the Teardown has no bash block"),
    "destructive-outside-teardown": (_WARN, "a destructive command in a section not marked 💥"),
    "gated-verify-acts": (_ERR, "a gated section's verify destroys or alters something before the gate"),
    "gated-verify-writes": (_WARN, "a gated section's verify writes a file before the gate (a log, a copy)"),
    "input-not-a-choice": (_WARN, "a Provisioning Input with a single option"),
    "input-duplicate-option": (_WARN, "a Provisioning Input lists an option twice"),
    "knob-not-set": (_ERR, "§0 never assigns an input's knob: the operator's environment would decide it"),
    "knob-default-mismatch": (_WARN, "§0 assigns a knob another value than the input's default"),
    "verify-exit-status": (_WARN, "a verify pipeline whose status cannot show a failure (`… | tail -5`)"),
    "soft-alternative": (_WARN, "a failure line whose branch exits 0 (inconclusive, exit 10)"),
    "fail-without-exit": (_WARN, "a failure line the block goes on after"),
    "unenforced-check": (_WARN, "`cond && echo ok` without `|| exit 1`: a failed condition is not a failure"),
    "unknown-contract-label": (_WARN, "a check label naming no acceptance-contract item"),
    "missing-live-state": (_WARN, "no `## Live State` section"),
    "unfed-check-row": (_WARN, "a Live State check row no check feeds"),
    "contract-without-row": (_WARN, "an acceptance item without a Live State check row"),
    "multiple-templates": (_WARN, "two file templates for one target in a section"),
    "template-target-ambiguous": (_WARN, "a template path that two variables could name"),
    "template-rule-annotates-nothing": (_WARN, "a rule alone on a comment line with no value right below it"),
    "hint-unknown-key": (_WARN, "a `→ Live State:` hint names `$X`, and the key/value table has no key X"),
    "realized-without-hint": (_INFO, "a realized value whose section has no `→ Live State:` hint for it"),
    "unknown-fence-attribute": (_INFO, "a fence attribute Director does not use (ignored; e.g. Runme's)"),
    "judged-by-contrast": (_INFO, "a check that exits 0 whatever it finds: judged by the worlds seen"),
}


def severity_of(code: str) -> Severity:
    """The severity of a lint code (an unknown code, which is a bug, counts as an error)."""
    return RULES[code][0] if code in RULES else Severity.ERROR


@dataclass(frozen=True)
class Finding:
    """One lint finding; `line` is 1-based."""

    line: int
    code: str
    message: str

    @property
    def severity(self) -> Severity:
        return severity_of(self.code)

    def format(self, path: str | None) -> str:
        """`path:line: severity: code: message` (the compiler convention, with the code to suppress)."""
        return f"{path or '<plan>'}:{self.line}: {self.severity}: {self.code}: {self.message}"

    def to_json(self, path: str | None) -> dict[str, object]:
        return {
            "path": path,
            "line": self.line,
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
        }


_DIRECTIVE = re.compile(r"director-lint:\s*(disable|disable-file)\s*=\s*([\w,\s-]+?)\s*(?:-->|$)")
_COMMENT_LINE = re.compile(r"^\s*(?:<!--.*-->|#.*)\s*$")


@dataclass
class Suppressions:
    """The `director-lint: disable=…` comments of a plan's text."""

    by_line: dict[int, set[str]] = field(default_factory=dict)  # 1-based line → codes silenced there
    whole_file: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, source: str) -> Suppressions:
        out = cls()
        for row, text in enumerate(source.splitlines()):
            for m in _DIRECTIVE.finditer(text):
                codes = {c.strip() for c in m.group(2).split(",") if c.strip()}
                if m.group(1) == "disable-file":
                    out.whole_file |= codes
                    continue
                # A comment alone on its line covers the next line; a trailing one covers its own.
                line = row + 2 if _COMMENT_LINE.match(text) else row + 1
                out.by_line.setdefault(line, set()).update(codes)
        return out

    def covers(self, f: Finding) -> bool:
        codes = self.whole_file | self.by_line.get(f.line, set())
        return f.code in codes or "all" in codes


def split_suppressed(plan: Plan, findings: Iterable[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(reported, suppressed) by the plan's `director-lint: disable=…` comments."""
    sup = Suppressions.read(plan.source)
    reported: list[Finding] = []
    silenced: list[Finding] = []
    for f in findings:
        (silenced if sup.covers(f) else reported).append(f)
    return reported, silenced


def _where(s: Section) -> str:
    """`§3`, or an unnumbered section's title in quotes."""
    return section_label(s) if s.number is not None else f"'{s.title}'"


def _has(s: Section, meaning: Callable[[MarkerRule], bool]) -> bool:
    """Whether some marker of the section (conditional ones included) has this meaning."""
    return any(meaning(m.rule) for m in s.markers)


def _markers_text(s: Section, meaning: Callable[[MarkerRule], bool]) -> str:
    """`🟢/🟡`: the section's markers with this meaning."""
    return "/".join(m.marker.value for m in s.markers if meaning(m.rule))


def lint(plan: Plan) -> list[Finding]:
    """All findings for a parsed plan, sorted by line."""
    out: list[Finding] = []
    _sections(plan, out)
    _teardown(plan, out)
    _destructive_commands(plan, out)
    _inputs(plan, out)
    _verify_blocks(plan, out)
    _check_rows(plan, out)
    _realizations(plan, out)
    _hint_keys(plan, out)
    _templates(plan, out)
    _fence_attributes(plan, out)
    _gated_verify_effects(plan, out)
    _swallowed_fences(plan, out)
    return sorted(out, key=lambda f: (f.line, f.code, f.message))


def _sections(plan: Plan, out: list[Finding]) -> None:
    """Markers and verify blocks of the sections; conditions naming unknown knobs."""
    knobs = plan.knob_inputs()
    for s in plan.sections:
        line = s.span.first_line
        if s.kind is SectionKind.NUMBERED:
            if _has(s, lambda r: r.needs_verify) and not s.verify_blocks:
                out.append(
                    Finding(
                        line,
                        "missing-verify",
                        f"{_where(s)} is {_markers_text(s, lambda r: r.needs_verify)} but has no "
                        f"verify block (a bash block whose first line is `# ✔ …`)",
                    )
                )
            elif s.act_blocks and not s.verify_blocks and not _has(s, lambda r: r.check):
                out.append(
                    Finding(
                        line,
                        "unverified-act",
                        f"{_where(s)} acts but never verifies: the next section would start on faith",
                    )
                )
            if s.act_blocks and not s.markers:
                out.append(
                    Finding(
                        line,
                        "missing-marker",
                        f"{_where(s)} has act blocks but no marker ({markers.glyphs()})",
                    )
                )
        for m in s.markers:
            if m.condition is None:
                continue
            inp = knobs.get(m.condition.knob)
            if inp is None:
                out.append(
                    Finding(
                        line,
                        "unknown-knob",
                        f"marker {m.marker.value} is conditional on {m.condition.knob}, which no "
                        f"Provisioning Input sets",
                    )
                )
                continue
            bad = [v for v in m.condition.values if v not in inp.options]
            if bad:
                out.append(
                    Finding(
                        line,
                        "unknown-knob-value",
                        f"{m.condition.knob} has no option {', '.join(bad)} "
                        f"(options: {' / '.join(inp.options)})",
                    )
                )


def _teardown(plan: Plan, out: list[Finding]) -> None:
    """A Teardown exists, runs something and verifies it."""
    td = plan.teardown
    if td is None:
        out.append(
            Finding(
                plan.title_line + 1,
                "missing-teardown",
                "no `## Teardown` section: `director teardown` would have nothing to run",
            )
        )
        return
    if not td.verify_blocks:
        out.append(
            Finding(
                td.span.first_line,
                "teardown-without-verify",
                "the Teardown has no verify block (`# ✔ …`): a resumed teardown cannot tell it is done",
            )
        )
    if not td.executable_blocks:
        out.append(Finding(td.span.first_line, "empty-teardown", "the Teardown has no bash block"))


def _destructive_commands(plan: Plan, out: list[Finding]) -> None:
    """Destructive commands only in sections with a destructive marker (💥)."""
    functions = frozenset(
        n for s in plan.sections for b in s.executable_blocks for n in bash.function_names(b.text)
    )
    destructive_glyphs = "/".join(r.glyph for r in markers.MARKERS if r.destructive)
    for s in plan.sections:
        if _has(s, lambda r: r.destructive):
            continue
        for b in s.executable_blocks:
            for d in bash.destructions(b.text, plan_functions=functions):
                if not d.strong:
                    continue  # removing or writing a file of its own is what a create section does
                what = d.what
                out.append(
                    Finding(
                        b.body_start + d.row + 1,
                        "destructive-outside-teardown",
                        f"`{what}` is destructive but {_where(s)} is not marked {destructive_glyphs} "
                        f"(destructive commands need a human go)",
                    )
                )


def _inputs(plan: Plan, out: list[Finding]) -> None:
    """Inputs are real choices and §0 sets each knob to its default."""
    zero = next((s for s in plan.sections if s.kind is SectionKind.VARIABLES), None)
    zero_text = "\n".join(b.text for b in zero.executable_blocks) if zero else ""
    for i in plan.inputs:
        line = i.line + 1
        if len(i.options) < 2:
            out.append(
                Finding(
                    line,
                    "input-not-a-choice",
                    f"input {i.number} ({i.knob}) has a single option: it is not a question",
                )
            )
        dups = sorted({o for o in i.options if i.options.count(o) > 1})
        if dups:
            out.append(
                Finding(line, "input-duplicate-option", f"input {i.number} lists {', '.join(dups)} twice")
            )
        m = re.search(rf"(?<![\w$]){re.escape(i.knob)}=(\"[^\"]*\"|'[^']*'|[^\s;]*)", zero_text)
        if m is None:
            where = "§0 never assigns" if zero is not None else "the plan has no §0 to assign"
            out.append(
                Finding(
                    line,
                    "knob-not-set",
                    f"{where} {i.knob}: blocks would see it only from the operator's environment, whatever "
                    f"--set or the interview resolve (add `export {i.knob}=\"{i.default}\"` to §0)",
                )
            )
            continue
        value = m.group(1).strip("\"'")
        if "$" not in value and value != i.default:
            out.append(
                Finding(
                    line,
                    "knob-default-mismatch",
                    f"§0 sets {i.knob}={value} but the input's default is {i.default}",
                )
            )
        elif "$" not in value and value not in i.options:
            out.append(
                Finding(line, "knob-default-mismatch", f"§0 sets {i.knob}={value}, not one of its options")
            )


def _verify_blocks(plan: Plan, out: list[Finding]) -> None:
    """Verify blocks whose exit status cannot show a failure; labels naming no contract item."""
    contract = {c.number for c in plan.contract}
    for s in plan.sections:
        for b in s.verify_blocks:
            for issue in bash.verify_issues(b.text, b.context):
                out.append(Finding(b.body_start + issue.line + 1, issue.code, issue.message))
            reported: set[str] = set()
            for c in b.checks:
                m = re.match(r"\d+", c.label or "")
                if m and contract and int(m.group(0)) not in contract and c.label not in reported:
                    reported.add(c.label or "")
                    out.append(
                        Finding(
                            c.line + 1,
                            "unknown-contract-label",
                            f"check label {c.label} names no acceptance-contract item",
                        )
                    )


def _check_rows(plan: Plan, out: list[Finding]) -> None:
    """Every check-table row is fed; every contract item has a row."""
    ls = plan.live_state
    if ls is None:
        out.append(
            Finding(
                plan.title_line + 1,
                "missing-live-state",
                "no `## Live State` section: Director has nowhere to write realized values",
            )
        )
        return
    for r in ls.check_rows:
        if not r.fed_by:
            out.append(
                Finding(
                    r.line + 1,
                    "unfed-check-row",
                    f"no check feeds the row {r.name!r}: name a contract item (labelled checks "
                    f"`N: …`) or use words of a section's `# ✔` verify title",
                )
            )
    for c in plan.contract:
        if not any(checkrows.contract_item_for(r.name, plan.contract) == c for r in ls.check_rows):
            out.append(
                Finding(
                    c.line + 1,
                    "contract-without-row",
                    f"acceptance item {c.number} ({c.title}) has no row in the Live State check table",
                )
            )


def _realizations(plan: Plan, out: list[Finding]) -> None:
    """A realized value names a section that says it writes it."""
    by_key = {s.key: s for s in plan.sections}
    for s in plan.sections:
        for b in s.blocks:
            for rz in b.realizations:
                target = by_key.get(rz.section)
                if target is None:
                    continue
                hints = list(target.hints) + [h for tb in target.blocks for h in tb.hints]
                if not any(re.search(rf"(?<!\w){re.escape(rz.var)}(?!\w)", h, re.IGNORECASE) for h in hints):
                    out.append(
                        Finding(
                            rz.line + 1,
                            "realized-without-hint",
                            f"{rz.var} is realized in §{rz.section}, but §{rz.section} has no "
                            f"`→ Live State:` hint naming {rz.var}",
                        )
                    )


def _hint_keys(plan: Plan, out: list[Finding]) -> None:
    """A hint's `$X` names the key a run realizes from the variable X: the table must have that key."""
    ls = plan.live_state
    if ls is None:
        return
    keys = [r.key for r in ls.kv_rows]
    lines = plan.source.splitlines()
    for s in plan.sections:
        for h in list(s.hints) + [h for b in s.blocks for h in b.hints]:
            unknown = hints.unknown_refs(h, keys)
            if not unknown:
                continue
            where = next(
                (i + 1 for i in range(s.span.start, min(s.span.end, len(lines))) if h in lines[i]),
                s.span.first_line,
            )
            names = ", ".join(f"${n}" for n in unknown)
            out.append(
                Finding(
                    where,
                    "hint-unknown-key",
                    f"the `→ Live State:` hint names {names}, but the key/value table has no key "
                    f"{', '.join(unknown)} (keys: {', '.join(keys) or 'none'}): a key is realized from the "
                    "variable of its exact name, so nothing is realized by it",
                )
            )


def _templates(plan: Plan, out: list[Finding]) -> None:
    """Templates: one per target, the target unambiguous, every rule locatable and complete."""
    knobs = plan.knob_inputs()
    target_vars = target_variables(plan)
    for s in plan.sections:
        targets = [b for b in s.blocks if b.role is BlockRole.TEMPLATE]
        if len(targets) > 1:
            out.append(
                Finding(
                    targets[1].span.first_line,
                    "multiple-templates",
                    f"{_where(s)} has {len(targets)} templates for one target "
                    f"`{targets[0].template_target}`; the last one written wins",
                )
            )
        for b in targets:
            names = target_vars.get((s.key, b.index), ())
            if len(names) > 1:
                out.append(
                    Finding(
                        b.span.first_line,
                        "template-target-ambiguous",
                        f"`{b.template_target}` could be {' or '.join('$' + n for n in names)}; "
                        "the run stops if they name different files",
                    )
                )
            for off in stray_rules(b.text, b.lang):
                out.append(
                    Finding(
                        b.body_start + off + 1,
                        "template-rule-annotates-nothing",
                        "this rule stands alone on its comment line, but the line below it holds no value: "
                        "it rewrites nothing (a rule above a value must sit directly above it)",
                    )
                )
            for off, what in unlocated_rules(b):
                out.append(
                    Finding(
                        b.body_start + off + 1,
                        "template-no-value",
                        f"no {b.lang} value for {what} on this line: the run would stop here",
                    )
                )
            for tl in b.template_lines:
                for rule in tl.rules:
                    if rule.kind != "knob":
                        continue
                    line = b.body_start + tl.offset + 1
                    inp = knobs.get(rule.knob)
                    if inp is None:
                        out.append(
                            Finding(
                                line,
                                "unknown-knob",
                                f"template rule maps {rule.knob}, which no Provisioning Input sets",
                            )
                        )
                        continue
                    mapped = [v for v, _ in rule.mapping]
                    missing = [o for o in inp.options if o not in mapped]
                    if missing:
                        out.append(
                            Finding(
                                line,
                                "template-knob-incomplete",
                                f"template rule for {rule.knob} has no literal for {', '.join(missing)}",
                            )
                        )


def _fence_attributes(plan: Plan, out: list[Finding]) -> None:
    """Fence attributes Director does not use (another tool's, e.g. Runme's): kept, ignored, noted."""
    for s in plan.sections:
        for b in s.blocks:
            for key in b.fence.unknown:
                out.append(
                    Finding(
                        b.span.first_line,
                        "unknown-fence-attribute",
                        f"fence attribute {key!r} is ignored by Director (it uses retries, backoff, delay, "
                        "timeout, processes, approvals, self-approval and Runme's name, cwd, interactive, "
                        "excludeFromRunAll, id)",
                    )
                )


# -- gated sections: what runs before their gate ------------------------------------------------------

# Programs that destroy or alter what exists (files, processes): never an observation, an error before a gate.
_ALTERS = frozenset(
    {"mv", "rm", "rmdir", "chmod", "chown", "chgrp", "truncate", "shred", "kill", "pkill", "killall", "dd",
     "unlink"}
)  # fmt: skip
# Programs that create or write files: a check may keep a log or a scratch copy, so only a warning.
_CREATES = frozenset({"touch", "mkdir", "cp", "ln", "install", "tee", "mkfifo", "mknod"})
_QUIET_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def _quiet(target: str | None) -> bool:
    """A redirection that writes no file: `/dev/null`, a descriptor (`>&2`)."""
    return target in _QUIET_TARGETS or (target or "").startswith("&")


def _gated_verify_effects(plan: Plan, out: list[Finding]) -> None:
    """A gated (🔴/💥) section's verify blocks run before its gate (observe before act) and without an
    approval. One that lint can show to destroy or alter something -- a destructive command, a program
    that removes, moves, truncates or kills, `sed -i` -- is an error (`gated-verify-acts`); one that only
    creates or writes a file -- a log through `tee` or `>`, a scratch copy, a marker -- is a warning
    (`gated-verify-writes`): real checks keep such bookkeeping, and it destroys nothing. Silence one line
    with `# director-lint: disable=CODE` (docs/lint.md)."""
    functions = frozenset(
        n for s in plan.sections for b in s.executable_blocks for n in bash.function_names(b.text)
    )
    for s in plan.sections:
        if not _has(s, lambda r: r.gates):
            continue
        for b in s.verify_blocks:
            alters: dict[int, str] = {}
            writes_at: dict[int, str] = {}
            for d in bash.destructions(b.text, plan_functions=functions):
                # a redirection that overwrites a file writes it: a log, not a removal
                (writes_at if d.what.lstrip("&").startswith(">") else alters).setdefault(d.row, f"`{d.what}`")
            for c in bash.parse(b.text).commands:
                writes = [r.target for r in c.redirects if r.op in (">", ">>", ">|", "&>", "&>>", "<>")]
                writes = [t for t in writes if t is None or not _quiet(t.static)]
                probe = (c.program == "kill" and [a.static for a in c.args[:2]] in (["-0"], ["-s", "0"])) or (
                    c.program == "kill" and bool(c.args) and c.args[0].static in ("-0", "-l", "-L")
                )  # `kill -0 PID` only asks whether it runs
                if c.kind == "command" and c.program in _ALTERS and not probe:
                    alters.setdefault(c.row, f"`{c.program}`")
                elif c.kind == "command" and c.program == "sed" and any(
                    (a.static or "").startswith("-i") for a in c.args
                ):
                    alters.setdefault(c.row, "`sed -i`")
                elif c.kind == "command" and c.program in _CREATES:
                    writes_at.setdefault(c.row, f"`{c.program}`")
                elif writes:
                    writes_at.setdefault(c.row, f"`> {writes[0].text if writes[0] is not None else ''}`")
            for row, what in sorted(alters.items()):
                out.append(
                    Finding(
                        b.body_start + row + 1,
                        "gated-verify-acts",
                        f"{what} in the verify block of {_where(s)} changes the world, but a verify runs "
                        "before the gate (observe before act) and without an approval: move it into the act",
                    )
                )
            for row, what in sorted(writes_at.items()):
                if row in alters:
                    continue
                out.append(
                    Finding(
                        b.body_start + row + 1,
                        "gated-verify-writes",
                        f"{what} in the verify block of {_where(s)} writes a file before the gate (observe "
                        "before act) and without an approval: keep it to a scratch file or log, or move it "
                        "into the act",
                    )
                )


def _swallowed_fences(plan: Plan, out: list[Finding]) -> None:
    """A fence not closed before the next one opens: the next block is its text (`swallowed_fences`)."""
    blocks = [(b.span.start, b.body_start, b.text) for s in plan.sections for b in s.blocks]
    for line, inner_line, inner in swallowed_fences(plan.source, blocks):
        out.append(Finding(line, "unclosed-fence", f"this fence is not closed before line {inner_line} opens "
                           f"another ({inner[:40]!r}): everything up to the next closing fence is this "
                           "block's text, never run as a block of its own; close this fence"))  # fmt: skip
