//! What a network has learnt, position by position: the losses of each head, the value's
//! calibration by game phase (predicted expected score against the actual result), and how
//! often the policy's favourite is the search's most-visited move.
//!
//! The pipeline writes [`Diagnosis::svg`] next to each round's ratings (`diagnostics.svg`) for
//! the candidate on held-out games; `zeroplay diagnose` draws it for any model and data.

use std::fmt::Write;

use burn::prelude::*;
use burn::tensor::activation;
use engine::Features;
use model::ValueNet;
use serde::Serialize;

use crate::data::Sample;
use crate::train::{Losses, TrainSettings, evaluate_net_with};

/// Calibration bins per phase (of the predicted expected score, `[0, 1]`).
pub const BINS: usize = 10;

/// One calibration bin.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Bin {
    /// Positions whose predicted expected score fell in this bin.
    pub n: u64,
    /// Their mean predicted expected score (`P(win) + P(draw) / 2`, the mover's).
    pub predicted: f64,
    /// Their mean actual score (1 win, 0.5 draw, 0 loss, the mover's).
    pub actual: f64,
}

/// The diagnosis of one game phase (a range of plies).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Phase {
    /// First ply of the phase.
    pub from_ply: u32,
    /// Last ply of the phase.
    pub to_ply: u32,
    /// Positions.
    pub n: u64,
    /// Calibration bins, [`BINS`] of them, by predicted expected score.
    pub bins: Vec<Bin>,
    /// Expected calibration error: the count-weighted mean |predicted − actual| over the bins.
    pub ece: f64,
    /// Brier score of the expected score against the result.
    pub brier: f64,
    /// Mean squared difference between the network's value (`2·E − 1`) and the search's
    /// root value `q`, where the move was searched.
    pub q_mse: f64,
    /// Share of fully searched positions where the policy's favourite among the visited
    /// moves is the search's most-visited move (none: no policy head or no such position).
    pub policy_top1: Option<f64>,
}

/// A network's diagnosis on some positions.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Diagnosis {
    /// Mean losses of each head.
    pub losses: Losses,
    /// All positions as one phase.
    pub all: Phase,
    /// Three phases of equal ply ranges (opening, middle, end).
    pub phases: Vec<Phase>,
}

#[derive(Default)]
struct Acc {
    bins: [(u64, f64, f64); BINS],
    n: u64,
    brier: f64,
    q: (u64, f64),
    top1: (u64, u64),
}

impl Acc {
    fn phase(&self, from_ply: u32, to_ply: u32) -> Phase {
        let bins: Vec<Bin> = self
            .bins
            .iter()
            .map(|&(n, p, a)| {
                let k = n.max(1) as f64;
                Bin { n, predicted: p / k, actual: a / k }
            })
            .collect();
        let n = self.n.max(1) as f64;
        Phase {
            from_ply,
            to_ply,
            n: self.n,
            ece: bins.iter().map(|b| b.n as f64 * (b.predicted - b.actual).abs()).sum::<f64>() / n,
            bins,
            brier: self.brier / n,
            q_mse: self.q.1 / self.q.0.max(1) as f64,
            policy_top1: (self.top1.1 > 0).then(|| self.top1.0 as f64 / self.top1.1 as f64),
        }
    }
}

/// Diagnoses `net` on `samples` (game `G`; `s` gives the loss settings and batch size).
pub fn diagnose<G: Features>(
    net: &ValueNet,
    device: &Device,
    samples: &[&Sample],
    s: &TrainSettings,
) -> Diagnosis {
    let max_ply = samples.iter().map(|x| x.ply).max().unwrap_or(0);
    let third = max_ply / 3 + 1;
    let mut all = Acc::default();
    let mut parts: [Acc; 3] = Default::default();
    let p = G::POLICY_LEN;
    let losses = evaluate_net_with::<G>(net, device, samples, s, &mut |chunk, out| {
        let wdl: Vec<f32> =
            activation::softmax(out.wdl_logits.clone(), 1).into_data().try_to_vec().expect("f32 tensor");
        let logits: Vec<f32> = if p > 0 {
            out.policy_logits.clone().into_data().try_to_vec().expect("f32 tensor")
        } else {
            Vec::new()
        };
        for (i, x) in chunk.iter().enumerate() {
            let e = f64::from(wdl[i * 3]) + 0.5 * f64::from(wdl[i * 3 + 1]);
            let actual = [1.0, 0.5, 0.0][x.wdl as usize];
            let bin = ((e * BINS as f64) as usize).min(BINS - 1);
            let top = (p > 0 && !x.policy.is_empty()).then(|| {
                let search = x.policy.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|a| a.0);
                let net = x
                    .policy
                    .iter()
                    .max_by(|a, b| logits[i * p + a.0 as usize].total_cmp(&logits[i * p + b.0 as usize]));
                search == net.map(|a| a.0)
            });
            for acc in [&mut all, &mut parts[((x.ply / third) as usize).min(2)]] {
                acc.n += 1;
                acc.bins[bin].0 += 1;
                acc.bins[bin].1 += e;
                acc.bins[bin].2 += actual;
                acc.brier += (e - actual).powi(2);
                if let Some(q) = x.q {
                    acc.q.0 += 1;
                    acc.q.1 += (2.0 * e - 1.0 - f64::from(q)).powi(2);
                }
                if let Some(hit) = top {
                    acc.top1.1 += 1;
                    acc.top1.0 += u64::from(hit);
                }
            }
        }
    });
    Diagnosis {
        losses,
        all: all.phase(0, max_ply),
        phases: (0..3u32)
            .map(|k| parts[k as usize].phase(k * third, ((k + 1) * third - 1).min(max_ply)))
            .collect(),
    }
}

impl Diagnosis {
    /// The report as text: one line per phase.
    pub fn table(&self) -> String {
        let mut s = String::from("phase (plies)   positions   ECE     Brier   (v-q)^2  policy top-1\n");
        for (name, p) in std::iter::once(("all", &self.all))
            .chain(["opening", "middle", "end"].into_iter().zip(&self.phases))
        {
            let _ = writeln!(
                s,
                "{:<7} {:>3}-{:<3}  {:>9}   {:.3}   {:.3}   {:.3}    {}",
                name,
                p.from_ply,
                p.to_ply,
                p.n,
                p.ece,
                p.brier,
                p.q_mse,
                p.policy_top1.map_or_else(|| "-".into(), |t| format!("{:.1}%", 100.0 * t)),
            );
        }
        s
    }

    /// Reliability diagrams, one per phase (predicted expected score across, actual result up;
    /// the diagonal is perfect calibration; each dot's area is its bin's count), with the
    /// losses of each head for `train` and these positions side by side.
    pub fn svg(&self, title: &str, train: Option<&Losses>) -> String {
        let (pw, gap, m) = (200.0, 30.0, 40.0);
        let w = m + 4.0 * (pw + gap);
        let h = 330.0;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="18" text-anchor="middle" font-size="14">{}</text>"##,
            w / 2.0,
            xml(title)
        );
        let names = ["all", "opening", "middle", "end"];
        for (k, p) in std::iter::once(&self.all).chain(&self.phases).enumerate() {
            let x0 = m + k as f64 * (pw + gap);
            let y0 = 40.0;
            let max_n = p.bins.iter().map(|b| b.n).max().unwrap_or(1).max(1) as f64;
            let _ = writeln!(
                s,
                r##"<g><rect x="{x0}" y="{y0}" width="{pw}" height="{pw}" fill="none" stroke="black"/>
<line x1="{x0}" y1="{}" x2="{}" y2="{y0}" stroke="#999" stroke-dasharray="4 3"/>
<text x="{}" y="{}" text-anchor="middle">{} (plies {}-{}), {} positions</text>
<text x="{}" y="{}" text-anchor="middle">predicted score</text>
<text x="{}" y="{}" text-anchor="middle">ECE {:.3} · Brier {:.3}</text>
<text x="{}" y="{}" text-anchor="middle">(v−q)² {:.3} · policy top-1 {}</text>"##,
                y0 + pw,
                x0 + pw,
                x0 + pw / 2.0,
                y0 - 6.0,
                names[k],
                p.from_ply,
                p.to_ply,
                p.n,
                x0 + pw / 2.0,
                y0 + pw + 14.0,
                x0 + pw / 2.0,
                y0 + pw + 30.0,
                p.ece,
                p.brier,
                x0 + pw / 2.0,
                y0 + pw + 44.0,
                p.q_mse,
                p.policy_top1.map_or_else(|| "-".into(), |t| format!("{:.1}%", 100.0 * t)),
            );
            if k == 0 {
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">actual score</text>"##,
                    x0 - 10.0,
                    y0 + pw / 2.0,
                    x0 - 10.0,
                    y0 + pw / 2.0
                );
            }
            let pts: Vec<String> = p
                .bins
                .iter()
                .filter(|b| b.n > 0)
                .map(|b| format!("{:.1},{:.1}", x0 + pw * b.predicted, y0 + pw * (1.0 - b.actual)))
                .collect();
            if pts.len() > 1 {
                let _ =
                    writeln!(s, r##"<polyline points="{}" fill="none" stroke="#1f77b4"/>"##, pts.join(" "));
            }
            for b in p.bins.iter().filter(|b| b.n > 0) {
                let _ = writeln!(
                    s,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="{:.1}" fill="#1f77b4" fill-opacity="0.6"><title>{} positions: predicted {:.3}, actual {:.3}</title></circle>"##,
                    x0 + pw * b.predicted,
                    y0 + pw * (1.0 - b.actual),
                    2.0 + 6.0 * (b.n as f64 / max_n).sqrt(),
                    b.n,
                    b.predicted,
                    b.actual
                );
            }
            s.push_str("</g>\n");
        }
        let l = &self.losses;
        let line = match train {
            Some(t) => format!(
                "losses, training / these positions: win-draw-loss {:.3} / {:.3} · margin {:.3} / {:.3} · policy {:.3} / {:.3} · total {:.3} / {:.3}",
                t.value, l.value, t.margin, l.margin, t.policy, l.policy, t.total, l.total
            ),
            None => format!(
                "losses: win-draw-loss {:.3} · margin {:.3} · policy {:.3} · total {:.3}",
                l.value, l.margin, l.policy, l.total
            ),
        };
        let _ = writeln!(s, r##"<text x="{m}" y="{}">{}</text>"##, h - 12.0, xml(&line));
        s.push_str("</svg>\n");
        s
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibrated_prediction_lies_on_the_diagonal_and_the_svg_draws_every_phase() {
        let mut acc = Acc::default();
        // Ten positions predicted 0.75: three wins and one loss in four, exactly calibrated.
        for i in 0..8 {
            acc.n += 1;
            acc.bins[7].0 += 1;
            acc.bins[7].1 += 0.75;
            let actual = if i % 4 == 3 { 0.0 } else { 1.0 };
            acc.bins[7].2 += actual;
            acc.brier += (0.75f64 - actual).powi(2);
        }
        let p = acc.phase(0, 10);
        assert!(p.ece.abs() < 1e-12, "{p:?}");
        assert!((p.brier - 0.1875).abs() < 1e-12);
        assert_eq!(p.policy_top1, None);
        let d = Diagnosis { all: p.clone(), phases: vec![p.clone(), p.clone(), p], ..Diagnosis::default() };
        let svg = d.svg("test <run>", Some(&Losses::default()));
        assert!(svg.starts_with("<svg") && svg.contains("test &lt;run&gt;"));
        assert_eq!(svg.matches("<circle").count(), 4, "one filled bin per panel");
        assert!(d.table().lines().count() == 5);
    }
}
