#!/usr/bin/env bash
# The whole test suite from a fresh clone, with nothing but Python >= 3.10, pip and git:
# a virtualenv with every extra, searx 0.17 in its own Python 3.8 venv (the tests start it on
# loopback), Firecrawl's JavaScript SDK when npm is there, then lint, types and pytest (in a network namespace where only loopback exists,
# when one can be created). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'
bash scripts/install-searx.sh
# Real JavaScript clients of `websearch serve` (Firecrawl's SDK), pinned by tests/js's lock file.
if command -v npm >/dev/null 2>&1; then
  npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
else
  echo "(npm not found: tests/test_js_clients.py will skip, or fail under CI=true)" >&2
fi

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== import-linter (the layering, pyproject.toml's [tool.importlinter])"
.venv/bin/lint-imports --no-cache
echo "== mkdocs (the docs site, offline)"
# --strict fails on a broken link or anchor. Not --quiet: mkdocs 1.6 then stops counting
# warnings and a strict build with broken links passes. NO_MKDOCS_2_WARNING silences
# mkdocs-material's notice about its successor.
docs_site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$docs_site"
rm -rf "$docs_site"
echo "== pytest"
status=0
# Only loopback: in a network namespace of its own (no interface but lo), no test and no
# library under test can reach anything else, whatever language its HTTP client is in.
if unshare --net --map-root-user true 2>/dev/null; then
  echo "(in a network namespace with only loopback)"
  unshare --net --map-root-user .venv/bin/python scripts/run_offline.py \
    .venv/bin/python -m pytest "$@" || status=$?
else
  echo "(no network namespace could be created here: only the Python-level loopback guard" \
    "in tests/conftest.py keeps the tests off the network)" >&2
  .venv/bin/python -m pytest "$@" || status=$?
fi
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure, not a pass" >&2
  exit 1
fi
exit "$status"
