"""The one bash analyser: every question Director asks about a block's bash is answered here.

It reads a block with a real grammar (tree-sitter-bash) and answers, by structure and never by wording:
which commands a block runs (with their words, redirections, enclosing function and source lines), which
variables it reads and assigns (fingerprints, gate contents), its comments, which commands destroy
things, whether it calls a program (the wrangler target), and -- for verify blocks -- the *checks* it
makes: which printed lines are pass lines and which are failure lines, which conditions are assertions
and which are preconditions, which branches are alternatives (`verify_model`).

Why tree-sitter: bash has no grammar in the standard library, and a hand-written one had to guess at
heredocs, nested quoting, `case` arms and `$(…)`. tree-sitter-bash is the grammar editors use, it is
maintained, ships wheels, never raises on malformed input (it marks an error node and goes on), and
parses a block in microseconds.

By concern:

- `words`: what the grammar yields (`Word`, `Redirect`, `Command`, `Script`);
- `grammar`: the parse (heredocs lifted first) and the walk that builds a `Script` (`parse`);
- `effects`: what a block does (`reads`, `assigns`, `inputs`, `assignments`, `destructions`, `creates`,
  `calls`, `backgrounds`, `function_names`, `keeps_session`);
- `checks`: the verify model (`verify_model`: report lines, guards, alternatives);
- `trace`: which commands a run executed (`TRACE_PS4`, `parse_trace`, `executed`, `message_regex`);
- `lint`: where a verify block's exit status cannot show a failure (`verify_issues`).

The names below are the analyser's interface; callers use `from director.plan import bash; bash.parse(…)`.
Everything here is pure: text in, frozen data out. Line numbers are 0-based rows of the block body.
"""

from director.plan.bash.checks import (
    Guard,
    GuardKind,
    Polarity,
    Probe,
    ReportLine,
    TopStatement,
    VerifyModel,
    label_of,
    verify_model,
)
from director.plan.bash.effects import (
    Destruction,
    assignments,
    assigns,
    backgrounds,
    calls,
    calls_functions,
    creates,
    destructions,
    function_names,
    function_sources,
    inputs,
    keeps_session,
    reads,
)
from director.plan.bash.grammar import parse
from director.plan.bash.lint import ShellIssue, verify_issues
from director.plan.bash.trace import TRACE_PS4, TraceEntry, executed, message_regex, parse_trace, unit_paths
from director.plan.bash.units import Unit
from director.plan.bash.words import Command, CommandKind, Redirect, Script, Word

__all__ = [
    "TRACE_PS4",
    "Command",
    "CommandKind",
    "Destruction",
    "Guard",
    "GuardKind",
    "Polarity",
    "Probe",
    "Redirect",
    "ReportLine",
    "Script",
    "ShellIssue",
    "TopStatement",
    "TraceEntry",
    "Unit",
    "VerifyModel",
    "Word",
    "assignments",
    "assigns",
    "backgrounds",
    "calls",
    "calls_functions",
    "creates",
    "destructions",
    "executed",
    "function_names",
    "function_sources",
    "inputs",
    "keeps_session",
    "label_of",
    "message_regex",
    "parse",
    "parse_trace",
    "reads",
    "unit_paths",
    "verify_issues",
    "verify_model",
]
