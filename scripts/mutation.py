"""Mutation testing of the modules that carry the package's promises (not run in CI: hours).

Each target is a module and the tests that guard its promise. cosmic-ray rewrites the module
one small mutation at a time (a comparison flipped, a constant changed, a branch removed …),
runs those tests, and records whether they failed ("killed") or passed ("survived"). A
survivor is a behaviour no test pins down: it gets a test, or an explanation.

    .venv/bin/pip install cosmic-ray
    .venv/bin/python scripts/mutation.py                # every target, one after another
    .venv/bin/python scripts/mutation.py jail render    # some of them

It edits the module files in place while it runs (and restores them after each mutant): run
it on a clone you are not editing, and use a second clone for a second core. Sessions, logs
and the survivors of each target (with their diffs) go to ``.mutation/`` (git-ignored).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".mutation"
PYTEST = "python -m pytest -x -q -p no:cacheprovider -p no:randomly"

#: module -> the tests that guard its promise, and a -k filter so each mutant runs in seconds.
TARGETS: dict[str, tuple[str, str, str]] = {
    "jail": (
        "websearch_core/jail.py",
        "tests/test_jail.py tests/test_properties.py",
        "url or domain or jail or ip or refus or metadata",
    ),
    "render": (
        "websearch_core/render.py",
        "tests/test_render.py tests/test_properties.py tests/test_fetch.py",
        "fence or render or long or menu or memo or cut or budget or error_page or answer",
    ),
    "text": (
        "websearch_core/text.py",
        "tests/test_properties.py tests/test_hostile.py",
        "control or fence or clean or one_line or hygiene",
    ),
    "routing": (
        "websearch_core/routing.py",
        "tests/test_routing.py tests/test_hostile.py",
        "pinned or auto or option or refus or site or provider or domains or answer",
    ),
    "retry": (
        "websearch_core/http.py",
        "tests/test_retry.py tests/test_brave.py tests/test_tavily.py tests/test_hostile.py",
        "retry or 429 or 5xx or rate or quota or key or provider or bomb or endless or encodings"
        " or search_deadline or 401 or 4xx or html or unreachable or timeout",
    ),
    "secrets": (
        "websearch_core/secrets.py",
        "tests/test_secrets.py tests/test_hostile.py",
        "key or secret or credential or redact or echo or canary or proxy",
    ),
    "body": (
        "websearch_core/body.py",
        "tests/test_fetch.py tests/test_hostile.py",
        "ceiling or bomb or endless or deflate or gzip or encoding or trickl or compress",
    ),
    "fetch": (
        "websearch_core/fetch.py",
        "tests/test_fetch.py tests/test_hostile.py",
        "redirect or deadline or trickl or ceiling or refus or loop or timeout or unreachable",
    ),
    "deadline": (
        "websearch_core/deadline.py",
        "tests/test_hostile.py",
        "trickl or deadline or tls",
    ),
    "transport": (
        "websearch_core/transport.py",
        "tests/test_transport.py tests/test_hostile.py tests/test_fetch.py",
        "rebind or pin or resolv or content_length or reused or exact or loopback or refus or sni",
    ),
}


def _run(*argv: str, log: Path | None = None) -> None:
    out = log.open("a") if log else None
    try:
        subprocess.run(argv, cwd=ROOT, check=True, stdout=out, stderr=subprocess.STDOUT)
    finally:
        if out:
            out.close()


def _config(name: str, module: str, tests: str) -> Path:
    config = OUT / f"{name}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        "timeout = 120.0\n"
        "excluded-modules = []\n"
        f"test-command = {f'{PYTEST} {tests}'!r}\n\n"
        '[cosmic-ray.distributor]\nname = "local"\n',
        encoding="utf-8",
    )
    return config


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help=f"some of: {', '.join(TARGETS)}")
    args = parser.parse_args()
    unknown = set(args.targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown target(s): {', '.join(sorted(unknown))}")
    OUT.mkdir(exist_ok=True)
    names = args.targets or list(TARGETS)
    for name in names:
        module, tests, keywords = TARGETS[name]
        config = _config(name, module, f"{tests} -k {shlex.quote(keywords)}")
        session = OUT / f"{name}.sqlite"
        log = OUT / f"{name}.log"
        session.unlink(missing_ok=True)
        print(f"== {name}: {module}", flush=True)
        _run("cosmic-ray", "init", str(config), str(session), log=log)
        _run("cosmic-ray", "baseline", str(config), log=log)
        _run("cosmic-ray", "exec", str(config), str(session), log=log)
        report = subprocess.run(
            ["cr-report", "--show-diff", "--surviving-only", str(session)],
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
