//! Model file round trips, refusals, batching and hot swapping.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use burn::prelude::Device;
use engine::battlenumber::BattleNumber;
use engine::eval::{Evaluator, Leaf};
use engine::{Features, Game};
use model::{Batcher, Model, ModelError, ModelInfo, ModelMeta, ModelSlot, NetConfig, NetEvaluator, ValueNet};
use rand::RngExt;

fn dev() -> Device {
    model::cpu()
}

fn fresh_bytes(seed: u64) -> Vec<u8> {
    burn::tensor::Device::seed(&dev(), seed);
    let cfg = NetConfig::named("tiny").unwrap();
    let net = ValueNet::new(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &dev());
    let meta =
        ModelMeta::for_game::<BattleNumber>(cfg, 10.0, ModelInfo { steps: seed, ..Default::default() });
    model::to_bytes(&net, &meta).unwrap()
}

/// Random positions reached by random play.
fn positions(n: usize, seed: u64) -> Vec<BattleNumber> {
    let mut rng = engine::rng_from_seed(seed);
    let mut out = Vec::new();
    let mut actions = Vec::new();
    while out.len() < n {
        let mut g = BattleNumber::new_game(&Default::default());
        let plies = rng.random_range(0..60);
        for _ in 0..plies {
            g.legal_actions(&mut actions);
            if actions.is_empty() || g.outcome().is_some() {
                break;
            }
            let a = actions[rng.random_range(0..actions.len())];
            g.play(a).unwrap();
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

fn features(ps: &[BattleNumber]) -> Vec<f32> {
    let f = BattleNumber::FEATURE_LEN;
    let mut buf = vec![0.0; ps.len() * f];
    for (p, c) in ps.iter().zip(buf.chunks_exact_mut(f)) {
        p.encode_features(c);
    }
    buf
}

#[test]
fn save_and_load_give_identical_outputs() {
    let bytes = fresh_bytes(3);
    let a = model::load::<BattleNumber>(&bytes, &dev()).unwrap();
    let again = model::to_bytes(&a.net, &a.meta).unwrap();
    let b = model::load::<BattleNumber>(&again, &dev()).unwrap();
    assert_eq!(a.meta, b.meta);
    let ps = positions(32, 1);
    let x = features(&ps);
    let (oa, ob) = (a.infer(&x, ps.len()), b.infer(&x, ps.len()));
    assert_eq!(oa, ob, "outputs differ after a save/load round trip");
    assert_eq!(oa.wdl.len(), 32);
    assert_eq!(oa.policy.len(), 32 * BattleNumber::POLICY_LEN);
    for w in &oa.wdl {
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
    // A different seed gives a different network (the test can fail).
    let c = model::load::<BattleNumber>(&fresh_bytes(4), &dev()).unwrap();
    assert_ne!(c.infer(&x, ps.len()), oa);
}

#[test]
fn batched_inference_equals_one_by_one() {
    let m = model::load::<BattleNumber>(&fresh_bytes(5), &dev()).unwrap();
    let ps = positions(16, 2);
    let all = m.infer(&features(&ps), ps.len());
    for (i, p) in ps.iter().enumerate() {
        let one = m.infer(&features(std::slice::from_ref(p)), 1);
        for k in 0..3 {
            assert!((one.wdl[0][k] - all.wdl[i][k]).abs() < 1e-5);
        }
        assert!((one.margin[0] - all.margin[i]).abs() < 1e-4);
    }
}

#[test]
fn corrupt_and_mismatched_models_are_refused() {
    let bytes = fresh_bytes(6);
    // Truncations and byte flips: always an error, never a panic.
    for cut in [0, 1, 7, 8, 100, bytes.len() / 2, bytes.len() - 1] {
        assert!(model::load::<BattleNumber>(&bytes[..cut], &dev()).is_err(), "truncated at {cut}");
    }
    let mut rng = engine::rng_from_seed(9);
    for _ in 0..40 {
        let mut b = bytes.clone();
        let i = rng.random_range(0..b.len().min(600));
        b[i] ^= 0x5a;
        let _ = model::load::<BattleNumber>(&b, &dev()); // must not panic
    }
    assert!(matches!(
        model::load::<BattleNumber>(b"not a model", &dev()),
        Err(ModelError::NotSafetensors(_))
    ));

    // Metadata for another game, another feature version, another format.
    let cfg = NetConfig::named("tiny").unwrap();
    let net = ValueNet::new(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &dev());
    let mut meta = ModelMeta::for_game::<BattleNumber>(cfg.clone(), 10.0, ModelInfo::default());
    meta.game = "trigolden".into();
    let e = model::load::<BattleNumber>(&model::to_bytes(&net, &meta).unwrap(), &dev()).unwrap_err();
    assert!(matches!(e, ModelError::WrongGame { .. }), "{e}");
    let mut meta = ModelMeta::for_game::<BattleNumber>(cfg.clone(), 10.0, ModelInfo::default());
    meta.feature_version += 1;
    let e = model::load::<BattleNumber>(&model::to_bytes(&net, &meta).unwrap(), &dev()).unwrap_err();
    assert!(matches!(e, ModelError::FeatureVersion { .. }), "{e}");
    assert!(e.to_string().contains("retrain"), "{e}");
    // Declared network bigger than the weights: the tensors do not fit.
    let mut meta = ModelMeta::for_game::<BattleNumber>(cfg, 10.0, ModelInfo::default());
    meta.net = NetConfig::named("small").unwrap();
    let e = model::load::<BattleNumber>(&model::to_bytes(&net, &meta).unwrap(), &dev()).unwrap_err();
    assert!(matches!(e, ModelError::Weights(_)), "{e}");
    // A safetensors file without zeroplay metadata.
    let plain = safetensors::serialize(
        [("x", safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &[0u8; 4]).unwrap())],
        None,
    )
    .unwrap();
    assert!(matches!(model::load::<BattleNumber>(&plain, &dev()), Err(ModelError::MissingKey(_))));
}

/// `bytes` rewritten by `edit` on its (name, dtype, shape, data) list, metadata kept.
fn rewrite(
    bytes: &[u8],
    edit: impl FnOnce(&mut Vec<(String, safetensors::Dtype, Vec<usize>, Vec<u8>)>),
) -> Vec<u8> {
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let mut list: Vec<_> = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n, v.dtype(), v.shape().to_vec(), v.data().to_vec()))
        .collect();
    edit(&mut list);
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = list
        .iter()
        .map(|(n, d, s, b)| (n.clone(), safetensors::tensor::TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    safetensors::serialize(views, header.metadata().clone()).unwrap()
}

#[test]
fn float16_missing_and_extra_tensors_are_refused_by_name() {
    let bytes = fresh_bytes(11);
    // Every tensor halved to float16 (as a converter would leave it): refused, no panic.
    let f16 = rewrite(&bytes, |l| {
        for (_, d, _, b) in l.iter_mut() {
            *d = safetensors::Dtype::F16;
            b.truncate(b.len() / 2);
        }
    });
    let e = model::load::<BattleNumber>(&f16, &dev()).unwrap_err();
    assert!(matches!(e, ModelError::Weights(_)), "{e}");
    assert!(e.to_string().contains("`input.weight` is F16") && e.to_string().contains("float32"), "{e}");
    // A missing tensor is named, in our words (no library hints such as allow_partial).
    let missing = rewrite(&bytes, |l| l.retain(|(n, ..)| n != "wdl.bias"));
    let e = model::load::<BattleNumber>(&missing, &dev()).unwrap_err().to_string();
    assert!(e.contains("tensor `wdl.bias` is missing"), "{e}");
    assert!(!e.contains("allow_partial"), "{e}");
    let extra =
        rewrite(&bytes, |l| l.push(("extra.weight".into(), safetensors::Dtype::F32, vec![1], vec![0; 4])));
    let e = model::load::<BattleNumber>(&extra, &dev()).unwrap_err().to_string();
    assert!(e.contains("`extra.weight` is not part of the declared network"), "{e}");
    assert!(
        model::load::<BattleNumber>(&rewrite(&bytes, |_| {}), &dev()).is_ok(),
        "an unchanged rewrite loads"
    );
    // A NaN or an infinite weight is refused, naming the tensor and the element.
    for bad in [f32::NAN, f32::INFINITY] {
        let poisoned = rewrite(&bytes, |l| {
            let (_, _, _, b) = l.iter_mut().find(|(n, ..)| n == "policy.bias").unwrap();
            b[8..12].copy_from_slice(&bad.to_le_bytes());
        });
        let e = model::load::<BattleNumber>(&poisoned, &dev()).unwrap_err();
        assert!(
            matches!(&e, ModelError::NonFinite { tensor, index: 2, .. } if tensor == "policy.bias"),
            "{e}"
        );
    }
}

#[test]
fn evaluator_fills_legal_priors_and_seat_relative_values() {
    let slot = Arc::new(ModelSlot::new());
    slot.publish(1, model::load::<BattleNumber>(&fresh_bytes(7), &dev()).unwrap());
    let eval = NetEvaluator::<BattleNumber>::new(slot.clone(), None, &engine::LeafSettings::net_alone());
    assert_eq!(eval.begin_move(), 1);
    let m = slot.current().unwrap();
    let mut leaves: Vec<Leaf<BattleNumber>> = positions(20, 3).into_iter().map(Leaf::new).collect();
    eval.evaluate(&mut leaves, &mut engine::rng_from_seed(1));
    for leaf in &leaves {
        assert_eq!(leaf.priors.len(), leaf.actions.len());
        assert!((leaf.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        let out = m.model.infer(&features(std::slice::from_ref(&leaf.state)), 1);
        let v = engine::features::utility(out.wdl[0], out.margin[0], 0.5, 3.0);
        assert!((leaf.value - leaf.state.perspective().sign() * v).abs() < 1e-5);
    }
}

/// Value the evaluator gives `leaf` with `m`.
fn value_with(m: &Model, p: &BattleNumber) -> f32 {
    let out = m.infer(&features(std::slice::from_ref(p)), 1);
    p.perspective().sign() * engine::features::utility(out.wdl[0], out.margin[0], 0.5, 3.0)
}

#[test]
fn hot_swap_under_concurrent_evaluation() {
    let models: Vec<Arc<Vec<u8>>> = (0..4).map(|s| Arc::new(fresh_bytes(100 + s))).collect();
    let slot = Arc::new(ModelSlot::new());
    slot.publish(1, model::load::<BattleNumber>(&models[0], &dev()).unwrap());
    let batcher = Batcher::start(64, Duration::from_micros(300));
    let stop = Arc::new(AtomicBool::new(false));
    let ps = Arc::new(positions(8, 4));
    let reference: Vec<Vec<f32>> = models
        .iter()
        .map(|b| {
            let m = model::load::<BattleNumber>(b, &dev()).unwrap();
            ps.iter().map(|p| value_with(&m, p)).collect()
        })
        .collect();
    let reference = Arc::new(reference);
    let threads: Vec<_> = (0..3)
        .map(|t| {
            let (slot, batcher, stop, ps, reference) =
                (slot.clone(), batcher.clone(), stop.clone(), ps.clone(), reference.clone());
            std::thread::spawn(move || {
                let eval = NetEvaluator::<BattleNumber>::new(
                    slot,
                    Some(batcher),
                    &engine::LeafSettings::net_alone(),
                );
                let mut rng = engine::rng_from_seed(t);
                let mut moves = 0;
                let mut seen = std::collections::BTreeSet::new();
                while !stop.load(Ordering::Relaxed) || moves < 5 {
                    // One "move": pin, then several batches, all with the pinned model.
                    let v = eval.begin_move();
                    seen.insert(v);
                    for _ in 0..3 {
                        let mut leaves: Vec<Leaf<BattleNumber>> = ps.iter().cloned().map(Leaf::new).collect();
                        eval.evaluate(&mut leaves, &mut rng);
                        let want = &reference[(v - 1) as usize];
                        for (leaf, w) in leaves.iter().zip(want) {
                            assert!((leaf.value - w).abs() < 1e-5, "a move mixed models: version {v}");
                        }
                    }
                    moves += 1;
                }
                seen
            })
        })
        .collect();
    for (i, b) in models.iter().enumerate().skip(1) {
        std::thread::sleep(Duration::from_millis(30));
        slot.publish(i as u64 + 1, model::load::<BattleNumber>(b, &dev()).unwrap());
    }
    std::thread::sleep(Duration::from_millis(30));
    stop.store(true, Ordering::Relaxed);
    let mut all = std::collections::BTreeSet::new();
    for t in threads {
        all.extend(t.join().expect("evaluation thread"));
    }
    assert!(all.contains(&4), "the last model was picked up: {all:?}");
    assert!(all.len() >= 2, "models changed while evaluating: {all:?}");
    assert_eq!(slot.version(), 4);
}

#[test]
fn the_cpu_pass_burn_and_the_batcher_give_the_same_priors_and_values() {
    let slot = Arc::new(ModelSlot::new());
    slot.publish(1, model::load::<BattleNumber>(&fresh_bytes(9), &dev()).unwrap());
    let settings = engine::LeafSettings::net_alone();
    let direct = NetEvaluator::<BattleNumber>::new(slot.clone(), None, &settings);
    let batcher = Batcher::start(64, Duration::from_micros(300));
    let batched = NetEvaluator::<BattleNumber>::new(slot.clone(), Some(batcher), &settings);
    direct.begin_move();
    batched.begin_move();
    let ps = positions(80, 6);
    let run = |eval: &NetEvaluator<BattleNumber>, chunk: usize| {
        let mut leaves: Vec<Leaf<BattleNumber>> = ps.iter().cloned().map(Leaf::new).collect();
        for c in leaves.chunks_mut(chunk) {
            eval.evaluate(c, &mut engine::rng_from_seed(1));
        }
        leaves
    };
    // 80 at once is past CPU_MAX_BATCH: burn's tensors, every policy entry.
    assert!(ps.len() > model::CPU_MAX_BATCH);
    let burn = run(&direct, ps.len());
    for (name, leaves) in [("cpu, 8 at a time", run(&direct, 8)), ("batcher", run(&batched, 5))] {
        for (a, b) in leaves.iter().zip(&burn) {
            assert!((a.value - b.value).abs() < 1e-4, "{name}: value {} vs {}", a.value, b.value);
            assert_eq!(a.priors.len(), b.priors.len());
            for (x, y) in a.priors.iter().zip(&b.priors) {
                assert!((x - y).abs() < 1e-4, "{name}: prior {x} vs {y}");
            }
        }
    }
}

#[test]
fn the_lone_value_path_gives_the_batch_value_from_the_movers_view() {
    let slot = Arc::new(ModelSlot::new());
    let settings = engine::LeafSettings::net_alone();
    let direct = NetEvaluator::<BattleNumber>::new(slot.clone(), None, &settings);
    direct.begin_move();
    let ps = positions(40, 8);
    // No model yet: no fast path (the fallback's playouts take random numbers).
    assert_eq!(direct.mover_value(&ps[0]), None);
    slot.publish(1, model::load::<BattleNumber>(&fresh_bytes(10), &dev()).unwrap());
    direct.begin_move();
    let mut leaves: Vec<Leaf<BattleNumber>> = ps.iter().cloned().map(Leaf::new).collect();
    direct.evaluate(&mut leaves, &mut engine::rng_from_seed(1));
    let mut seen = std::collections::BTreeSet::new();
    for (p, leaf) in ps.iter().zip(&leaves) {
        let v = direct.mover_value(p).expect("a CPU model has the lone path");
        let mover = p.perspective().sign();
        assert!((v - mover * leaf.value).abs() < 1e-5, "lone {v} vs batch {} (mover {mover})", leaf.value);
        seen.insert(mover as i32);
    }
    assert_eq!(seen.len(), 2, "both sides to move were checked");
    // With a batcher its thread owns inference: no lone path.
    let batched = NetEvaluator::<BattleNumber>::new(
        slot,
        Some(Batcher::start(8, Duration::from_micros(300))),
        &settings,
    );
    batched.begin_move();
    assert_eq!(batched.mover_value(&ps[0]), None);
}

#[test]
fn a_nano_model_hands_its_weights_to_the_searcher_and_they_give_its_values() {
    burn::tensor::Device::seed(&dev(), 12);
    let cfg = NetConfig::named("nano").unwrap();
    assert_eq!(cfg.blocks, 0);
    let net = ValueNet::new(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &dev());
    let meta = ModelMeta::for_game::<BattleNumber>(cfg, 10.0, ModelInfo::default());
    let nano = model::load::<BattleNumber>(&model::to_bytes(&net, &meta).unwrap(), &dev()).unwrap();
    let slot = Arc::new(ModelSlot::new());
    let settings = engine::LeafSettings::net_alone();
    let eval = NetEvaluator::<BattleNumber>::new(slot.clone(), None, &settings);
    assert!(eval.shallow().is_none(), "no model yet");
    slot.publish(1, nano);
    eval.begin_move();
    let shallow = eval.shallow().expect("a nano model is one hidden layer");
    assert!(Arc::ptr_eq(&shallow, &eval.shallow().unwrap()), "copied once per model");
    let mut x = vec![0.0; BattleNumber::FEATURE_LEN];
    for p in positions(30, 12) {
        p.encode_features(&mut x);
        let (own, cpu) = (shallow.value_dense(&x), eval.mover_value(&p).unwrap());
        assert!((own - cpu).abs() < 1e-4, "searcher's {own} vs the CPU pass's {cpu}");
    }
    // A model with residual blocks is not one layer; a new model is copied afresh.
    slot.publish(2, model::load::<BattleNumber>(&fresh_bytes(12), &dev()).unwrap());
    eval.begin_move();
    assert!(eval.shallow().is_none());
}

/// Re-serialises a model file with one metadata entry changed (`None`: removed).
fn with_meta(bytes: &[u8], key: &str, value: Option<&str>) -> Vec<u8> {
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let (_, md) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut map = md.metadata().clone().unwrap_or_default();
    match value {
        Some(v) => map.insert(key.into(), v.into()),
        None => map.remove(key),
    };
    safetensors::serialize(st.tensors(), Some(map)).unwrap()
}

#[test]
fn the_ownership_head_round_trips_and_must_match_its_metadata() {
    let cfg = NetConfig::named("tiny").unwrap();
    let o = BattleNumber::OWNERSHIP_LEN;
    let net = ValueNet::with_ownership(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, o, &dev());
    assert_eq!(net.ownership_len(), o);
    // The metadata's size comes from the network, whatever the caller's meta says.
    let meta = ModelMeta::for_game::<BattleNumber>(cfg.clone(), 10.0, ModelInfo::default());
    let bytes = model::to_bytes(&net, &meta).unwrap();
    let m = model::load::<BattleNumber>(&bytes, &dev()).unwrap();
    assert_eq!((m.meta.ownership_len, m.net.ownership_len()), (o, o));
    let ps = positions(8, 3);
    let out = m.net.forward(burn::prelude::Tensor::from_data(
        burn::tensor::TensorData::new(features(&ps), [ps.len(), BattleNumber::FEATURE_LEN]),
        &dev(),
    ));
    assert_eq!(out.ownership.expect("the head runs").dims(), [ps.len(), o]);
    // Search's outputs do not depend on the head: dropping it leaves them as they were.
    let without = m.net.clone().set_ownership(0, &dev());
    assert_eq!(without.ownership_len(), 0);
    let plain = model::load::<BattleNumber>(&model::to_bytes(&without, &m.meta).unwrap(), &dev()).unwrap();
    assert_eq!(plain.meta.ownership_len, 0);
    let x = features(&ps);
    assert_eq!(plain.infer(&x, ps.len()), m.infer(&x, ps.len()));
    // Metadata that disagrees with the tensors is refused, either way round.
    let e =
        model::load::<BattleNumber>(&with_meta(&bytes, "zeroplay.ownership_len", None), &dev()).unwrap_err();
    assert!(matches!(e, ModelError::Weights(_)) && e.to_string().contains("ownership"), "{e}");
    let plain_bytes = model::to_bytes(&without, &m.meta).unwrap();
    let e =
        model::load::<BattleNumber>(&with_meta(&plain_bytes, "zeroplay.ownership_len", Some("49")), &dev())
            .unwrap_err();
    assert!(matches!(e, ModelError::Weights(_)) && e.to_string().contains("missing"), "{e}");
    // A size that is not the game's own target is refused before the weights are read.
    let e = model::load::<BattleNumber>(&with_meta(&bytes, "zeroplay.ownership_len", Some("48")), &dev())
        .unwrap_err();
    assert!(matches!(e, ModelError::BadValue { key: "zeroplay.ownership_len", .. }), "{e}");
}

/// The table the burn-free check (`modelfile::check_for`, the coordinator's) compares files
/// with, for every game, size and head: the one burn's network writes.
#[test]
fn the_burn_free_tensor_table_is_the_networks_own() {
    fn table<G: Features>(net: &str, ownership: bool) {
        let cfg = NetConfig::named(net).unwrap();
        let o = if ownership { G::OWNERSHIP_LEN } else { 0 };
        let n = ValueNet::with_ownership(&cfg, G::FEATURE_LEN, G::POLICY_LEN, o, &dev());
        let bytes = model::to_bytes(&n, &ModelMeta::for_game::<G>(cfg, 10.0, ModelInfo::default())).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        let mut have: Vec<(String, Vec<usize>)> =
            st.tensors().into_iter().map(|(name, t)| (name, t.shape().to_vec())).collect();
        have.sort();
        let meta = model::read_meta(&bytes).unwrap();
        assert_eq!(have, modelfile::expected_tensors(&meta), "{} {net} ownership={ownership}", G::NAME);
        // And the whole burn-free check passes what burn wrote.
        assert_eq!(modelfile::check_for::<G>(&bytes).unwrap(), meta);
    }
    for net in ["tiny", "small"] {
        table::<BattleNumber>(net, false);
        table::<BattleNumber>(net, true);
        table::<engine::banqi::Banqi>(net, false);
        table::<engine::trigolden::TriGolden>(net, false);
    }
}
