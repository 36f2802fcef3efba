//! [`HotTier`]: vectors in RAM, one contiguous block per project, bounded capacity.

use crate::sync::RecoverRw as _;
use std::collections::HashMap;
use std::sync::RwLock;

use hdv::{Block, Dim, HvRef, Hypervector, WordBuf};

use super::error::{StoreError, StoreResult};
use super::{Hit, ProjectId, SearchRequest, VectorId, VectorTier, scan_block};

#[derive(Debug, Default)]
struct HotBlock {
    /// The project's vectors back to back (huge pages once large: a query scans it whole).
    words: WordBuf,
    ids: Vec<VectorId>,
    slots: HashMap<VectorId, usize>,
}

/// The RAM tier: each project's vectors are one contiguous block, so the `hdv` block scan
/// runs over them directly. Capacity counts vectors across all projects. Deleting moves
/// the last vector into the freed slot (O(D)), keeping the block dense.
#[derive(Debug)]
pub struct HotTier {
    dim: Dim,
    capacity: usize,
    projects: RwLock<HashMap<ProjectId, HotBlock>>,
}

impl HotTier {
    /// An empty hot tier holding at most `capacity` vectors of dimension `dim`.
    pub fn new(dim: Dim, capacity: usize) -> Self {
        Self {
            dim,
            capacity,
            projects: RwLock::new(HashMap::new()),
        }
    }

    /// The capacity in vectors.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Vectors held across all projects.
    pub fn total_len(&self) -> usize {
        self.projects.reading().values().map(|b| b.ids.len()).sum()
    }
}

impl VectorTier for HotTier {
    fn name(&self) -> &'static str {
        "hot"
    }

    fn dim(&self) -> Dim {
        self.dim
    }

    fn insert_batch(
        &self,
        project: &ProjectId,
        items: &[(VectorId, HvRef<'_>)],
    ) -> StoreResult<()> {
        super::validate_batch(self.dim, project, items)?;
        let mut projects = self.projects.writing();
        let total: usize = projects.values().map(|b| b.ids.len()).sum();
        if total + items.len() > self.capacity {
            return Err(StoreError::Full {
                tier: "hot",
                capacity: self.capacity,
            });
        }
        let block = projects.entry(project.clone()).or_default();
        if let Some((id, _)) = items.iter().find(|(id, _)| block.slots.contains_key(id)) {
            return Err(StoreError::DuplicateId {
                project: project.clone(),
                id: *id,
            });
        }
        for (id, v) in items {
            block.slots.insert(*id, block.ids.len());
            block.ids.push(*id);
            block.words.extend_from_slice(v.words());
        }
        Ok(())
    }

    fn get(&self, project: &ProjectId, id: VectorId) -> StoreResult<Option<Hypervector>> {
        let projects = self.projects.reading();
        let Some(block) = projects.get(project) else {
            return Ok(None);
        };
        let w = self.dim.words();
        Ok(block.slots.get(&id).map(|&s| {
            Hypervector::from_words(block.words[s * w..(s + 1) * w].to_vec()).expect("non-empty")
        }))
    }

    fn delete(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool> {
        let mut projects = self.projects.writing();
        let Some(block) = projects.get_mut(project) else {
            return Ok(false);
        };
        let Some(slot) = block.slots.remove(&id) else {
            return Ok(false);
        };
        let w = self.dim.words();
        let last = block.ids.len() - 1;
        if slot != last {
            block.words.copy_within(last * w..(last + 1) * w, slot * w);
            let moved = block.ids[last];
            block.ids[slot] = moved;
            block.slots.insert(moved, slot);
        }
        block.ids.pop();
        block.words.truncate(last * w);
        if block.ids.is_empty() {
            projects.remove(project);
        }
        Ok(true)
    }

    fn search(&self, project: &ProjectId, request: &SearchRequest<'_>) -> StoreResult<Vec<Hit>> {
        super::validate_query(self.dim, request)?;
        let kernel = hdv::kernels::try_active()?;
        let projects = self.projects.reading();
        let Some(block) = projects.get(project) else {
            return Ok(Vec::new());
        };
        let view = Block::new(&block.words, self.dim)?;
        let mut top = Vec::new();
        scan_block(
            kernel,
            &view,
            request,
            |i| block.ids[i],
            |_| false,
            &mut top,
        );
        Ok(top)
    }

    fn len(&self, project: &ProjectId) -> usize {
        self.projects
            .reading()
            .get(project)
            .map_or(0, |b| b.ids.len())
    }

    fn projects(&self) -> Vec<ProjectId> {
        let mut v: Vec<ProjectId> = self.projects.reading().keys().cloned().collect();
        v.sort();
        v
    }

    fn ids(&self, project: &ProjectId) -> Vec<VectorId> {
        let mut ids = self
            .projects
            .reading()
            .get(project)
            .map(|b| b.ids.clone())
            .unwrap_or_default();
        ids.sort();
        ids
    }

    fn drop_project(&self, project: &ProjectId) -> StoreResult<usize> {
        Ok(self
            .projects
            .writing()
            .remove(project)
            .map_or(0, |b| b.ids.len()))
    }

    fn flush(&self) -> StoreResult<()> {
        Ok(())
    }
}
