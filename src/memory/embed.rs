//! Semantic vectors on the facade: each observation's embedding (the caller's own, or the
//! static model's) projected to bits, the per-project semantic spaces, and the background
//! embedder of a sentence model.

use super::*;

/// Events the background embedder reads and stores per transaction.
pub const EMBED_BATCH: usize = 64;

/// How long the background embedder sleeps when nothing is queued.
const EMBED_IDLE: std::time::Duration = std::time::Duration::from_millis(200);

/// What [`Memory::embed_pending`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EmbedProgress {
    /// Queued events taken (embedded, or dropped for a dimension conflict).
    pub embedded: usize,
    /// Events still queued (of the project asked about; of every project, 0 or 1 for
    /// "none" or "some").
    pub left: u64,
}

impl Memory {
    /// The semantic vector of each event: its caller-supplied embedding, else the static
    /// model's embedding of its content (none without a model; a sentence model's comes
    /// later, from [`embed_pending`](Self::embed_pending)), projected to bits, with
    /// the embedding's dimensions. Every embedding of a project must have the dimensions
    /// of the project's semantic space.
    ///
    /// # Errors
    /// `embedding` invalid: empty, non-finite, or of another dimension than the project's.
    pub(super) fn semantic_bits(
        &self,
        events: &[NewEvent],
    ) -> Result<Vec<Option<(usize, Hypervector)>>> {
        let mut dims: HashMap<&ProjectId, usize> = HashMap::new();
        for e in events {
            let input = match (&e.embedding, self.embedder.model_dim()) {
                (Some(v), _) => v.len(),
                // A deferred model's dimensions are checked when it embeds.
                (None, Some(_)) if self.embedder.deferred() => continue,
                (None, Some(d)) => d,
                (None, None) => continue,
            };
            let have = match dims.get(&e.project) {
                Some(&d) => Some(d),
                None => {
                    let space = self.space(&e.project)?;
                    let d = space.reading().input;
                    (d > 0).then_some(d)
                }
            };
            if let Some(have) = have
                && have != input
            {
                return Err(crate::ledger::LedgerError::Invalid {
                    what: "embedding",
                    reason: format!(
                        "has {input} dimensions; the semantic space of project `{}` holds {have}-dimensional embeddings",
                        e.project
                    ),
                }
                .into());
            }
            dims.insert(&e.project, input);
        }
        events
            .par_iter()
            .map(|e| {
                let embedding = match &e.embedding {
                    Some(v) => Some(std::borrow::Cow::Borrowed(v.as_slice())),
                    None => self
                        .embedder
                        .embed_inline(&e.content)
                        .map(std::borrow::Cow::Owned),
                };
                match embedding {
                    Some(v) => self
                        .embedder
                        .project(&v)
                        .map(|bits| Some((v.len(), bits)))
                        .map_err(|err| {
                            crate::ledger::LedgerError::Invalid {
                                what: "embedding",
                                reason: err.to_string(),
                            }
                            .into()
                        }),
                    None => Ok(None),
                }
            })
            .collect()
    }

    /// Adds to `space` the semantic vectors of `project` the ledger holds after the
    /// space's newest event (all of them for an empty space). Vectors of another
    /// projection size (a changed profile) are skipped.
    pub(super) fn extend_space(
        &self,
        project: &ProjectId,
        space: &mut crate::semantic::Space,
    ) -> Result<()> {
        let rows = self
            .ledger
            .semantic_vectors_after(project, EventId(space.last_id))?;
        self.take_in(space, rows);
        Ok(())
    }

    /// Adds stored semantic vectors (`(event, embedding dimensions, bits)`) to `space`;
    /// one of another dimension than the embedder's is left out.
    fn take_in(&self, space: &mut crate::semantic::Space, rows: Vec<(EventId, u32, Vec<u8>)>) {
        let dim = self.embedder.bits();
        for (id, input, bytes) in rows {
            let words: Vec<u64> = bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            if let Ok(v) = Hypervector::from_words(words)
                && v.dim() == dim
            {
                space.push(id.0, input as usize, &v);
            }
        }
    }

    /// A process following other writers of `project` (a node of a shared ledger, a view)
    /// takes in the sentence-model vectors their background workers stored since it last
    /// looked. Those come late and in any order: a worker embeds the oldest queued events,
    /// which may be older than what this process's space holds already (its own worker
    /// did a later batch, or the caller embedded a later event). So when the project's
    /// embedding queue or its newest indexed event moved since the last look, the vectors
    /// after the space's newest are read as usual, and those of every indexed event at or
    /// below it that the space lacks. Without a sentence model (nothing is embedded late),
    /// or before the space is loaded (its load reads them all), there is nothing to do.
    ///
    /// # Errors
    /// The ledger's failures.
    pub(super) fn follow_embeddings(
        &self,
        project: &ProjectId,
        text: &RwLock<crate::index::lexical::ProjectText>,
    ) -> Result<()> {
        if !self.embedder.deferred() {
            return Ok(());
        }
        let Some(space) = self.spaces.reading().get(project).cloned() else {
            return Ok(());
        };
        // The queue is read before the vectors: a worker storing after this read changes
        // it, so the next look reads again.
        let now = (
            self.ledger.semantic_backlog(project)?,
            text.reading().last_id,
        );
        if space.reading().followed == Some(now) {
            return Ok(());
        }
        let mut space = space.writing();
        self.extend_space(project, &mut space)?;
        let lacking: Vec<EventId> = text
            .reading()
            .postings
            .ids()
            .iter()
            .filter(|&&id| id <= space.last_id && !space.contains(id))
            .map(|&id| EventId(id))
            .collect();
        let rows = self.ledger.semantic_vectors_of(project, &lacking)?;
        self.take_in(&mut space, rows);
        space.followed = Some(now);
        Ok(())
    }

    /// The semantic space of `project`, loaded from the ledger on first use.
    pub(super) fn space(&self, project: &ProjectId) -> Result<Arc<RwLock<crate::semantic::Space>>> {
        if let Some(s) = self.spaces.reading().get(project) {
            return Ok(s.clone());
        }
        let mut space = crate::semantic::Space::default();
        self.extend_space(project, &mut space)?;
        let mut spaces = self.spaces.writing();
        Ok(spaces
            .entry(project.clone())
            .or_insert_with(|| Arc::new(RwLock::new(space)))
            .clone())
    }

    /// Embeds events queued for the sentence model (of `project`, or of every project),
    /// oldest first, in batches of [`EMBED_BATCH`], until `limit` are done, the queue is
    /// empty or `deadline` passes (checked between batches): stores their vectors (one
    /// transaction per batch) and adds them to the loaded semantic spaces. An event whose
    /// project's space holds embeddings of other dimensions (the caller's own) is taken
    /// off the queue without a vector, with a warning. Without a sentence model there is
    /// nothing to do.
    ///
    /// # Errors
    /// `read_only` for a view; SQLite errors (the batch stays queued).
    pub fn embed_pending(
        &self,
        project: Option<&ProjectId>,
        limit: usize,
        deadline: Option<std::time::Instant>,
    ) -> Result<EmbedProgress> {
        let mut progress = EmbedProgress::default();
        if !self.embedder.deferred() || limit == 0 {
            return Ok(progress);
        }
        self.writable()?;
        while progress.embedded < limit {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                break;
            }
            let batch = self
                .ledger
                .semantic_pending(project, EMBED_BATCH.min(limit - progress.embedded))?;
            if batch.is_empty() {
                break;
            }
            let texts: Vec<(Option<&str>, &str)> = batch
                .iter()
                .map(|e| (e.speaker.as_deref(), e.content.as_str()))
                .collect();
            let embeddings = self.embedder.embed_documents(&texts);
            let mut done = Vec::with_capacity(batch.len());
            let mut bits = HashMap::new();
            for (e, v) in batch.iter().zip(&embeddings) {
                let space = self.space(&e.project)?;
                let input = space.reading().input;
                if input != 0 && input != v.len() {
                    tracing::warn!(
                        project = e.project.as_str(),
                        event = e.id.0,
                        space = input,
                        model = v.len(),
                        "event left without a semantic vector: the project's space holds embeddings of other dimensions"
                    );
                    done.push((e.clone(), None));
                    continue;
                }
                let hv = self.embedder.project(v).map_err(|err| {
                    crate::ledger::LedgerError::Invalid {
                        what: "embedding",
                        reason: err.to_string(),
                    }
                })?;
                let bytes = hv.words().iter().flat_map(|w| w.to_le_bytes()).collect();
                done.push((e.clone(), Some((v.len() as u32, bytes))));
                bits.insert(e.id.0, (e.project.clone(), v.len(), hv));
            }
            // Under the append lock, so the spaces take the vectors in event order.
            let _append = self.append_lock.locked();
            let stored = self.ledger.store_semantic(&done)?;
            let spaces = self.spaces.reading();
            for id in &stored {
                if let Some((p, input, hv)) = bits.get(&id.0)
                    && let Some(space) = spaces.get(p)
                {
                    space.writing().push(id.0, *input, hv);
                }
            }
            progress.embedded += batch.len();
        }
        progress.left = match project {
            Some(p) => self.ledger.semantic_backlog(p)?,
            None => self.ledger.semantic_pending(None, 1)?.len() as u64,
        };
        Ok(progress)
    }

    /// Starts a thread that embeds the events queued for the sentence model as they come
    /// ([`embed_pending`](Self::embed_pending)), and ends when the memory is dropped. A
    /// server starts it; without a sentence model, or on a view, it starts nothing.
    pub fn spawn_embedder(self: &Arc<Self>) {
        if !self.embedder.deferred() || self.read_only {
            return;
        }
        let memory = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("hypermem-embedder".to_owned())
            .spawn(move || {
                loop {
                    let Some(m) = memory.upgrade() else { return };
                    let idle = match m.embed_pending(None, EMBED_BATCH, None) {
                        Ok(p) => p.embedded == 0,
                        Err(e) => {
                            tracing::warn!(error = %e, "background embedding failed; retrying");
                            true
                        }
                    };
                    drop(m);
                    if idle {
                        std::thread::sleep(EMBED_IDLE);
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "background embedder not started; pulse embeds instead");
        }
    }
}
