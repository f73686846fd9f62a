"""What Director needs of the machine before `apply`, `teardown`, `plan` or `check` runs a block, checked
at start with a one-line error (exit 6) rather than found half-way through a run.

- bash ≥ 4.1: every block runs in bash, and the engine relies on `BASH_XTRACEFD` (4.1: bash's trace on a
  private pipe, how Director knows which checks ran) and `$BASHPID` (4.0); macOS ships bash 3.2.
- /proc (Linux): the session's per-block pipes are opened through `/proc/<pid>/fd`, and the process
  guarantees (docs/processes.md) read `/proc/<pid>`. Without it (macOS) the commands that only read
  (show, lint, status, diff, audit, output, logs) still work.

The bash checked is the one the blocks get: the first `bash` on PATH, as `director.exec.shell` finds it.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from director.errors import PrerequisiteError

MIN_BASH = (4, 1)
_VERSION = 'printf "%s %s" "${BASH_VERSINFO[0]}" "${BASH_VERSINFO[1]}"'


def check_engine(path: str | None = None) -> None:
    """Raise `PrerequisiteError` (one line) unless /proc is mounted and the blocks' bash is ≥ 4.1."""
    if not os.path.isdir(f"/proc/{os.getpid()}/fd"):
        raise PrerequisiteError(
            "/proc is not mounted here: Director runs blocks through /proc (Linux); on this system only "
            "show, lint, status, diff, audit, output and logs work"
        )
    search = path if path is not None else os.environ.get("PATH", os.defpath)
    bash = shutil.which("bash", path=search)
    if bash is None:
        raise PrerequisiteError("bash not found on PATH: Director runs every block in bash ≥ 4.1")
    found = bash_version(bash)
    if found is None or found < MIN_BASH:
        shown = "an unknown version" if found is None else f"bash {found[0]}.{found[1]}"
        raise PrerequisiteError(
            f"{bash} is {shown}: Director needs bash ≥ {MIN_BASH[0]}.{MIN_BASH[1]} (BASH_XTRACEFD, "
            "$BASHPID); put a newer bash first on PATH"
        )


def bash_version(bash: str) -> tuple[int, int] | None:
    """(major, minor) of that bash, from its own `BASH_VERSINFO`; None when it does not say. A probe killed
    by a signal (another process's kill, the OOM killer) said nothing either way: it is asked again, at most
    three times."""
    for _ in range(3):
        try:
            r = subprocess.run(
                [bash, "--noprofile", "--norc", "-c", _VERSION],
                capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        if r.returncode >= 0:
            break
    parts = r.stdout.split()
    if r.returncode != 0 or len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])
