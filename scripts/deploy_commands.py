#!/usr/bin/env python3
"""Lists the zeroplay command lines a deployment runs, so tests/deploy.rs can check each one
against the real binary's argument parser.

    deploy_commands.py RENDERED_K8S.yaml... [--compose deploy/compose.yaml]

Prints JSON: [{"where": "<kind>/<name>/<container>", "args": [...]}, ...]. Kubernetes
containers contribute their `args` (the image's entrypoint is zeroplay), with $(VAR)
references to the container's env replaced by a sample value; compose services their
`command`, with ${VAR:-default} replaced by the default. Also checks what a list of args
cannot show: every container has liveness and readiness probes whose port it declares,
every metrics address matches a declared port, and every secret or config reference names
an object of the same rendering. Exit status 1 with the reasons on stderr otherwise.
"""
import json
import re
import sys

from ruamel.yaml import YAML


def fail(problems):
    for p in problems:
        print(f"deploy_commands: {p}", file=sys.stderr)
    sys.exit(1)


def k8s(paths, out, problems):
    yaml = YAML(typ="safe")
    docs = []
    for p in paths:
        with open(p) as f:
            docs.extend(d for d in yaml.load_all(f) if d)
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    for d in docs:
        if d["kind"] not in ("Deployment", "StatefulSet"):
            continue
        spec = d["spec"]["template"]["spec"]
        for c in spec["containers"]:
            where = f'{d["kind"]}/{d["metadata"]["name"]}/{c["name"]}'
            env = {e["name"]: e for e in c.get("env", [])}
            args = [re.sub(r"\$\((\w+)\)", lambda m: "sample-" + m.group(1).lower()
                           if m.group(1) in env else m.group(0), a) for a in c.get("args", [])]
            for a in args:
                if "$(" in a:
                    problems.append(f"{where}: {a!r} references a variable the container does not set")
            out.append({"where": where, "args": args})
            ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
            for probe in ("livenessProbe", "readinessProbe"):
                pr = c.get(probe)
                if not pr:
                    problems.append(f"{where}: no {probe}")
                    continue
                port = pr.get("httpGet", {}).get("port")
                if port not in ports and port not in ports.values():
                    problems.append(f"{where}: {probe} port {port!r} is not a declared port {ports}")
            for a in args:
                m = re.match(r"--(?:metrics-)?listen=[^:]+:(\d+)$", a)
                if m and int(m.group(1)) not in ports.values():
                    problems.append(f"{where}: {a} listens on an undeclared port {ports}")
            for e in env.values():
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref and ("Secret", ref["name"]) not in names:
                    problems.append(f"{where}: env {e['name']} names a missing Secret {ref['name']}")
            for ef in c.get("envFrom", []):
                ref = ef.get("secretRef")
                if ref and ("Secret", ref["name"]) not in names:
                    problems.append(f"{where}: envFrom names a missing Secret {ref['name']}")
        for v in spec.get("volumes", []):
            if "configMap" in v and ("ConfigMap", v["configMap"]["name"]) not in names:
                problems.append(f'{d["metadata"]["name"]}: volume {v["name"]} names a missing ConfigMap')
            pvc = v.get("persistentVolumeClaim")
            if pvc and ("PersistentVolumeClaim", pvc["claimName"]) not in names:
                problems.append(f'{d["metadata"]["name"]}: volume {v["name"]} names a missing claim')


def compose(path, out, problems):
    yaml = YAML(typ="safe")
    with open(path) as f:
        doc = yaml.load(f)
    for name, svc in doc["services"].items():
        if not str(svc.get("image", "")).startswith("${ZEROPLAY_IMAGE"):
            continue
        args = [re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", a) for a in svc.get("command", [])]
        out.append({"where": f"compose/{name}", "args": args})
        if "healthcheck" not in svc:
            problems.append(f"compose/{name}: no healthcheck")
        else:
            out.append({"where": f"compose/{name}/healthcheck", "args": svc["healthcheck"]["test"][2:]})


def main():
    argv = sys.argv[1:]
    out, problems = [], []
    if "--compose" in argv:
        i = argv.index("--compose")
        compose(argv[i + 1], out, problems)
        argv = argv[:i] + argv[i + 2:]
    k8s(argv, out, problems)
    if problems:
        fail(problems)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
