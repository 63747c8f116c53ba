#!/usr/bin/env bash
# The test suite: installs the test tools (pyarrow in a venv under ~/.cache/zeroplay, see
# scripts/setup-test-tools.sh), then runs every Rust test. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

ZEROPLAY_PYTHON="$(scripts/setup-test-tools.sh)"
export ZEROPLAY_PYTHON
echo "test tools: $ZEROPLAY_PYTHON" >&2

exec cargo test --workspace --locked "$@"
