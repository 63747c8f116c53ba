//! `zeroplay strength`: the strength figure of a run, as docs/benchmarks.md measures it. The
//! run's best model plays the game's reference opponent (Battle Number and Banqi: the user's
//! rollout MCTS; TriGolden: `trigolden-user`) in side-swapped matches at equal time per move,
//! with the documented seeds and openings, once with the network alone at the leaves
//! (`lambda=0`, no knowledge priors) and once with the mixed leaf the server plays; each
//! result is printed as a row of the docs' tables, with the command that reproduces it.

use std::fmt::Write as _;

use anyhow::Result;
use engine::GameKind;

use crate::cli::StrengthArgs;
use crate::config::ArenaConfig;

/// The documented protocol of one game (its pack's): time per move, the reference opponent,
/// openings, the served leaf and the game's own searcher.
fn protocol(game: GameKind) -> &'static engine::pack::Strength {
    &game.pack().strength
}

/// Which of our agents a measurement plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ours {
    /// The network alone: MCTS with [`NETWORK_ALONE`] leaves, against the reference opponent.
    Net,
    /// MCTS with the leaf the server mixes (a playout, knowledge priors), against the
    /// reference opponent.
    Mixed,
    /// The game's own searcher with the model valuing its leaves, against that searcher alone
    /// (Banqi: `banqi-ab` with a `nano` model, what `serve` plays with one).
    Searcher,
}

impl Ours {
    /// `--agents`' name for it.
    pub fn parse(name: &str) -> Result<Ours> {
        match name {
            "net" => Ok(Ours::Net),
            "mixed" => Ok(Ours::Mixed),
            "searcher" => Ok(Ours::Searcher),
            other => anyhow::bail!(
                "agent {other:?}: net (the network alone), mixed (the served leaf) or searcher (Banqi: banqi-ab with the model at its leaves)"
            ),
        }
    }

    /// Its `--agents` name.
    pub fn name(self) -> &'static str {
        match self {
            Ours::Net => "net",
            Ours::Mixed => "mixed",
            Ours::Searcher => "searcher",
        }
    }

    /// The agent `serve` plays with `model`: [`Ours::Searcher`] for a one-layer model of a game
    /// that runs one inside its own searcher (Banqi), else [`Ours::Mixed`].
    ///
    /// # Errors
    /// A model file that cannot be read.
    pub fn served(game: GameKind, model: &std::path::Path) -> Result<Ours> {
        let inside = protocol(game).searcher.is_some() && crate::netload::one_layer(game, model)?;
        Ok(if inside { Ours::Searcher } else { Ours::Mixed })
    }

    /// Its name in a table row or a line of output.
    fn describe(self) -> &'static str {
        match self {
            Ours::Net => "the network alone",
            Ours::Mixed => "the mixed leaf",
            Ours::Searcher => "the game's searcher with the network at its leaves",
        }
    }
}

/// One measured row: the arena's report, our agent's spec, the opponent's and the openings.
pub struct Measured {
    /// Which of our agents played.
    pub ours: Ours,
    /// The arena's result, from our agent's side.
    pub report: crate::arena_cmd::ArenaReport,
    /// Our agent's spec.
    pub agent: String,
    /// The opponent's spec.
    pub opponent: String,
    /// Random clicks before each match.
    pub opening_plies: u32,
}

/// The leaf keys of "the network alone": no playout mixed into the leaf value and no knowledge
/// priors. Every figure the project calls the network alone is measured with these keys.
pub const NETWORK_ALONE: &str = "lambda=0";

/// Plays `ours` with `model` against its opponent at the documented protocol (`times`
/// overrides our time and the opponent's): [`Ours::Net`] and [`Ours::Mixed`] meet the game's
/// reference opponent, [`Ours::Searcher`] the game's own searcher alone.
///
/// # Errors
/// A bad spec, a model that does not load, or [`Ours::Searcher`] for a game without one.
pub fn measure(
    game: GameKind,
    model: &std::path::Path,
    ours: Ours,
    times: (Option<u32>, Option<u32>),
    matches: u32,
    seed: u64,
    threads: usize,
) -> Result<Measured> {
    let p = protocol(game);
    let ms = times.0.unwrap_or(p.ms).to_string();
    let opp_ms = times.1.unwrap_or(p.ms).to_string();
    let net = |leaf: &str| format!("mcts:time={ms}ms,eval=net,model={},batch=8,{leaf}", model.display());
    let (agent, opponent) = match ours {
        Ours::Net => (net(NETWORK_ALONE), p.opponent.replace("{ms}", &opp_ms)),
        Ours::Mixed => (net(p.mixed), p.opponent.replace("{ms}", &opp_ms)),
        Ours::Searcher => {
            let Some(searcher) = p.searcher else {
                anyhow::bail!("{game} has no searcher that plays a network at its leaves: use net or mixed")
            };
            (
                format!("{},model={}", searcher.replace("{ms}", &ms), model.display()),
                searcher.replace("{ms}", &opp_ms),
            )
        }
    };
    let cfg = ArenaConfig {
        game,
        agent_a: agent.clone(),
        agent_b: opponent.clone(),
        matches,
        seed,
        threads,
        opening_plies: p.opening_plies,
        ..ArenaConfig::default()
    };
    let (sa, sb) = cfg.validate()?;
    let report = engine::with_game!(game, |G| {
        let opts = cfg.options.checked::<G>().map_err(anyhow::Error::msg)?;
        crate::arena_cmd::run_arena::<G>(&cfg, &opts, &sa, &sb, true, &crate::netload::loader::<G>)?
    });
    Ok(Measured { ours, report, agent, opponent, opening_plies: p.opening_plies })
}

/// An Elo figure with its 95% interval, an unbounded end written ±∞ (`+123 [+55, +202]`).
pub fn elo_with_interval(r: &crate::arena_cmd::ArenaReport) -> String {
    elo_interval_text(r.elo, r.elo_lo, r.elo_hi, r.points_a > 0.0)
}

/// `elo [lo, hi]` with signs (`+∞`/`−∞` where a bound is infinite; the point estimate is
/// `+∞` when `ahead`, as when every game was won), as the docs' tables write it.
pub fn elo_interval_text(elo: Option<f64>, lo: Option<f64>, hi: Option<f64>, ahead: bool) -> String {
    // The typographic minus, as the docs' tables write it.
    let text = |x: Option<f64>, inf: &str| {
        x.map_or_else(|| inf.to_string(), |v| format!("{v:+.0}").replace('-', "−"))
    };
    format!("{} [{}, {}]", text(elo, if ahead { "+∞" } else { "−∞" }), text(lo, "−∞"), text(hi, "+∞"))
}

/// One line for a measured row, saying what played what at which time, the points and the
/// Elo with its interval: what `local` prints as the strength that holds at play time.
pub fn play_time_line(m: &Measured, seed: u64) -> String {
    let r = &m.report;
    format!(
        "at play time: {} ({}) against {}: {:.1}% ({} W, {} D, {} L) in {} side-swapped matches ({} random opening plies, seed {seed}), Elo {} — unlike the models table, this is what a player meets",
        m.ours.describe(),
        m.agent,
        m.opponent,
        100.0 * r.points_a / f64::from(r.matches.max(1)),
        r.wins,
        r.draws,
        r.losses,
        r.matches,
        m.opening_plies,
        elo_with_interval(r),
    )
}

/// Runs `zeroplay strength`.
///
/// # Errors
/// A missing model, a bad spec, or an arena that cannot start.
pub fn run(args: StrengthArgs) -> Result<()> {
    let (model, _, game) = crate::netload::run_model(args.run.as_deref(), args.model.as_deref())?;
    let p = protocol(game);
    let ms = args.time_ms.unwrap_or(p.ms);
    let opp_ms = args.opponent_time_ms.unwrap_or(p.ms);
    let mut rows = String::new();
    let mut commands = String::new();
    let agents = if args.agents.is_empty() {
        // The network alone, and the agent `serve` plays with this model.
        vec![Ours::Net, Ours::served(game, &model)?]
    } else {
        args.agents.iter().map(|a| Ours::parse(a)).collect::<Result<_>>()?
    };
    for ours in agents {
        let Measured { report, agent: a, opponent, .. } = measure(
            game,
            &model,
            ours,
            (args.time_ms, args.opponent_time_ms),
            args.matches,
            args.seed,
            args.threads,
        )?;
        crate::arena_cmd::print_report(&report);
        let pct = 100.0 * report.points_a / f64::from(report.matches.max(1));
        let _ = writeln!(
            rows,
            "| {} | {} | {} ms / {} ms | {} | {} | **{pct:.1}%** ({} W, {} D, {} L) | {} |",
            match ours {
                Ours::Net => format!("network alone ({NETWORK_ALONE})"),
                Ours::Mixed => format!("mixed leaf ({})", p.mixed),
                Ours::Searcher => "searcher with the network at its leaves".into(),
            },
            opponent,
            ms,
            opp_ms,
            args.seed,
            report.matches,
            report.wins,
            report.draws,
            report.losses,
            elo_with_interval(&report),
        );
        let _ = writeln!(
            commands,
            "zeroplay arena --game {} -n {} -j {} --opening-plies {} --seed {} \\\n    -a {a} \\\n    -b {opponent}",
            game, args.matches, args.threads, p.opening_plies, args.seed
        );
    }
    println!(
        "\n| our agent | opponent | time (ours / theirs) | seed | matches | our points | Elo (95% interval) |"
    );
    println!("|---|---|---|---|---|---|---|");
    print!("{rows}");
    println!("\n```sh\n{commands}```");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_banqi_has_a_searcher_that_plays_the_network() {
        assert_eq!(Ours::parse("searcher").unwrap(), Ours::Searcher);
        assert!(Ours::parse("alone").unwrap_err().to_string().contains("net (the network alone)"));
        let nowhere = std::path::Path::new("no-such-model.safetensors");
        let e = measure(GameKind::BattleNumber, nowhere, Ours::Searcher, (None, None), 1, 1, 1);
        assert!(e.err().unwrap().to_string().contains("has no searcher"));
        assert_eq!(protocol(GameKind::Banqi).searcher, Some("banqi-ab:time={ms}ms"));
    }
}
