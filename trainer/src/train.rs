//! The training loop: batches from the window, the loss, the optimiser, checkpoints.
//!
//! Loss per position (from the mover's view):
//! `value_weight · CE(wdl) + margin_weight · (margin − score / margin_scale)² +
//! policy_weight · CE(policy) + ownership_weight · mean((tanh(own) − final ownership)²)`, the
//! policy term only where the move had a full search, the ownership term only where the
//! game has an ownership target and was played to its end.

use std::path::Path;

use burn::optim::ModuleOptimizer;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::{TensorData, activation};
use engine::{Features, Rng};
use model::net::NetOutput;
use model::{ModelInfo, ModelMeta, NetConfig, ValueNet};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::data::Sample;

/// Training settings (the `[train]` table of `configs/train.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainSettings {
    /// Network size: `nano`, `tiny`, `small`, `medium` or `large`, or `WIDTHxBLOCKS` (`128x0`).
    pub net: String,
    /// Positions per batch.
    pub batch_size: usize,
    /// AdamW learning rate.
    pub learning_rate: f64,
    /// AdamW weight decay.
    pub weight_decay: f32,
    /// Weight of the win/draw/loss cross-entropy.
    pub value_weight: f32,
    /// Share of the search's root value in the win/draw/loss target (0: the game result
    /// only). The result of one game is a noisy label shared by all its positions; mixing in
    /// the root value `q` — as soft targets `((1 + q) / 2, 0, (1 − q) / 2)` — cuts that noise.
    pub q_mix: f32,
    /// Weight of the score-margin squared error.
    pub margin_weight: f32,
    /// Weight of the policy cross-entropy.
    pub policy_weight: f32,
    /// Weight of the auxiliary ownership head's squared error, per square (KataGo's
    /// ownership target: who holds each square when the game ends). 0: the network has no
    /// such head. Only games with an ownership target (Battle Number) use it.
    pub ownership_weight: f32,
    /// Score differences are divided by this before the margin loss (points per unit).
    pub margin_scale: f32,
    /// The margin target of a decided game (a player without a legal move loses at once,
    /// whatever the points): at least this many points towards the winner, so the margin
    /// term agrees with the search's ±1 for such games.
    pub decisive_margin: f32,
    /// Fraction of games held out for the validation loss.
    pub validation_fraction: f64,
    /// Seed of initialisation and batch sampling.
    pub seed: u64,
    /// Show each sampled position under a random one of the game's board symmetries
    /// ([`Features::SYMMETRIES`]: Battle Number's eight; Banqi and TriGolden declare none, so
    /// for them this changes nothing), its policy and ownership targets mapped alike. Eight
    /// views of a position for one game's cost counter the memorising of each game's shared
    /// result (AlphaGo Zero's augmentation). Validation positions are never mapped.
    pub augment: bool,
}

impl Default for TrainSettings {
    fn default() -> Self {
        TrainSettings {
            net: "small".into(),
            batch_size: 256,
            learning_rate: 1e-3,
            weight_decay: 1e-4,
            value_weight: 1.0,
            // Both measured in issue 21 (docs/benchmarks.md, "the remedy run"): the value and
            // margin heads memorised each game's shared result and score; a target closer to
            // the search's own value and a lighter margin term generalise.
            q_mix: 0.75,
            margin_weight: 0.25,
            policy_weight: 1.0,
            ownership_weight: 0.0,
            margin_scale: 10.0,
            decisive_margin: 20.0,
            validation_fraction: 0.05,
            seed: 1,
            // Measured in issue 38 (docs/benchmarks.md, "Symmetry augmentation"): the network
            // alone went from 59% to 75.5% (2 samples a position) and from 44% to 89% (6).
            augment: true,
        }
    }
}

impl TrainSettings {
    /// Checks every field.
    ///
    /// # Errors
    /// A description of the first bad field.
    pub fn validate(&self) -> Result<NetConfig, String> {
        let net = NetConfig::named(&self.net).ok_or_else(|| {
            format!("net {:?} is not one of {:?} or WIDTHxBLOCKS", self.net, NetConfig::NAMES)
        })?;
        if self.batch_size == 0 || self.batch_size > 65_536 {
            return Err(format!("batch_size {} is outside 1..=65536", self.batch_size));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate < 1.0) {
            return Err(format!("learning_rate {} is outside (0, 1)", self.learning_rate));
        }
        if !(self.decisive_margin.is_finite() && self.decisive_margin >= 0.0) {
            return Err("decisive_margin must be a non-negative number".into());
        }
        if !(self.margin_scale.is_finite() && self.margin_scale > 0.0) {
            return Err("margin_scale must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.q_mix) {
            return Err(format!("q_mix {} is outside [0, 1]", self.q_mix));
        }
        if !(0.0..0.5).contains(&self.validation_fraction) {
            return Err("validation_fraction must be in [0, 0.5)".into());
        }
        for (name, w) in [
            ("value_weight", self.value_weight),
            ("margin_weight", self.margin_weight),
            ("policy_weight", self.policy_weight),
            ("ownership_weight", self.ownership_weight),
        ] {
            if !(w >= 0.0 && w.is_finite()) {
                return Err(format!("{name} must be a non-negative number"));
            }
        }
        Ok(net)
    }

    /// The ownership head's size these settings give a network of game `G` (0: none).
    pub fn ownership_len<G: Features>(&self) -> usize {
        if self.ownership_weight > 0.0 { G::OWNERSHIP_LEN } else { 0 }
    }
}

/// Mean losses over some positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    /// Total weighted loss.
    pub total: f32,
    /// Win/draw/loss cross-entropy.
    pub value: f32,
    /// Margin squared error (in margin-scale units).
    pub margin: f32,
    /// Policy cross-entropy (positions with a policy target only).
    pub policy: f32,
    /// Ownership squared error per square (positions with an ownership target only; 0 without
    /// the head).
    #[serde(default)]
    pub ownership: f32,
}

impl std::fmt::Display for Losses {
    /// `total (wdl … margin … policy …)`, with `own …` where the ownership head trains.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.3} (wdl {:.3} margin {:.3} policy {:.3}",
            self.total, self.value, self.margin, self.policy
        )?;
        if self.ownership > 0.0 {
            write!(f, " own {:.3}", self.ownership)?;
        }
        write!(f, ")")
    }
}

/// A batch as tensors.
struct Batch {
    x: Tensor<2>,
    wdl: Tensor<2>,
    margin: Tensor<2>,
    policy: Tensor<2>,
    policy_rows: f32,
    /// Ownership targets `[B, O]` and a mask `[B, 1]` (1 where the position has one), with
    /// the number of such rows; `None` without the head.
    ownership: Option<(Tensor<2>, Tensor<2>, f32)>,
}

/// The batch of `samples`' features and targets. With `symmetries`, each position is shown
/// under a symmetry drawn from it (uniformly), its policy and ownership targets mapped alike;
/// without, as stored.
fn make_batch<G: Features>(
    samples: &[&Sample],
    s: &TrainSettings,
    device: &Device,
    symmetries: Option<&mut Rng>,
) -> Batch {
    let margin_scale = s.margin_scale;
    let n = samples.len();
    let (f, p) = (G::FEATURE_LEN, G::POLICY_LEN.max(1));
    let syms: Vec<usize> = match symmetries {
        Some(rng) if G::SYMMETRIES > 1 => (0..n).map(|_| rng.random_range(0..G::SYMMETRIES)).collect(),
        _ => vec![0; n],
    };
    let mut stored = vec![0.0f32; if syms.iter().any(|&k| k != 0) { f } else { 0 }];
    let mut x = vec![0.0f32; n * f];
    let mut wdl = vec![0.0f32; n * 3];
    let mut margin = vec![0.0f32; n];
    let mut policy = vec![0.0f32; n * p];
    let mut rows = 0.0;
    for (i, sample) in samples.iter().enumerate() {
        let sym = syms[i];
        let row = &mut x[i * f..(i + 1) * f];
        // Mapped positions are encoded into `stored` first, then moved to their images.
        let target = if sym == 0 { &mut *row } else { &mut stored[..] };
        match &sample.features {
            Some(v) => target.copy_from_slice(v),
            None => G::decode(&sample.state).expect("validated when read").encode_features(target),
        }
        if sym != 0 {
            G::map_features(sym, &stored, row);
        }
        let t = &mut wdl[i * 3..i * 3 + 3];
        match sample.q {
            Some(q) if s.q_mix > 0.0 => {
                t[sample.wdl as usize] = 1.0 - s.q_mix;
                t[0] += s.q_mix * (1.0 + q) / 2.0;
                t[2] += s.q_mix * (1.0 - q) / 2.0;
            }
            _ => t[sample.wdl as usize] = 1.0,
        }
        let points = match (sample.decisive, sample.wdl) {
            (true, 0) => sample.score.max(s.decisive_margin),
            (true, 2) => sample.score.min(-s.decisive_margin),
            _ => sample.score,
        };
        margin[i] = points / margin_scale;
        if !sample.policy.is_empty() && G::POLICY_LEN > 0 {
            rows += 1.0;
            for &(a, pr) in &sample.policy {
                policy[i * p + G::map_policy_index(sym, a as usize)] = pr;
            }
        }
    }
    let o = G::OWNERSHIP_LEN;
    let ownership = (s.ownership_weight > 0.0 && o > 0).then(|| {
        let mut t = vec![0.0f32; n * o];
        let mut mask = vec![0.0f32; n];
        let mut mapped = vec![0i8; o];
        for (i, sample) in samples.iter().enumerate() {
            if let Some(own) = &sample.ownership {
                mask[i] = 1.0;
                G::map_ownership(syms[i], own, &mut mapped);
                for (d, &v) in t[i * o..(i + 1) * o].iter_mut().zip(mapped.iter()) {
                    *d = f32::from(v);
                }
            }
        }
        let k = mask.iter().sum::<f32>();
        (
            Tensor::from_data(TensorData::new(t, [n, o]), device),
            Tensor::from_data(TensorData::new(mask, [n, 1]), device),
            k,
        )
    });
    Batch {
        x: Tensor::from_data(TensorData::new(x, [n, f]), device),
        wdl: Tensor::from_data(TensorData::new(wdl, [n, 3]), device),
        margin: Tensor::from_data(TensorData::new(margin, [n, 1]), device),
        policy: Tensor::from_data(TensorData::new(policy, [n, p]), device),
        policy_rows: rows,
        ownership,
    }
}

/// Losses of `net` on a batch: (weighted total as a tensor, parts).
fn losses(net: &ValueNet, b: Batch, s: &TrainSettings) -> (Tensor<1>, [Tensor<1>; 4]) {
    losses_of(net.forward(b.x.clone()), b, s)
}

/// The losses of a forward pass's output `out` against batch `b`'s targets.
fn losses_of(out: NetOutput, b: Batch, s: &TrainSettings) -> (Tensor<1>, [Tensor<1>; 4]) {
    let device = b.margin.device();
    let value = (b.wdl * activation::log_softmax(out.wdl_logits, 1)).sum_dim(1).mean().neg();
    let margin = (out.margin - b.margin).powf_scalar(2.0).mean();
    let policy =
        (b.policy * activation::log_softmax(out.policy_logits, 1)).sum().neg() / b.policy_rows.max(1.0);
    let mut total =
        value.clone() * s.value_weight + margin.clone() * s.margin_weight + policy.clone() * s.policy_weight;
    let ownership = match (out.ownership, b.ownership) {
        (Some(own), Some((target, mask, rows))) => {
            let squares = target.dims()[1] as f32;
            let err =
                ((activation::tanh(own) - target).powf_scalar(2.0) * mask).sum() / (rows.max(1.0) * squares);
            total = total + err.clone() * s.ownership_weight;
            err
        }
        _ => Tensor::zeros([1], &device),
    };
    (total, [value, margin, policy, ownership])
}

fn scalar(t: Tensor<1>) -> f32 {
    t.into_scalar::<f32>()
}

/// Mean losses of `net` (no autodiff) on `samples`, in batches of `s.batch_size`.
pub fn evaluate_net<G: Features>(
    net: &ValueNet,
    device: &Device,
    samples: &[&Sample],
    s: &TrainSettings,
) -> Losses {
    evaluate_net_with::<G>(net, device, samples, s, &mut |_, _| {})
}

/// [`evaluate_net`], handing each batch's positions and forward output to `each` as well
/// (one forward pass serves the losses and whatever else is measured).
pub(crate) fn evaluate_net_with<G: Features>(
    net: &ValueNet,
    device: &Device,
    samples: &[&Sample],
    s: &TrainSettings,
    each: &mut dyn FnMut(&[&Sample], &NetOutput),
) -> Losses {
    let mut sum = Losses::default();
    let mut n = 0.0;
    for chunk in samples.chunks(s.batch_size.max(1)) {
        let b = make_batch::<G>(chunk, s, device, None);
        let out = net.forward(b.x.clone());
        each(chunk, &out);
        let (total, [v, m, p, o]) = losses_of(out, b, s);
        let w = chunk.len() as f32;
        sum.total += scalar(total) * w;
        sum.value += scalar(v) * w;
        sum.margin += scalar(m) * w;
        sum.policy += scalar(p) * w;
        sum.ownership += scalar(o) * w;
        n += w;
    }
    if n > 0.0 {
        sum = Losses {
            total: sum.total / n,
            value: sum.value / n,
            margin: sum.margin / n,
            policy: sum.policy / n,
            ownership: sum.ownership / n,
        };
    }
    sum
}

/// A network being trained, with its optimiser.
pub struct Trainer<G: Features> {
    net: ValueNet,
    optim: ModuleOptimizer,
    settings: TrainSettings,
    net_config: NetConfig,
    device: Device,
    rng: Rng,
    /// Optimiser steps taken.
    pub steps: u64,
    /// Samples trained on.
    pub samples: u64,
    _game: std::marker::PhantomData<fn() -> G>,
}

impl<G: Features> Trainer<G> {
    /// A fresh network on `device` (autodiff is enabled here).
    ///
    /// # Errors
    /// A description of a bad setting.
    pub fn new(settings: TrainSettings, device: &Device) -> Result<Self, String> {
        let net_config = settings.validate()?;
        let device = device.clone().autodiff();
        burn::tensor::Device::seed(&device, settings.seed);
        let net = ValueNet::with_ownership(
            &net_config,
            G::FEATURE_LEN,
            G::POLICY_LEN,
            settings.ownership_len::<G>(),
            &device,
        );
        let optim = AdamWConfig::new().with_weight_decay(settings.weight_decay).init();
        let rng = engine::rng_from_seed(settings.seed);
        Ok(Trainer {
            net,
            optim,
            settings,
            net_config,
            device,
            rng,
            steps: 0,
            samples: 0,
            _game: Default::default(),
        })
    }

    /// Continues from model file bytes (weights only; the optimiser starts afresh).
    ///
    /// # Errors
    /// The model file's error, or a network size that differs from the settings'.
    pub fn resume(settings: TrainSettings, device: &Device, bytes: &[u8]) -> Result<Self, String> {
        let mut t = Trainer::new(settings, device)?;
        let m = model::load::<G>(bytes, &t.device.clone()).map_err(|e| e.to_string())?;
        if m.meta.net != t.net_config {
            return Err(format!("model has network {:?}, settings ask for {:?}", m.meta.net, t.net_config));
        }
        // A parent trained with another ownership setting keeps its other layers.
        t.net = m.net.train().set_ownership(t.settings.ownership_len::<G>(), &t.device);
        t.steps = m.meta.info.steps;
        t.samples = m.meta.info.samples;
        Ok(t)
    }

    /// The settings.
    pub fn settings(&self) -> &TrainSettings {
        &self.settings
    }

    /// One optimiser step on `batch`; returns its losses.
    pub fn step(&mut self, batch: &[&Sample]) -> Losses {
        let rng = self.settings.augment.then_some(&mut self.rng);
        let b = make_batch::<G>(batch, &self.settings, &self.device, rng);
        let (total, [v, m, p, o]) = losses(&self.net, b, &self.settings);
        let grads = total.backward();
        let out = Losses {
            total: scalar(total),
            value: scalar(v),
            margin: scalar(m),
            policy: scalar(p),
            ownership: scalar(o),
        };
        let grads = GradientsParams::from_grads(grads, &self.net);
        // Burn tensors share their storage: the clone is a handle, not a copy of the weights.
        self.net = self.optim.step(self.settings.learning_rate, self.net.clone(), grads);
        self.steps += 1;
        self.samples += batch.len() as u64;
        out
    }

    /// `steps` steps on batches drawn uniformly (with replacement) from `train`; calls
    /// `progress` after each with the step's losses. Returns the mean losses.
    pub fn train(&mut self, train: &[&Sample], steps: u64, progress: &mut dyn FnMut(u64, &Losses)) -> Losses {
        let mut sum = Losses::default();
        if train.is_empty() {
            return sum;
        }
        let bs = self.settings.batch_size.min(train.len());
        let mut batch = Vec::with_capacity(bs);
        for i in 0..steps {
            batch.clear();
            for _ in 0..bs {
                batch.push(train[self.rng.random_range(0..train.len())]);
            }
            let l = self.step(&batch);
            sum.total += l.total;
            sum.value += l.value;
            sum.margin += l.margin;
            sum.policy += l.policy;
            sum.ownership += l.ownership;
            progress(i + 1, &l);
        }
        let k = steps.max(1) as f32;
        Losses {
            total: sum.total / k,
            value: sum.value / k,
            margin: sum.margin / k,
            policy: sum.policy / k,
            ownership: sum.ownership / k,
        }
    }

    /// Mean losses on `samples` without training (in batches, no autodiff).
    pub fn evaluate(&self, samples: &[&Sample]) -> Losses {
        evaluate_net::<G>(&self.net.valid(), &self.device, samples, &self.settings)
    }

    /// The network being trained, for inference (no autodiff).
    pub fn net(&self) -> ValueNet {
        self.net.valid()
    }

    /// The inference device of [`Trainer::net`].
    pub fn device(&self) -> Device {
        self.device.clone()
    }

    /// The current network as model file bytes.
    ///
    /// # Errors
    /// If burn cannot serialise the weights.
    pub fn export(&self, parent: u64, note: &str) -> Result<Vec<u8>, model::ModelError> {
        let info = ModelInfo {
            steps: self.steps,
            samples: self.samples,
            parent,
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            note: note.into(),
        };
        let meta = ModelMeta::for_game::<G>(self.net_config.clone(), self.settings.margin_scale, info);
        model::to_bytes(&self.net.valid(), &meta)
    }

    /// Writes a checkpoint: the model file, the optimiser state and the resolved settings,
    /// into `dir` (created if needed).
    ///
    /// # Errors
    /// I/O or serialisation failures.
    pub fn checkpoint(&self, dir: &Path, parent: u64) -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let bytes = self.export(parent, &self.settings.net).map_err(|e| e.to_string())?;
        crate::write_atomic(&dir.join("model.safetensors"), &bytes)?;
        self.optim.save(dir.join("optimizer.bin")).map_err(|e| format!("optimizer state: {e:?}"))?;
        let cfg = toml::to_string_pretty(&self.settings).map_err(|e| e.to_string())?;
        crate::write_atomic(&dir.join("train.toml"), cfg.as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Game;
    use engine::battlenumber::BattleNumber;
    use engine::battlenumber::symmetry::Symmetry;

    /// A mid-game Battle Number position as a stored sample, with a policy over its legal
    /// clicks and its ownership target.
    fn sample() -> (BattleNumber, Sample) {
        let mut rng = engine::rng_from_seed(5);
        let mut g = BattleNumber::new_game(&Default::default());
        let mut actions = Vec::new();
        for _ in 0..31 {
            g.legal_actions(&mut actions);
            g.play(actions[rng.random_range(0..actions.len())]).unwrap();
        }
        g.legal_actions(&mut actions);
        let policy: Vec<(u16, f32)> = actions
            .iter()
            .enumerate()
            .map(|(i, a)| (BattleNumber::action_index(a).unwrap() as u16, (i + 1) as f32))
            .collect();
        let mut own = vec![0i8; BattleNumber::OWNERSHIP_LEN];
        g.ownership(g.perspective(), &mut own);
        let s = Sample {
            state: engine::game::to_bytes(&g),
            wdl: 0,
            score: 3.0,
            decisive: false,
            q: Some(0.2),
            policy,
            game_hash: 1,
            ply: 31,
            model_version: 0,
            ownership: Some(own.into()),
            features: None,
        };
        (g, s)
    }

    fn rows(t: Tensor<2>) -> Vec<Vec<f32>> {
        let [n, w] = t.dims();
        let v = t.into_data().try_to_vec::<f32>().unwrap();
        (0..n).map(|i| v[i * w..(i + 1) * w].to_vec()).collect()
    }

    #[test]
    fn an_augmented_batch_shows_each_position_as_its_symmetric_image_with_targets_mapped() {
        let (g, s) = sample();
        let settings = TrainSettings { ownership_weight: 1.0, ..Default::default() };
        let device = Device::flex();
        let batch: Vec<&Sample> = vec![&s; 64];
        let mut rng = engine::rng_from_seed(3);
        let b = make_batch::<BattleNumber>(&batch, &settings, &device, Some(&mut rng));
        let (x, policy) = (rows(b.x), rows(b.policy));
        let own = rows(b.ownership.unwrap().0);
        let mut seen = std::collections::HashSet::new();
        let mut y = vec![0.0; BattleNumber::FEATURE_LEN];
        for i in 0..batch.len() {
            // Which symmetry was drawn: the one whose image's features this row holds.
            let k = (0..8)
                .find(|&k| {
                    Symmetry::new(k).position(&g).encode_features(&mut y);
                    y == x[i]
                })
                .expect("every row is the features of one of the position's images");
            seen.insert(k);
            let h = Symmetry::new(k).position(&g);
            for &(a, pr) in &s.policy {
                let click = engine::battlenumber::features::action_at(a as usize).unwrap();
                let j = BattleNumber::action_index(&Symmetry::new(k).action(click)).unwrap();
                assert_eq!(policy[i][j], pr, "row {i}, symmetry {k}: the policy target follows the click");
            }
            let mut want = vec![0i8; BattleNumber::OWNERSHIP_LEN];
            h.ownership(h.perspective(), &mut want);
            assert_eq!(own[i], want.iter().map(|&o| f32::from(o)).collect::<Vec<_>>(), "row {i}");
        }
        assert_eq!(seen.len(), 8, "64 draws show all eight symmetries: {seen:?}");
        // Without an rng (validation) every row is the stored position.
        let plain = rows(make_batch::<BattleNumber>(&batch, &settings, &device, None).x);
        g.encode_features(&mut y);
        assert!(plain.iter().all(|r| *r == y));
    }
}
