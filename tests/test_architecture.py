"""The layout is the architecture: layers import downward only, no import cycle, no module over 600 lines.

Layers, lowest first: errors; plan (the pure reading of a plan); files, state, exec, ledger, targets (the
effects the engine is handed); run (the engine); ui (what the operator sees); commands (one per command,
wiring the parts); cli. A module may import its own layer and the ones below, never one above. Imports
inside `if TYPE_CHECKING:` count too: a type is a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import director

PACKAGE = Path(director.__file__).parent
LAYERS = {
    "errors": 0,
    "schemas": 0,  # JSON Schemas of every output: data
    "plan": 1,
    # leaf helpers below the effect packages, which share them (they import nothing of Director's)
    "proc": 1,  # process liveness
    "secretnames": 1,  # which variable names are secret
    "excerpt": 1,  # a long text bounded to its head and tail
    "files": 2,
    "state": 2,
    "exec": 2,
    "ledger": 2,
    "targets": 2,
    "run": 3,
    "ui": 4,
    "ci": 4,  # what a CI run sees: annotations and the job summary
    "commands": 5,
    "cli": 6,
    "cli_options": 6,  # the options the commands share
    "cli_streams": 6,  # the standard streams at start (a closed one becomes /dev/null)
    "cli_build": 6,  # what typer builds for one call: only the command it names
    "error_handler": 6,  # the one place an error becomes a message and an exit code
    "__main__": 6,
}


def _module(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """director module -> the director modules it imports (anywhere in it)."""
    out: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        mod = _module(path)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.startswith("director"):
                    found.add(node.module)
                    found.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("director"))
        known = {m for m in found if (PACKAGE.parent / m.replace(".", "/")).with_suffix(".py").exists()
                 or (PACKAGE.parent / m.replace(".", "/") / "__init__.py").exists()}  # fmt: skip
        out[mod] = known - {mod}
    return out


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package itself
    return LAYERS.get(parts[1])


def test_every_module_belongs_to_a_layer() -> None:
    unknown = [m for m in _imports() if m != "director" and _layer(m) is None]
    assert unknown == [], f"modules outside the layers: {unknown}; add them to LAYERS with a reason"


def test_no_upward_import() -> None:
    upward = []
    for mod, deps in _imports().items():
        lm = _layer(mod)
        for dep in deps:
            ld = _layer(dep)
            if lm is not None and ld is not None and ld > lm:
                upward.append(f"{mod} → {dep}")
    assert upward == [], "imports that go up a layer:\n" + "\n".join(sorted(upward))


# The effect packages are handed to the engine side by side: none reaches into another (what they share
# is a leaf below them: `proc`, `secretnames`, `excerpt`). The edges still to remove, by package:
EFFECTS = ("files", "state", "exec", "ledger", "targets")
KNOWN_EFFECT_EDGES = {
    ("ledger", "exec"), ("ledger", "files"), ("ledger", "state"), ("targets", "exec"), ("targets", "files"),
}  # fmt: skip


def test_no_import_between_effect_packages() -> None:
    found = set()
    for mod, deps in _imports().items():
        for dep in deps:
            a, b = mod.split("."), dep.split(".")
            if len(a) > 1 and len(b) > 1 and a[1] in EFFECTS and b[1] in EFFECTS and a[1] != b[1]:
                found.add((a[1], b[1], f"{mod} → {dep}"))
    new = sorted(how for a, b, how in found if (a, b) not in KNOWN_EFFECT_EDGES)
    assert new == [], "imports between effect packages:\n" + "\n".join(new)
    assert {(a, b) for a, b, _ in found} == KNOWN_EFFECT_EDGES, "an edge is gone: drop it from the list"


def test_no_import_cycle_between_modules() -> None:
    graph = {m: {d for d in deps if d != "director"} for m, deps in _imports().items()}
    # a package imports its submodules' names through its __init__; that is not a cycle of design
    for m, deps in graph.items():
        graph[m] = {d for d in deps if not (d.startswith(m + ".") or m.startswith(d + "."))}
    seen: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(m: str) -> None:
        seen[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if seen.get(d) == 1:
                cycles.append(" → ".join([*stack[stack.index(d) :], d]))
            elif d not in seen:
                visit(d)
        stack.pop()
        seen[m] = 2

    for m in sorted(graph):
        if m not in seen:
            visit(m)
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_no_module_over_600_lines() -> None:
    long = {
        _module(p): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}, f"modules over 600 lines: {long}"


def test_the_engine_is_a_loop_under_400_lines() -> None:
    from director.run import engine

    source = Path(engine.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Engine"]
    assert cls.end_lineno is not None and cls.end_lineno - cls.lineno + 1 < 400


def test_every_module_is_named_in_the_architecture_doc() -> None:
    """docs/architecture.md is the map of the house: every module is named there, a top-level one by its
    file name, one in a package in its package's row of the table (`pkg/`), so a newcomer finds each room."""
    import re

    doc = (PACKAGE / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if line.startswith("|")]
    unnamed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.name == "__init__.py":
            continue  # a package is named by its row (and `director` is the whole)
        if len(rel.parts) == 1:
            if f"`{rel.name}`" not in doc:
                unnamed.append(str(rel))
            continue
        row = " ".join(r for r in rows if f"`{rel.parts[0]}/`" in r)
        named = re.compile(rf"(^|[^\w]){re.escape(path.stem)}($|[^\w])")
        if not any(named.search(span) for span in re.findall(r"`([^`]+)`", row)):
            unnamed.append(str(rel))
    assert unnamed == [], f"modules docs/architecture.md does not name (in their package's row): {unnamed}"
