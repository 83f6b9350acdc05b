"""Mutation testing of the modules that carry the package's promises (not run in CI: hours).

Each target is a module and the tests that guard its promise. cosmic-ray (in the dev extra)
rewrites the module one small mutation at a time (a comparison flipped, a constant changed, a
branch removed …), runs those tests, and records whether they failed ("killed") or passed
("survived"). A survivor is a behaviour no test pins down: it gets a test, or an explanation.

    bash scripts/test.sh -x -q tests/test_blend.py     # once: the venv, with the dev extra
    .venv/bin/python scripts/mutation.py --list        # the targets, and what guards each
    .venv/bin/python scripts/mutation.py                # every target, one after another
    .venv/bin/python scripts/mutation.py jail gates     # some of them
    .venv/bin/python scripts/mutation.py --recheck SESSIONS_DIR jail   # survivors, again

It edits the module files in place while it runs (and restores them after each mutant): run
it on a clone you are not editing, and use a second clone for a second core. Sessions, logs
and the survivors of each target (with their diffs) go to ``.mutation/`` (git-ignored).

``--recheck DIR`` takes the survivors recorded in ``DIR/<target>.sqlite`` (a finished run,
perhaps on an older commit whose module source is the same) and tests each one again,
against this tree's tests: what still survives is printed, so new tests can be shown to kill
what the run found.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".mutation"
#: The tools of the interpreter running this script (the venv's), whether or not it is active.
BIN = Path(sys.executable).parent
PYTEST = f"{sys.executable} -m pytest -x -q -p no:cacheprovider -p no:randomly"

#: module -> the tests that guard its promise, and a -k filter (empty: all of them), chosen so
#: that each mutant runs in seconds. The slow property tests are left out but for the fence.
TARGETS: dict[str, tuple[str, str, str]] = {
    "jail": ("websearch_core/net/jail.py", "tests/test_jail.py", ""),
    "render": (
        "websearch_core/render.py",
        "tests/test_render.py tests/test_fetch.py tests/test_properties.py",
        "fence or long or render or error_page or budget or marker or cut or menu or memo",
    ),
    "text": (
        "websearch_core/text.py",
        "tests/test_properties.py tests/test_hostile.py",
        "clean_text or one_line or control or fence",
    ),
    "routing": (
        "websearch_core/search/routing.py",
        "tests/test_routing.py tests/test_hostile.py",
        "not hostile or site_rewrite or domains or not_a_name",
    ),
    "retry": (
        "websearch_core/providers/send.py",
        "tests/test_retry.py tests/test_brave.py tests/test_tavily.py tests/test_hostile.py",
        "not hostile or endless or gzip_bomb or encodings or search_deadline or echo",
    ),
    "secrets": (
        "websearch_core/redact.py",
        "tests/test_secrets.py tests/test_hostile.py",
        "not hostile or echo or credential or secret or redact",
    ),
    "body": (
        "websearch_core/net/body.py",
        "tests/test_body.py tests/test_fetch.py tests/test_hostile.py",
        "body or bomb or ceiling or endless or deflate or gzip or corrupt or encoding or plain",
    ),
    "deadline": (
        "websearch_core/net/deadline.py",
        "tests/test_deadline.py tests/test_hostile.py",
        "deadline or trickl or tls or slow_hops",
    ),
    "fetch": (
        "websearch_core/fetch/fetcher.py",
        "tests/test_fetch.py tests/test_transport.py tests/test_hostile.py",
        "redirect or deadline or trickl or refus or loop or timeout or html or memo or proxy "
        "or timings or limits or close or ceiling or 3xx or connect or certificate or hop",
    ),
    # -- the newest modules: the blend, the service, the grounded vendors, bulk reading ------
    "blend": (
        "websearch_core/blend/plan.py",
        "tests/test_blend.py",
        "not burst and not cancelled and not hung",
    ),
    "fusion": (
        "websearch_core/blend/fusion.py",
        "tests/test_blend.py",
        "fuse or fused or snippet or rank or score",
    ),
    "meter": (
        "websearch_core/blend/meter.py",
        "tests/test_blend.py",
        "meter or budget or fee or paid",
    ),
    "canonical": (
        "websearch_core/blend/canonical.py",
        "tests/test_blend.py",
        "canonical or tracking",
    ),
    "tracking": (
        "websearch_core/tracking.py",
        "tests/test_blend.py tests/test_wire_openai.py",
        "canonical or tracking",
    ),
    "gates": (
        "websearch_core/server/gates.py",
        "tests/test_server.py tests/test_server_process.py",
        "key or gate or principal or bearer or vouches or credential",
    ),
    "service": (
        "websearch_core/server/app.py",
        "tests/test_server.py",
        "",
    ),
    "searxng-door": (
        "websearch_core/server/searxng.py",
        "tests/test_server.py",
        "searxng",
    ),
    "firecrawl-door": (
        "websearch_core/server/firecrawl.py",
        "tests/test_server.py",
        "firecrawl or scrape",
    ),
    "anthropic": (
        "websearch_core/providers/anthropic.py",
        "tests/test_grounded.py tests/test_wire_anthropic.py",
        "anthropic",
    ),
    "openai": (
        "websearch_core/providers/openai.py",
        "tests/test_grounded.py tests/test_wire_openai.py",
        "openai or links or tracking",
    ),
    "gemini": (
        "websearch_core/providers/gemini.py",
        "tests/test_grounded.py tests/test_wire_gemini.py",
        "gemini",
    ),
    "openrouter": (
        "websearch_core/providers/openrouter.py",
        "tests/test_grounded.py tests/test_wire_openrouter.py",
        "openrouter",
    ),
    "grounded": (
        "websearch_core/providers/grounded.py",
        "tests/test_grounded.py tests/test_wire_openai.py tests/test_wire_openrouter.py",
        "",
    ),
    "mcp": ("websearch_core/mcp.py", "tests/test_mcp.py", ""),
    "robots": ("websearch_core/fetch/robots.py", "tests/test_bulk.py", "robots or crawl"),
    "politeness": (
        "websearch_core/fetch/politeness.py",
        "tests/test_bulk.py",
        "per_host or crawl or early",
    ),
    "workers": (
        "websearch_core/fetch/workers.py",
        "tests/test_bulk.py",
        "worker or close or convert",
    ),
    "bulkheads": (
        "websearch_core/search/bulkheads.py",
        "tests/test_blend.py tests/test_ddgs.py",
        "starves or slot or lane or blocking or client or cut_off",
    ),
    "transport": (
        "websearch_core/net/transport.py",
        "tests/test_transport.py",
        "",
    ),
    "bounds": (
        "websearch_core/extract/bounds.py",
        "tests/test_hostile.py tests/test_extract.py",
        "hostile or budget or nested or deep or flood or input",
    ),
}


def _run(*argv: str, log: Path | None = None) -> None:
    out = log.open("a") if log else None
    try:
        subprocess.run(argv, cwd=ROOT, check=True, stdout=out, stderr=subprocess.STDOUT)
    finally:
        if out:
            out.close()


#: Operators left out: ``|`` is almost only type unions here (``str | None``), an identity
#: test between values is noise, and swapping an arithmetic operator for an exotic one
#: (``**``, ``<<``, ``%`` …) repeats what the plain swaps (``+``/``-``/``*``) already ask.
EXCLUDED_OPERATORS = (
    r"core/ReplaceBinaryOperator_BitOr_.*",
    r"core/ReplaceComparisonOperator_.*_(Is|IsNot)",
    r"core/ReplaceBinaryOperator_\w+_(Pow|LShift|RShift|BitXor|BitAnd|FloorDiv|Mod|Div)",
)


def _config(name: str, module: str, tests: str) -> Path:
    config = OUT / f"{name}.toml"
    excluded = ", ".join(json.dumps(pattern) for pattern in EXCLUDED_OPERATORS)
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        "timeout = 120.0\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(f'{PYTEST} {tests}')}\n\n"
        '[cosmic-ray.distributor]\nname = "local"\n\n'
        f"[cosmic-ray.filters.operators-filter]\nexclude-operators = [{excluded}]\n",
        encoding="utf-8",
    )
    return config


def _survivors(session: Path) -> list[tuple[str, str, int, str]]:
    """(module, operator, occurrence, where) of each mutant that survived in ``session``."""
    dump = subprocess.run(
        [str(BIN / "cosmic-ray"), "dump", str(session)], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in dump.splitlines():
        job, result = json.loads(line)
        if result and result.get("test_outcome") == "survived":
            for mutation in job["mutations"]:
                where = f"{mutation['module_path']}:{mutation['start_pos'][0]}"
                found.append(
                    (
                        mutation["module_path"],
                        mutation["operator_name"],
                        mutation["occurrence"],
                        where,
                    )
                )
    return found


def recheck(sessions: Path, name: str) -> list[str]:
    """The survivors of ``name``'s run in ``sessions`` that this tree's tests still miss."""
    _, tests, keywords = TARGETS[name]
    command = [*PYTEST.split(), *shlex.split(tests)] + (["-k", keywords] if keywords else [])
    still = []
    for path, operator, occurrence, where in _survivors(sessions / f"{name}.sqlite"):
        _run(str(BIN / "cosmic-ray"), "apply", path, operator, str(occurrence))
        try:
            outcome = subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
        finally:
            _run("git", "checkout", "--", path)
        verdict = "survives" if outcome.returncode == 0 else "killed"
        print(f"{verdict:9} {operator} #{occurrence} at {where}", flush=True)
        if outcome.returncode == 0:
            still.append(f"{operator} #{occurrence} at {where}")
    return still


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help=f"some of: {', '.join(TARGETS)}")
    parser.add_argument("--recheck", type=Path, help="re-test the survivors recorded here")
    parser.add_argument("--list", action="store_true", help="list the targets and stop")
    args = parser.parse_args()
    if args.list:
        for name, (module, tests, keywords) in TARGETS.items():
            print(f"{name:15} {module}  <-  {tests}" + (f"  -k {keywords!r}" if keywords else ""))
        return 0
    if not (BIN / "cosmic-ray").exists():
        parser.error(f"cosmic-ray is not installed beside {sys.executable}: install the dev extra")
    unknown = set(args.targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown target(s): {', '.join(sorted(unknown))}")
    OUT.mkdir(exist_ok=True)
    names = args.targets or list(TARGETS)
    if args.recheck:
        for name in names:
            still = recheck(args.recheck, name)
            print(f"== {name}: {len(still)} still survive", flush=True)
        return 0
    for name in names:
        module, tests, keywords = TARGETS[name]
        selection = f"{tests} -k {shlex.quote(keywords)}" if keywords else tests
        config = _config(name, module, selection)
        session = OUT / f"{name}.sqlite"
        log = OUT / f"{name}.log"
        session.unlink(missing_ok=True)
        print(f"== {name}: {module}", flush=True)
        _run(str(BIN / "cosmic-ray"), "init", str(config), str(session), log=log)
        _run(str(BIN / "cr-filter-operators"), str(session), str(config), log=log)
        _run(str(BIN / "cosmic-ray"), "baseline", str(config), log=log)
        _run(str(BIN / "cosmic-ray"), "exec", str(config), str(session), log=log)
        report = subprocess.run(
            [str(BIN / "cr-report"), "--show-diff", "--surviving-only", str(session)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (OUT / f"{name}-survivors.txt").write_text(report, encoding="utf-8")
        print("\n".join(report.splitlines()[-3:]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
