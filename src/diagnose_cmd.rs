//! `zeroplay diagnose`: what a model has learnt, on a run's own games. Per-head losses on the
//! games it trained on and on held-out games, on the newest and the oldest positions, the
//! value's calibration by game phase and the policy's agreement with the search, as a table
//! and a picture.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use engine::Features;
use trainer::data::{Sample, Window, spread};
use trainer::diagnose::{Diagnosis, diagnose};
use trainer::pipeline::PipelineConfig;

use crate::cli::DiagnoseArgs;

/// Runs `zeroplay diagnose`.
///
/// # Errors
/// A missing or unreadable model, data directory or configuration.
pub fn run(args: DiagnoseArgs) -> Result<()> {
    let run = args.run.clone();
    let (model_path, bytes, kind) = crate::netload::run_model(run.as_deref(), args.model.as_deref())?;
    let data = args
        .data
        .clone()
        .or_else(|| run.as_ref().map(|r| r.join("games")))
        .context("name a run directory (--run runs/NAME) or the games (--data DIR)")?;
    // The run's own settings, so that the held-out games are the ones the trainer held out.
    let cfg_path = run.as_ref().map(|r| r.join("trainer").join("train.toml"));
    let cfg: PipelineConfig = match cfg_path.as_ref().filter(|p| p.exists()) {
        Some(p) => crate::config::load(Some(p))?,
        None => PipelineConfig::default_for(kind),
    };
    let out = args.out.clone().unwrap_or_else(|| match &run {
        Some(r) => r.join("trainer").join("diagnose.svg"),
        None => PathBuf::from("diagnose.svg"),
    });
    let report = engine::with_game!(kind, |G| report::<G>(&args, &bytes, &data, &cfg, &model_path, &out)?);
    print!("{report}");
    Ok(())
}

fn report<G: Features>(
    args: &DiagnoseArgs,
    bytes: &[u8],
    data: &std::path::Path,
    cfg: &PipelineConfig,
    model_path: &std::path::Path,
    out: &std::path::Path,
) -> Result<String> {
    let device = model::cpu();
    let m = model::load::<G>(bytes, &device).with_context(|| model_path.display().to_string())?;
    let mut settings = cfg.train.clone();
    settings.margin_scale = m.meta.margin_scale;
    let mut window = Window::new(args.positions);
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_message(format!("reading up to {} positions from {}", args.positions, data.display()));
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    window.refresh::<G>(data).with_context(|| format!("listing {}", data.display()))?;
    pb.finish_and_clear();
    anyhow::ensure!(!window.is_empty(), "no {} positions in {}", G::NAME, data.display());
    let (train, val) = window.split(settings.validation_fraction);
    // Oldest first, as the window holds them.
    let all: Vec<&Sample> = train.iter().chain(&val).copied().collect();
    let mut by_age = all.clone();
    by_age.sort_by_key(|s| s.model_version);
    let third = by_age.len() / 3;
    let groups: [(&str, Vec<&Sample>); 4] = [
        ("training-split games", spread(&train, args.sample)),
        ("held-out games", spread(&val, args.sample)),
        ("oldest third (by model)", spread(&by_age[..third], args.sample)),
        ("newest third (by model)", spread(&by_age[by_age.len() - third..], args.sample)),
    ];
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} ({}, {} wide × {} blocks, {} steps), {} positions from {} files in {}\n",
        model_path.display(),
        G::NAME,
        m.meta.net.hidden,
        m.meta.net.blocks,
        m.meta.info.steps,
        window.len(),
        window.file_count(),
        data.display()
    );
    let _ = writeln!(
        s,
        "positions                 sampled   win-draw-loss  margin  policy  total   ECE    policy top-1"
    );
    let mut held: Option<Diagnosis> = None;
    let mut trained = None;
    let mut trained_phases = Vec::new();
    for (name, group) in &groups {
        if group.is_empty() {
            let _ = writeln!(s, "{name:<24}  {:>7}", 0);
            continue;
        }
        let d = diagnose::<G>(&m.net, &device, group, &settings);
        let l = d.losses;
        let _ = writeln!(
            s,
            "{name:<24}  {:>7}   {:>13.3}  {:>6.3}  {:>6.3}  {:>5.3}   {:.3}  {}",
            group.len(),
            l.value,
            l.margin,
            l.policy,
            l.total,
            d.all.ece,
            d.all.policy_top1.map_or_else(|| "-".into(), |t| format!("{:.1}%", 100.0 * t)),
        );
        match *name {
            "held-out games" => held = Some(d),
            "training-split games" => {
                trained = Some(d.losses);
                trained_phases = d.phases.clone();
            }
            _ => {}
        }
    }
    if let Some(d) = held {
        let _ = writeln!(s, "\nheld-out games by phase:\n{}", d.table());
        // A gap that grows with the ply is memorised outcomes: a late position names its game,
        // and every position of a game shares its result.
        let _ = writeln!(s, "Brier score by phase  training split   held-out");
        for (name, (t, h)) in ["opening", "middle", "end"].iter().zip(trained_phases.iter().zip(&d.phases)) {
            let _ = writeln!(
                s,
                "{name:<7} (plies {:>3}-{:<3})   {:>10.3}   {:>8.3}",
                h.from_ply, h.to_ply, t.brier, h.brier
            );
        }
        let title = format!("{}: {} held-out positions", model_path.display(), d.all.n);
        trainer::write_atomic(out, d.svg(&title, trained.as_ref()).as_bytes()).map_err(anyhow::Error::msg)?;
        let _ = writeln!(s, "picture: {}", out.display());
    }
    Ok(s)
}
