//! The deployment files, validated offline with the tools a cluster operator would use
//! (installed by `scripts/setup-test-tools.sh` into the test venv): `kubectl kustomize` builds
//! both overlays and `kubernetes-validate --strict` checks every object against the
//! Kubernetes 1.37 schemas; the compose file against the Compose Specification's schema
//! (`check-jsonschema`); the Dockerfile with `hadolint`. Then every zeroplay command line the
//! manifests and the compose file run is parsed by the real binary, and probes, ports and
//! references are cross-checked (`scripts/deploy_commands.py`).
//!
//! No Docker engine or cluster runs here, so the image is not built and nothing is applied:
//! this proves the files are well-formed and consistent, not that a cluster runs them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{python, venv_tool};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `kubectl kustomize DIR`, written to `out`.
fn kustomize(dir: &Path, out: &Path) -> String {
    let text = ok(Command::new(venv_tool("kubectl")).arg("kustomize").arg(dir));
    std::fs::write(out, &text).unwrap();
    text
}

fn validate(file: &Path) -> Output {
    run(Command::new(venv_tool("kubernetes-validate")).args(["--strict", "--quiet"]).arg(file))
}

#[test]
fn kubernetes_overlays_build_and_validate_against_the_schemas() {
    let tmp = tempfile::tempdir().unwrap();
    let gpu = kustomize(&root().join("deploy/k8s/overlays/gpu"), &tmp.path().join("gpu.yaml"));
    let cpu = kustomize(&root().join("deploy/k8s/overlays/cpu"), &tmp.path().join("cpu.yaml"));
    let s3 = kustomize(&root().join("deploy/k8s/overlays/s3"), &tmp.path().join("s3.yaml"));
    for name in ["gpu.yaml", "cpu.yaml", "s3.yaml"] {
        let out = validate(&tmp.path().join(name));
        assert!(out.status.success(), "{name}:\n{}", String::from_utf8_lossy(&out.stdout));
    }
    for (text, what) in [(&gpu, "gpu"), (&cpu, "cpu"), (&s3, "s3")] {
        for kind in
            ["kind: StatefulSet", "kind: Deployment", "kind: Service", "kind: Secret", "kind: ConfigMap"]
        {
            assert!(text.contains(kind), "{what}: no {kind}");
        }
        assert!(text.contains("volumeClaimTemplates"), "{what}: the coordinator has no persistent volume");
    }
    assert!(
        gpu.contains("nvidia.com/gpu: 1") && gpu.contains("--device=cuda") && gpu.contains("zeroplay-cuda:")
    );
    assert!(
        !cpu.contains("nvidia.com/gpu") && cpu.contains("--device=cpu") && !cpu.contains("zeroplay-cuda")
    );
    // Object storage replaces the shared volume: no ReadWriteMany claim, the bucket's Secret
    // given to the coordinator and the trainer (whose games are a scratch copy).
    assert!(gpu.contains("name: zeroplay-games") && gpu.contains("ReadWriteMany"));
    assert!(
        !s3.contains("zeroplay-games") && !s3.contains("ReadWriteMany"),
        "s3 still has the shared volume"
    );
    assert!(s3.contains("ZEROPLAY_STORAGE_URL") && s3.contains("emptyDir"));
    assert_eq!(s3.matches("name: zeroplay-s3\n").count(), 3, "the Secret and two references to it");

    // The validator is not a rubber stamp: a misspelt field is refused.
    assert!(cpu.contains("\n  replicas: 2\n"), "the worker Deployment's replicas moved");
    std::fs::write(tmp.path().join("bad.yaml"), cpu.replacen("\n  replicas: 2\n", "\n  replica: 2\n", 1))
        .unwrap();
    let out = validate(&tmp.path().join("bad.yaml"));
    assert!(!out.status.success(), "a Deployment with `replica` passed validation");
    assert!(String::from_utf8_lossy(&out.stdout).contains("replica"), "{out:?}");
}

#[test]
fn the_compose_file_and_the_dockerfile_pass_their_linters() {
    ok(Command::new(venv_tool("check-jsonschema"))
        .args(["--builtin-schema", "vendor.compose-spec"])
        .arg(root().join("deploy/compose.yaml")));
    ok(Command::new(venv_tool("hadolint"))
        .arg("--config")
        .arg(root().join("deploy/.hadolint.yaml"))
        .arg(root().join("deploy/Dockerfile")));
    // Both catch mistakes: a service with an unknown key, a Dockerfile with a bad instruction.
    let tmp = tempfile::tempdir().unwrap();
    let compose = std::fs::read_to_string(root().join("deploy/compose.yaml")).unwrap();
    std::fs::write(
        tmp.path().join("compose.yaml"),
        compose.replace("stop_grace_period:", "stop_grace_periods:"),
    )
    .unwrap();
    let out = run(Command::new(venv_tool("check-jsonschema"))
        .args(["--builtin-schema", "vendor.compose-spec"])
        .arg(tmp.path().join("compose.yaml")));
    assert!(!out.status.success(), "a misspelt compose key passed");
    std::fs::write(tmp.path().join("Dockerfile"), "FROM debian:bookworm-slim\nRUN cd /tmp && make\n")
        .unwrap();
    let out = run(Command::new(venv_tool("hadolint")).arg(tmp.path().join("Dockerfile")));
    assert!(!out.status.success(), "hadolint passed `RUN cd` (DL3003)");
}

#[test]
fn every_command_the_deployment_runs_is_accepted_by_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rendered = Vec::new();
    for overlay in ["gpu", "cpu", "s3"] {
        let f = tmp.path().join(format!("{overlay}.yaml"));
        kustomize(&root().join("deploy/k8s/overlays").join(overlay), &f);
        rendered.push(f);
    }
    let json = ok(Command::new(python())
        .arg(root().join("scripts/deploy_commands.py"))
        .args(&rendered)
        .arg("--compose")
        .arg(root().join("deploy/compose.yaml")));
    let commands: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let roles: Vec<&str> = commands.iter().filter_map(|c| c["args"][0].as_str()).collect();
    for role in ["coordinator", "worker", "train", "serve", "probe"] {
        assert!(roles.contains(&role), "no {role} command in {roles:?}");
    }
    for c in &commands {
        let args: Vec<&str> = c["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        // `--help` last: clap rejects an unknown flag before it gets there.
        let out = run(Command::new(env!("CARGO_BIN_EXE_zeroplay")).args(&args).arg("--help"));
        assert!(
            out.status.success(),
            "{}: `zeroplay {}` is refused:\n{}",
            c["where"],
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // ... as the check shows for a flag that does not exist.
    let out = run(Command::new(env!("CARGO_BIN_EXE_zeroplay")).args(["worker", "--spool-dir=/x", "--help"]));
    assert!(!out.status.success(), "an unknown flag passed the check");
}
