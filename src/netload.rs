//! Loading trained networks for agents named by spec strings (`eval=net,model=PATH`).

use std::sync::Arc;

use engine::Features;
use engine::LeafSettings;
use engine::agent::NetLoader;
use engine::eval::Evaluator;
use model::NetSource;

/// A loader for [`engine::agent::AgentSpec::build_with`]: reads and checks the model file
/// and builds its network leaf with [`model::net_leaf`] (inference on the searching thread,
/// CPU backend).
pub fn loader<G: Features>() -> Box<NetLoader<'static, G>> {
    Box::new(|path: &str, leaf: &LeafSettings| -> Result<Arc<dyn Evaluator<G>>, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("model {path}: {e}"))?;
        let m = model::load::<G>(&bytes, &model::cpu()).map_err(|e| format!("model {path}: {e}"))?;
        Ok(model::net_leaf::<G>(NetSource::Fixed(m), leaf))
    })
}
