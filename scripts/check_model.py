#!/usr/bin/env python3
"""An independent reader of an exported zeroplay model: loads model.safetensors with the
safetensors package, runs the forward pass described in MODEL.md in numpy, and compares the
outputs with the ones zeroplay computed (a JSON file of features and expected outputs).

    check_model.py EXPORT_DIR EXPECTED.json

Exit status 0 when every output matches to 1e-4, 1 (with the reason on stderr) otherwise.
"""
import json
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file


def fail(msg):
    print(f"check_model: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    export_dir, expected_path = sys.argv[1], sys.argv[2]
    path = f"{export_dir}/model.safetensors"
    with safe_open(path, framework="np") as f:
        meta = f.metadata() or {}
    if meta.get("zeroplay.format") != "zeroplay-model/1":
        fail(f"format {meta.get('zeroplay.format')!r}")
    net = json.loads(meta["zeroplay.net"])
    scale = float(meta["zeroplay.margin_scale"])
    w = load_file(path)
    relu = lambda x: np.maximum(x, 0.0)
    lin = lambda x, name: x @ w[f"{name}.weight"] + w[f"{name}.bias"]

    exp = json.load(open(expected_path))
    x = np.asarray(exp["features"], dtype=np.float32)
    if x.shape[1] != int(meta["zeroplay.feature_len"]):
        fail(f"feature length {x.shape[1]} vs metadata {meta['zeroplay.feature_len']}")
    h = relu(lin(x, "input"))
    for i in range(net["blocks"]):
        h = relu(h + lin(relu(lin(h, f"blocks.{i}.a")), f"blocks.{i}.b"))
    logits = lin(h, "wdl")
    wdl = np.exp(logits - logits.max(axis=1, keepdims=True))
    wdl /= wdl.sum(axis=1, keepdims=True)
    margin = lin(h, "margin")[:, 0] * scale
    policy = lin(h, "policy")
    for name, ours, theirs in [
        ("wdl", wdl, np.asarray(exp["wdl"])),
        ("margin", margin, np.asarray(exp["margin"])),
        ("policy", policy, np.asarray(exp["policy"]).reshape(policy.shape)),
    ]:
        err = float(np.abs(ours - theirs).max())
        if not err < 1e-4:
            fail(f"{name} differs by {err}")
    print(f"ok positions={x.shape[0]} tensors={len(w)} blocks={net['blocks']}")


if __name__ == "__main__":
    main()
