//! An exported model read by other tools: `zeroplay export` writes it, and Python's
//! `safetensors` with numpy (`scripts/check_model.py`) loads it and runs the forward pass
//! exactly as MODEL.md describes it; the outputs must equal zeroplay's own.
//!
//! The Python comes from `ZEROPLAY_PYTHON`, else the venv `scripts/setup-test-tools.sh`
//! makes; without one the test fails and says how to install it.

mod common;

use std::path::Path;

use common::python;
use std::process::Command;

use engine::battlenumber::BattleNumber;
use engine::{Features, Game};
use model::{ModelInfo, ModelMeta, NetConfig, ValueNet};

#[test]
fn exported_models_load_and_run_in_numpy_with_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let dev = model::cpu();
    dev.seed(11);
    let cfg = NetConfig::named("tiny").unwrap();
    let net = ValueNet::new(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &dev);
    let meta = ModelMeta::for_game::<BattleNumber>(cfg, 10.0, ModelInfo::default());
    let bytes = model::to_bytes(&net, &meta).unwrap();
    let file = dir.path().join("m.safetensors");
    std::fs::write(&file, &bytes).unwrap();
    let out_dir = dir.path().join("exported");
    let out = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
        .arg("export")
        .arg(&file)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Positions from random play, and zeroplay's outputs for them.
    let m = model::load::<BattleNumber>(&bytes, &dev).unwrap();
    let mut rng = engine::rng_from_seed(5);
    let mut g = BattleNumber::new_game(&Default::default());
    let mut feats = Vec::new();
    let mut actions = Vec::new();
    for _ in 0..12 {
        let mut f = vec![0.0; BattleNumber::FEATURE_LEN];
        g.encode_features(&mut f);
        feats.push(f);
        g.legal_actions(&mut actions);
        g.play(actions[rand::RngExt::random_range(&mut rng, 0..actions.len())]).unwrap();
    }
    let flat: Vec<f32> = feats.concat();
    let o = m.infer(&flat, feats.len());
    let expected = serde_json::json!({
        "features": feats, "wdl": o.wdl, "margin": o.margin, "policy": o.policy,
    });
    let exp_path = dir.path().join("expected.json");
    std::fs::write(&exp_path, expected.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_model.py");
    let out = Command::new(python()).arg(&script).arg(&out_dir).arg(&exp_path).output().unwrap();
    assert!(
        out.status.success(),
        "numpy forward pass disagrees\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The check is not vacuous: a wrong expectation fails it.
    let mut wrong = expected.clone();
    wrong["margin"][0] = serde_json::json!(o.margin[0] + 0.5);
    std::fs::write(&exp_path, wrong.to_string()).unwrap();
    let out = Command::new(python()).arg(&script).arg(&out_dir).arg(&exp_path).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("margin differs"));
}
