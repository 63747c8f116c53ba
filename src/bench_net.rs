//! `zeroplay bench net`: training and inference speed of the network, and MCTS speed with it.
//!
//! Every figure is the median of `--repeats` timed runs after one warm-up run; the inference
//! paths are timed round-robin (each repeat runs every path once), so they compare side by
//! side. Positions come from random play (seeded), so the runs are repeatable.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Args;
use engine::eval::{Evaluator, Rollout};
use engine::mcts::{Budget, Mcts, MctsConfig};
use engine::{Features, Game};
use model::cpu::Kernel;
use model::{ModelSlot, NetConfig, NetEvaluator};
use rand::RngExt;
use trainer::data::Sample;
use trainer::train::{TrainSettings, Trainer};

/// `zeroplay bench net`.
#[derive(Debug, Args)]
pub struct NetBenchArgs {
    /// The game whose encoding, network and search are measured.
    #[arg(long, value_parser = crate::args::game_kind(), default_value_t = engine::GameKind::DEFAULT)]
    pub game: engine::GameKind,
    /// Network size: nano, tiny, small, medium or large.
    #[arg(long, default_value = "small")]
    pub net: String,
    /// Inference batch sizes to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    pub batches: Vec<usize>,
    /// Training batch size.
    #[arg(long, default_value_t = 256)]
    pub train_batch: usize,
    /// Training steps per timed run.
    #[arg(long, default_value_t = 20)]
    pub train_steps: u64,
    /// MCTS simulations per timed search.
    #[arg(long, default_value_t = 2000)]
    pub sims: u64,
    /// Timed runs per figure (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Backend: cpu, or cuda / wgpu in a binary built with those features.
    #[arg(long, default_value = "cpu")]
    pub device: String,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn positions<G: Game>(n: usize, seed: u64) -> Vec<G> {
    let mut rng = engine::rng_from_seed(seed);
    let mut out = Vec::with_capacity(n);
    let mut actions = Vec::new();
    while out.len() < n {
        let mut g = G::new_game(&Default::default());
        for _ in 0..rng.random_range(0..120) {
            g.legal_actions(&mut actions);
            if actions.is_empty() || g.outcome().is_some() {
                break;
            }
            g.play_unchecked(actions[rng.random_range(0..actions.len())]);
        }
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

/// Times `f` `repeats` times after a warm-up; returns the median seconds.
fn time(repeats: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..repeats.max(1))
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

/// Runs the benchmark and prints a Markdown table.
///
/// # Errors
/// A bad network name or device.
pub fn run(a: NetBenchArgs) -> Result<()> {
    engine::with_game!(a.game, |G| run_game::<G>(&a))
}

fn run_game<G: Features>(a: &NetBenchArgs) -> Result<()> {
    let Some(cfg) = NetConfig::named(&a.net) else { bail!("unknown net {:?}", a.net) };
    let device = trainer::device(&a.device).map_err(anyhow::Error::msg)?;
    // Random TriGolden positions cost far more to make; fewer do for its figures.
    let ps: Vec<G> = positions(if G::ENCODE_ON_LOAD { 1024 } else { 4096 }, 1);
    println!(
        "{}: network {} ({} wide, {} blocks), device {}, median of {} runs\n",
        G::NAME,
        a.net,
        cfg.hidden,
        cfg.blocks,
        a.device,
        a.repeats
    );

    // Training.
    let samples: Vec<Sample> = ps
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut legal = Vec::new();
            p.legal_actions(&mut legal);
            let k = legal.len() as f32;
            Sample {
                state: engine::game::to_bytes(p),
                wdl: (i % 3) as u8,
                score: (i % 21) as f32 - 10.0,
                decisive: i % 5 == 0,
                policy: legal
                    .iter()
                    .filter_map(|x| G::action_index(x).map(|j| (j as u16, 1.0 / k)))
                    .collect(),
                q: Some(((i % 7) as f32 - 3.0) / 3.0),
                game_hash: i as u64,
                ply: 0,
                model_version: 0,
                ownership: None,
                // As the trainer's loader does for games whose encoding is costly.
                features: G::ENCODE_ON_LOAD.then(|| {
                    let mut x = vec![0.0; G::FEATURE_LEN].into_boxed_slice();
                    p.encode_features(&mut x);
                    x
                }),
            }
        })
        .collect();
    let refs: Vec<&Sample> = samples.iter().collect();
    let settings =
        TrainSettings { net: a.net.clone(), batch_size: a.train_batch, ..TrainSettings::default() };
    let mut t = Trainer::<G>::new(settings, &device).map_err(anyhow::Error::msg)?;
    let secs = time(a.repeats, || {
        t.train(&refs, a.train_steps, &mut |_, _| {});
    });
    let sps = (a.train_steps as usize * a.train_batch) as f64 / secs;
    println!(
        "| training | batch {} | {:.0} samples/s | {:.1} ms/step |",
        a.train_batch,
        sps,
        secs * 1e3 / a.train_steps as f64
    );

    // Inference.
    let bytes = t.export(0, "bench")?;
    let m = model::load::<G>(&bytes, &device)?;
    let f = G::FEATURE_LEN;
    println!(
        "\n| inference batch | path | positions/s | µs per call | µs per position | µs per call incl. feature encoding |\n|---|---|---|---|---|---|"
    );
    for &b in &a.batches {
        let batch = &ps[..b.min(ps.len())];
        let mut x = vec![0.0; batch.len() * f];
        for (p, c) in batch.iter().zip(x.chunks_exact_mut(f)) {
            p.encode_features(c);
        }
        let wanted: Vec<Vec<usize>> = batch
            .iter()
            .map(|p| {
                let mut acts = Vec::new();
                p.legal_actions(&mut acts);
                acts.iter().filter_map(G::action_index).collect()
            })
            .collect();
        let calls = (4096 / b).clamp(4, 512);
        // Side by side in one run: burn's tensors, the CPU pass with every policy entry, and
        // the CPU pass with the legal actions' entries only (what the search asks for).
        type Infer<'a> = Box<dyn Fn(&[f32]) + 'a>;
        let n = batch.len();
        let mut paths: Vec<(&str, Infer<'_>)> = vec![(
            "burn (flex)",
            Box::new(|x: &[f32]| {
                std::hint::black_box(m.infer_burn(x, n));
            }),
        )];
        if let Some(cpu) = &m.cpu {
            let p = cpu.policy_len();
            let wanted = &wanted;
            // The earlier row-by-row kernel and the register-blocked one, in one run.
            for (kernel, all, name) in [
                (Kernel::Rows, false, "CpuNet row by row (earlier), legal entries"),
                (Kernel::Blocked, true, "CpuNet blocked, all policy entries"),
                (Kernel::Blocked, false, "CpuNet blocked, legal entries"),
            ] {
                paths.push((
                    name,
                    Box::new(move |x: &[f32]| {
                        let (mut out, mut pol) = (Vec::new(), vec![0.0; n * p]);
                        let pick = |i: usize| if all { None } else { Some(&wanted[i][..]) };
                        cpu.forward_with(kernel, x, n, &pick, &mut out, &mut pol);
                        std::hint::black_box((out, pol));
                    }),
                ));
            }
        }
        // Round-robin: each repeat times every path once, so a slow spell of a shared or
        // throttled machine lands on all of them alike rather than on one.
        let once = |infer: &Infer<'_>, encode: bool| {
            let t = Instant::now();
            for _ in 0..calls {
                if encode {
                    let mut x = vec![0.0; batch.len() * f];
                    for (p, c) in batch.iter().zip(x.chunks_exact_mut(f)) {
                        p.encode_features(c);
                    }
                    infer(&x);
                } else {
                    infer(&x);
                }
            }
            t.elapsed().as_secs_f64()
        };
        for (_, infer) in &paths {
            once(infer, false);
        }
        let mut secs = vec![Vec::new(); paths.len()];
        let mut enc = vec![Vec::new(); paths.len()];
        for _ in 0..a.repeats.max(1) {
            for (k, (_, infer)) in paths.iter().enumerate() {
                secs[k].push(once(infer, false));
                enc[k].push(once(infer, true));
            }
        }
        for ((name, _), (secs, enc)) in paths.iter().zip(secs.into_iter().zip(enc)) {
            let (secs, enc) = (median(secs), median(enc));
            println!(
                "| {b} | {name} | {:.0} | {:.1} | {:.2} | {:.1} |",
                (calls * batch.len()) as f64 / secs,
                secs / calls as f64 * 1e6,
                secs / (calls * batch.len()) as f64 * 1e6,
                enc / calls as f64 * 1e6
            );
        }
    }

    // MCTS with the network leaf, beside the rollout leaf.
    let slot = Arc::new(ModelSlot::new());
    slot.publish(1, model::load::<G>(&bytes, &device)?);
    let roots: Vec<G> = positions::<G>(64, 2).into_iter().filter(|p| p.at_turn_start()).take(8).collect();
    println!("\n| MCTS leaf | search batch | simulations/s |\n|---|---|---|");
    let evals: Vec<(String, usize, Box<dyn Evaluator<G>>)> = vec![
        ("rollout (the user's AI)".into(), 1, Box::new(Rollout::default())),
        (
            "network".into(),
            1,
            Box::new(NetEvaluator::<G>::new(slot.clone(), None, &engine::LeafSettings::net_alone())),
        ),
        (
            "network".into(),
            8,
            Box::new(NetEvaluator::<G>::new(slot.clone(), None, &engine::LeafSettings::net_alone())),
        ),
        (
            "network".into(),
            32,
            Box::new(NetEvaluator::<G>::new(slot.clone(), None, &engine::LeafSettings::net_alone())),
        ),
    ];
    for (name, batch, e) in &evals {
        e.begin_move();
        let mut rng = engine::rng_from_seed(3);
        let mut sims = 0u64;
        let secs = time(a.repeats, || {
            for r in &roots {
                let mut tree =
                    Mcts::new(r.clone(), MctsConfig { batch_size: *batch, ..MctsConfig::default() });
                sims +=
                    tree.search(e.as_ref(), Budget::sims(a.sims / roots.len() as u64), &mut rng, &mut |_| {});
            }
        });
        let per_run = sims as f64 / (a.repeats + 1) as f64;
        println!("| {name} | {batch} | {:.0} |", per_run / secs);
    }
    Ok(())
}
