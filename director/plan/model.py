"""The plan model: frozen dataclasses produced by `parse.parse` and read by everything else.

Line numbers are 0-based half-open spans as markdown-it's `Token.map` gives them; messages show them
1-based (`Span.first_line`). Every node keeps the span of the source it came from so that write-back can
splice exactly the bytes Director owns.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from director.plan.fence import FenceAttributes
from director.plan.markers import Marker as Marker
from director.plan.markers import MarkerRule, rule
from director.plan.source import whole_number

if TYPE_CHECKING:
    from director.plan.bash import VerifyModel


@dataclass(frozen=True)
class Span:
    """Lines [start, end) of the plan source, 0-based (markdown-it `Token.map`)."""

    start: int
    end: int

    @property
    def first_line(self) -> int:
        """1-based line number of the first line, for messages."""
        return self.start + 1


@dataclass(frozen=True)
class Condition:
    """`KNOB in values`: a heading marker that applies only for some knob values."""

    knob: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class MarkerSpec:
    """One marker on a heading, possibly conditional, with its note (e.g. "outward-facing")."""

    marker: Marker
    condition: Condition | None = None
    note: str = ""

    @property
    def rule(self) -> MarkerRule:
        """The marker's row of the marker table: what it means for a run."""
        return rule(self.marker)


class SectionKind(enum.Enum):
    """What a `##` section is, by the plan conventions."""

    VARIABLES = "variables"  # ## 0. Variables
    NUMBERED = "numbered"  # ## 1. …, ## 2. …
    DISCOVERY = "discovery"  # ## Requires-discovery (read-only …) ✔
    TEARDOWN = "teardown"  # ## Teardown (…) 💥
    UPDATE = "update"  # ## Update (idempotent reconcile)
    INPUTS = "inputs"  # ## Provisioning Inputs
    PROMPT = "prompt"  # ## 🤖 Director prompt
    LIVE_STATE = "live-state"  # ## Live State
    PROSE = "prose"  # anything else: kept byte-for-byte, never executed


class BlockRole(enum.Enum):
    """What Director does with a fenced block."""

    ACT = "act"  # executable, changes things
    VERIFY = "verify"  # executable, read-only observation (`# ✔` first line, or any block of a ✔ section)
    TEMPLATE = "template"  # non-shell block in a numbered section: written to the file its heading names
    ILLUSTRATIVE = "illustrative"  # yaml/other outside Live State; not executed
    DIAGRAM = "diagram"  # fenced block with no language (dependency frontier…); informational
    LEGEND = "legend"  # the `Legend 🟢 create · …` block
    RESOLVED_INPUTS = "resolved-inputs"  # the `resolved_inputs:` yaml template
    LIVE_STATE = "live-state"  # the Live State yaml block


class CheckPolarity(enum.Enum):
    """Whether a printed check line means the check passed or failed."""

    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class CheckLine:
    """An `echo "…"` in a verify block: the line a check prints when it passes (or fails).

    `message` is the echo's literal text (variables unexpanded, e.g. `workflow $WF registered`);
    `label` is its contract label (`1`, `2a`) when the message starts with `LABEL:`. The polarity is
    read from the block's structure (`director.plan.bash`): a pass line runs on the success path, a failure
    line after `||` or before an `exit 1`. `soft` marks a failure line whose branch lets the block exit
    0 (`cond && echo A || echo B`): when printed, the check is inconclusive, never a pass.
    """

    message: str
    polarity: CheckPolarity
    line: int  # 0-based line in the plan
    label: str | None = None
    soft: bool = False


# How the delay between retries grows: doubling from `delay`, or always `delay`.
Backoff = Literal["exponential", "constant"]


@dataclass(frozen=True)
class RetryPolicy:
    """Declared in the fence info string: ```bash {retries=3 backoff=exponential delay=2s timeout=5m}."""

    retries: int = 0
    backoff: Backoff = "exponential"
    delay_s: float = 1.0
    timeout_s: float | None = None


@dataclass(frozen=True)
class Realization:
    """`VAR="placeholder"   # realized in §N`: use the value realized for key VAR in section N."""

    var: str
    section: str  # section key, e.g. "3"
    line: int  # 0-based line in the plan
    placeholder: str  # the assignment's literal value as written


@dataclass(frozen=True)
class TemplateRule:
    """One regeneration rule of a file template line (read and applied by `director.plan.templates`).

    kind "expr": the value of `key` (or the line's value when key is None, found per the fence language)
    becomes the expansion of `expr` (`// = ${WORKER}` or `// name = ${WF}`), in the value's type and quoting.
    kind "knob": the value becomes `mapping[knob value]` as written
    (`// TRIGGER=http → true; cli/binding → false`).
    """

    kind: Literal["expr", "knob"]
    key: str | None = None
    expr: str = ""
    knob: str = ""
    mapping: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TemplateLine:
    """A line of a file template that carries regeneration rules."""

    offset: int  # 0-based line within the block body
    rules: tuple[TemplateRule, ...]


@dataclass(frozen=True)
class Block:
    """A fenced block. `text` is the body exactly as written (no fences)."""

    index: int  # position among the section's blocks, 0-based
    lang: str  # first word of the info string ("bash", "jsonc", "" …)
    info: str  # the whole info string
    role: BlockRole
    text: str
    span: Span  # fence lines included
    body_start: int  # 0-based line of the first body line
    retry: RetryPolicy | None = None
    checks: tuple[CheckLine, ...] = ()
    realizations: tuple[Realization, ...] = ()
    hints: tuple[str, ...] = ()  # `# → Live State: …` comments inside the block
    template_lines: tuple[TemplateLine, ...] = ()
    template_target: str | None = None  # file path template from the heading (`${SVC}.jsonc`)
    verify_title: str = ""  # text of the `# ✔ …` first line, without the marker
    verify: VerifyModel | None = field(default=None, compare=False, repr=False)  # verify blocks: its checks
    # The fence's `{key=value …}` attributes as written (retry policy, Runme's name/cwd/…): fence.py
    attributes: tuple[tuple[str, str], ...] = ()
    # Verify blocks: the definitions of session functions (from earlier blocks) the block calls
    context: str = field(default="", compare=False, repr=False)

    @property
    def fence(self) -> FenceAttributes:
        return FenceAttributes(self.attributes)

    @property
    def name(self) -> str | None:
        """Runme's `name=` (None when the fence names none)."""
        return self.fence.name

    @property
    def cwd(self) -> str | None:
        """Runme's `cwd=`: the directory the block starts in (relative to the session's)."""
        return self.fence.cwd


@dataclass(frozen=True)
class Section:
    """A `##` section of the plan."""

    key: str  # "0", "1", … for numbered sections; "discovery", "teardown", "update", slug otherwise
    number: int | None
    title: str  # heading text without markers and notes ("Deploy", "Bindings — `${SVC}.jsonc`")
    heading: str  # the heading line as written
    kind: SectionKind
    markers: tuple[MarkerSpec, ...]
    blocks: tuple[Block, ...]
    quotes: tuple[str, ...]  # blockquote paragraphs, as written (without `> `)
    hints: tuple[str, ...]  # `> → Live State: …` lines
    span: Span  # heading to the line before the next `##`
    slug: str = ""

    @property
    def executable_blocks(self) -> tuple[Block, ...]:
        """Act and verify blocks, in document order."""
        return tuple(b for b in self.blocks if b.role in (BlockRole.ACT, BlockRole.VERIFY))

    @property
    def act_blocks(self) -> tuple[Block, ...]:
        """The act blocks, in document order."""
        return tuple(b for b in self.blocks if b.role is BlockRole.ACT)

    @property
    def verify_blocks(self) -> tuple[Block, ...]:
        """The verify blocks, in document order."""
        return tuple(b for b in self.blocks if b.role is BlockRole.VERIFY)

    @property
    def template_blocks(self) -> tuple[Block, ...]:
        """The file templates, in document order."""
        return tuple(b for b in self.blocks if b.role is BlockRole.TEMPLATE)


def section_label(section: Section) -> str:
    """How messages name a section: `§3` for a numbered one, its key otherwise (`discovery`, `teardown`)."""
    return f"§{section.key}" if section.number is not None else section.key


def key_label(key: str) -> str:
    """`section_label` from a key alone (events and the journal carry keys): numbered keys are digits."""
    return f"§{key}" if key.isdigit() else key


def label_list(labels: Iterable[str]) -> str:
    """Section labels as a list a human reads, three or more consecutive numbers as a range:
    `§0–§2, §4, discovery` (a run over a thousand sections says `§1–§1000`, not every one of them)."""
    ranges = LabelRanges()
    for label in labels:
        ranges.add(label)
    return str(ranges)


class LabelRanges:
    """`label_list` built a label at a time: adding one costs the same whatever came before, and the text
    costs its ranges, not its labels (a run's summary names every section it applied, after each one:
    read whole each time, a run over N sections would read N²/2 labels)."""

    __slots__ = ("_first", "_last", "_parts")

    def __init__(self) -> None:
        self._parts: list[str] = []  # closed: ranges and single labels, in order
        self._first = self._last = -1  # the open run of consecutive numbers (-1: none)

    def add(self, label: str) -> None:
        digits = label[1:]
        n = whole_number(digits) if label.startswith("§") else None
        if n is not None and digits == str(n):
            if self._last >= 0 and n == self._last + 1:
                self._last = n
                return
            self._close()
            self._first = self._last = n
        else:
            self._close()
            self._parts.append(label)

    def _open(self) -> list[str]:
        first, last = self._first, self._last
        if first < 0:
            return []
        if last - first >= 2:
            return [f"§{first}–§{last}"]
        return [f"§{n}" for n in range(first, last + 1)]

    def _close(self) -> None:
        self._parts.extend(self._open())
        self._first = self._last = -1

    def __bool__(self) -> bool:
        return bool(self._parts) or self._first >= 0

    def __str__(self) -> str:
        return ", ".join([*self._parts, *self._open()])


@dataclass(frozen=True)
class Input:
    """A Provisioning Inputs row: a closed question that sets a knob."""

    number: int
    question: str
    options: tuple[str, ...]
    default: str
    knob: str  # the shell variable in the Sets column (e.g. TRIGGER)
    gates: str
    line: int  # 0-based


@dataclass(frozen=True)
class ContractItem:
    """A numbered item of the acceptance contract (`1. **Happy path** — …`)."""

    number: int
    title: str
    text: str
    line: int


@dataclass(frozen=True)
class KVRow:
    """A row of the Live State key/value table; `value` is the cell as written (a template)."""

    key: str
    value: str
    line: int


@dataclass(frozen=True)
class CheckRow:
    """A row of the Live State check table, and the checks that feed it.

    `fed_by` holds references: `label:2a` (a labelled check line) or `section:3` (a section's verify).
    """

    name: str
    expected: str
    observed: str
    result: str
    line: int
    fed_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Table:
    """A Markdown pipe table: header cells, rows of cells, and where it stands."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    span: Span


@dataclass(frozen=True)
class LiveState:
    """The `## Live State` section: the ledger Director writes back into."""

    span: Span  # the whole section
    yaml_text: str
    yaml_span: Span | None  # the yaml fenced block, fences included
    data: dict[str, Any]  # the YAML as plain JSON-able data
    kv_table: Table | None
    kv_rows: tuple[KVRow, ...]
    check_table: Table | None
    check_rows: tuple[CheckRow, ...]

    @functools.cached_property
    def fed_refs(self) -> frozenset[str]:
        """What the check rows are fed by (`label:2a`, `section:3`): the only results a run keeps for them."""
        return frozenset(ref for row in self.check_rows for ref in row.fed_by)


@dataclass(frozen=True)
class Plan:
    """A parsed plan. `source` is the text it was parsed from (kept for splicing)."""

    title: str
    path: str | None
    source: str
    newline: str  # "\n" or "\r\n"
    preamble: tuple[str, ...]
    prompt_rules: tuple[str, ...]
    legend: str
    inputs: tuple[Input, ...]
    resolved_inputs_template: dict[str, Any]
    sections: tuple[Section, ...]
    contract: tuple[ContractItem, ...]
    live_state: LiveState | None
    title_line: int = 0
    # What is computed once from the plan's sections other than Live State (an index the engine would
    # otherwise rebuild from the whole plan after every section: `ledger.cells.discovered_vars`), by name.
    # `reparse.reparse_live_state` derives the plan after a ledger write with `dataclasses.replace`, so the
    # two share it: that re-read changes Live State alone, which feeds none of it. Not compared.
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def section(self, key: str) -> Section:
        """The section with this key (number as a string, or slug); KeyError if none."""
        for s in self.sections:
            if s.key == key:
                return s
        raise KeyError(key)

    @property
    def plan_id(self) -> object:
        """The `plan_id` its Live State names (None: none): what keys its state in a shared database and
        its identity in a signed receipt, wherever the plan file lies."""
        return self.live_state.data.get("plan_id") if self.live_state is not None else None

    @property
    def executable_sections(self) -> tuple[Section, ...]:
        """Sections apply walks, in execution order: §0, Requires-discovery, then §1… (not Teardown)."""
        zero = [s for s in self.sections if s.kind is SectionKind.VARIABLES]
        disc = [s for s in self.sections if s.kind is SectionKind.DISCOVERY]
        rest = [s for s in self.sections if s.kind is SectionKind.NUMBERED]
        return tuple(zero + disc + rest)

    @property
    def teardown(self) -> Section | None:
        """The Teardown section, if the plan has one."""
        for s in self.sections:
            if s.kind is SectionKind.TEARDOWN:
                return s
        return None

    def knob_inputs(self) -> dict[str, Input]:
        """Inputs by knob name (upper case as in the plan)."""
        return {i.knob: i for i in self.inputs}
