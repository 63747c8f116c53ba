//! The whole check of a model file, without burn: what `model::load` checks before it runs a
//! network, for servers that store models they do not run (the coordinator).
//!
//! [`check_for`] reads the metadata, compares game, feature version and sizes with the
//! engine's, compares every tensor's name, dtype and shape with the table the declared
//! network has ([`expected_tensors`], the same table `model` builds its network from; a test
//! there compares the two), checks every weight is finite, and runs one forward pass on the
//! game's start position in plain Rust: every output must be finite.

use engine::Features;
use safetensors::SafeTensors;

use crate::{ModelError, ModelMeta, check_finite, read_meta};

/// The tensors (name, shape) of the network `meta` declares, sorted by name: burn's
/// `ValueNet` layout, a linear layer's weight stored `[in, out]`.
pub fn expected_tensors(meta: &ModelMeta) -> Vec<(String, Vec<usize>)> {
    let h = meta.net.hidden;
    let mut layers = vec![("input".to_string(), meta.feature_len, h)];
    for i in 0..meta.net.blocks {
        layers.push((format!("blocks.{i}.a"), h, h));
        layers.push((format!("blocks.{i}.b"), h, h));
    }
    layers.push(("wdl".into(), h, 3));
    layers.push(("margin".into(), h, 1));
    layers.push(("policy".into(), h, meta.policy_len.max(1)));
    if meta.ownership_len > 0 {
        layers.push(("ownership".into(), h, meta.ownership_len));
    }
    let mut out: Vec<(String, Vec<usize>)> = layers
        .into_iter()
        .flat_map(|(name, i, o)| [(format!("{name}.weight"), vec![i, o]), (format!("{name}.bias"), vec![o])])
        .collect();
    out.sort();
    out
}

/// Checks model file bytes as a model of game `G` in full, without burn: metadata, game and
/// feature encoding, every tensor's name, dtype and shape against the declared network, every
/// weight finite, and one forward pass on `G`'s start position with finite outputs.
///
/// # Errors
/// [`ModelError`] naming what is wrong.
pub fn check_for<G: Features>(bytes: &[u8]) -> Result<ModelMeta, ModelError> {
    let meta = read_meta(bytes)?;
    if meta.game != G::NAME {
        return Err(ModelError::WrongGame { expected: G::NAME.into(), found: meta.game });
    }
    if meta.feature_version != G::FEATURE_VERSION
        || meta.feature_len != G::FEATURE_LEN
        || meta.policy_len != G::POLICY_LEN
    {
        return Err(ModelError::FeatureVersion {
            game: meta.game,
            expected: G::FEATURE_VERSION,
            expected_len: G::FEATURE_LEN,
            found: meta.feature_version,
            found_len: meta.feature_len,
        });
    }
    if meta.ownership_len != 0 && meta.ownership_len != G::OWNERSHIP_LEN {
        return Err(ModelError::BadValue {
            key: "zeroplay.ownership_len",
            value: format!("{} (this game's ownership target has {})", meta.ownership_len, G::OWNERSHIP_LEN),
        });
    }
    let st = SafeTensors::deserialize(bytes).map_err(|e| ModelError::NotSafetensors(e.to_string()))?;
    check_table(&st, &meta)?;
    check_finite(&st)?;
    let mut x = vec![0.0; G::FEATURE_LEN];
    G::new_game(&Default::default()).encode_features(&mut x);
    let out = forward(&st, &meta, &x);
    if let Some(i) = out.iter().position(|v| !v.is_finite()) {
        return Err(ModelError::Weights(format!(
            "the network's output {i} on the start position is {} (weights that overflow)",
            out[i]
        )));
    }
    Ok(meta)
}

/// Every expected tensor present, float32 and of its shape, and nothing else.
fn check_table(st: &SafeTensors<'_>, meta: &ModelMeta) -> Result<(), ModelError> {
    let want = expected_tensors(meta);
    let mut problems = Vec::new();
    for (name, shape) in &want {
        match st.tensor(name) {
            Err(_) => problems.push(format!("tensor `{name}` is missing")),
            Ok(t) if t.dtype() != safetensors::Dtype::F32 => problems.push(format!(
                "tensor `{name}` is {:?}; zeroplay model files hold float32 (F32) tensors (convert it)",
                t.dtype()
            )),
            Ok(t) if t.shape() != shape.as_slice() => problems
                .push(format!("tensor `{name}` has shape {:?}, the network needs {shape:?}", t.shape())),
            Ok(_) => {}
        }
    }
    let mut extra: Vec<&str> = st.names().into_iter().filter(|n| !want.iter().any(|w| w.0 == *n)).collect();
    extra.sort_unstable();
    problems.extend(extra.into_iter().map(|n| format!("tensor `{n}` is not part of the declared network")));
    if problems.is_empty() { Ok(()) } else { Err(ModelError::Weights(problems.join("; "))) }
}

/// A checked tensor's values.
fn values(st: &SafeTensors<'_>, name: &str) -> Vec<f32> {
    let t = st.tensor(name).expect("checked by check_table");
    t.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// `x · W + b` for a layer stored `[in, out]`.
fn dense(st: &SafeTensors<'_>, name: &str, x: &[f32]) -> Vec<f32> {
    let (w, mut y) = (values(st, &format!("{name}.weight")), values(st, &format!("{name}.bias")));
    let out = y.len();
    for (i, &xi) in x.iter().enumerate() {
        if xi != 0.0 {
            for (yj, wj) in y.iter_mut().zip(&w[i * out..(i + 1) * out]) {
                *yj += xi * wj;
            }
        }
    }
    y
}

fn relu(v: &mut [f32]) {
    for x in v {
        *x = x.max(0.0);
    }
}

/// The raw outputs (wdl logits, margin, policy logits, ownership) of one position, as
/// docs/model-format.md states the forward pass.
fn forward(st: &SafeTensors<'_>, meta: &ModelMeta, x: &[f32]) -> Vec<f32> {
    let mut h = dense(st, "input", x);
    relu(&mut h);
    for i in 0..meta.net.blocks {
        let mut a = dense(st, &format!("blocks.{i}.a"), &h);
        relu(&mut a);
        let b = dense(st, &format!("blocks.{i}.b"), &a);
        for (hj, bj) in h.iter_mut().zip(b) {
            *hj += bj;
        }
        relu(&mut h);
    }
    let mut out = dense(st, "wdl", &h);
    out.extend(dense(st, "margin", &h));
    out.extend(dense(st, "policy", &h));
    if meta.ownership_len > 0 {
        out.extend(dense(st, "ownership", &h));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ModelInfo, NetConfig};
    use engine::battlenumber::BattleNumber;

    /// A model file of `meta`'s declared network with every weight `w`, built without burn.
    fn file(meta: &ModelMeta, w: f32) -> Vec<u8> {
        let tensors = expected_tensors(meta);
        let data: Vec<Vec<u8>> = tensors
            .iter()
            .map(|(_, shape)| {
                std::iter::repeat_n(w.to_le_bytes(), shape.iter().product()).flatten().collect()
            })
            .collect();
        let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
            .iter()
            .zip(&data)
            .map(|((n, s), d)| {
                (
                    n.clone(),
                    safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), d).unwrap(),
                )
            })
            .collect();
        safetensors::serialize(views, Some(meta.to_map().into_iter().collect())).unwrap()
    }

    #[test]
    fn the_declared_network_passes_and_anything_else_is_named() {
        let meta = ModelMeta::for_game::<BattleNumber>(
            NetConfig::named("tiny").unwrap(),
            10.0,
            ModelInfo::default(),
        );
        assert_eq!(check_for::<BattleNumber>(&file(&meta, 0.01)).unwrap(), meta);
        // A single tensor `x` declared as a Battle Number model (the probe of issue 42).
        let lone = {
            let d = [0u8; 4];
            let v = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &d).unwrap();
            safetensors::serialize([("x", v)], Some(meta.to_map().into_iter().collect())).unwrap()
        };
        let e = check_for::<BattleNumber>(&lone).unwrap_err().to_string();
        assert!(e.contains("`input.weight` is missing") && e.contains("`x` is not part"), "{e}");
        // Declared bigger than the weights.
        let mut small = meta.clone();
        small.net = NetConfig::named("small").unwrap();
        // Rewrite the metadata only: the tensors stay tiny.
        let tiny = file(&meta, 0.01);
        let st = SafeTensors::deserialize(&tiny).unwrap();
        let resized =
            safetensors::serialize(st.tensors(), Some(small.to_map().into_iter().collect())).unwrap();
        let e = check_for::<BattleNumber>(&resized).unwrap_err();
        assert!(matches!(e, ModelError::Weights(ref m) if m.contains("has shape")), "{e}");
        // Weights that are finite but overflow in the forward pass.
        let e = check_for::<BattleNumber>(&file(&meta, 1e30)).unwrap_err();
        assert!(e.to_string().contains("start position"), "{e}");
        // Another game's model.
        let e = check_for::<engine::banqi::Banqi>(&file(&meta, 0.01)).unwrap_err();
        assert!(matches!(e, ModelError::WrongGame { .. }), "{e}");
    }
}
