#!/usr/bin/env bash
# Install steps beyond pip, each skipped when already done: generated gRPC stubs (the engine's and the Python
# SDK's), the Node example bot's packages and buf (when Node.js is present), Debian's Chromium for browser
# tests, Debian's HAProxy for the scale-out rehearsal, and Debian's bubblewrap and libseccomp2 for the hosted
# bots' sandbox (when running as root with apt; the Python side of the filter is PyPI's pyseccomp, pinned in
# pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=.venv/bin

if [ -d engine_service/gateway ] && [ -f engine_service/gateway/codegen.py ]; then
  "$BIN/python" -m engine_service.gateway.codegen
fi

# The Python SDK's stubs, into its git-ignored _generated/ (its editable install builds none; run by path so
# the package is not imported, which would generate them silently on first import)
if [ -f clients/python/caravanserai_bot/_codegen.py ]; then
  "$BIN/python" clients/python/caravanserai_bot/_codegen.py
fi

if [ -f clients/node/package.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -d clients/node/node_modules ] || [ clients/node/package-lock.json -nt clients/node/node_modules ]; then
    (cd clients/node && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

# buf, pinned in the Makefile (BUF_VERSION), into the git-ignored .venv/buf: the suite runs buf lint/breaking
BUF_VERSION="${BUF_VERSION:-$(sed -n 's/^BUF_VERSION := //p' Makefile)}"
if command -v npm >/dev/null 2>&1; then
  if ! grep -qs "\"version\": \"$BUF_VERSION\"" .venv/buf/node_modules/@bufbuild/buf/package.json; then
    npm install --prefix .venv/buf --no-audit --no-fund --no-save --loglevel=error "@bufbuild/buf@$BUF_VERSION"
  fi
fi

# Debian packages the suite and the rehearsals use, each with why; missing ones are installed in one apt run
# (as root with apt), else named in a warning. apt's "debconf: delaying package configuration" note (printed
# where apt-utils is absent, though nothing is wrong) is left out of the output; any other line shows.
missing=()
reasons=()
need() {  # need PACKAGE PRESENT-CHECK WHY
  if ! eval "$2" >/dev/null 2>&1; then
    missing+=("$1")
    reasons+=("Debian's $1 $3")
  fi
}
need chromium "[ -x /usr/bin/chromium ]" "for the browser tests"
need haproxy "command -v haproxy || [ -x /usr/sbin/haproxy ]" "for the scale-out rehearsal"
need bubblewrap "command -v bwrap" "for the hosted bots' sandbox"
need libseccomp2 "ldconfig -p | grep -q 'libseccomp\.so\.2'" "for the hosted bots' system-call filter"
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    printf 'installing %s\n' "${reasons[@]}"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } \
      2> >(grep -v '^debconf: delaying package configuration' >&2)
  else
    printf 'warning: missing %s; install it with apt as root\n' "${reasons[@]}" >&2
  fi
fi
