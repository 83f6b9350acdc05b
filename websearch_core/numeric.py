"""What counts as a number a setting or an argument may hold."""

from __future__ import annotations

import math

__all__ = ["finite_number"]


def finite_number(
    value: object, *, at_least: float | None = None, above: float | None = None
) -> bool:
    """Whether ``value`` is a real number (not a bool, NaN or infinite) within the bound."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    return (at_least is None or value >= at_least) and (above is None or value > above)
