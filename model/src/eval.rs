//! The network as the search's leaf evaluator, hot-swappable and batched.
//!
//! - [`ModelSlot`] holds the current model behind an atomic pointer swap ([`arc_swap`]):
//!   a new model is published with one store, and searches running on the old one finish
//!   with it.
//! - [`NetEvaluator`] implements the engine's [`Evaluator`]. It pins the slot's model at
//!   [`Evaluator::begin_move`], so one move is searched by one model and a swap lands between
//!   moves; every move records the version that searched it. With no model yet it falls back
//!   to the user's rollout evaluator (version 0).
//! - [`Batcher`] runs inference on its own thread and merges the leaf batches of all the
//!   games a worker plays at once into one forward pass, up to a batch size or a maximum
//!   wait.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use burn::prelude::*;
use burn::tensor::{TensorData, activation};
use engine::eval::{Evaluator, Leaf, Rollout};
use engine::features::utility;
use engine::{Features, LeafSettings, Rng};

use crate::file::Model;

/// A model and the version the coordinator gave it.
#[derive(Debug)]
pub struct Versioned {
    /// Model version (≥ 1).
    pub version: u64,
    /// The model.
    pub model: Model,
}

/// The current model, swapped atomically.
#[derive(Debug, Default)]
pub struct ModelSlot {
    current: ArcSwapOption<Versioned>,
}

impl ModelSlot {
    /// An empty slot.
    pub fn new() -> ModelSlot {
        ModelSlot::default()
    }

    /// Makes `model` current. Searches already holding the old one keep it until their move
    /// ends.
    pub fn publish(&self, version: u64, model: Model) {
        self.current.store(Some(Arc::new(Versioned { version, model })));
    }

    /// The current model, if any.
    pub fn current(&self) -> Option<Arc<Versioned>> {
        self.current.load_full()
    }

    /// The current model's version (0: none).
    pub fn version(&self) -> u64 {
        self.current.load().as_ref().map_or(0, |v| v.version)
    }
}

/// The network's outputs for a batch, in plain vectors.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// Win/draw/loss probabilities from the mover's view, per position.
    pub wdl: Vec<[f32; 3]>,
    /// Predicted score difference in points from the mover's view, per position.
    pub margin: Vec<f32>,
    /// Policy logits, `n × policy_len` row-major (empty for a game without a policy head).
    pub policy: Vec<f32>,
}

impl Model {
    /// Runs the network on `n` positions whose features are `features` (`n × feature_len`,
    /// row-major): one position on the CPU with [`crate::cpu::CpuNet`], else with burn.
    ///
    /// # Panics
    /// If `features.len() != n · feature_len`.
    pub fn infer(&self, features: &[f32], n: usize) -> Outputs {
        self.infer_wanted(features, n, &|_| None)
    }

    /// As [`Model::infer`], computing for position `i` only the policy entries `wanted(i)`
    /// names (`None`: all); the other entries of its row are −∞. Burn's path (a GPU device,
    /// or more than [`CPU_MAX_BATCH`] positions) computes them all.
    ///
    /// # Panics
    /// If `features.len() != n · feature_len` or an index is not below the policy length.
    pub fn infer_wanted<'a>(
        &self,
        features: &[f32],
        n: usize,
        wanted: &dyn Fn(usize) -> Option<&'a [usize]>,
    ) -> Outputs {
        // Measured side by side (`zeroplay bench net`, docs/benchmarks.md): the CPU pass's
        // register-blocked kernel is 3-7x faster than burn for one position and as fast or
        // faster up to 64 (burn's set-up costs ~25 us a call), so it serves the search's
        // batches and burn the large ones.
        let cpu = match &self.cpu {
            Some(cpu) if n <= CPU_MAX_BATCH => cpu,
            _ => return self.infer_burn(features, n),
        };
        let p = cpu.policy_len();
        let mut raw = Vec::with_capacity(n);
        let mut policy = vec![f32::NEG_INFINITY; n * p];
        cpu.forward(features, n, wanted, &mut raw, &mut policy);
        Outputs {
            wdl: raw.iter().map(|o| softmax3(o.wdl_logits)).collect(),
            margin: raw.iter().map(|o| o.margin * self.meta.margin_scale).collect(),
            policy: if self.meta.policy_len > 0 { policy } else { vec![] },
        }
    }

    /// [`Model::infer`] through burn's tensors, whatever the device (the reference the CPU
    /// path is measured and tested against).
    ///
    /// # Panics
    /// If `features.len() != n · feature_len`.
    pub fn infer_burn(&self, features: &[f32], n: usize) -> Outputs {
        let f = self.meta.feature_len;
        assert_eq!(features.len(), n * f, "feature batch length");
        if n == 0 {
            return Outputs::default();
        }
        let x = Tensor::<2>::from_data(TensorData::new(features.to_vec(), [n, f]), &self.device);
        let out = self.net.forward(x);
        let wdl: Vec<f32> =
            activation::softmax(out.wdl_logits, 1).into_data().try_to_vec().expect("f32 tensor");
        let margin: Vec<f32> = out.margin.into_data().try_to_vec().expect("f32 tensor");
        let policy: Vec<f32> = if self.meta.policy_len > 0 {
            out.policy_logits.into_data().try_to_vec().expect("f32 tensor")
        } else {
            vec![]
        };
        Outputs {
            wdl: wdl.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
            margin: margin.iter().map(|m| m * self.meta.margin_scale).collect(),
            policy,
        }
    }
}

/// The most positions [`Model::infer`] runs through [`crate::cpu::CpuNet`] at once.
pub const CPU_MAX_BATCH: usize = 64;

fn softmax3(l: [f32; 3]) -> [f32; 3] {
    let m = l[0].max(l[1]).max(l[2]);
    let e = l.map(|x| (x - m).exp());
    let s = e[0] + e[1] + e[2];
    e.map(|x| x / s)
}

/// How network outputs become search values: the `margin_mix` and `score_scale` of a
/// [`LeafSettings`].
#[derive(Clone, Copy, Debug, PartialEq)]
struct UtilitySettings {
    margin_mix: f32,
    score_scale: f32,
}

/// Where a network leaf's model comes from.
// Built once per evaluator and consumed at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum NetSource {
    /// One fixed model (arena, gating, `uci`, spec strings): inference on the searching
    /// thread.
    Fixed(Model),
    /// The model in a hot-swapped slot, with the rollout evaluator while it is empty
    /// (self-play, the play server); with a batcher, inference merged across games.
    Slot(Arc<ModelSlot>, Option<Batcher>),
}

/// The network at the leaves, the one recipe every agent with a network uses (self-play,
/// gating, the play server, `uci`, `eval=net` spec strings): the network's value under
/// `leaf.margin_mix` and `leaf.score_scale`, mixed with one random playout per leaf at weight
/// `leaf.lambda` ([`LeafSettings::around_net`]), the network's priors.
pub fn net_leaf<G: Features>(source: NetSource, leaf: &LeafSettings) -> Arc<dyn Evaluator<G>> {
    let net = match source {
        NetSource::Fixed(m) => NetEvaluator::<G>::fixed(m, leaf),
        NetSource::Slot(slot, batcher) => NetEvaluator::<G>::new(slot, batcher, leaf),
    };
    leaf.around_net(Arc::new(net))
}

/// The leaf a gating match values with for `model` (`None`: the user's AI, the rollout
/// evaluator): [`net_leaf`] under `s.leaf`; a one-layer model of a game that plays one inside
/// its own searcher ([`engine::agent::GameAgents::shallow_net_searcher`]) alone, as the play
/// server runs it there. Built once per run; [`gate_agent`] wraps it.
pub fn gate_leaf<G: Features + engine::agent::GameAgents>(
    model: Option<Model>,
    s: &engine::gating::GateSettings,
) -> Arc<dyn Evaluator<G>> {
    match model {
        Some(m) if m.meta.net.is_one_layer() && G::shallow_net_searcher(s.sims).is_some() => {
            net_leaf::<G>(NetSource::Fixed(m), &LeafSettings::net_alone())
        }
        Some(m) => net_leaf::<G>(NetSource::Fixed(m), &s.leaf),
        None => Arc::new(Rollout { score_scale: s.leaf.score_scale, playouts: 1 }),
    }
}

/// The agent a gating match plays: MCTS at `s.sims` simulations per move over `leaf` (from
/// [`gate_leaf`]), in search batches of 8; a one-layer network ([`Evaluator::shallow`]) plays
/// inside the game's own searcher where it has one
/// ([`engine::agent::GameAgents::shallow_net_searcher`]: Banqi's `banqi-ab`, as the play
/// server serves it), with its endgame tables. The trainer's own gating and the workers'
/// evaluation matches both play it, so a candidate is measured the same way wherever its
/// matches run, and as it will be served.
pub fn gate_agent<G: Features + engine::agent::GameAgents>(
    leaf: Arc<dyn Evaluator<G>>,
    s: &engine::gating::GateSettings,
    name: &str,
) -> Box<dyn engine::agent::Agent<G>> {
    if leaf.shallow().is_some()
        && let Some(spec) = G::shallow_net_searcher(s.sims)
    {
        // The spec names the network by its role; the loader hands over the leaf built once.
        let spec = with_tables(engine::spec::AgentSpec::Game(spec).with_model(name));
        // A game's own spec is its agent, and this loader cannot fail.
        return spec.build_with::<G>(&|_, _| Ok(leaf.clone())).unwrap_or_else(|e| panic!("{spec}: {e}"));
    }
    let spec = engine::agent::MctsSpec {
        sims: Some(s.sims),
        time: None,
        eval: engine::agent::EvalSpec::Uniform,
        config: engine::mcts::MctsConfig { batch_size: 8, ..engine::mcts::MctsConfig::default() },
    };
    Box::new(engine::agent::MctsAgent::new(spec, leaf, name.into()))
}

/// The first candidate's opponent in gating (opponent version 0, no model promoted yet): with
/// `s.baseline_sims` > 0 the game's own baseline at that budget where it has one
/// ([`engine::agent::GameAgents::user_ai`]: TriGolden's `trigolden-user`, Banqi's `banqi-ab`,
/// with its endgame tables from [`modelfile::tables::default_store`]); otherwise the user's AI
/// as MCTS over the rollout evaluator at `s.sims` ([`gate_agent`] over [`gate_leaf`] without a
/// model). The trainer's gating and the workers' evaluation matches both play it.
pub fn gate_user_ai<G: Features + engine::agent::GameAgents>(
    s: &engine::gating::GateSettings,
    name: &str,
) -> Box<dyn engine::agent::Agent<G>> {
    s.own_user_ai_sims().and_then(G::user_ai).map_or_else(
        || gate_agent(gate_leaf::<G>(None, s), s, name),
        |spec| with_tables(spec.into()).build::<G>(),
    )
}

/// `spec` with the endgame tables kept where every program keeps them
/// ([`modelfile::tables::default_store`]; Banqi's `banqi-ab` only).
pub fn with_tables(spec: engine::spec::AgentSpec) -> engine::spec::AgentSpec {
    spec.with_table_store(modelfile::tables::default_store())
}

/// Fills `leaves` from network outputs: value (turned to the first seat's view) and the
/// priors of the legal actions (softmax over their logits; uniform without a policy head).
fn fill<G: Features>(leaves: &mut [Leaf<G>], out: &Outputs, policy_len: usize, u: UtilitySettings) {
    for (i, leaf) in leaves.iter_mut().enumerate() {
        let v = utility(out.wdl[i], out.margin[i], u.margin_mix, u.score_scale);
        leaf.value = leaf.state.perspective().sign() * v;
        let n = leaf.actions.len();
        leaf.priors.clear();
        if n == 0 {
            continue;
        }
        if policy_len == 0 {
            leaf.priors.resize(n, 1.0 / n as f32);
            continue;
        }
        let row = &out.policy[i * policy_len..(i + 1) * policy_len];
        let logits: Vec<f32> =
            leaf.actions.iter().map(|a| G::action_index(a).map_or(f32::NEG_INFINITY, |j| row[j])).collect();
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
        let sum: f32 = exps.iter().sum();
        if sum > 0.0 && sum.is_finite() {
            leaf.priors.extend(exps.iter().map(|e| e / sum));
        } else {
            leaf.priors.resize(n, 1.0 / n as f32);
        }
    }
}

fn encode<G: Features>(leaves: &[Leaf<G>]) -> Vec<f32> {
    let f = G::FEATURE_LEN;
    let mut buf = vec![0.0; leaves.len() * f];
    for (leaf, chunk) in leaves.iter().zip(buf.chunks_exact_mut(f)) {
        leaf.state.encode_features(chunk);
    }
    buf
}

/// The network as a leaf evaluator for game `G` (one per game being played: it pins the
/// model of the move in progress).
pub struct NetEvaluator<G: Features> {
    slot: Arc<ModelSlot>,
    pinned: Mutex<Option<Arc<Versioned>>>,
    batcher: Option<Batcher>,
    utility: UtilitySettings,
    fallback: Rollout,
    search_batch: usize,
    /// [`Evaluator::shallow`]'s copy of the weights, for the model it was taken from.
    #[allow(clippy::type_complexity)]
    shallow: Mutex<Option<(Arc<Versioned>, Option<Arc<engine::shallow::ShallowNet>>)>>,
    _game: std::marker::PhantomData<fn() -> G>,
}

impl<G: Features> NetEvaluator<G> {
    /// An evaluator following `slot`, running inference on the calling thread or, with
    /// `batcher`, merged with other games' leaves on the batcher's thread. Values follow
    /// `leaf.margin_mix` and `leaf.score_scale`; [`net_leaf`] adds the playout mix.
    pub fn new(slot: Arc<ModelSlot>, batcher: Option<Batcher>, leaf: &LeafSettings) -> Self {
        let utility = UtilitySettings { margin_mix: leaf.margin_mix, score_scale: leaf.score_scale };
        let pinned = Mutex::new(slot.current());
        NetEvaluator {
            slot,
            pinned,
            batcher,
            utility,
            fallback: Rollout { score_scale: utility.score_scale, ..Rollout::default() },
            search_batch: 8,
            shallow: Mutex::new(None),
            _game: std::marker::PhantomData,
        }
    }

    /// An evaluator for one fixed model (arena and gating agents): no swaps, inference on
    /// the calling thread.
    pub fn fixed(model: Model, leaf: &LeafSettings) -> Self {
        let slot = Arc::new(ModelSlot::new());
        slot.publish(1, model);
        NetEvaluator::new(slot, None, leaf)
    }

    /// Sets the leaves per search batch it asks for ([`Evaluator::preferred_batch`]; default
    /// 8). Virtual loss makes a batch slightly worse per simulation, and the network much
    /// faster per simulation.
    pub fn with_search_batch(mut self, n: usize) -> Self {
        self.search_batch = n.max(1);
        self
    }
}

impl<G: Features> Evaluator<G> for NetEvaluator<G> {
    fn evaluate(&self, leaves: &mut [Leaf<G>], rng: &mut Rng) {
        let model = self.pinned.lock().expect("not poisoned").clone();
        let Some(m) = model else {
            self.fallback.evaluate(leaves, rng);
            return;
        };
        let features = encode(leaves);
        // Only the legal actions' logits are read (fill), so the CPU pass computes only them
        // (Banqi has 1,024 entries, a position some 10-40 legal moves); burn's path computes
        // every entry whatever it is told.
        let wanted: Option<Vec<Vec<usize>>> =
            m.model.cpu.is_some().then(|| {
                leaves.iter().map(|l| l.actions.iter().filter_map(G::action_index).collect()).collect()
            });
        let out = match (&self.batcher, wanted) {
            (Some(b), wanted) => b.infer(m.clone(), features, leaves.len(), wanted),
            (None, Some(w)) if leaves.len() <= CPU_MAX_BATCH => {
                m.model.infer_wanted(&features, leaves.len(), &|i| Some(&w[i][..]))
            }
            (None, _) => m.model.infer_burn(&features, leaves.len()),
        };
        fill(leaves, &out, m.model.meta.policy_len, self.utility);
    }

    fn preferred_batch(&self) -> usize {
        if self.pinned.lock().expect("not poisoned").is_some() { self.search_batch } else { 1 }
    }

    /// A `nano` model's weights, copied out once per model and shared while it is pinned.
    fn shallow(&self) -> Option<Arc<engine::shallow::ShallowNet>> {
        if self.batcher.is_some() {
            return None;
        }
        let m = self.pinned.lock().expect("not poisoned").clone()?;
        let mut cached = self.shallow.lock().expect("not poisoned");
        if let Some((model, net)) = &*cached
            && Arc::ptr_eq(model, &m)
        {
            return net.clone();
        }
        let u = self.utility;
        let net = m
            .model
            .cpu
            .as_ref()
            .and_then(|c| c.shallow(m.model.meta.margin_scale, u.margin_mix, u.score_scale));
        let net = net.map(Arc::new);
        *cached = Some((m, net.clone()));
        net
    }

    /// The CPU pass's value head for one position, with no allocation of policy rows:
    /// `None` with a batcher (its thread owns inference), no model yet (the fallback's
    /// playouts), or a model on a device without the CPU pass.
    fn mover_value(&self, state: &G) -> Option<f32> {
        if self.batcher.is_some() {
            return None;
        }
        let pinned = self.pinned.lock().expect("not poisoned");
        let m = pinned.as_ref()?;
        let cpu = m.model.cpu.as_ref()?;
        let mut features = vec![0.0; G::FEATURE_LEN];
        state.encode_features(&mut features);
        let o = cpu.value_one(&features);
        let margin = o.margin * m.model.meta.margin_scale;
        Some(utility(softmax3(o.wdl_logits), margin, self.utility.margin_mix, self.utility.score_scale))
    }

    fn score_scale(&self) -> f32 {
        self.utility.score_scale
    }

    fn begin_move(&self) -> u64 {
        let current = self.slot.current();
        let v = current.as_ref().map_or(0, |m| m.version);
        *self.pinned.lock().expect("not poisoned") = current;
        v
    }

    fn name(&self) -> String {
        format!("net(v{})", self.slot.version())
    }
}

struct Request {
    model: Arc<Versioned>,
    features: Vec<f32>,
    n: usize,
    /// Per position, the policy entries read (`None`: all).
    wanted: Option<Vec<Vec<usize>>>,
    reply: SyncSender<Outputs>,
}

/// Merges concurrent inference requests into batches on one thread. Cloning gives another
/// handle to the same thread; the thread ends when every handle is dropped.
pub struct Batcher {
    tx: Sender<Request>,
    clients: Arc<AtomicUsize>,
}

impl Clone for Batcher {
    /// Another handle; each handle is one client that may have a request waiting, so the
    /// thread never waits for more requests than there are handles.
    fn clone(&self) -> Self {
        self.clients.fetch_add(1, Ordering::SeqCst);
        Batcher { tx: self.tx.clone(), clients: self.clients.clone() }
    }
}

impl Drop for Batcher {
    fn drop(&mut self) {
        self.clients.fetch_sub(1, Ordering::SeqCst);
    }
}

impl std::fmt::Debug for Batcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Batcher")
    }
}

impl Batcher {
    /// Starts the inference thread: a batch runs once it holds `max_batch` positions or the
    /// oldest request has waited `max_wait`.
    ///
    /// The handle returned counts as one client; give each game its own clone. A batch runs
    /// at once when every client other than the original handle has a request waiting.
    pub fn start(max_batch: usize, max_wait: Duration) -> Batcher {
        Batcher::start_observed(max_batch, max_wait, |_| {})
    }

    /// [`Batcher::start`], calling `on_batch` with the number of positions of every forward
    /// pass (on the inference thread, so it must be quick: a metrics histogram, a counter).
    pub fn start_observed(
        max_batch: usize,
        max_wait: Duration,
        on_batch: impl Fn(usize) + Send + 'static,
    ) -> Batcher {
        let (tx, rx) = mpsc::channel::<Request>();
        let clients = Arc::new(AtomicUsize::new(1));
        let c = clients.clone();
        std::thread::Builder::new()
            .name("inference".into())
            .spawn(move || batch_loop(rx, max_batch.max(1), max_wait, &c, &on_batch))
            .expect("spawn inference thread");
        Batcher { tx, clients }
    }

    /// Runs `n` positions through `model`, batched with whatever else is waiting. `wanted`
    /// names, per position, the policy entries the caller reads (`None`: all); the others
    /// may be left at −∞ (see [`Model::infer_wanted`]).
    ///
    /// # Panics
    /// If the inference thread has died (a panic in inference).
    pub fn infer(
        &self,
        model: Arc<Versioned>,
        features: Vec<f32>,
        n: usize,
        wanted: Option<Vec<Vec<usize>>>,
    ) -> Outputs {
        let (reply, rx) = mpsc::sync_channel(1);
        self.tx.send(Request { model, features, n, wanted, reply }).expect("inference thread alive");
        rx.recv().expect("inference thread answers")
    }
}

fn batch_loop(
    rx: Receiver<Request>,
    max_batch: usize,
    max_wait: Duration,
    clients: &AtomicUsize,
    on_batch: &dyn Fn(usize),
) {
    while let Ok(first) = rx.recv() {
        let deadline = Instant::now() + max_wait;
        let mut pending = vec![first];
        let mut total = pending[0].n;
        // Each client waits for its answer, so once every client (not counting the original
        // handle, kept by the owner) has asked, nothing more can come: run now.
        while total < max_batch && pending.len() < clients.load(Ordering::SeqCst).saturating_sub(1).max(1) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(r) => {
                    total += r.n;
                    pending.push(r);
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        // One forward pass per distinct model (normally one; two around a swap).
        while !pending.is_empty() {
            let model = pending[0].model.clone();
            let (same, rest): (Vec<Request>, Vec<Request>) =
                pending.into_iter().partition(|r| Arc::ptr_eq(&r.model, &model));
            pending = rest;
            let n: usize = same.iter().map(|r| r.n).sum();
            let mut features = Vec::with_capacity(n * model.model.meta.feature_len);
            for r in &same {
                features.extend_from_slice(&r.features);
            }
            // The entries wanted, if every request named them.
            let wanted: Option<Vec<&[usize]>> = same
                .iter()
                .map(|r| r.wanted.as_ref().map(|w| w.iter().map(|v| &v[..])))
                .collect::<Option<Vec<_>>>()
                .map(|parts| parts.into_iter().flatten().collect());
            let out = match &wanted {
                Some(w) => model.model.infer_wanted(&features, n, &|i| Some(w[i])),
                None => model.model.infer(&features, n),
            };
            on_batch(n);
            let p = model.model.meta.policy_len;
            let mut at = 0;
            for r in same {
                let part = Outputs {
                    wdl: out.wdl[at..at + r.n].to_vec(),
                    margin: out.margin[at..at + r.n].to_vec(),
                    policy: if p > 0 { out.policy[at * p..(at + r.n) * p].to_vec() } else { vec![] },
                };
                at += r.n;
                let _ = r.reply.send(part);
            }
        }
    }
}
