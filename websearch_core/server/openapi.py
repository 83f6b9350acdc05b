"""The typed endpoint's request model and its OpenAPI 3.1 document, both from the core's
pydantic models, so the document cannot drift from what the endpoint accepts and returns."""

from __future__ import annotations

import functools
from typing import Annotated, Any

from pydantic import Field, StrictStr, WithJsonSchema
from pydantic.json_schema import models_json_schema

from websearch_core import __version__
from websearch_core.models import (
    MAX_READ,
    MAX_READ_TOKENS,
    MIN_READ_TOKENS,
    SearchRequest,
    SearchResponse,
)

__all__ = ["TypedSearch", "openapi_document"]


def _whole(low: int, high: int, description: str) -> WithJsonSchema:
    return WithJsonSchema(
        {"type": ["integer", "null"], "minimum": low, "maximum": high, "description": description}
    )


class TypedSearch(SearchRequest):
    """``WebSearch.search``'s arguments as JSON: ``SearchRequest``, optionally the provider to
    pin for this search (``auto``, ``blend`` or a configured provider), and a search that
    reads (``read``, ``read_tokens``).

    ``read`` and ``read_tokens`` are passed to the search as given and checked there, so a
    bad one is refused in the words the Python API uses (the schema says what fits).
    """

    provider: StrictStr | None = None
    read: Annotated[
        object,
        _whole(
            0,
            MAX_READ,
            "also read the top N results' pages for the passages that best answer the query "
            "(results[].passages, or results[].read_error); 0: the menu alone; absent: the "
            "service's default",
        ),
    ] = Field(default=None)
    read_tokens: Annotated[
        object,
        _whole(
            MIN_READ_TOKENS,
            MAX_READ_TOKENS,
            "the token budget of the rendered answer, menu and passages together; absent: "
            "the service's default",
        ),
    ] = Field(default=None)


_REF = "#/components/schemas/{model}"


@functools.cache
def openapi_document() -> dict[str, Any]:
    _, schemas = models_json_schema(
        [(TypedSearch, "validation"), (SearchResponse, "serialization")], ref_template=_REF
    )
    components = dict(schemas.get("$defs", {}))
    components["Error"] = {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["type", "message", "retryable"],
                "properties": {
                    "type": {"type": "string", "description": "the typed error's class"},
                    "message": {"type": "string", "description": "what failed and what to do"},
                    "retryable": {"type": "boolean"},
                    "reason": {"type": "string", "description": "a refused URL's reason code"},
                    "retry_after": {"type": "number", "description": "seconds, when known"},
                    "provider": {"type": "string", "description": "the provider that failed"},
                },
            }
        },
    }

    def error(description: str) -> dict[str, Any]:
        schema = {"$ref": _REF.format(model="Error")}
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    response_schema = {"$ref": _REF.format(model="SearchResponse")}
    return {
        "openapi": "3.1.0",
        "info": {"title": "websearch-pack", "version": __version__},
        "components": {
            "schemas": components,
            "securitySchemes": {
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                "bearer": {"type": "http", "scheme": "bearer"},
            },
        },
        "security": [{"apiKey": []}, {"bearer": []}],
        "paths": {
            "/v1/websearch": {
                "post": {
                    "operationId": "search_web",
                    "summary": "Search the web (the same request and response as WebSearch.search)",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": _REF.format(model="TypedSearch")}
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "the results; with Accept: text/plain, the text a "
                            "model reads",
                            "content": {
                                "application/json": {"schema": response_schema},
                                "text/plain": {"schema": {"type": "string"}},
                            },
                        },
                        "400": error("the request is invalid, or asks what cannot be honoured"),
                        "401": error("the API key is missing or wrong"),
                        "429": error("rate limited, or the metering budget is spent"),
                        "502": error("the provider answered with a failure"),
                        "503": error(
                            "the provider is down, the service is at capacity, or no "
                            "key is configured"
                        ),
                    },
                }
            }
        },
    }
