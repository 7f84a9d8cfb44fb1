#!/usr/bin/env bash
# Smoke test of the single executable (see executable.mjs): bash test/smoke/executable.sh [dist/service]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec node "$here/executable.mjs" "${1:-dist/service}"
