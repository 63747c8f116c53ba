//! The rating plot: every model's Elo (one fit of all the run's games, the user's AI at 0) by
//! training round, with its 95% interval; promoted models filled, refused ones hollow; the
//! fixed anchors as dashed lines. Plain SVG, no dependencies.

use std::fmt::Write;

use crate::ratings::{Rated, RatingEntry};

/// Renders the history as an SVG document; `rated` is the fit, whose players that are not
/// models (`round N`) are drawn as anchors.
pub fn ratings_svg(history: &[RatingEntry], rated: &[Rated]) -> String {
    let anchors: Vec<&Rated> = rated.iter().filter(|r| !r.name.starts_with("round ")).collect();
    let (w, h, ml, mr, mt, mb) = (720.0, 360.0, 60.0, 20.0, 30.0, 40.0);
    let pw = w - ml - mr;
    let ph = h - mt - mb;
    let mut lo = history.iter().map(|e| e.elo_lo).chain(anchors.iter().map(|a| a.elo)).fold(0.0f64, f64::min);
    let mut hi = history.iter().map(|e| e.elo_hi).chain(anchors.iter().map(|a| a.elo)).fold(0.0f64, f64::max);
    lo = (lo / 100.0).floor() * 100.0 - 50.0;
    hi = (hi / 100.0).ceil() * 100.0 + 50.0;
    let rounds = history.iter().map(|e| e.round).max().unwrap_or(1).max(1) as f64;
    let x = |r: u64| ml + pw * (r as f64 / rounds);
    let y = |e: f64| mt + ph * (1.0 - (e - lo) / (hi - lo));
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="18" text-anchor="middle" font-size="14">Model ratings at the gate's simulation budget, not at equal time (Elo, one fit of all games; {} = 0)</text>
"##,
        w / 2.0,
        crate::ratings::zero_name(history),
    );
    for a in &anchors {
        let _ = writeln!(
            s,
            r##"<line x1="{ml}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#999" stroke-dasharray="4 3"/><text x="{}" y="{:.1}" text-anchor="end" fill="#666">{} {:+.0}</text>"##,
            y(a.elo),
            ml + pw,
            y(a.elo),
            ml + pw - 4.0,
            y(a.elo) - 3.0,
            a.name.replace('&', "&amp;").replace('<', "&lt;"),
            a.elo
        );
    }
    // Round ticks: a multiple of 50 for the step, ticks at multiples of the step.
    let step = ((hi - lo) / 6.0 / 50.0).ceil().max(1.0) * 50.0;
    let mut tick = (lo / step).ceil() * step;
    while tick <= hi {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end">{tick:.0}</text><line x1="{ml}" y1="{}" x2="{}" y2="{}" stroke="#eee"/>"##,
            ml - 6.0,
            y(tick) + 4.0,
            y(tick),
            ml + pw,
            y(tick)
        );
        tick += step;
    }
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" text-anchor="middle">training round</text><line x1="{ml}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{ml}" y1="{mt}" x2="{ml}" y2="{}" stroke="black"/>"##,
        ml + pw / 2.0,
        h - 8.0,
        mt + ph,
        ml + pw,
        mt + ph,
        mt + ph
    );
    let best: Vec<(f64, f64)> =
        history.iter().filter(|e| e.promoted).map(|e| (x(e.round), y(e.elo))).collect();
    if best.len() > 1 {
        let pts: Vec<String> = best.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
        let _ = writeln!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#1f77b4" stroke-width="2"/>"##,
            pts.join(" ")
        );
    }
    for e in history {
        let (cx, cy) = (x(e.round), y(e.elo));
        let fill = if e.promoted { "#1f77b4" } else { "white" };
        let _ = writeln!(
            s,
            r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="#1f77b4"/><circle cx="{cx:.1}" cy="{cy:.1}" r="4" fill="{fill}" stroke="#1f77b4"><title>round {} {}: {:+.0} Elo [{:+.0}, {:+.0}] vs {}</title></circle>"##,
            y(e.elo_lo),
            y(e.elo_hi),
            e.round,
            if e.promoted { "promoted" } else { "refused" },
            e.elo,
            e.elo_lo,
            e.elo_hi,
            e.opponent
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(round: u64, elo: f64, promoted: bool) -> RatingEntry {
        RatingEntry {
            round,
            file: format!("models/candidate-{round:04}.safetensors"),
            sha256: String::new(),
            version: 0,
            opponent: "rollout".into(),
            elo,
            elo_lo: elo - 80.0,
            elo_hi: elo + 80.0,
            matches: 40,
            points: 20.0,
            promoted,
            reason: String::new(),
            pending: false,
            gate_elo: 0.0,
            train_loss: 1.0,
            train_losses: Default::default(),
            validation_losses: Default::default(),
            validation_loss: 1.0,
            steps: 0,
            window: 0,
            newest_file: String::new(),
            samples_per_second: 0.0,
        }
    }

    #[test]
    fn the_run_summary_rates_a_gated_model_and_not_one_stopped_before_its_gate() {
        let stopped = RatingEntry { matches: 0, points: 0.0, ..entry(2, 0.0, false) };
        let s = crate::pipeline::summary(&[entry(1, 120.0, true), stopped], std::path::Path::new("run"));
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[1].contains("+120 [   +40,   +200]"), "{s}");
        assert!(lines[2].contains("-  (not gated)") && !lines[2].contains("[+0"), "{s}");
        // The columns after the rating line up either way.
        assert_eq!(lines[1].find("run/models"), lines[2].find("run/models"), "{s}");
    }

    #[test]
    fn the_plot_has_a_point_per_model_and_round_ticks() {
        let h = [entry(1, -300.0, false), entry(2, 80.0, true), entry(3, 270.0, true)];
        let anchors = [
            Rated { name: "rollout".into(), elo: 0.0, lo: 0.0, hi: 0.0, games: 30 },
            Rated { name: "round 2".into(), elo: 80.0, lo: 0.0, hi: 160.0, games: 30 },
            Rated { name: "mcts:sims=256,eval=rollout".into(), elo: 150.0, lo: 90.0, hi: 210.0, games: 30 },
        ];
        let svg = ratings_svg(&h, &anchors);
        assert_eq!(svg.matches("stroke-dasharray").count(), 2, "two anchors, not the model");
        assert!(svg.contains("mcts:sims=256,eval=rollout +150"));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert_eq!(svg.matches(r##"fill="white" stroke="#1f77b4""##).count(), 1, "one refused model, hollow");
        assert!(svg.contains("<polyline"), "promoted models are joined");
        for label in svg.split(r#"text-anchor="end">"#).skip(1) {
            let v: f64 = label.split('<').next().unwrap().parse().unwrap();
            assert_eq!(v % 50.0, 0.0, "tick {v}");
        }
    }
}
