"""Metering the paid engines: asked before a search, told afterwards what it cost."""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from websearch_core.errors import ConfigurationError
from websearch_core.numeric import finite_number

__all__ = ["BUDGET_SPENT", "METER_DOWN", "BudgetMeter", "Fees", "Meter", "ask_meter", "tell_meter"]

logger = logging.getLogger("websearch_core")

#: Why a paid engine sat a search out when its meter said no.
BUDGET_SPENT = "the metering budget is spent"
#: Why a paid engine sat a search out while its meter failed (it fails closed on spend).
METER_DOWN = "the meter is failing: paid engines sit out until it answers"


@runtime_checkable
class Meter(Protocol):
    """Asked before a paid engine joins a search, told afterwards what it cost.

    ``allow`` returns whether ``engine`` may spend ``cents`` on this search (a meter may hold
    the sum until ``spent``); ``spent`` is called once for every allowed engine, with what it
    cost: the fee if the engine answered, 0 if it was down. Called from worker threads and
    event loops alike, so an implementation must be thread-safe.
    """

    def allow(self, engine: str, cents: float) -> bool: ...

    def spent(self, engine: str, cents: float) -> None: ...


class BudgetMeter:
    """The in-process meter: a running total, and an optional budget it never lets pass.

    A fee is held when allowed and settled when spent, so concurrent searches cannot
    together spend past the budget.
    """

    def __init__(self, budget_cents: float | None = None) -> None:
        if budget_cents is not None and not finite_number(budget_cents, at_least=0):
            raise ConfigurationError(
                "the metering budget must be a number of cents, 0 or more (or None: no budget)"
            )
        self.budget_cents = budget_cents
        self.total_cents = 0.0
        self._held: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def allow(self, engine: str, cents: float) -> bool:
        with self._lock:
            held = sum(sum(fees) for fees in self._held.values())
            if self.budget_cents is not None and self.total_cents + held + cents > (
                self.budget_cents + 1e-9
            ):
                return False
            self._held.setdefault(engine, []).append(cents)
            return True

    def spent(self, engine: str, cents: float) -> None:
        with self._lock:
            fees = self._held.get(engine)
            if fees:
                fees.pop()
            self.total_cents += cents

    @property
    def remaining_cents(self) -> float | None:
        with self._lock:
            if self.budget_cents is None:
                return None
            return max(0.0, self.budget_cents - self.total_cents)

    def __repr__(self) -> str:
        return f"BudgetMeter(total_cents={self.total_cents:g}, budget_cents={self.budget_cents})"


@dataclass(frozen=True)
class Fees:
    """Cents per search that reaches a paid engine: ``WEBSEARCH_FEE_CENTS_<ENGINE>`` over
    ``WEBSEARCH_FEE_CENTS`` over 1 cent."""

    default: float = 1.0
    per_engine: Mapping[str, float] = field(default_factory=dict)

    def of(self, engine: str) -> float:
        return self.per_engine.get(engine, self.default)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Fees:
        env = os.environ if environ is None else environ
        prefix = "WEBSEARCH_FEE_CENTS"
        default = _cents(prefix, env.get(prefix, "1"))
        per_engine = {
            name[len(prefix) + 1 :].lower(): _cents(name, value)
            for name, value in env.items()
            if name.startswith(prefix + "_") and len(name) > len(prefix) + 1
        }
        return cls(default, per_engine)


def _cents(name: str, value: str) -> float:
    try:
        cents = float(value)
    except ValueError:
        cents = math.nan
    if math.isnan(cents) or math.isinf(cents) or cents < 0:
        raise ConfigurationError(f"{name} must be a number of cents, 0 or more, such as 1.5")
    return cents


def _kind(exc: BaseException) -> str:
    """An exception named by type only: a meter's message may hold anything."""
    return type(exc).__name__


def ask_meter(meter: Meter, fees: Fees, engine: str) -> str | None:
    """Why a paid engine sits this search out (its budget spent, the meter failing), or
    ``None`` when the meter holds its fee. A meter that fails closes on spend, never on
    answer: the free engines still search."""
    try:
        allowed = meter.allow(engine, fees.of(engine))
    except Exception as exc:
        logger.warning("meter.allow failed (%s): %s sits this search out", _kind(exc), engine)
        return METER_DOWN
    return None if allowed else BUDGET_SPENT


def tell_meter(meter: Meter, held: Mapping[str, float], paid: Mapping[str, float]) -> None:
    """Tell the meter what each fee it holds (``held``) cost: ``paid``'s cents, else 0. A
    meter that fails here is logged (engine, cents) for the operator to reconcile; the search
    it metered is still answered."""
    for name in held:
        cents = paid.get(name, 0.0)
        try:
            meter.spent(name, cents)
        except Exception as exc:  # the others are still told
            logger.warning(
                "meter.spent failed (%s): %s's %g cents for a search are not recorded",
                _kind(exc),
                name,
                cents,
            )
