//! `docs/model-format.md`, generated from the code: the metadata keys and values from
//! [`model::ModelMeta`]'s games, the forward pass [`crate::train_cmd`] documents in every
//! export, and each game's feature layout from its encoder's `LAYOUT_DOC`. A unit test fails
//! when the file in the repository differs; `ZEROPLAY_BLESS=1 cargo test -p zeroplay
//! model_format` rewrites it.

use engine::Features;
use engine::banqi::Banqi;
use engine::battlenumber::BattleNumber;
use engine::trigolden::TriGolden;

/// One game's row of figures.
struct GameFigures {
    title: &'static str,
    name: &'static str,
    feature_version: u32,
    feature_len: usize,
    policy_len: usize,
    ownership_len: usize,
    layout: &'static str,
}

fn figures<G: Features>(title: &'static str, layout: &'static str) -> GameFigures {
    GameFigures {
        title,
        name: G::NAME,
        feature_version: G::FEATURE_VERSION,
        feature_len: G::FEATURE_LEN,
        policy_len: G::POLICY_LEN,
        ownership_len: G::OWNERSHIP_LEN,
        layout,
    }
}

fn games() -> [GameFigures; 3] {
    [
        figures::<BattleNumber>("Battle Number", engine::battlenumber::features::LAYOUT_DOC),
        figures::<Banqi>("Banqi", engine::banqi::features::LAYOUT_DOC),
        figures::<TriGolden>("TriGolden", engine::trigolden::features::LAYOUT_DOC),
    ]
}

/// The text of `docs/model-format.md`.
pub fn model_format_md() -> String {
    let games = games();
    let per = |f: &dyn Fn(&GameFigures) -> String| {
        games.iter().map(|g| format!("{}: {}", g.title, f(g))).collect::<Vec<_>>().join(", ")
    };
    let mut md = String::from(
        "# The zeroplay model file

<!-- Generated from the code (src/model_doc.rs and each game's engine/src/*/features.md); a
test fails when it differs. Rewrite it with: ZEROPLAY_BLESS=1 cargo test -p zeroplay model_format -->

A model is one [safetensors](https://github.com/huggingface/safetensors) file: the weights
as named float32 tensors, and everything needed to use them in the file's metadata. Any
safetensors reader opens it (`safetensors.numpy.load_file`, `safe_open(...).metadata()`);
`zeroplay export MODEL --out DIR` writes the file with `model.json` (metadata and the name,
dtype and shape of every tensor) and `MODEL.md` (the forward pass, for that file).
`scripts/check_model.py` is a complete numpy implementation, checked against zeroplay's own
outputs by `tests/model_numpy.rs`.

## Metadata (`__metadata__`)

| key | value |
|---|---|
",
    );
    md.push_str(&format!("| `zeroplay.format` | `{}` |\n", model::file::FORMAT));
    md.push_str(&format!(
        "| `zeroplay.game` | {} |\n",
        games.iter().map(|g| format!("`{}`", g.name)).collect::<Vec<_>>().join(", ")
    ));
    md.push_str(&format!(
        "| `zeroplay.feature_version` | the engine's feature encoding version ({}) |\n",
        per(&|g| g.feature_version.to_string())
    ));
    md.push_str(&format!(
        "| `zeroplay.feature_len` | input width F ({}) |\n",
        per(&|g| g.feature_len.to_string())
    ));
    md.push_str(&format!(
        "| `zeroplay.policy_len` | policy size P ({}; 0: no policy head) |\n",
        per(&|g| g.policy_len.to_string())
    ));
    md.push_str(&format!(
        "| `zeroplay.ownership_len` | size O of the auxiliary ownership head, trained with \
         `ownership_weight > 0` ({}; 0 or absent: no head) |\n",
        per(&|g| g.ownership_len.to_string())
    ));
    md.push_str(
        "| `zeroplay.net` | JSON `{\"hidden\": H, \"blocks\": B}` |
| `zeroplay.margin_scale` | the margin output times this is points (default 10) |
| `zeroplay.info` | JSON provenance: `steps`, `samples`, `parent` (model version trained from), `created_unix`, `note` |

Loaders refuse a file whose format, game or feature version differs from the engine's, whose
tensors are missing, extra, not float32 or of the wrong shape, or that is not safetensors at
all.

## Tensors and the forward pass

Weights are stored `[in, out]`, biases `[out]`; a layer is `x · W + b`. The policy layer is
`max(P, 1)` wide (TriGolden's is a 1-wide placeholder that nothing reads).

| tensor | shape |
|---|---|
| `input.weight`, `input.bias` | `[F, H]`, `[H]` |
| `blocks.{i}.a.weight`, `.bias` (i < B) | `[H, H]`, `[H]` |
| `blocks.{i}.b.weight`, `.bias` | `[H, H]`, `[H]` |
| `wdl.weight`, `wdl.bias` | `[H, 3]`, `[3]` |
| `margin.weight`, `margin.bias` | `[H, 1]`, `[1]` |
| `policy.weight`, `policy.bias` | `[H, max(P, 1)]`, `[max(P, 1)]` |
| `ownership.weight`, `ownership.bias` (only where O > 0) | `[H, O]`, `[O]` |

x is `[N, F]`, the features from the mover's view:

```
",
    );
    md.push_str(crate::train_cmd::FORWARD);
    md.push_str(
        "    margin = (h · margin.weight + margin.bias) · margin_scale   # final score difference, mover's view, points
    policy = h · policy.weight + policy.bias              # logits over the fixed action index (P > 0)
    owner  = tanh(h · ownership.weight + ownership.bias)  # (O > 0) who holds each square at the end: 1 mover, -1 opponent
```

The ownership head is a training signal (KataGo's ownership target): search never reads it,
and a reader may ignore its tensors. zeroplay's search value (mover's view) is
`(1 − mix)·(P(win) − P(loss)) + mix·tanh(margin / (2·score_scale))`, with mix 0.5 and
score_scale 3 by default. Policy logits are masked to the legal actions before the softmax.
",
    );
    for g in &games {
        md.push_str(&format!("\n## {} input encoding\n\n", g.title));
        // The encoders' own headings, one level down.
        for line in g.layout.lines() {
            if line.starts_with('#') {
                md.push_str("##");
            }
            md.push_str(line);
            md.push('\n');
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_format_doc_is_generated_from_the_code() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/model-format.md");
        let want = model_format_md();
        if std::env::var_os("ZEROPLAY_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap();
        assert!(
            have == want,
            "docs/model-format.md differs from the code's encoders; rewrite it with \
             ZEROPLAY_BLESS=1 cargo test -p zeroplay model_format"
        );
        for g in games() {
            assert!(want.contains(&format!("{}: {}", g.title, g.feature_len)), "{}", g.title);
        }
    }
}
