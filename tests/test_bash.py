"""The bash analyser (director/plan/bash/): what a block runs, reads, sets, destroys and checks, by grammar."""

from __future__ import annotations

import re

import pytest

from director.plan import bash


def test_commands_words_and_programs() -> None:
    s = bash.parse('X=1 command wrangler deploy --config "$CONFIG" >/dev/null\nsudo -u root rm -rf "$D"/*\n')
    deploy, rm = (c for c in s.commands if c.kind == "command")
    assert deploy.program == "wrangler" and [a.pattern for a in deploy.args] == ["deploy", "--config", "$CONFIG"]
    assert deploy.stdout_to_file
    assert rm.program == "rm" and rm.args[-1].glob and rm.args[-1].vars == ("D",)
    assert "X" not in s.assigns, "`X=1 cmd` sets X for cmd only"


def test_words_know_whole_variables_quotes_and_globs() -> None:
    (c,) = bash.parse('ls "$DB" ${DIR%/*} "$A-$B" \'$lit\' *.log').commands
    words = c.argv[1:]
    assert [w.whole_var for w in words] == ["DB", None, None, None, None]
    assert words[3].static == "$lit" and words[3].quoted
    assert words[4].glob and not words[0].glob


def test_reads_and_assigns_for_fingerprints() -> None:
    text = (
        'export A="$B" C=1\nread -r D E < f\nfor F in $G; do :; done\n(( H > 1 ))\n'
        "cat <<EOF\n$I ${J:-$K}\nEOF\ncat <<'EOF'\n$NOT\nEOF\nL+=(1)\n"
    )
    s = bash.parse(text)
    assert set(s.assigns) >= {"A", "C", "D", "E", "F", "L"}
    assert {"B", "G", "H", "I", "J", "K"} <= set(s.reads)
    assert "NOT" not in s.reads, "a quoted heredoc does not expand"
    assert bash.inputs("X=1\necho $X $Y") == ["Y"]


def test_calls_a_program_only_as_a_command() -> None:
    assert bash.calls("command wrangler deploy", "wrangler")
    assert bash.calls("npx wrangler dev", "wrangler")
    assert not bash.calls('echo "run wrangler later"  # wrangler', "wrangler")
    assert not bash.calls("cat > f <<'EOF'\nwrangler deploy\nEOF", "wrangler")


@pytest.mark.parametrize(
    ("text", "what", "strong"),
    [
        ("rm -rf build", "rm -rf", True),
        ("rm -f one.txt", "rm -f", False),
        ("command wrangler delete --config c", "wrangler delete", True),
        ("wrangler workflows delete wf", "wrangler workflows delete", True),
        ("kubectl delete pod p", "kubectl delete", True),
        ("tmux kill-session -t job", "tmux kill-session", True),
        ("sqlite3 db 'DROP TABLE t'", "sqlite3 (SQL that drops or deletes)", True),
        (": > data.log", "> (overwrites)", False),
    ],
)
def test_destructions(text: str, what: str, strong: bool) -> None:
    (d,) = bash.destructions(text)
    assert (d.what, d.strong) == (what, strong)


@pytest.mark.parametrize(
    "text",
    [
        "echo 'we never delete anything'",
        "grep -q delete log",
        "sqlite3 -readonly db 'select count(*) from t'",
        "drop() { echo dropped; }\ndrop",
        "cat > f <<'SQL'\nDROP TABLE t;\nSQL",
        "echo hi >/dev/null",
    ],
)
def test_not_destructions(text: str) -> None:
    assert [d for d in bash.destructions(text) if d.strong or "cat" not in text] == []


def test_heredoc_line_goes_on_after_its_start() -> None:
    """tree-sitter-bash nests `| grep … && echo …` inside the heredoc: the analyser rebuilds the list."""
    text = 'python3 - "$DB" <<\'PY\' | grep -qx ok && echo "2: round trip" || { echo "2: lost"; exit 1; }\nprint("ok")\nPY\n'
    m = bash.verify_model(text)
    assert [(ln.message, ln.polarity, ln.hard) for ln in m.lines] == [
        ("2: round trip", "pass", False),
        ("2: lost", "fail", True),
    ]
    assert m.guards[0].kind == "assertion"
    assert [c.program for c in bash.parse(text).commands if c.kind == "command"][:2] == ["python3", "grep"]


def _lines(text: str) -> list[tuple[str, str, bool]]:
    return [(ln.message, ln.polarity, ln.hard) for ln in bash.verify_model(text).lines]


def test_polarity_by_position_never_by_wording() -> None:
    assert _lines('probe && echo "STILL PRESENT — re-run" || echo "gone"') == [
        ("STILL PRESENT — re-run", "pass", False),
        ("gone", "fail", False),
    ]
    assert _lines('[ -e out ] && { echo "still there"; exit 1; } || echo "out gone"') == [
        ("still there", "fail", True),
        ("out gone", "pass", False),
    ]


def test_alternatives_and_functions() -> None:
    text = (
        'if [ "$M" = json ]; then\n  c && echo "1: ok (json)" || { echo "1: bad"; exit 1; }\n'
        'else\n  echo "1: ok (text)"\nfi\ncheck() { [ -e "$1" ] && echo "$1 ok" || { echo "$1 missing"; return 1; }; }\n'
    )
    assert _lines(text) == [
        ("1: ok (json)", "pass", False),
        ("1: bad", "fail", True),
        ("1: ok (text)", "pass", False),
        ("$1 ok", "pass", False),
        ("$1 missing", "fail", True),
    ]
    assert not [g for g in bash.verify_model(text).guards if g.kind == "precondition"], "if/else: alternatives"


def test_preconditions_assertions_and_failure_branches() -> None:
    m = bash.verify_model(
        '[ -n "$KV" ] && { kv list | grep -q "$KV" || { echo "KV missing"; exit 1; }; }\n'
        '[ -z "$X" ] && { echo "X unset"; exit 1; }\n'
        'if ! grep -q ok f; then echo "not ok"; exit 1; fi\n'
        '[ -f f ] && echo "f present"\n'
    )
    kinds = [(g.kind, g.row) for g in m.guards]
    assert kinds == [("precondition", 0), ("assertion", 3)], "failure branches guard nothing"
    assert m.guards[1].enforced, "the block's last word: bash exits with it"
    assert m.top == (0, "check", "check", "check")
    assert m.trailing_guard is None


def test_unenforced_and_poll_assertions() -> None:
    m = bash.verify_model('probe && echo "a"\necho done\nfor i in 1 2; do curl -sf x && echo up && break; done\n')
    a, poll = m.guards
    assert not a.enforced and poll.poll and poll.loop is not None


def test_lint_issues_by_structure() -> None:
    def codes(text: str) -> list[str]:
        return [i.code for i in bash.verify_issues(text)]

    assert codes("wrangler deploy --dry-run | tail -5") == ["verify-exit-status"]
    assert codes("set -o pipefail\nprobe | tail -5") == []
    assert codes('probe && echo ok || echo "bad"') == ["soft-alternative"]
    assert codes('probe || echo "bad"') == ["fail-without-exit"]
    assert codes('probe && echo "1: ok"\necho done') == ["unenforced-check"]
    assert codes('probe && echo "1: ok"') == []
    assert codes('[ -f a ] || { echo "a missing"; exit 1; }\n[ -f b ] && echo "b ok"') == []


def test_trace_entries_and_their_commands() -> None:
    raw = "\x1e3\x1f\x1f'[' -n '' ']'\n\x1e\x1e4\x1fcheck\x1fecho 'a\nb'\n\x1e7\x1f\x1fX=1\n"
    e1, e2, e3 = bash.parse_trace(raw)
    assert (e1.line, e1.function, e1.name) == (3, "", "[")
    assert (e2.function, e2.name, e2.rest) == ("check", "echo", "'a\nb'")
    assert e3.name == "="


def test_executed_tells_same_line_echoes_apart_by_their_words() -> None:
    m = bash.verify_model('grep -q x f && echo "workflow $WF registered" || echo "no workflow"')
    entries = [bash.TraceEntry(1, "", "grep", "-q x f"), bash.TraceEntry(1, "", "echo", "'no workflow'")]
    ran = bash.executed(m, entries)
    printed = [ln.message for ln in m.lines if ran.get(ln.probe)]
    assert printed == ["no workflow"]
    entries = [bash.TraceEntry(1, "", "echo", "'workflow orders-wf registered'")]
    assert [ln.message for ln in m.lines if bash.executed(m, entries).get(ln.probe)] == ["workflow $WF registered"]


def test_functions_of_earlier_blocks_are_not_this_blocks_lines() -> None:
    m = bash.verify_model('helper\necho "done"')
    ran = bash.executed(m, [bash.TraceEntry(2, "helper", "echo", "'done'"), bash.TraceEntry(1, "", "helper", "")])
    assert not any(ran.get(ln.probe) for ln in m.lines)


def test_malformed_bash_never_raises() -> None:
    for text in ["if then fi", "echo 'unclosed", "{ ( ) }", "case x in", "cat <<EOF\nno end", "$(((", "\x00"]:
        s = bash.parse(text)
        bash.verify_model(text)
        bash.verify_issues(text)
        assert isinstance(s.commands, tuple)


def test_the_analysis_leaves_no_reference_cycles() -> None:
    """A large plan's thousands of blocks are analysed with the cyclic collector paused (plan/parse.py): a
    cycle per word or per `if` (a recursive closure) was 23 MB of garbage in a 5 MB plan's parse."""
    import gc

    text = (
        'X="a-$B" Y=${C:-$D} Z=$(date)\nls "$X"/*.log \'$lit\'\n'
        'if [ -f "$X" ]; then echo ok; elif test -d "$Y"; then echo dir; else echo none; exit 1; fi\n'
        'if grep -q up "$Z"; then curl -fs "$U" || { echo down; exit 1; }; fi\n'
    )
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for n in range(3):  # new texts each time: the analyser's caches would hide a second run
            variant = text.replace("ok", f"ok{n}")
            bash.parse(variant)
            bash.verify_model(variant, 0)
            bash.assignments(variant)
        gc.collect()
        garbage = [type(o).__qualname__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert garbage == [], garbage[:20]


def test_the_grammar_never_reads_a_4_byte_character_and_the_text_is_the_blocks_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tree-sitter-bash 0.25.1 can read out of bounds on `{` then a 4-byte UTF-8 character (tree-sitter/
    tree-sitter-bash#337): a SIGSEGV that depends on the memory layout, seen in CI as the whole test process
    dying inside `Parser.parse`. Director parses such a block with each 4-byte character stood in for by
    four ASCII bytes, and every node's text is still the block's own."""
    from director.plan.bash import grammar

    fed: list[bytes] = []
    real = grammar._parser

    class Spy:
        def __init__(self) -> None:
            self.p = real()

        def parse(self, source: bytes | bytearray) -> object:
            fed.append(bytes(source))
            return self.p.parse(source)

    monkeypatch.setattr(grammar, "_parser", Spy)
    text = 'echo "${X} 🚀 up" $X🚀\ncat <<EOF\n{𱡀 in a heredoc 😀\nEOF\n[ -f "$F" ] && echo "✅ ${N} 𝔘" || { echo "💥 down"; exit 1; }'
    grammar.analysed.cache_clear()
    grammar.parse.cache_clear()
    script = grammar.parse(text)
    assert fed and not any(re.search(rb"[\xf0-\xf7]", src) for src in fed)
    words = [a.text for c in script.commands for a in c.args]
    assert '"${X} 🚀 up"' in words and "$X🚀" in words and '"✅ ${N} 𝔘"' in words
    assert any("X" in c.argv[1].vars for c in script.commands if c.name == "echo" and len(c.argv) > 1)
    model = bash.verify_model(text)
    assert [ln.message for ln in model.lines if ln.polarity == "fail"] == ["💥 down"]
