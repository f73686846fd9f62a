"""The cloudflare target: prerequisite failures name what is missing (fake wranglers on PATH)."""

from __future__ import annotations

from pathlib import Path

import pytest

from director.errors import PrerequisiteError, UsageError
from director.targets import get_target
from director.targets.cloudflare import CloudflareTarget


def fake_wrangler(directory: Path, version_rc: int, version_out: str, whoami_out: str) -> Path:
    """A `wrangler` sh script with canned `--version` and `whoami` answers; logs its calls."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "wrangler"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{directory}/calls"\n'
        'case "$1" in\n'
        f"  --version) echo '{version_out}'; exit {version_rc} ;;\n"
        f"  whoami) echo '{whoami_out}'; exit 0 ;;\n"
        "esac\n"
        "exit 0\n"
    )
    script.chmod(0o755)
    return script


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("CLOUDFLARE_API_TOKEN", "CLOUDFLARE_API_KEY", "CLOUDFLARE_EMAIL"):
        monkeypatch.delenv(var, raising=False)


def target(tmp_path: Path) -> CloudflareTarget:
    made = get_target("cloudflare", tmp_path / "state")
    assert isinstance(made, CloudflareTarget)
    return made


def test_missing_wrangler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(PrerequisiteError) as caught:
        target(tmp_path).check_prerequisites()
    message = str(caught.value)
    assert "`wrangler` is not on PATH" in message
    assert "--target local" in message


def test_wrangler_that_does_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    fake_wrangler(bin_dir, 1, "Wrangler requires at least Node.js v22.12.0", "")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    with pytest.raises(PrerequisiteError) as caught:
        target(tmp_path).check_prerequisites()
    message = str(caught.value)
    assert "--version` failed (exit 1)" in message
    assert "Wrangler requires at least Node.js v22.12.0" in message  # its own error, verbatim
    assert "--target local" in message


def test_not_authenticated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_credentials: None) -> None:
    bin_dir = tmp_path / "bin"
    fake_wrangler(bin_dir, 0, "4.86.0", "You are not authenticated. Please run `wrangler login`.")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    with pytest.raises(PrerequisiteError) as caught:
        target(tmp_path).check_prerequisites()
    message = str(caught.value)
    assert "CLOUDFLARE_API_TOKEN is not set" in message
    assert "wrangler login" in message
    assert "--target local" in message


def test_token_skips_whoami(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    fake_wrangler(bin_dir, 0, "4.86.0", "You are not authenticated.")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", "t0k3n")
    target(tmp_path).check_prerequisites()
    assert (bin_dir / "calls").read_text().split("\n")[:-1] == ["--version"]


def test_logged_in_without_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_credentials: None
) -> None:
    bin_dir = tmp_path / "bin"
    fake_wrangler(
        bin_dir, 0, "4.86.0", "You are logged in with an OAuth Token, associated with the email a@b."
    )
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    target(tmp_path).check_prerequisites()
    assert (bin_dir / "calls").read_text().split("\n")[:-1] == ["--version", "whoami"]


def test_blocks_run_unchanged(tmp_path: Path) -> None:
    made = target(tmp_path)
    env = made.block_environment()
    assert env.path_prepend == () and env.env == {}
    assert made.drain_events() == [] and made.sessions() == [] and made.stop_all() == []


def test_unknown_target_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        get_target("aws", tmp_path)
    assert "--target" in str(caught.value)
    assert "cloudflare" in str(caught.value) and "local" in str(caught.value)
