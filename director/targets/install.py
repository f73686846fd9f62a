"""Find a wrangler that can drive a local Workflows session, installing the pinned one if needed."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from director.errors import PrerequisiteError
from director.files import fsync_dir, write_atomic
from director.targets.base import Progress

#: The last wrangler release that runs on Node 20 (4.87 needs Node 22); see WRANGLER-LOCAL.md.
PINNED_VERSION = "4.86.0"
#: wrangler 4.86's own launcher refuses older Node (packages/wrangler/bin/wrangler.js: MIN_NODE_VERSION).
MIN_NODE = (20, 0, 0)
#: `wrangler workflows … --local --port` first shipped in 4.79.0 (packages/wrangler/src/workflows/local.ts).
MIN_LOCAL_WORKFLOWS = (4, 79, 0)

_VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_RUN_TIMEOUT_S = 60.0
_INSTALL_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Wrangler:
    """A runnable wrangler: where it is, its version, and why it was chosen."""

    path: Path
    version: str
    source: str  # "path" | "cache" | "installed"


def cache_dir() -> Path:
    """`$DIRECTOR_CACHE`, else the user cache directory (platformdirs): `$XDG_CACHE_HOME/director` or
    `~/.cache/director` on Linux, `~/Library/Caches/director` on macOS."""
    explicit = os.environ.get("DIRECTOR_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    return platformdirs.user_cache_path("director", appauthor=False)


def pinned_dir(cache: Path | None = None) -> Path:
    """Where the pinned wrangler lives once installed."""
    return (cache or cache_dir()) / f"wrangler-{PINNED_VERSION}"


def pinned_bin(cache: Path | None = None) -> Path:
    """The pinned wrangler's launcher."""
    return pinned_dir(cache) / "node_modules" / ".bin" / "wrangler"


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The last `X.Y.Z` in a tool's `--version` output (banners may come first)."""
    found = _VERSION_RE.findall(text)
    if not found:
        return None
    major, minor, patch = found[-1]
    return int(major), int(minor), int(patch)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["WRANGLER_SEND_METRICS"] = "false"
    return env


def _run(argv: list[str], timeout: float = _RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str] | None:
    """Run a short probe; None when it cannot start or hangs."""
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=_env(),
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def probe_wrangler(path: Path) -> tuple[str | None, str]:
    """(version, output) of `<path> --version`; version is None unless it exits 0."""
    result = _run([str(path), "--version"])
    if result is None:
        return None, "did not start or did not finish"
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0:
        return None, output
    parsed = parse_version(result.stdout)
    return (".".join(map(str, parsed)) if parsed else None), output


def node_version() -> tuple[int, int, int]:
    """The Node.js version on PATH, or a `PrerequisiteError` if it is missing or too old."""
    node = shutil.which("node")
    if node is None:
        raise PrerequisiteError(
            "Node.js is not on PATH: the local target runs the real wrangler, which needs Node.js "
            f">= {'.'.join(map(str, MIN_NODE))}. Install Node.js (https://nodejs.org) and retry."
        )
    result = _run([node, "--version"])
    found = parse_version(result.stdout) if result is not None and result.returncode == 0 else None
    if found is None:
        raise PrerequisiteError(f"`{node} --version` failed; the local target needs a working Node.js.")
    if found < MIN_NODE:
        raise PrerequisiteError(
            f"Node.js {'.'.join(map(str, found))} is too old: wrangler {PINNED_VERSION} needs Node.js "
            f">= {'.'.join(map(str, MIN_NODE))}. Upgrade Node.js and retry."
        )
    return found


def _without_dirs(path_var: str, exclude: tuple[Path, ...]) -> str:
    """PATH minus some directories (our own wrapper must never be mistaken for the real wrangler)."""
    excluded = {os.path.realpath(p) for p in exclude}
    kept = [d for d in path_var.split(os.pathsep) if d and os.path.realpath(d) not in excluded]
    return os.pathsep.join(kept)


def _is_director_wrapper(path: Path) -> bool:
    try:
        head = path.read_bytes()[:4096]
    except OSError:
        return False
    return b"director.targets.wrangler_shim" in head


def find_path_wrangler(exclude: tuple[Path, ...] = ()) -> tuple[Wrangler | None, str]:
    """The wrangler on PATH if it runs here and is new enough; else (None, why not)."""
    found = shutil.which("wrangler", path=_without_dirs(os.environ.get("PATH", ""), exclude))
    if found is None:
        return None, "no wrangler on PATH"
    path = Path(found)
    if _is_director_wrapper(path):
        return None, f"{path} is a Director wrapper"
    version, output = probe_wrangler(path)
    if version is None:
        last = output.splitlines()[-1] if output else "no output"
        return None, f"`{path} --version` failed ({last})"
    parsed = parse_version(version)
    if parsed is None or parsed < MIN_LOCAL_WORKFLOWS:
        need = ".".join(map(str, MIN_LOCAL_WORKFLOWS))
        return None, f"wrangler {version} on PATH predates `workflows … --local` (needs >= {need})"
    return Wrangler(path=path, version=version, source="path"), ""


def _say(progress: Progress | None, message: str, *, ongoing: bool = False) -> None:
    if progress is not None:
        progress(message, ongoing=ongoing)


def _clean_partials(cache: Path) -> None:
    """Remove temp dirs left by interrupted installs (only called while holding the install lock)."""
    for leftover in cache.glob(f".tmp-wrangler-{PINNED_VERSION}-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    for leftover in cache.glob(f".broken-wrangler-{PINNED_VERSION}-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _npm_install(tmp: Path, progress: Progress | None) -> None:
    """`npm install` the pin into tmp, reporting elapsed time while it runs."""
    npm = shutil.which("npm")
    if npm is None:
        raise PrerequisiteError(
            f"npm is not on PATH: it is needed once to install wrangler {PINNED_VERSION} "
            "for the local target. Install npm (it ships with Node.js) and retry."
        )
    # A package.json of our own stops npm from walking up into some enclosing project.
    (tmp / "package.json").write_text('{"name": "director-wrangler", "private": true}\n')
    log_path = tmp / "npm-install.log"
    argv = [npm, "install", "--no-audit", "--no-fund", f"wrangler@{PINNED_VERSION}"]
    started = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, cwd=tmp, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            while proc.poll() is None:
                elapsed = time.monotonic() - started
                if elapsed > _INSTALL_TIMEOUT_S:
                    proc.kill()
                    proc.wait()
                    raise PrerequisiteError(
                        f"`npm install wrangler@{PINNED_VERSION}` took more than {_INSTALL_TIMEOUT_S:.0f} s"
                    )
                _say(progress, f"installing wrangler {PINNED_VERSION} … {elapsed:.0f} s", ongoing=True)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=1.0)  # returns as soon as npm is done
        except BaseException:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            raise
    if proc.returncode != 0:
        tail = "\n".join(log_path.read_text(errors="replace").strip().splitlines()[-15:])
        raise PrerequisiteError(
            f"`npm install wrangler@{PINNED_VERSION}` failed (exit {proc.returncode}):\n{tail}"
        )


def install_pinned(progress: Progress | None = None, cache: Path | None = None, why: str = "") -> Wrangler:
    """Install the pinned wrangler once, atomically: temp dir, verify, then rename into place.

    Says one line when it starts (`why` first: why the pin is needed) and one when it is done; the
    time in between is an `ongoing` status (a terminal sees it count, a log does not)."""
    cache = cache or cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    final = pinned_dir(cache)
    with (cache / ".install.lock").open("a") as lock:
        # Serialises concurrent Directors; the second one finds the finished install below.
        fcntl.flock(lock, fcntl.LOCK_EX)
        _clean_partials(cache)
        if final.exists():
            version, _ = probe_wrangler(pinned_bin(cache))
            if version is not None:
                return Wrangler(path=pinned_bin(cache), version=version, source="cache")
            # A renamed-into-place install is complete by construction; one that no longer runs was
            # damaged later, so set it aside rather than trust it.
            final.rename(cache / f".broken-wrangler-{PINNED_VERSION}-{secrets.token_hex(4)}")
            _clean_partials(cache)
        tmp = cache / f".tmp-wrangler-{PINNED_VERSION}-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir()
        try:
            what = f"installing wrangler {PINNED_VERSION} into {final} (one time, ~15 s)"
            _say(progress, f"{why}; {what}" if why else what)
            started = time.monotonic()
            _npm_install(tmp, progress)
            launcher = tmp / "node_modules" / ".bin" / "wrangler"
            version, output = probe_wrangler(launcher)
            if version is None:
                raise PrerequisiteError(
                    f"the freshly installed wrangler {PINNED_VERSION} does not run:\n{output}"
                )
            tmp.rename(final)
            fsync_dir(final.parent)  # the install is there only once its rename is durable
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    _say(progress, f"installed wrangler {version} in {time.monotonic() - started:.0f} s; using it")
    return Wrangler(path=pinned_bin(cache), version=version, source="installed")


def resolve_wrangler(
    progress: Progress | None = None, *, exclude: tuple[Path, ...] = (), cache: Path | None = None
) -> Wrangler:
    """The PATH wrangler if usable, else the cached pin, else install the pin; says which, once it runs."""
    on_path, why_not = find_path_wrangler(exclude)
    if on_path is not None:
        _say(progress, f"using wrangler {on_path.version} from PATH ({on_path.path})")
        return on_path
    node = node_version()
    cached = _cached_pin(node, cache)
    if cached is not None:
        _say(progress, f"{why_not}; using wrangler {cached.version} ({pinned_dir(cache)})")
        return cached
    found = install_pinned(progress, cache, why=why_not)
    if found.source == "cache":  # another Director installed it while this one waited for the lock
        _say(progress, f"{why_not}; using wrangler {found.version} ({pinned_dir(cache)})")
    return found


def _cached_pin(node: tuple[int, int, int], cache: Path | None) -> Wrangler | None:
    """The pinned wrangler already installed in the cache, if it runs on this Node."""
    cached = pinned_bin(cache)
    if not cached.exists():
        return None
    # `wrangler --version` costs a Node start-up (~1.5 s): remember a good probe for this Node and
    # this install, so that every run does not pay it again.
    stamp = pinned_dir(cache) / ".director-probe"
    key = f"{'.'.join(map(str, node))} {_install_mtime(cache)}"
    with contextlib.suppress(OSError, ValueError):
        seen_key, seen_version = stamp.read_text().rsplit(" ", 1)
        if seen_key == key:
            return Wrangler(path=cached, version=seen_version.strip(), source="cache")
    version, _ = probe_wrangler(cached)
    if version is None:
        return None
    with contextlib.suppress(OSError):
        write_atomic(stamp, f"{key} {version}\n")
    return Wrangler(path=cached, version=version, source="cache")


def _install_mtime(cache: Path | None) -> int:
    """When the pinned wrangler was installed (its launcher's target), in ns; 0 if unknown."""
    try:
        return pinned_bin(cache).stat().st_mtime_ns
    except OSError:
        return 0
