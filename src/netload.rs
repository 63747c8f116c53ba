//! Loading trained networks for agents named by spec strings (`eval=net,model=PATH`).

use std::sync::Arc;

use engine::Features;
use engine::agent::NetLoader;
use engine::eval::Evaluator;
use model::{NetEvaluator, UtilitySettings};

/// A loader for [`engine::agent::AgentSpec::build_with`]: reads and checks the model file
/// and wraps it in a [`NetEvaluator`] (inference on the searching thread, CPU backend).
pub fn loader<G: Features>() -> Box<NetLoader<'static, G>> {
    Box::new(|path: &str, mix: f32| -> Result<Arc<dyn Evaluator<G>>, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("model {path}: {e}"))?;
        let m = model::load::<G>(&bytes, &model::cpu()).map_err(|e| format!("model {path}: {e}"))?;
        Ok(Arc::new(NetEvaluator::<G>::fixed(m, UtilitySettings { margin_mix: mix, score_scale: 3.0 })))
    })
}
