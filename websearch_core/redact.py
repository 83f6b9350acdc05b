"""Secrets: the redactor for text we did not write (``config.SecretURL`` is the URL type
whose password never shows).

Our own messages never hold a key. But a provider may echo the request in its error body or
its results, and an operator's base URL may carry ``user:password@``. Every text the session
builds from a provider's answer, every error leaving a public entry point and every log line
go through ``Redactor.redact``, which replaces each configured secret — in the forms it can
travel in: as is, percent-encoded, base64-encoded (HTTP Basic auth sends ``user:password`` so,
and an engine may echo it) and, for URL credentials, the password and ``user:password`` —
with ``[redacted]``.

Base64 is matched wherever the secret sits in an encoded stream: its encoding is taken at each
of the three byte offsets it can start at, less the characters its neighbours also shape, so
the part that is the secret's alone is replaced and what is left cannot be decoded back to it.
"""

from __future__ import annotations

import base64
import logging
import weakref
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote, urlsplit

from websearch_core.errors import WebSearchError

__all__ = ["REDACTED", "Redactor", "url_credentials"]

REDACTED = "[redacted]"
#: Shorter values are not redacted: replacing every "ab" in a message would garble it, and a
#: two-character secret protects nothing anyway.
_MIN_SECRET_CHARS = 4


def url_credentials(url: str) -> list[str]:
    """The secret parts of ``url``'s userinfo: the password, and ``user:password``."""
    try:
        parts = urlsplit(url)
        password = parts.password
        user = parts.username
    except ValueError:
        return [url]  # unreadable: treat the whole URL as the secret
    found: list[str] = []
    if password:
        found += [password, unquote(password)]
        if user:
            found += [f"{user}:{password}", f"{unquote(user)}:{unquote(password)}"]
    elif user:
        found += [user, unquote(user)]  # a token passed as the user name
    return found


def _base64_cores(secret: str) -> list[str]:
    """The base64 characters only ``secret`` decides, at each offset it may start at in an
    encoded stream, standard and URL-safe alphabets."""
    raw = secret.encode("utf-8", "surrogatepass")
    cores: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode().rstrip("=")
        head = (offset * 8 + 5) // 6  # characters a preceding byte shares
        tail = 1 if (offset + len(raw)) % 3 else 0  # a last character a following byte shares
        whole = [encoded] if offset == 0 else []  # as itself: the Basic auth credential
        for core in (*whole, encoded[head : len(encoded) - tail]):
            if len(core) >= 2 * _MIN_SECRET_CHARS:
                cores += [core, core.replace("+", "-").replace("/", "_")]
    return cores


class Redactor:
    """Replaces configured secrets in text."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            plain = (secret, quote(secret, safe=""), quote(secret), quote_plus(secret))
            for form in (*plain, *_base64_cores(secret)):
                if len(form) >= _MIN_SECRET_CHARS:
                    forms.add(form)
        # Longest first, so a secret that contains another is replaced whole.
        self._forms = sorted(forms, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._forms)

    def redact(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text

    def mask(self, text: str) -> str:
        """``redact`` that keeps every length: each secret becomes ``[redacted]`` padded
        with ``*`` to its own length (or ``*`` only, if shorter), so offsets a provider
        reports into the text still point at the same words."""
        for form in self._forms:
            if form in text:
                cover = (REDACTED + "*" * len(form))[: len(form)]
                if len(form) < len(REDACTED):
                    cover = "*" * len(form)
                text = text.replace(form, cover)
        return text

    def scrub(self, error: WebSearchError) -> WebSearchError:
        """``error`` with its message redacted, in place (its type and fields stay)."""
        clean = self.redact(error.message)
        if clean != error.message:
            error.message = clean
            error.args = (clean,)
        return error

    def __repr__(self) -> str:
        return f"Redactor({len(self._forms)} forms)"


class _LibraryLogRedactor(logging.Filter):
    """Redacts every live session's secrets from the HTTP libraries' own log records.

    httpx logs each request's URL at INFO level; Mojeek's key travels in its URL. The filter
    sits on the ``httpx`` and ``httpcore`` loggers once per process and reads the redactors
    of the sessions still alive (weakly held, so a closed session's secrets go with it).
    """

    def __init__(self) -> None:
        super().__init__()
        self.redactors: weakref.WeakSet[Redactor] = weakref.WeakSet()

    def filter(self, record: logging.LogRecord) -> bool:
        redactors = list(self.redactors)
        if redactors:
            message = record.getMessage()
            for redactor in redactors:
                message = redactor.redact(message)
            record.msg, record.args = message, None
        return True


_LIBRARY_LOGS = _LibraryLogRedactor()
for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).addFilter(_LIBRARY_LOGS)


def redact_library_logs(redactor: Redactor) -> None:
    """Keep ``redactor``'s secrets out of httpx's and httpcore's log records."""
    if redactor:
        _LIBRARY_LOGS.redactors.add(redactor)
