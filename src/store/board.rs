//! The shared working-memory board: what a deployment's processes share of their agents'
//! working memories (the standard profile's Redis tier implements it; cognition uses it).

use hdv::Hypervector;

use super::StoreResult;
use crate::base::ProjectId;

/// One item in working memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkingItem {
    /// Caller's id (an event, a memory, a recall result).
    pub id: u64,
    /// What it is (`event`, `goal`, `recall`, ...).
    pub kind: String,
    /// Text, for prompts.
    pub content: String,
    /// Importance > 0 (higher survives longer).
    pub importance: f64,
    /// Absolute expiry time in seconds, if any.
    pub expires_at: Option<f64>,
    /// Vector, if any.
    pub vector: Option<Hypervector>,
    /// Last time it was added or touched (seconds).
    pub last_touch: f64,
}

/// Working memories shared by the processes of a deployment (the standard profile keeps
/// them in Redis), so an agent served by any process sees the same items.
pub trait WorkingBoard: Send + Sync {
    /// Runs `f` on the stored items of `agent` in `project` (empty if none) while holding
    /// the agent's lock on the board, then stores what `f` left (removing the entry when
    /// it is empty).
    ///
    /// # Errors
    /// The board is unavailable, or the lock stayed taken past its wait.
    fn update(
        &self,
        project: &ProjectId,
        agent: &str,
        f: &mut dyn FnMut(&mut Vec<WorkingItem>),
    ) -> StoreResult<()>;

    /// Agents of `project` with stored items.
    ///
    /// # Errors
    /// The board is unavailable.
    fn agents(&self, project: &ProjectId) -> StoreResult<Vec<String>>;
}
