"""Check a constructed vendor body against the vendor's own published SDK types.

The SDKs' models accept unknown keys (Anthropic's and OpenAI's allow extras, OpenRouter's
ignores them), so validation alone would pass a field we invented. ``invented_fields``
validates the body, then walks it beside the validated model and names every key the SDK
does not declare. A key the vendor documents but its SDK does not model is passed in
``allowed`` (generic paths, list indices written ``[*]``), each with its source.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

__all__ = ["invented_fields"]


def invented_fields(
    model: type[BaseModel], body: dict[str, Any], allowed: frozenset[str] = frozenset()
) -> list[str]:
    """Keys of ``body`` that ``model`` (validating it) does not declare, as paths."""
    found: list[str] = []
    _walk(model.model_validate(body), body, "", found, allowed)
    return found


def _names(model: BaseModel) -> dict[str, str]:
    names: dict[str, str] = {}
    for name, info in type(model).model_fields.items():
        names[name] = name
        if info.alias:
            names[info.alias] = name
        if isinstance(info.validation_alias, str):
            names[info.validation_alias] = name
    return names


def _walk(
    value: object, data: object, path: str, found: list[str], allowed: frozenset[str]
) -> None:
    if isinstance(value, BaseModel) and isinstance(data, dict):
        names = _names(value)
        for key, item in data.items():
            where = f"{path}.{key}" if path else key
            if key not in names:
                if re.sub(r"\[\d+\]", "[*]", where) not in allowed:
                    found.append(where)
                continue
            _walk(getattr(value, names[key]), item, where, found, allowed)
    elif isinstance(value, list | tuple) and isinstance(data, list):
        for index, (inner, item) in enumerate(zip(value, data, strict=False)):
            _walk(inner, item, f"{path}[{index}]", found, allowed)
