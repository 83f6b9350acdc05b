"""Tokens a model reads for a grounded answer: the rendered answer and menu, per vendor.

Each fixture in tests/fixtures/wire/ (the structure of an answer recorded from a vendor's live
API, with our own text; see its ``mirrors``) is run through the vendor's provider, as a search
with ``include_answer=True``, and what ``render()`` gives the model is counted with OpenAI's
``o200k_base`` encoding (``bpe-openai``, which embeds it: nothing is downloaded), in all and
by part: the answer line, the menu's entries, and the rest. Also counted: the characters of
the answer that are the vendor's own inline links (``[site](url)``), and how many snippets
hold a URL.

    pip install -r benchmarks/requirements.txt
    python benchmarks/grounded_tokens.py                 # this tree
    python benchmarks/grounded_tokens.py --compare REF   # and REF (a ``git archive``), beside

A fixture newer than REF's provider code is still read by REF's provider: that is the point
(what the older code made of the same wire answer).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "wire"
LINK = re.compile(r"\(?\[[^\]\n]*\]\(https?://[^)\s]*\)\)?")


def rendered(fixture: Path) -> dict[str, Any]:
    """What this tree's provider makes of ``fixture``: the render and its parts."""
    import httpx
    from pydantic import SecretStr

    from websearch_core.models import SearchRequest
    from websearch_core.providers import PROVIDERS
    from websearch_core.providers.base import Call
    from websearch_core.redact import Redactor
    from websearch_core.search.answer import response_of
    from websearch_core.search.routing import rewrite_query

    spec = json.loads(fixture.read_text(encoding="utf-8"))
    provider = PROVIDERS[spec["provider"]](SecretStr("placeholder"))
    request = SearchRequest(**{**spec["arguments"], "include_answer": True})
    steps = provider.exchange(request, rewrite_query(request, provider.capabilities))
    answers = list(spec["responses"])
    sent: object = None
    try:
        while True:
            step = steps.send(sent)
            if isinstance(step, Call):
                answer = answers.pop(0)
                status, body = (
                    (answer["status"], answer["body"])
                    if set(answer) == {"status", "body"}
                    else (200, answer)
                )
                sent = httpx.Response(status, json=body, request=step.request)
            else:  # a Locate: where Gemini's redirect links lead, as the fixture says
                redirects = spec.get("redirects", {})
                sent = {u: redirects[u] for u in step.urls if u in redirects}
    except StopIteration as done:
        answered = done.value
    response = response_of(request, provider.name, request.query, answered, 0.0, Redactor(()))
    text = response.render()
    answer_line = next((b for b in text.split("\n\n") if b.startswith("Answer: ")), "")
    menu = "\n".join(
        line for line in text.splitlines() if re.match(r"(\d+\. |   )", line) is not None
    )
    return {
        "fixture": fixture.name,
        "text": text,
        "answer": answer_line,
        "menu": menu,
        "link_chars": sum(len(m) for m in LINK.findall(answer_line)),
        "snippets_with_urls": sum("http" in r.snippet for r in response.results),
        "results": len(response.results),
    }


def measure(tree: Path) -> list[dict[str, Any]]:
    """``rendered`` for every fixture, run by the code in ``tree`` (another process)."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from grounded_tokens import rendered\n"
        f"paths = sorted(Path({str(FIXTURES)!r}).glob('*.json'))\n"
        "print(json.dumps([rendered(p) for p in paths]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    ran = subprocess.run(  # in ``tree``: ``-c`` puts the working directory first on the path
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tree, check=True
    )
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


def older_tree(ref: str, into: str) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return Path(into)


def tokens(text: str) -> int:
    from bpe_openai import get_encoding

    return len(get_encoding("o200k_base").encode(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", metavar="REF", help="also measure the code at REF")
    parser.add_argument("--show", action="store_true", help="print each render")
    args = parser.parse_args()
    runs: list[tuple[str, list[dict[str, Any]]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.compare:
            runs.append((args.compare, measure(older_tree(args.compare, tmp))))
        runs.append(("this tree", measure(ROOT)))
    print(
        "| fixture | code | tokens (all) | answer | menu | vendor links in answer (chars) "
        "| snippets holding a URL |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    by_fixture: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for label, rows in runs:
        for row in rows:
            by_fixture.setdefault(row["fixture"], []).append((label, row))
    for fixture, rows in by_fixture.items():
        first = tokens(rows[0][1]["text"])
        for label, row in rows:
            total = tokens(row["text"])
            ratio = f" ({total / first:.2f}x)" if len(rows) > 1 and row is not rows[0][1] else ""
            print(
                f"| {fixture} | {label} | {total}{ratio} | {tokens(row['answer'])} "
                f"| {tokens(row['menu'])} | {row['link_chars']} "
                f"| {row['snippets_with_urls']} of {row['results']} |"
            )
            if args.show:
                print(f"\n```text\n{row['text']}\n```\n")


if __name__ == "__main__":
    main()
