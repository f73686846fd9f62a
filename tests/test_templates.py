"""File templates (director/templates.py): annotations per language, type-keeping rendering, targets (pure)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from director.plan import langs, templates
from director.plan.model import Block, BlockRole, Span, TemplateLine, TemplateRule
from director.plan.parse import parse, parse_file
from director.plan.templates import TemplateError, render_text, resolve_target, target_variables
from tests.pristine import EXAMPLES, SEED

ROOT = Path(__file__).resolve().parent.parent

ENV = {
    "SVC": "billing",
    "ENV": "prod",
    "WORKER": "billing-prod",
    "WF": "billing-wf-prod",
    "CLASS": "BillFlow",
    "DAYS": "45",
    "WORD": "forty",
    "YES": "yes",
    "QUOTE": 'say "hi"',
    "APOS": "it's",
    "SEMI": "a ; b",
    "PORT": "9090",
}
KNOBS = {"TRIGGER": "cli", "POLICY": "lenient", "THEME": "dark", "JOURNAL": "rollback"}

# (fence language, template line, the line Director writes) — with ENV and KNOBS above.
CASES = [
    # JSON / JSONC: `"key": value`, `//` and `/* */`
    (
        "json",
        '"name": "orders-dev",   // = ${WORKER} (${SVC}-${ENV})',
        '"name": "billing-prod",  // = ${WORKER} (${SVC}-${ENV})',
    ),
    ("json", '"days": 30,       // = ${DAYS}', '"days": 45,       // = ${DAYS}'),
    ("json", '"days": "30",     // = ${DAYS}', '"days": "45",     // = ${DAYS}'),
    ("json", '"days": 30,       // = ${WORD}', '"days": "forty",  // = ${WORD}'),
    ("json", '"say": "x",  // = ${QUOTE}', '"say": "say \\"hi\\"",  // = ${QUOTE}'),
    (
        "json",
        '"workers_dev": true,  // TRIGGER=http → true; cli/binding → false',
        '"workers_dev": false,  // TRIGGER=http → true; cli/binding → false',
    ),
    (
        "json",
        '"mode": "enforce",  // POLICY=strict → "enforce"; lenient → "warn"',
        '"mode": "warn",     // POLICY=strict → "enforce"; lenient → "warn"',
    ),
    (
        "json",
        '"mode": "enforce",  // POLICY=strict -> enforce; lenient -> warn',
        '"mode": "warn",     // POLICY=strict -> enforce; lenient -> warn',
    ),
    (
        "jsonc",
        '{ "name": "orders-wf-dev", "binding": "WF", "class_name": "OrderWorkflow" }   // name = ${WF}; class_name = ${CLASS}',
        '{ "name": "billing-wf-prod", "binding": "WF", "class_name": "BillFlow" }      // name = ${WF}; class_name = ${CLASS}',
    ),
    ("jsonc", '"days": 30,  /* = ${DAYS} */', '"days": 45,  /* = ${DAYS} */'),
    ("jsonc", '"name": "x",  /* = ${WORKER} */', '"name": "billing-prod",  /* = ${WORKER} */'),
    (
        "jsonc",
        '"url": "https://a//b",  // = https://${WORKER}//x',
        '"url": "https://billing-prod//x",  // = https://${WORKER}//x',
    ),
    # YAML: `key: value`, `- value`; quoted only where a plain scalar would change type or not read back
    ("yaml", "days: 30   # = ${DAYS}", "days: 45   # = ${DAYS}"),
    ("yaml", "days: 30   # = ${WORD}", 'days: "forty"  # = ${WORD}'),
    ("yaml", "name: orders-dev  # = ${WORKER}", "name: billing-prod  # = ${WORKER}"),
    ("yaml", "name: orders-dev  # = ${YES}", 'name: "yes"       # = ${YES}'),
    ("yaml", 'name: "orders-dev"  # = ${WORKER}', 'name: "billing-prod"  # = ${WORKER}'),
    ("yaml", "name: 'x'  # = ${APOS}", "name: 'it''s'  # = ${APOS}"),
    ("yaml", "  - orders-dev  # = ${WORKER}", "  - billing-prod  # = ${WORKER}"),
    (
        "yaml",
        "enabled: true   # TRIGGER=http → true; cli/binding → false",
        "enabled: false  # TRIGGER=http → true; cli/binding → false",
    ),
    (
        "yaml",
        "mode: 'enforce'  # POLICY=strict → enforce; lenient → warn",
        "mode: 'warn'     # POLICY=strict → enforce; lenient → warn",
    ),
    # TOML: `key = value`
    (
        "toml",
        'mode = "enforce"  # POLICY=strict → "enforce"; lenient → "warn"',
        'mode = "warn"     # POLICY=strict → "enforce"; lenient → "warn"',
    ),
    ("toml", "days = 30  # = ${DAYS}", "days = 45  # = ${DAYS}"),
    ("toml", "days = 30  # = ${WORD}", 'days = "forty"  # = ${WORD}'),
    ("toml", "name = 'x'  # = ${WORKER}", "name = 'billing-prod'  # = ${WORKER}"),
    ("toml", "name = 'x'  # = ${APOS}", 'name = "it\'s"  # = ${APOS}'),
    (
        "toml",
        'wf = { name = "a", class_name = "B" }  # name = ${WF}; class_name = ${CLASS}',
        'wf = { name = "billing-wf-prod", class_name = "BillFlow" }  # name = ${WF}; class_name = ${CLASS}',
    ),
    # INI / cfg / conf / properties: `;` and `#`, `key = value`, `key=value`, `key: value`; bare stays bare
    ("ini", "name = orders-dev   ; = ${WORKER}", "name = billing-prod  ; = ${WORKER}"),
    ("ini", "name = orders-dev   # = ${WORKER}", "name = billing-prod  # = ${WORKER}"),
    ("ini", "days=30 ; = ${WORD}", "days=forty ; = ${WORD}"),
    ("cfg", "days: 30    # = ${DAYS}", "days: 45    # = ${DAYS}"),
    (
        "conf",
        "mode = enforce  ; POLICY=strict → enforce; lenient → warn",
        "mode = warn     ; POLICY=strict → enforce; lenient → warn",
    ),
    ("properties", "app.name=orders  # = ${WORKER}", "app.name=billing-prod  # = ${WORKER}"),
    # .env
    ("env", 'WORKER="orders-dev"  # = ${WORKER}', 'WORKER="billing-prod"  # = ${WORKER}'),
    ("dotenv", "export DAYS=30  # = ${DAYS}", "export DAYS=45  # = ${DAYS}"),
    ("env", "NAME='x'  # = ${QUOTE}", "NAME='say \"hi\"'  # = ${QUOTE}"),
    # CSS / SCSS: `prop: value;`, `/* */` (and `//` in SCSS)
    (
        "css",
        "  background: #ffffff;   /* THEME=light → #ffffff; dark → #111111 */",
        "  background: #111111;   /* THEME=light → #ffffff; dark → #111111 */",
    ),
    (
        "css",
        '  font-family: "Inter", sans-serif;  /* = ${WORKER} */',
        "  font-family: billing-prod;         /* = ${WORKER} */",
    ),
    ("css", "  content: 'x';  /* = ${QUOTE} */", "  content: 'say \"hi\"';  /* = ${QUOTE} */"),
    (
        "css",
        "  color: red !important;  /* THEME=light → red; dark → blue */",
        "  color: blue !important;  /* THEME=light → red; dark → blue */",
    ),
    (
        "scss",
        "$bg: #ffffff;  // THEME=light → #ffffff; dark → #111111",
        "$bg: #111111;  // THEME=light → #ffffff; dark → #111111",
    ),
    # SQL: the last literal before `--` / `/* */`
    (
        "sql",
        "PRAGMA journal_mode = 'wal';   -- JOURNAL=wal → 'wal'; rollback → 'delete'",
        "PRAGMA journal_mode = 'delete';  -- JOURNAL=wal → 'wal'; rollback → 'delete'",
    ),
    (
        "sql",
        "INSERT INTO meta VALUES ('env', 'dev');    -- = ${ENV}",
        "INSERT INTO meta VALUES ('env', 'prod');   -- = ${ENV}",
    ),
    (
        "sql",
        "INSERT INTO meta VALUES ('who', 'x');  -- = ${APOS}",
        "INSERT INTO meta VALUES ('who', 'it''s');  -- = ${APOS}",
    ),
    (
        "sql",
        "INSERT INTO t VALUES ('days', 30);  -- = ${DAYS}",
        "INSERT INTO t VALUES ('days', 45);  -- = ${DAYS}",
    ),
    (
        "sql",
        "INSERT INTO t VALUES ('days', 30);  -- = ${WORD}",
        "INSERT INTO t VALUES ('days', 'forty');  -- = ${WORD}",
    ),
    ("sql", "SELECT 'dev';  /* = ${ENV} */", "SELECT 'prod';  /* = ${ENV} */"),
    # nginx: a directive's last argument
    (
        "nginx",
        "    server_name orders.example.com;  # = ${WORKER}.example.com",
        "    server_name billing-prod.example.com;  # = ${WORKER}.example.com",
    ),
    (
        "nginx",
        "    listen 127.0.0.1:8080;  # = 127.0.0.1:${PORT}",
        "    listen 127.0.0.1:9090;  # = 127.0.0.1:${PORT}",
    ),
    ("nginx", '    add_header X-Env "dev";  # = ${ENV}', '    add_header X-Env "prod";  # = ${ENV}'),
    # code and unknown languages: the value after `=`/`:`, else the last literal
    ("python", "DAYS = 30  # = ${WORD}", 'DAYS = "forty"  # = ${WORD}'),
    ("hcl", 'name = "orders"  # = ${WORKER}', 'name = "billing-prod"  # = ${WORKER}'),
    ("ts", "export const port = 8080;  // = ${PORT}", "export const port = 9090;  // = ${PORT}"),
    ("weird", "name = orders  ; = ${WORKER}", "name = billing-prod  ; = ${WORKER}"),
    ("", "port: 8080  -- = ${PORT}", "port: 9090  -- = ${PORT}"),
]


@pytest.mark.parametrize(
    ("lang", "line", "want"), CASES, ids=[f"{c[0] or 'none'}-{i}" for i, c in enumerate(CASES)]
)
def test_rule_rewrites_the_value_and_keeps_the_comment(lang: str, line: str, want: str) -> None:
    assert render_text(line, lang, ENV, KNOBS) == want
    # the same line inside a template: the lines around it are copied byte for byte
    text = f"first line\n{line}\n\nlast line"
    assert render_text(text, lang, ENV, KNOBS) == f"first line\n{want}\n\nlast line"


COMMENTED_OUT = [
    (
        "jsonc",
        [
            '// "name": "x"  // = ${NOPE}',
            '/* "name": "x"  // = ${NOPE} */',
            "/*",
            '  "days": 1,  // = ${NOPE}',
            "*/",
        ],
    ),
    ("yaml", ["# name: x  # = ${NOPE}", "#   - x  # = ${NOPE}"]),
    ("toml", ['# mode = "x"  # POLICY=strict → "a"; lenient → "b"']),
    ("ini", ["; name = x  ; = ${NOPE}", "# name = x  # = ${NOPE}"]),
    (
        "css",
        [
            "/* background: #fff;  THEME=light → #fff; dark → #000 */",
            "/*",
            "  color: #fff;  /* = ${NOPE}",
            "*/",
        ],
    ),
    ("sql", ["-- INSERT INTO t VALUES ('a');  -- = ${NOPE}", "/* SELECT 'a';  -- = ${NOPE} */"]),
    ("env", ["# NAME=x  # = ${NOPE}"]),
    ("nginx", ["# listen 80;  # = ${NOPE}"]),
]


@pytest.mark.parametrize(("lang", "lines"), COMMENTED_OUT, ids=[c[0] for c in COMMENTED_OUT])
def test_commented_out_lines_stay_as_written(lang: str, lines: list[str]) -> None:
    text = "\n".join(lines)
    assert templates.template_lines(text, lang) == ()
    assert render_text(text, lang, {}, {}) == text


def test_yaml_block_scalar_content_is_text() -> None:
    text = "script: |\n  echo hi  # = ${NOPE}\n\n  more  # = ${NOPE}\nname: a  # = ${X}\nfold: >-\n  x # = ${NOPE}"
    assert [tl.offset for tl in templates.template_lines(text, "yaml")] == [4]
    assert render_text(text, "yaml", {"X": "b"}, {}) == text.replace("name: a", "name: b")


def test_json_bare_slot_takes_only_json_literals() -> None:
    for value, want in [
        ("12.5e3", "12.5e3"),
        ("null", "null"),
        ("NaN", '"NaN"'),
        ("Infinity", '"Infinity"'),
        ("0x1F", '"0x1F"'),
    ]:
        assert render_text('"n": 1  // = ${X}', "json", {"X": value}, {}) == f'"n": {want}  // = ${{X}}', (
            value
        )


def test_commentary_is_not_a_rule() -> None:
    for comment in (
        " retries = 3 per step",
        " just a remark",
        " = 3",
        " see: a → b",
        " = plain text (no variable)",
    ):
        assert templates.parse_rules(comment) == (), comment
    text = '"n": 1  // retries = 3 per step\n"m": 2  // = 3'
    assert render_text(text, "jsonc", {}, {}) == text


def test_knob_map_forms() -> None:
    (rule,) = templates.parse_rules(" POLICY=`strict`/`audit` → 'enforce'; lenient|off -> 'warn', x , y → 0")
    assert rule.knob == "POLICY" and rule.mapping == (
        ("strict", "'enforce'"),
        ("audit", "'enforce'"),
        ("lenient", "'warn', x , y → 0"),  # a clause's literal runs to its `;`
        ("off", "'warn', x , y → 0"),
    )
    (rule,) = templates.parse_rules(" THEME=light, dark → 1; contrast → 2")
    assert dict(rule.mapping) == {"light": "1", "dark": "1", "contrast": "2"}


@pytest.mark.parametrize(
    ("lang", "line", "env", "knobs", "message"),
    [
        ("jsonc", '"name": "x",  // = ${NOPE}', {}, {}, r"\$\{NOPE\} is not set"),
        ("yaml", "name: x  # = pre-${A}-${NOPE}", {"A": "a"}, {}, r"\$\{NOPE\}"),
        ("toml", "on = true  # TRIGGER=http → true", {}, {"TRIGGER": "cli"}, "TRIGGER='cli' has no literal"),
        ("jsonc", '{ "a": 1 }  // b = ${A}', {"A": "1"}, {}, "no value for `b`"),
        ("yaml", "key:  # = ${A}", {"A": "1"}, {}, "no value for the annotation"),
        ("ini", "name = x  ; = ${A}", {"A": "a ; b"}, {}, "cannot be written here as ini"),
        ("css", "color: red;  /* = ${A} */", {"A": "x /* y"}, {}, "cannot be written here as css"),
        ("sql", "SELECT 'a';  -- = ${A}", {"A": "two\nlines"}, {}, "cannot be written here as sql"),
    ],
)
def test_render_errors(
    lang: str, line: str, env: dict[str, str], knobs: dict[str, str], message: str
) -> None:
    with pytest.raises(TemplateError, match=message):
        render_text(f"x\n{line}", lang, env, knobs)


def test_errors_name_the_plan_line() -> None:
    b = Block(
        0,
        "jsonc",
        "jsonc",
        BlockRole.TEMPLATE,
        '{\n  "a": 1  // = ${NOPE}\n}',
        Span(40, 45),
        41,
        template_lines=(TemplateLine(1, (TemplateRule("expr", expr="${NOPE}"),)),),
        template_target="a.jsonc",
    )
    with pytest.raises(TemplateError, match="NOPE"):
        templates.render_template(b, {}, {})
    b2 = Block(
        0,
        "jsonc",
        "jsonc",
        BlockRole.TEMPLATE,
        '{\n  "a": 1  // b = ${A}\n}',
        Span(40, 45),
        41,
        template_lines=(TemplateLine(1, (TemplateRule("expr", "b", "${A}"),)),),
        template_target="a.jsonc",
    )
    with pytest.raises(TemplateError, match=r"^line 43: no value for `b`"):
        templates.render_template(b2, {"A": "1"}, {})


def test_values_read_back_in_their_language() -> None:
    """A value with quotes, backslashes, comment marks and non-ASCII reads back as exactly that value."""
    nasty = "a \"b\" \\c // d # e ; f -- g 'h' ü"
    env = {"V": nasty, "N": "12"}
    json_text = render_text(
        '{\n  "s": "x",  // = ${V}\n  "n": 1,  // = ${N}\n  "t": 1  // = ${V}\n}', "jsonc", env, {}
    )
    body = "\n".join(line.split("  //")[0] for line in json_text.split("\n"))
    assert json.loads(body) == {"s": nasty, "n": 12, "t": nasty}
    toml_text = render_text("s = 'x'  # = ${V}\nn = 1  # = ${N}\nt = 1  # = ${V}", "toml", env, {})
    assert tomllib.loads(toml_text) == {"s": nasty, "n": 12, "t": nasty}
    yaml_text = render_text(
        "s: x  # = ${V}\nq: 'x'  # = ${V}\nn: 1  # = ${N}\nt: 1  # = ${V}", "yaml", env, {}
    )
    assert YAML(typ="safe", pure=True).load(yaml_text) == {"s": nasty, "q": nasty, "n": 12, "t": nasty}


# ------------------------------------------------------------------------------------------ the plans


def _template(path: Path, section: str) -> Block:
    (b,) = parse_file(path).section(section).template_blocks
    return b


def test_seed_jsonc_with_non_default_knobs() -> None:
    b = _template(SEED, "2")
    env = {
        "SVC": "billing",
        "ENV": "prod",
        "WORKER": "billing-prod",
        "WF": "billing-wf-prod",
        "CLASS": "BillFlow",
        "PLAN_VERSION": "2026-08-01",
    }
    got = templates.render_template(b, env, {"TRIGGER": "cli", "ENV": "prod"})
    assert (
        got
        == """\
// every literal below is a pure function of the §0 knobs — regenerate, don't copy (shown for SVC=orders, ENV=dev)
{
  "name": "billing-prod",                 // = ${WORKER} (${SVC}-${ENV})
  "main": "src/billing-workflow.js",      // = src/${SVC}-workflow.js
  "compatibility_date": "2025-04-01",
  "workers_dev": false,                   // TRIGGER=http → true; cli/binding → false
  "vars": {
    "MANAGED_BY": "ephemera",
    "SOURCE": "workflow.cloudflare.md",
    "PLAN_VERSION": "2026-08-01",         // = ${PLAN_VERSION}
    "ENVIRONMENT": "prod"                 // = ${ENV}
  },
  "workflows": [
    { "name": "billing-wf-prod", "binding": "WF", "class_name": "BillFlow" }      // name = ${WF}; class_name = ${CLASS}
  ]
  // optional — a step reads/writes a bound data plane (discovered, NOT created here):
  // "d1_databases": [ { "binding": "DB", "database_name": "<BIND_D1>", "database_id": "<discovered>" } ],
  // "r2_buckets":   [ { "binding": "BUCKET", "bucket_name": "<BIND_R2>" } ]
}
"""
    )
    body = "\n".join(line.split("  //")[0] for line in got.split("\n") if not line.lstrip().startswith("//"))
    assert json.loads(body)["workers_dev"] is False


def test_static_site_css_dark() -> None:
    got = templates.render_template(_template(EXAMPLES / "static-site.local.md", "2"), {}, {"THEME": "dark"})
    assert (
        got
        == """\
/* every literal with a rule is a pure function of the §0 knobs (shown for THEME=light) */
body {
  background: #111111;   /* THEME=light → #ffffff; dark → #111111 */
  color: #eeeeee;        /* THEME=light → #111111; dark → #eeeeee */
  font-family: system-ui, sans-serif;
}
"""
    )


def test_database_sql_non_default() -> None:
    b = _template(EXAMPLES / "database.local.md", "1")
    got = templates.render_template(
        b, {"ENV": "test", "NAME": "books"}, {"JOURNAL": "rollback", "ENV": "test"}
    )
    assert (
        got
        == """\
-- every literal below is a pure function of the §0 knobs — regenerate, don't copy
PRAGMA journal_mode = 'delete';                       -- JOURNAL=wal → 'wal'; rollback → 'delete'
CREATE TABLE IF NOT EXISTS entries (
  id      INTEGER PRIMARY KEY,
  ref     TEXT NOT NULL UNIQUE,
  amount  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
-- the shop's orders, empty until the shop writes them: what a report plan reads (sqlite-report.local.md)
CREATE TABLE IF NOT EXISTS orders (
  id            INTEGER PRIMARY KEY,
  customer      TEXT NOT NULL,
  amount_cents  INTEGER NOT NULL,
  currency      TEXT NOT NULL,
  status        TEXT NOT NULL
);
INSERT OR REPLACE INTO meta VALUES ('env', 'test');   -- = ${ENV}
INSERT OR REPLACE INTO meta VALUES ('name', 'books');  -- = ${NAME}
"""
    )


# ------------------------------------------------------------------------------------------ targets


def test_target_named_by_a_variable() -> None:
    env = {"SVC": "orders", "CONFIG": "/work/orders.jsonc", "ROOT": "/work"}
    assert resolve_target("${SVC}.jsonc", env, "/elsewhere") == "/work/orders.jsonc"
    # the same file under two names is not ambiguous
    assert (
        resolve_target("${SVC}.jsonc", {**env, "ALSO": "/work/./orders.jsonc"}, "/x") == "/work/orders.jsonc"
    )
    # a subdirectory the plan chose
    assert (
        resolve_target("conf/app.ini", {"APP_INI": "/srv/site/conf/app.ini"}, "/x")
        == "/srv/site/conf/app.ini"
    )


def test_target_relative_fallback_and_absolute_heading() -> None:
    assert (
        resolve_target("${SVC}.jsonc", {"SVC": "orders", "X": "/a/xorders.jsonc"}, "/cwd")
        == "/cwd/orders.jsonc"
    )
    assert (
        resolve_target("${SVC}.jsonc", {"SVC": "orders", "REL": "sub/orders.jsonc"}, "/cwd")
        == "/cwd/orders.jsonc"
    )
    env = {"ROOT": "/srv/site", "OTHER": "/elsewhere/srv/site/site.css"}
    assert resolve_target("${ROOT}/site.css", env, "/cwd") == "/srv/site/site.css"


def test_target_errors() -> None:
    env = {"SVC": "orders", "CONFIG": "/work/orders.jsonc", "BACKUP": "/backups/orders.jsonc"}
    with pytest.raises(TemplateError, match=r"ambiguous.*\$BACKUP = /backups/orders.jsonc.*\$CONFIG = /work"):
        resolve_target("${SVC}.jsonc", env, "/cwd")
    with pytest.raises(TemplateError, match="SVC"):
        resolve_target("${SVC}.jsonc", {}, "/cwd")


AMBIGUOUS_PLAN = """# T

## 0. Variables

```bash
export SVC="orders"
export CONFIG="$PWD/${SVC}.jsonc" OUT="$PWD/out"
```

## 1. Prepare  🟢

```bash
BACKUP="/backups/$SVC.jsonc"
```

## 2. Config — `${SVC}.jsonc`  🟡

```jsonc
{ "name": "x" }  // = ${SVC}
```

## 3. Later  🟢

```bash
LATE="$PWD/${SVC}.jsonc"
```
"""


def test_target_variables() -> None:
    assert target_variables(parse_file(SEED)) == {("2", 0): ("CONFIG",)}
    assert target_variables(parse_file(EXAMPLES / "database.local.md")) == {("1", 0): ("SCHEMA",)}
    assert target_variables(parse_file(EXAMPLES / "static-site.local.md")) == {("2", 0): ()}
    # `$SVC` and `${SVC}` are one spelling; assignments after the template do not count
    assert target_variables(parse(AMBIGUOUS_PLAN)) == {("2", 0): ("CONFIG", "BACKUP")}


# ------------------------------------------------------------------------------------------ property

_LANGS = ["json", "jsonc", "yaml", "toml", "ini", "env", "css", "scss", "sql", "nginx", "python", "weird"]
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
_VALUE = st.one_of(
    st.integers(-1000, 10**6).map(str),
    st.sampled_from(["true", "false", "null", "yes", "#fff", "a b", "x: y", "it's"]),
    _TEXT.map(lambda t: json.dumps(t, ensure_ascii=False)),
    _TEXT.filter(lambda t: "'" not in t and "\\" not in t).map(lambda t: f"'{t}'"),
)
_COMMENT = st.one_of(
    st.sampled_from(
        ["= ${A}", "= pre-${B}-post (note)", "K=a → 1; b/c → 'two'", "k = ${A}", "a remark", "= 3"]
    ),
    _TEXT.filter(lambda t: "*/" not in t),
)


@st.composite
def _template_text(draw: st.DrawFn) -> tuple[str, str]:
    lang = draw(st.sampled_from(_LANGS))
    syntax = langs.syntax_for(lang)
    marks = [*syntax.marks, *(["/*"] if syntax.block else [])]
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["pair", "pair", "comment", "blank", "plain"]))
        mark = draw(st.sampled_from(marks))
        end = " */" if mark == "/*" else ""
        key = draw(st.sampled_from(["k", '"k"', "- k", "  name"]))
        sep = draw(st.sampled_from([": ", " = ", "=", " "]))
        pair = f"{key}{sep}{draw(_VALUE)}{draw(st.sampled_from(['', ',', ';']))}"
        if kind == "pair":
            gap = draw(st.sampled_from([" ", "  ", "      ", "\t"]))
            lines.append(f"{pair}{gap}{mark} {draw(_COMMENT)}{end}")
        elif kind == "comment":
            lines.append(f"{mark} {pair}  {mark} {draw(_COMMENT)}{end}")
        elif kind == "plain":
            lines.append(pair)
        else:
            lines.append("")
    return lang, "\n".join(lines)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _template_text(), st.sampled_from(["v", "1", "true", 'q"uote', "semi ; colon", "# hash", "x // y", "ü"])
)
def test_property_only_rule_values_change(template: tuple[str, str], value: str) -> None:
    lang, text = template
    try:
        out = render_text(text, lang, {"A": value, "B": value}, {"K": "b"})
    except TemplateError:
        return  # a rule that cannot be honoured stops the run; it never writes a wrong file
    rules = {tl.offset for tl in templates.template_lines(text, lang)}
    syntax = langs.syntax_for(lang)
    before, after = text.split("\n"), out.split("\n")
    assert len(before) == len(after)
    for i, (old, new) in enumerate(zip(before, after, strict=True)):
        if i not in rules:
            assert new == old
        else:
            assert langs.split_line(new, syntax).comment == langs.split_line(old, syntax).comment
