"""Which tests run together on one pytest-xdist worker, and in what order the work is handed out.

The README's command runs the suite on six workers (`-n 6`, also on two CPUs: the tests mostly wait on real
processes). A test goes to whichever worker is
free, except tests that share something built once: what they share through a module-scoped fixture (an
applied plan carried through ordered steps, a soak's trials, a stack started once) must be built once and
seen in order, so they form a group that runs on one worker, in collection order. The group is the module,
or, when every module-scoped fixture a test uses is parametrized, the module and those parameters (each
example plan's flow is a group of its own: two plans' flows run side by side). A test may name its group
with the `xdist_group` mark (several modules' tests that bind one fixed port: `port-8765`).

xdist's own `--dist loadgroup` carried the group in the test's id, which pytest 9.2 no longer lets it
change (pytest-dev/pytest-xdist#1386: the groups are silently ignored). So each worker writes the groups
it collected into a file of the session (the controller's temp dir); the controller's scheduler, a
`LoadScopeScheduling` whose scope is that group (else the test alone), reads it once every worker has
collected. It hands out the slow tests first (the `slow` mark), the largest groups first among them, so
that the last minutes are not one long test on one worker while the other idles.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

FILE = "xdist-groups.json"


def group_of(item: pytest.Item) -> str | None:
    """The group a test must run in (see above); None when it may run anywhere."""
    for mark in item.iter_markers("xdist_group"):
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    if not isinstance(item, pytest.Function):
        return None
    shared: list[str] = []
    for name in item.fixturenames:
        defs = item._fixtureinfo.name2fixturedefs.get(name)
        if not defs or defs[-1].scope not in ("module", "package", "class"):
            continue
        params = getattr(item, "callspec", None)
        if params is None or name not in params.params:
            return item.nodeid.split("::")[0]  # one instance for the whole module
        shared.append(f"{name}={params.params[name]}")
    return f"{item.nodeid.split('::')[0]}:{','.join(shared)}" if shared else None


def write(directory: str, items: list[pytest.Item]) -> None:
    """Write each collected test's group and whether it is slow, atomically (every worker writes the same)."""
    groups = {item.nodeid: [group_of(item), item.get_closest_marker("slow") is not None] for item in items}
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".groups-")
    with os.fdopen(fd, "w") as f:
        json.dump(groups, f)
    os.replace(tmp, os.path.join(directory, FILE))


class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """`LoadScopeScheduling` by the groups the workers wrote; slow work units handed out first."""

    def __init__(self, config: pytest.Config, log: Any, directory: str) -> None:
        super().__init__(config, log)
        self._file = Path(directory) / FILE
        self._groups: dict[str, list[Any]] | None = None
        self._ordered = False

    def _read(self) -> dict[str, list[Any]]:
        if self._groups is None:
            try:
                self._groups = json.loads(self._file.read_text())
            except (OSError, ValueError):
                self._groups = {}  # no worker wrote it: every test its own unit, as `--dist load`
        return self._groups

    def _split_scope(self, nodeid: str) -> str:
        group = self._read().get(nodeid, [None])[0]
        return f"group:{group}" if group else nodeid

    def _assign_work_unit(self, node: Any) -> None:
        if not self._ordered:  # the first call: the whole queue is built
            self._ordered = True
            groups = self._read()

            def weight(unit: tuple[str, dict[str, bool]]) -> tuple[bool, int]:
                slow = any(groups.get(nodeid, [None, False])[1] for nodeid in unit[1])
                return (not slow, -len(unit[1]))

            units = sorted(self.workqueue.items(), key=weight)
            self.workqueue.clear()
            self.workqueue.update(units)
        super()._assign_work_unit(node)
