//! `zeroplay train` and `zeroplay export`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use engine::Features;
use trainer::gate::GateResult;
use trainer::metrics::TrainerMetrics;
use trainer::pipeline::{Candidate, Gated, Gatekeeper, LocalGate, OpponentRef, PipelineConfig, run_observed};
use zeroplay_proto::v1 as pb;

use crate::cli::{ExportArgs, TrainArgs};
use crate::config::load;

/// The trainer's gatekeeper: gating by the coordinator on its workers, or (without a
/// coordinator) in the trainer's own process.
pub fn gatekeeper<G: Features + engine::agent::GameAgents>(
    rt: tokio::runtime::Handle,
    coordinator: Option<String>,
    token: String,
    stop: Arc<AtomicBool>,
) -> Result<Box<dyn Gatekeeper + Send>> {
    let Some(url) = coordinator else {
        return Ok(Box::new(Local::<G>(std::marker::PhantomData)));
    };
    // The lazy channel spawns its connection task on the current runtime: build it inside.
    let client = {
        let _inside = rt.enter();
        zeroplay_client::connect(&zeroplay_client::ClientConfig { coordinator: url, token, ca_cert: None })?
    };
    Ok(Box::new(CoordinatorGate { rt, client, stop, game: G::NAME, feature_version: G::FEATURE_VERSION }))
}

/// Local gating, nothing published.
struct Local<G>(std::marker::PhantomData<fn() -> G>);

impl<G: Features + engine::agent::GameAgents> Gatekeeper for Local<G> {
    fn gate(&mut self, c: &Candidate<'_>, progress: &mut dyn FnMut(u32, u32, f64)) -> Result<Gated, String> {
        let mut publish = |_: &[u8]| Ok(0);
        LocalGate::<G> { options: Default::default(), publish: &mut publish }.gate(c, progress)
    }
}

/// Gating by the coordinator: the candidate is published with the gate settings, the
/// coordinator schedules its matches on the workers and promotes it (announcing it to every
/// worker) if it passes; this polls `GateStatus` until it has decided.
struct CoordinatorGate {
    rt: tokio::runtime::Handle,
    client: zeroplay_client::Client,
    stop: Arc<AtomicBool>,
    game: &'static str,
    feature_version: u32,
}

impl CoordinatorGate {
    /// Polls `GateStatus` for `version` until the coordinator decides, or until the trainer
    /// is stopped: then the candidate is [`Gated::pending`], its verdict left to the
    /// coordinator, which gates on (the next session asks for it).
    fn wait(&mut self, version: u64, progress: &mut dyn FnMut(u32, u32, f64)) -> Result<Gated, String> {
        loop {
            let st = self
                .rt
                .block_on(self.client.gate_status(pb::GateStatusRequest { version }))
                .map_err(|s| format!("gate status of v{version}: {}", s.message()))?
                .into_inner();
            progress(st.matches, st.matches_max.max(1), st.points);
            let state = pb::GateState::try_from(st.state).unwrap_or(pb::GateState::Unspecified);
            let done = |promoted: bool, pending: bool| Gated {
                result: GateResult {
                    matches: st.matches,
                    points: st.points,
                    elo: st.elo,
                    elo_lo: st.elo_lo,
                    elo_hi: st.elo_hi,
                    promoted,
                    reason: st.reason.clone(),
                },
                opponent: if st.opponent_version == 0 {
                    OpponentRef::UserAi
                } else {
                    OpponentRef::Version(st.opponent_version)
                },
                version,
                pending,
            };
            match state {
                pb::GateState::Promoted => return Ok(done(true, false)),
                pb::GateState::Rejected => return Ok(done(false, false)),
                pb::GateState::Ungated => {
                    let mut g = done(true, false);
                    g.result.reason = "gating off".into();
                    return Ok(g);
                }
                _ if self.stop.load(Ordering::Relaxed) => {
                    let mut g = done(false, true);
                    g.result.reason =
                        format!("stopped while v{version} was being gated (the coordinator goes on)");
                    return Ok(g);
                }
                _ => std::thread::sleep(Duration::from_millis(500)),
            }
        }
    }
}

impl Gatekeeper for CoordinatorGate {
    fn gate(&mut self, c: &Candidate<'_>, progress: &mut dyn FnMut(u32, u32, f64)) -> Result<Gated, String> {
        let gate = c.gating.then_some(c.settings);
        let version = self
            .rt
            .block_on(zeroplay_client::publish_model(
                &mut self.client,
                self.game,
                self.feature_version,
                c.bytes,
                gate,
            ))
            .map_err(|s| format!("coordinator refused the model: {}", s.message()))?;
        self.wait(version, progress)
    }

    fn verdict(
        &mut self,
        version: u64,
        progress: &mut dyn FnMut(u32, u32, f64),
    ) -> Option<Result<Gated, String>> {
        Some(self.wait(version, progress))
    }
}

/// Runs the training pipeline until Ctrl-C or the round limit.
///
/// # Errors
/// Bad configuration or an unwritable run directory.
pub fn train(args: TrainArgs) -> Result<()> {
    let mut cfg: PipelineConfig = load(args.config.as_deref())?;
    if let Some(d) = args.data_dir {
        cfg.data_dir = d;
    }
    if let Some(d) = args.run_dir {
        cfg.run_dir = d;
    }
    if args.rounds.is_some() {
        cfg.max_rounds = args.rounds;
    }
    args.storage.apply(&mut cfg.storage)?;
    cfg.validate().map_err(anyhow::Error::msg)?;
    let device = trainer::device(&args.device).map_err(anyhow::Error::msg)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(1).build()?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        rt.spawn(async move {
            crate::shutdown::signal().await;
            stop.store(true, Ordering::Relaxed);
        });
    }
    let metrics = TrainerMetrics::default();
    if let Some(addr) = &args.metrics_listen {
        let listener = rt.block_on(zeroplay_telemetry::bind(addr)).map_err(anyhow::Error::msg)?;
        let health = zeroplay_telemetry::Health::new();
        health.set_ready(true);
        // Served until the runtime is dropped at the end of this function.
        rt.spawn(zeroplay_telemetry::serve(
            listener,
            Arc::new(metrics.registry()),
            health,
            std::future::pending(),
        ));
    }
    let (h, c, t) = (rt.handle(), args.coordinator, args.token);
    let history = engine::with_game!(cfg.game, |G| train_game::<G>(&cfg, &device, h, c, t, &stop, &metrics)?);
    print!("{}", run_report(&history, &cfg.run_dir, &cfg));
    Ok(())
}

fn train_game<G: Features + engine::agent::GameAgents>(
    cfg: &PipelineConfig,
    device: &burn::prelude::Device,
    rt: &tokio::runtime::Handle,
    coordinator: Option<String>,
    token: String,
    stop: &Arc<AtomicBool>,
    metrics: &TrainerMetrics,
) -> Result<Vec<trainer::pipeline::RatingEntry>> {
    let mut gatekeeper = gatekeeper::<G>(rt.clone(), coordinator, token, stop.clone())?;
    run_observed::<G>(cfg, device, &mut *gatekeeper, stop, metrics).map_err(anyhow::Error::msg)
}

/// Writes a model's weights as safetensors plus its documentation.
///
/// # Errors
/// An unreadable or invalid model file, or an unwritable output directory.
pub fn export(args: ExportArgs) -> Result<()> {
    let bytes = std::fs::read(&args.model).with_context(|| format!("reading {}", args.model.display()))?;
    let meta =
        model::check(&bytes).with_context(|| format!("{} is not a zeroplay model", args.model.display()))?;
    // Load it fully too: the weights must fit the declared network.
    let kind: engine::GameKind = meta.game.parse()?;
    engine::with_game!(kind, |G| drop(model::load::<G>(&bytes, &model::cpu())?));
    export_files(&bytes, &meta, &args.out)?;
    println!("exported to {}: model.safetensors, model.json, MODEL.md", args.out.display());
    Ok(())
}

/// The export files for model `bytes` into `out`.
///
/// # Errors
/// A model of a game this build does not know, or I/O failures.
pub fn export_files(bytes: &[u8], meta: &model::ModelMeta, out: &Path) -> Result<()> {
    let kind: engine::GameKind = meta.game.parse()?;
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("model.safetensors"), bytes)?;
    let st = safetensors::SafeTensors::deserialize(bytes)?;
    let mut tensors: Vec<serde_json::Value> = st
        .tensors()
        .into_iter()
        .map(|(name, view)| {
            serde_json::json!({ "name": name, "dtype": format!("{:?}", view.dtype()), "shape": view.shape() })
        })
        .collect();
    tensors.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let doc = serde_json::json!({
        "format": model::file::FORMAT,
        "game": meta.game,
        "feature_version": meta.feature_version,
        "feature_len": meta.feature_len,
        "policy_len": meta.policy_len,
        "ownership_len": meta.ownership_len,
        "net": meta.net,
        "margin_scale": meta.margin_scale,
        "info": meta.info,
        "sha256": model::sha256_hex(bytes),
        "tensors": tensors,
    });
    std::fs::write(out.join("model.json"), serde_json::to_string_pretty(&doc)?)?;
    // This file's own figures, so the note cannot disagree with the weights it describes.
    let mut md = model_md(kind)
        .replace("`feature_len` floats", &format!("{} floats", meta.feature_len))
        .replace("version `feature_version`", &format!("version {}", meta.feature_version));
    md.push_str("\n## Tensors in this file\n\n| name | dtype | shape |\n|---|---|---|\n");
    for t in doc["tensors"].as_array().into_iter().flatten() {
        md.push_str(&format!(
            "| `{}` | {} | {} |\n",
            t["name"].as_str().unwrap_or(""),
            t["dtype"].as_str().unwrap_or(""),
            t["shape"]
        ));
    }
    if meta.ownership_len > 0 {
        md.push_str(&format!(
            "\n`ownership.*` is an auxiliary head ({} outputs, `tanh` of `h · ownership.weight + \
             ownership.bias`: who holds each square when the game ends, 1 the mover, −1 the \
             opponent). It was a training signal; search does not read it.\n",
            meta.ownership_len
        ));
    }
    std::fs::write(out.join("MODEL.md"), md)?;
    Ok(())
}

/// MODEL.md for a game's export: its input paragraph, the forward pass every zeroplay network
/// shares, and its margin and policy notes.
fn model_md(game: engine::GameKind) -> String {
    let pack = game.pack();
    let (title, input, margin_note, policy) =
        (pack.title, pack.model.input, pack.model.margin, pack.model.policy);
    let mut md = format!(
        "# zeroplay model ({title})\n\n{input} Forward pass,\nwith `relu` and `W` stored `[in, out]` \
         (multiply as `x · W + b`):\n\n{FORWARD}    margin = (h · margin.weight + margin.bias) · margin_scale   # {margin_note}\n"
    );
    match policy {
        Some((head, index)) => md.push_str(&format!(
            "    policy = h · policy.weight + policy.bias              # logits over {head}\n\n{index}\n"
        )),
        None => md.push_str(&NO_POLICY.replace("{title}", title)),
    }
    md.push_str(UTILITY);
    md
}

/// The layers every zeroplay network has, up to its value heads.
pub(crate) const FORWARD: &str = "    h = relu(x · input.weight + input.bias)
    for each block i: h = relu(h + (relu(h · blocks.i.a.weight + blocks.i.a.bias) · blocks.i.b.weight + blocks.i.b.bias))
    wdl    = softmax(h · wdl.weight + wdl.bias)          # P(win), P(draw), P(loss) for the mover
";

const UTILITY: &str = "\nSearch utility (zeroplay's default): `(1 − mix)·(P(win) − P(loss)) + mix·tanh(margin / 6)` with mix 0.5.\n";

const NO_POLICY: &str = "
{title} has no fixed action space, so there is no policy: `policy.*` is a 1-wide placeholder
that nothing reads (`policy_len` is 0), and the search's priors are uniform.
";

/// What a trainer's run directory holds at the end of `local` or `train`: the models with
/// their Elo, the plot and the best model, naming only files that exist.
pub fn run_report(
    history: &[trainer::pipeline::RatingEntry],
    run_dir: &Path,
    cfg: &trainer::pipeline::PipelineConfig,
) -> String {
    let (min_new, gate) = (cfg.min_new_positions, &cfg.gate);
    let mut out = String::new();
    if history.is_empty() {
        out.push_str(&format!(
            "\nno model trained yet: the trainer starts its first round after {min_new} new positions\n"
        ));
        return out;
    }
    let plot = run_dir.join("ratings.svg");
    let plot_note = if plot.exists() { format!("; the plot is {}", plot.display()) } else { String::new() };
    out.push_str(&format!(
        "\nmodels (Elo from one fit of all the run's games, {} = 0{plot_note}; `zeroplay diagnose` and `zeroplay strength` take the run directory):\n",
        trainer::ratings::zero_name(history)
    ));
    // The ratings are measured at the gate's budget, which is not what a player meets: say
    // so on the same screen, with the command that measures at equal time.
    // A one-layer model of a game with its own searcher is gated inside it (model::gate_agent).
    let one_layer = model::NetConfig::named(&cfg.train.net).is_some_and(|n| n.is_one_layer());
    let inside =
        engine::with_game!(cfg.game, |G| <G as engine::agent::GameAgents>::shallow_net_searcher(gate.sims))
            .filter(|_| one_layer);
    let budget = match inside {
        Some(spec) => format!("{spec} for both sides, the network alone at the candidate's leaves"),
        None => format!("{} simulations a move for both sides, leaf lambda={}", gate.sims, gate.leaf.lambda),
    };
    out.push_str(&format!(
        "these Elo figures are at the gate's budget ({budget}), not at equal time per move; `zeroplay strength --run {}` measures the network alone and the served agent at equal time\n",
        run_dir.parent().unwrap_or(run_dir).display()
    ));
    out.push_str(&trainer::pipeline::summary(history, run_dir));
    let best = trainer::pipeline::best_model_path(run_dir);
    if best.exists() {
        out.push_str(&format!("best model: {}\n", best.display()));
    } else {
        out.push_str("no model promoted yet: every candidate so far lost its gating match\n");
    }
    out
}
