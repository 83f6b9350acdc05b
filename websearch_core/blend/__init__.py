"""The blend: one search sent to many engines at once, their answers fused into one menu.

A keyless meta-search. The engines are each keyless backend of the installed ddgs (its
per-backend mode) and every keyed provider the operator configured whose class says it
``blends`` (brave, tavily, mojeek, searxng). One module per concern:

- ``engines``: which engines there are and what each honours; the names a search may ask for.
- ``outcomes``: an engine's answer as one of exactly three outcomes: ``answered`` (results),
  ``blind`` (it answered, but nothing usable: no results, or a body that is not a result
  list, such as a captcha page), ``down`` (an error, a refusal, or no answer by the blend's
  deadline).
- ``fusion``: reciprocal-rank fusion (each engine adds ``1 / (60 + position)`` to a page's
  score), pages deduplicated by ``canonical.canonical_url``; a fused result keeps every
  engine that returned it and its position in each, the best-placed title and URL and the
  longest snippet. Ties go to the better best position, then to the engine listed first, so
  the same answers always fuse to the same menu.
- ``meter``: an engine is paid when its provider class says so and the operator set its
  credential. Before a search its fee is asked of the ``Meter``; refused, the engine sits the
  search out and the others answer (it fails closed on spend, never on answer). Afterwards the
  meter is told what each engine cost: its fee if it answered (answered or blind), nothing if
  it was down.
- ``cache``: blend answers a server can share between sessions.
- ``plan``: the blend as something a search can be routed to, and who runs one search.
- ``run``: every engine at once under one deadline, sync and async.
"""

from websearch_core.blend.cache import BlendCache
from websearch_core.blend.engines import (
    DDGS_BACKENDS_UNSUPPORTED,
    NO_SUCH_ENGINE,
    Engine,
    ddgs_capabilities,
    match_engines,
)
from websearch_core.blend.fusion import RRF_K, fuse, merged_suggestions
from websearch_core.blend.meter import BUDGET_SPENT, METER_DOWN, BudgetMeter, Fees, Meter
from websearch_core.blend.outcomes import outcome_of

__all__ = [
    "BUDGET_SPENT",
    "DDGS_BACKENDS_UNSUPPORTED",
    "METER_DOWN",
    "NO_SUCH_ENGINE",
    "RRF_K",
    "BlendCache",
    "BudgetMeter",
    "Engine",
    "Fees",
    "Meter",
    "ddgs_capabilities",
    "fuse",
    "match_engines",
    "merged_suggestions",
    "outcome_of",
]
