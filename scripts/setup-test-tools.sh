#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain: a Python virtual environment
# with pyarrow (an independent reader of the coordinator's Parquet files, used by
# tests/parquet_pyarrow.rs) and safetensors + numpy (an independent reader and forward pass
# of exported models, tests/model_numpy.rs). Idempotent: what is installed is left as it is.
#
#   scripts/setup-test-tools.sh        # prints the venv's python path on stdout
#
# Location: "${ZEROPLAY_TOOLS:-$HOME/.cache/zeroplay}/venv". Needs python3 with the venv
# module (Debian/Ubuntu: apt-get install python3-venv) and, the first time, access to PyPI.
set -euo pipefail

tools="${ZEROPLAY_TOOLS:-$HOME/.cache/zeroplay}"
venv="$tools/venv"
python="$venv/bin/python"

if ! "$python" -c 'import sys' >/dev/null 2>&1; then
    if ! command -v python3 >/dev/null 2>&1; then
        echo "setup-test-tools: python3 not found; install Python 3 (>= 3.9) first" >&2
        exit 1
    fi
    mkdir -p "$tools"
    echo "setup-test-tools: creating a Python venv in $venv" >&2
    if ! python3 -m venv "$venv" >&2; then
        echo "setup-test-tools: 'python3 -m venv' failed; on Debian/Ubuntu install python3-venv" >&2
        exit 1
    fi
fi

if ! "$python" -c 'import pyarrow' >/dev/null 2>&1; then
    echo "setup-test-tools: installing pyarrow into $venv" >&2
    "$python" -m pip install --quiet --disable-pip-version-check 'pyarrow>=15' >&2
    "$python" -c 'import pyarrow' >&2
fi

if ! "$python" -c 'import safetensors.numpy, numpy' >/dev/null 2>&1; then
    echo "setup-test-tools: installing safetensors and numpy into $venv" >&2
    "$python" -m pip install --quiet --disable-pip-version-check 'safetensors>=0.4' 'numpy>=1.24' >&2
    "$python" -c 'import safetensors.numpy, numpy' >&2
fi

echo "$python"
