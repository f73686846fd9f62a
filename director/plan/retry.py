"""A block's retry policy, read from its fence's attributes (`retries=3 backoff=exponential delay=2s
timeout=5m`, docs/plan-format.md); a malformed value is a PlanError at the fence's line."""

from __future__ import annotations

import re
from dataclasses import replace

from director.plan.fence import FenceAttributeError, FenceAttributes, parse_attributes
from director.plan.model import Backoff, RetryPolicy
from director.plan.source import Source, whole_number

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
# The longest `delay=`/`timeout=` and the most `retries=` a fence may ask for (docs/limits.md): beyond them
# a wait is no longer a wait a run can make (`time.sleep` refuses a delay past its clock's range).
MAX_DURATION_S = 7 * 24 * 3600.0
MAX_RETRIES = 1000


def parse_duration(text: str) -> float | None:
    """Seconds of `500ms`/`2s`/`5m`/`1h`; None when it is not a duration (or longer than a week)."""
    m = _DURATION.match(text.strip())
    if m is None:
        return None
    secs = float(m.group(1)) * _UNITS[m.group(2)]
    return secs if secs <= MAX_DURATION_S else None


_BACKOFFS: dict[str, Backoff] = {"exponential": "exponential", "constant": "constant"}


def fence_attributes(info: str, ctx: Source, line0: int) -> FenceAttributes | None:
    """The `{…}` attributes of a fence info string after its language (docs/plan-format.md)."""
    try:
        return parse_attributes(info)
    except FenceAttributeError as exc:
        raise ctx.error(str(exc), line0) from None


def parse_retry(info: str, ctx: Source, line0: int) -> RetryPolicy | None:
    """The retry policy (`retries=… backoff=… delay=… timeout=…`) among a fence's attributes, if any."""
    attrs = fence_attributes(info, ctx, line0)
    if attrs is None or not attrs.retry_items:
        return None
    policy = RetryPolicy()
    for key, value in attrs.retry_items:
        if key == "retries":
            retries = whole_number(value)
            if retries is None or retries > MAX_RETRIES:
                raise ctx.error(f"bad retries={value!r}: expected a whole number up to {MAX_RETRIES}", line0)
            policy = replace(policy, retries=retries)
        elif key == "backoff":
            backoff = _BACKOFFS.get(value)
            if backoff is None:
                raise ctx.error(f"bad backoff={value!r}: expected exponential or constant", line0)
            policy = replace(policy, backoff=backoff)
        else:  # delay, timeout
            secs = parse_duration(value)
            if secs is None or (key == "timeout" and secs <= 0):
                raise ctx.error(
                    f"bad {key}={value!r}: expected a duration like 500ms, 2s, 5m or 1h, at most a week "
                    "(168h)",
                    line0,
                )
            policy = replace(policy, delay_s=secs) if key == "delay" else replace(policy, timeout_s=secs)
    return policy
