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

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium for the browser tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "warning: /usr/bin/chromium is missing; install Debian's chromium package for the browser tests" >&2
  fi
fi

if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's haproxy for the scale-out rehearsal"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
  else
    echo "warning: haproxy is missing; install Debian's haproxy package for the scale-out rehearsal" >&2
  fi
fi

if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's bubblewrap for the hosted bots' sandbox"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "warning: bwrap is missing; install Debian's bubblewrap package for hosted bots" >&2
  fi
fi

if ! ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's libseccomp2 for the hosted bots' system-call filter"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libseccomp2 >/dev/null
  else
    echo "warning: libseccomp.so.2 is missing; install Debian's libseccomp2 package for hosted bots" >&2
  fi
fi
