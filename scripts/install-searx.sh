#!/usr/bin/env bash
# Install a REAL searx 0.17.0 metasearch server into a private Python 3.8 venv,
# for the test-suite (tests/support/searx.py starts it on 127.0.0.1, offline).
#
#   bash scripts/install-searx.sh          # idempotent; ~1 s when already installed
#
# Env:
#   SEARX_VENV    venv location (default $HOME/.cache/websearch-pack/searx-venv;
#                 tests/support/searx.py reads the same variable)
#   SEARX_PYTHON  a python3.8 interpreter to use (else PATH, else pyenv 3.8.x)
#
# Exit 0 without installing when no Python 3.8 exists (searx tests then skip,
# or fail under CI=true). Exit non-zero on a real install failure.
set -euo pipefail

VENV="${SEARX_VENV:-$HOME/.cache/websearch-pack/searx-venv}"
# Written last, only after a successful install + import check; its content
# is the pin list, so changing a pin below forces a reinstall.
MARKER="$VENV/.websearch-pack-searx-installed"

# searx 0.17.0 (2020) pins its direct deps exactly in its own requirements
# (babel, certifi, flask, flask-babel, idna, jinja2, lxml, pygments,
# pyopenssl, python-dateutil, pyyaml, requests[socks]); we repeat them and
# also pin every transitive dep, because today's releases break it:
# werkzeug>=2 / markupsafe>=2.1 / itsdangerous>=2 break flask 1.1.2 and
# jinja2 2.11, cryptography>=3.4 needs Rust and breaks pyopenssl 19.1.0.
# The rest is a `pip freeze` of a known-good install on Python 3.8.18.
PINS=(
  searx==0.17.0
  Babel==2.7.0
  certifi==2020.4.5.1
  cffi==1.17.1
  chardet==3.0.4
  click==8.1.8
  cryptography==3.3.2
  Flask==1.1.2
  Flask-Babel==1.0.0
  idna==2.9
  itsdangerous==1.1.0
  Jinja2==2.11.1
  lxml==4.5.0
  MarkupSafe==2.0.1
  pycparser==2.23
  Pygments==2.1.3
  pyOpenSSL==19.1.0
  PySocks==1.7.1
  python-dateutil==2.8.0
  pytz==2026.6
  PyYAML==5.3.1
  requests==2.23.0
  six==1.17.0
  urllib3==1.25.11
  Werkzeug==1.0.1
)

# Each candidate must really run as 3.8: a pyenv shim named python3.8 may be
# on PATH and fail with "pyenv: python3.8: command not found".
is_python38() {
  "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 8))' >/dev/null 2>&1
}

find_python38() {
  local c
  if [[ -n "${SEARX_PYTHON:-}" ]]; then
    if is_python38 "$SEARX_PYTHON"; then echo "$SEARX_PYTHON"; return 0; fi
    echo "install-searx: SEARX_PYTHON=$SEARX_PYTHON is not a working python3.8" >&2
  fi
  c="$(command -v python3.8 2>/dev/null || true)"
  if [[ -n "$c" ]] && is_python38 "$c"; then echo "$c"; return 0; fi
  for c in /root/.pyenv/versions/3.8*/bin/python3.8; do
    if [[ -x "$c" ]] && is_python38 "$c"; then echo "$c"; return 0; fi
  done
  return 1
}

# Fast path: marker matches the current pin list and the venv python runs.
if [[ -f "$MARKER" && -x "$VENV/bin/python" ]] \
   && [[ "$(cat "$MARKER")" == "${PINS[*]}" ]] \
   && env -u SEARX_SETTINGS_PATH "$VENV/bin/python" -c 'import flask, lxml.etree, yaml, OpenSSL, searx.version' 2>/dev/null; then
  echo "install-searx: searx 0.17.0 already installed in $VENV"
  exit 0
fi

if ! PY38="$(find_python38)"; then
  echo "install-searx: WARNING: no python3.8 found (SEARX_PYTHON, PATH," \
       "/root/.pyenv/versions/3.8*/bin/python3.8); searx NOT installed," \
       "searx tests will SKIP (and FAIL when CI=true)."
  exit 0
fi

echo "install-searx: installing searx 0.17.0 into $VENV with $PY38"
start=$SECONDS
# Only ever delete a previous (partial) venv, never an arbitrary directory.
if [[ -e "$VENV" ]]; then
  if [[ -f "$VENV/pyvenv.cfg" ]]; then
    rm -rf "$VENV"
  else
    echo "install-searx: $VENV exists and is not a venv; refusing to overwrite" >&2
    exit 1
  fi
fi
mkdir -p "$(dirname "$VENV")"
"$PY38" -m venv "$VENV"
# --no-cache-dir is not required; pip's cache just makes a re-install faster.
# Pip's proxy env (if any) is what reaches PyPI here, so keep the environment.
"$VENV/bin/python" -m pip install --disable-pip-version-check -q "${PINS[@]}"
# Import check that does not import searx.webapp (that would load the bundled
# settings.yml with ~80 internet engines); searx.version only reads settings.
env -u SEARX_SETTINGS_PATH "$VENV/bin/python" -c 'import flask, flask_babel, lxml.etree, yaml, OpenSSL, requests, searx.version; print("searx", searx.version.VERSION_STRING)'
printf '%s' "${PINS[*]}" > "$MARKER"
echo "install-searx: done in $((SECONDS - start)) s"
