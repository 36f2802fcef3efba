//! Raw events: the append-only record of what happened.

use std::collections::HashMap;
use std::fmt;

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use xxhash_rust::xxh3::xxh3_128;

use super::rows::exec::{Arg, ExecExt as _, Row as ExecRow, args};
use super::{Ledger, LedgerError, LedgerResult};
use crate::base::ProjectId;

crate::base::number_id!(
    /// Identifier of a raw event: its global sequence number (ascending in ingestion order).
    EventId
);

/// An event's semantic vector as stored: `(embedding dimensions, projected bits as
/// little-endian words)`.
pub type SemanticBits = (u32, Vec<u8>);

/// An event waiting for the background embedder ([`Ledger::semantic_pending`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingEmbedding {
    /// Its project.
    pub project: ProjectId,
    /// The event.
    pub id: EventId,
    /// Who spoke it, if named.
    pub speaker: Option<String>,
    /// Its content.
    pub content: String,
}

/// An event [`Ledger::append_batch_with`] stored: its id and the event it follows in its
/// thread (without a thread, in its session), as the ledger chained it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// The new event.
    pub id: EventId,
    /// Its `prev`.
    pub prev: Option<EventId>,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Declares a string-backed enum with `as_str`, `parse` (errors name the accepted values),
/// `ALL`, `Display` and serde in snake case.
macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
            schemars::JsonSchema,
        )]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vm])* $variant),+ }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored name.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses a stored name.
            ///
            /// # Errors
            /// [`LedgerError::Invalid`] naming the accepted values.
            pub fn parse(s: &str) -> $crate::ledger::LedgerResult<Self> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err($crate::ledger::LedgerError::Invalid {
                        what: stringify!($name),
                        reason: format!("{other:?} (expected one of: {})", [$($text),+].join(", ")),
                    }),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use string_enum;

string_enum!(
    /// Who produced an event.
    Role {
        /// The human user.
        User = "user",
        /// The agent.
        Assistant = "assistant",
        /// A tool.
        Tool = "tool",
        /// The system / harness.
        System = "system",
    }
);

string_enum!(
    /// What an event is.
    EventKind {
        /// A conversational message.
        Message = "message",
        /// Something observed.
        Observation = "observation",
        /// Something done.
        Action = "action",
        /// An internal thought.
        Thought = "thought",
        /// A reward signal.
        Reward = "reward",
        /// An error.
        Error = "error",
        /// A tool invocation.
        ToolCall = "tool_call",
        /// A tool's result.
        ToolResult = "tool_result",
        /// A task description.
        Task = "task",
    }
);

string_enum!(
    /// How an event relates to its parent.
    Causality {
        /// A reply to the parent.
        RepliesTo = "replies_to",
        /// Triggered by the parent.
        TriggeredBy = "triggered_by",
        /// The result of the parent tool call.
        ToolResultFor = "tool_result_for",
    }
);

/// An event to append. Only `project`, `role`, `kind` and `content` are required.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// The project (isolation boundary).
    pub project: ProjectId,
    /// Caller's own id for the event (unique per project; re-appending it is refused).
    pub source_id: Option<String>,
    /// The agent (a field, not a boundary).
    pub agent: Option<String>,
    /// Conversation thread.
    pub thread: Option<String>,
    /// Session.
    pub session: Option<String>,
    /// Turn number within the thread.
    pub turn: Option<i64>,
    /// Who produced it.
    pub role: Role,
    /// What it is.
    pub kind: EventKind,
    /// The raw text (stored byte-exact).
    pub content: String,
    /// The event this one responds to (same project).
    pub parent: Option<EventId>,
    /// How it relates to the parent.
    pub causality: Option<Causality>,
    /// When it happened (ms since the epoch); defaults to ingestion time.
    pub created_at: Option<i64>,
    /// Source document or stream.
    pub source: Option<String>,
    /// Byte offset in the source.
    pub source_offset: Option<i64>,
    /// Byte length in the source.
    pub source_len: Option<i64>,
    /// Confidence that the recorded order is the true order (1 = certain).
    pub ordering_confidence: f64,
    /// Who spoke, by name, in a conversation of named participants (a field of its own:
    /// the content stays what was said; recall's lexical index reads it beside the text).
    pub speaker: Option<String>,
    /// A dense embedding of the content supplied by the caller (any model, one dimension
    /// per project): stored as its sign projection in the project's semantic space, not in
    /// the raw event.
    pub embedding: Option<Vec<f32>>,
}

impl NewEvent {
    /// A message-kind event with only the required fields.
    pub fn new(
        project: ProjectId,
        role: Role,
        kind: EventKind,
        content: impl Into<String>,
    ) -> Self {
        Self {
            project,
            source_id: None,
            agent: None,
            thread: None,
            session: None,
            turn: None,
            role,
            kind,
            content: content.into(),
            parent: None,
            causality: None,
            created_at: None,
            source: None,
            source_offset: None,
            source_len: None,
            ordering_confidence: 1.0,
            speaker: None,
            embedding: None,
        }
    }

    /// Sets the speaker's name.
    pub fn speaker(mut self, speaker: impl Into<String>) -> Self {
        self.speaker = Some(speaker.into());
        self
    }

    /// Sets the thread.
    pub fn thread(mut self, thread: impl Into<String>) -> Self {
        self.thread = Some(thread.into());
        self
    }

    /// Sets the session.
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Sets the agent.
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Sets the creation time (ms since the epoch).
    pub fn at(mut self, created_at: i64) -> Self {
        self.created_at = Some(created_at);
        self
    }

    /// Sets the parent and causality.
    pub fn reply_to(mut self, parent: EventId, causality: Causality) -> Self {
        self.parent = Some(parent);
        self.causality = Some(causality);
        self
    }
}

/// A stored raw event.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Event {
    /// Id = global sequence number.
    pub id: EventId,
    /// Project.
    pub project: String,
    /// Caller's id.
    pub source_id: Option<String>,
    /// Agent.
    pub agent: Option<String>,
    /// Thread and position in it (1-based).
    pub thread: Option<String>,
    /// Position in the thread.
    pub thread_seq: Option<i64>,
    /// Session.
    pub session: Option<String>,
    /// Position in the session.
    pub session_seq: Option<i64>,
    /// Turn.
    pub turn: Option<i64>,
    /// Position within the turn.
    pub turn_seq: Option<i64>,
    /// Role.
    pub role: Role,
    /// Kind.
    pub kind: EventKind,
    /// Raw content, byte-exact.
    pub content: String,
    /// XXH3-128 of the content, hex.
    pub content_hash: String,
    /// Parent event.
    pub parent: Option<EventId>,
    /// Relation to the parent.
    pub causality: Option<Causality>,
    /// Previous event of the same thread (or session, without a thread).
    pub prev: Option<EventId>,
    /// When it happened (ms).
    pub created_at: i64,
    /// When it was recorded (ms).
    pub ingested_at: i64,
    /// Source document.
    pub source: Option<String>,
    /// Offset in the source.
    pub source_offset: Option<i64>,
    /// Length in the source.
    pub source_len: Option<i64>,
    /// Ordering confidence.
    pub ordering_confidence: f64,
    /// Who spoke, by name (see [`NewEvent::speaker`]).
    pub speaker: Option<String>,
}

/// Chronological neighbours of an event (anchor excluded) plus its parent and children.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EventContext {
    /// The anchor.
    pub anchor: Event,
    /// Up to `before` earlier events of the same thread/session, oldest first.
    pub before: Vec<Event>,
    /// Up to `after` later events of the same thread/session, oldest first.
    pub after: Vec<Event>,
    /// The parent, if any.
    pub parent: Option<Event>,
    /// Events whose parent is the anchor, oldest first.
    pub children: Vec<Event>,
}

/// A full-text hit: the event and its bm25 score (lower is better, as SQLite reports it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FtsHit {
    /// The event.
    pub event: Event,
    /// bm25 (negative; more negative = more relevant).
    pub score: f64,
}

/// What derived indexes read of an event: `(id, role, content, speaker)`.
pub type EventText = (EventId, Role, String, Option<String>);

/// Ids one statement of [`Ledger::get_many`] (and of the other reads by id list) reads.
const GET_CHUNK: usize = 64;

/// The placeholders of an id list read [`GET_CHUNK`] ids at a time: always that many (a
/// short chunk repeats its last id, [`chunk_args`]), so each such statement has one text,
/// prepared once. `?1` is the project.
fn chunk_marks() -> String {
    let marks: Vec<String> = (2..2 + GET_CHUNK).map(|i| format!("?{i}")).collect();
    marks.join(", ")
}

/// The arguments of one chunk (at most [`GET_CHUNK`] ids) of a statement written with
/// [`chunk_marks`].
fn chunk_args<'a>(project: &'a ProjectId, chunk: &[EventId]) -> Vec<Arg<'a>> {
    let mut args = Vec::with_capacity(GET_CHUNK + 1);
    args.push(Arg::Text(project.as_str()));
    args.extend((0..GET_CHUNK).map(|i| Arg::from(chunk[i.min(chunk.len() - 1)].0)));
    args
}

/// The columns of an event, in [`event_of`]'s order.
pub(crate) const COLUMNS: &str = "id, project, source_id, agent, thread, thread_seq, session, session_seq, turn, \
    turn_seq, role, kind, content, content_hash, parent_id, causality, prev_id, created_at, \
    ingested_at, source, source_offset, source_len, ordering_confidence, speaker";

/// An event from a row of [`COLUMNS`] (either engine: PostgreSQL's content comes as bytes).
pub(crate) fn event_of(r: &ExecRow) -> LedgerResult<Event> {
    let role: String = r.get(10)?;
    let kind: String = r.get(11)?;
    let causality: Option<String> = r.get(15)?;
    Ok(Event {
        id: EventId(r.get(0)?),
        project: r.get(1)?,
        source_id: r.get(2)?,
        agent: r.get(3)?,
        thread: r.get(4)?,
        thread_seq: r.get(5)?,
        session: r.get(6)?,
        session_seq: r.get(7)?,
        turn: r.get(8)?,
        turn_seq: r.get(9)?,
        role: Role::parse(&role)?,
        kind: EventKind::parse(&kind)?,
        content: r.get(12)?,
        content_hash: r.get(13)?,
        parent: r.get::<Option<u64>>(14)?.map(EventId),
        causality: causality.map(|c| Causality::parse(&c)).transpose()?,
        prev: r.get::<Option<u64>>(16)?.map(EventId),
        created_at: r.get(17)?,
        ingested_at: r.get(18)?,
        source: r.get(19)?,
        source_offset: r.get(20)?,
        source_len: r.get(21)?,
        ordering_confidence: r.get(22)?,
        speaker: r.get(23)?,
    })
}

/// Refuses a batch that no backend may store, before anything is written: a content over
/// `limit` bytes or empty, an ordering confidence that is not a finite number.
///
/// # Errors
/// [`LedgerError::ContentTooLarge`], [`LedgerError::Invalid`].
pub(crate) fn check_new_events(events: &[NewEvent], limit: usize) -> LedgerResult<()> {
    if let Some(e) = events.iter().find(|e| e.content.len() > limit) {
        return Err(LedgerError::ContentTooLarge {
            size: e.content.len(),
            limit,
        });
    }
    if events.iter().any(|e| e.content.trim().is_empty()) {
        return Err(LedgerError::Invalid {
            what: "content",
            reason: "the content is empty: an observation must say something".to_owned(),
        });
    }
    if let Some(e) = events.iter().find(|e| !e.ordering_confidence.is_finite()) {
        return Err(LedgerError::Invalid {
            what: "ordering_confidence",
            reason: format!("{} is not finite", e.ordering_confidence),
        });
    }
    Ok(())
}

/// Hex XXH3-128 of the content.
pub fn content_hash(content: &str) -> String {
    format!("{:032x}", xxh3_128(content.as_bytes()))
}

/// The terms of a full-text query: the words of free text, each later quoted and OR-ed by
/// the engine's search, so user text can never inject query syntax.
fn fts_terms(text: &str) -> Vec<String> {
    // The lexical tokens split on anything that is not a letter or digit, as the unicode61
    // tokenizer does, so every quoted term is one token (the index has no positions).
    crate::text::tokens(text)
}

/// The full-text table of a project: `fts_p` + hex of its name (always a safe identifier).
pub(crate) fn fts_table(project: &str) -> String {
    let hex: String = project.bytes().map(|b| format!("{b:02x}")).collect();
    format!("fts_p{hex}")
}

/// Creates the project's full-text table if it does not exist. Contentless (the text lives
/// in `events`), deletable by rowid, full detail: `detail = column` was faster but loses
/// per-document term frequencies, and bm25 without them ranked evidence turns ten times
/// worse (`docs/EXPERIMENTS.md`).
///
/// The table is built on demand, by the project's first [`Ledger::search`] (from the
/// events already stored, in the same transaction), and kept up to date by every append
/// from then on. Recall ranks with the engine's own in-memory index, so a project nobody
/// searches through the ledger never pays for a second inverted index on its write path
/// (a third of the CPU of appending 2 KB turns).
fn ensure_fts(tx: &Transaction<'_>, project: &str) -> rusqlite::Result<()> {
    if fts_exists(tx, project)? {
        return Ok(());
    }
    let table = fts_table(project);
    tx.execute_batch(&format!(
        "CREATE VIRTUAL TABLE {table} USING fts5(content, content = '', \
         contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');"
    ))?;
    tx.execute(
        &format!("INSERT INTO {table} (rowid, content) SELECT id, content FROM events WHERE project = ?1 ORDER BY id"),
        [project],
    )?;
    Ok(())
}

/// Whether `project` has its full-text table.
pub(crate) fn fts_exists(c: &Connection, project: &str) -> rusqlite::Result<bool> {
    c.prepare_cached("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1")?
        .query_row([fts_table(project)], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// Which numbering of a project a position counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Sequence {
    /// The events of one thread.
    Thread,
    /// The events of one session.
    Session,
    /// The events of one turn of a thread.
    Turn,
}

/// Where an appended event stands: its number in its thread, session and turn, and the
/// previous event of its thread (without a thread, of its session).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    pub(crate) thread_seq: Option<i64>,
    pub(crate) session_seq: Option<i64>,
    pub(crate) turn_seq: Option<i64>,
    pub(crate) prev: Option<i64>,
}

/// Position bookkeeping while appending a batch, the same for every backend: the last
/// `(number, id)` the batch wrote per sequence, keyed by (sequence, project, thread or
/// session name, turn) — one batch may write several projects, each numbering its own
/// threads.
#[derive(Debug, Default)]
pub(crate) struct Cursors(HashMap<SequenceKey, (i64, i64)>);

/// A sequence of a project: (sequence, project, thread or session name, turn).
type SequenceKey = (Sequence, String, String, Option<i64>);

impl Cursors {
    /// The place of `e`: each of its sequences continues from what this batch wrote last,
    /// else from `last`, the store's last `(number, id)` of that sequence (called with the
    /// sequence, its name and turn).
    pub(crate) fn place(
        &self,
        e: &NewEvent,
        mut last: impl FnMut(Sequence, &str, Option<i64>) -> LedgerResult<Option<(i64, i64)>>,
    ) -> LedgerResult<Place> {
        let project = e.project.as_str();
        let mut next = |seq: Sequence,
                        name: &Option<String>,
                        turn: Option<i64>|
         -> LedgerResult<Option<(i64, Option<i64>)>> {
            let Some(name) = name else { return Ok(None) };
            let (n, id) = match self.0.get(&(seq, project.to_owned(), name.clone(), turn)) {
                Some(&(n, id)) => (n, Some(id)),
                None => last(seq, name, turn)?.map_or((0, None), |(n, id)| (n, Some(id))),
            };
            Ok(Some((n + 1, id)))
        };
        let thread = next(Sequence::Thread, &e.thread, None)?;
        let session = next(Sequence::Session, &e.session, None)?;
        let turn_seq = match (e.turn, &e.thread) {
            (Some(t), Some(_)) => next(Sequence::Turn, &e.thread, Some(t))?.map(|p| p.0),
            (Some(_), None) => Some(1),
            _ => None,
        };
        // The previous event of the same thread; without a thread, of the same session.
        let prev = if e.thread.is_some() {
            thread.and_then(|t| t.1)
        } else {
            session.and_then(|s| s.1)
        };
        Ok(Place {
            thread_seq: thread.map(|t| t.0),
            session_seq: session.map(|s| s.0),
            turn_seq,
            prev,
        })
    }

    /// Records that `e`, at `place`, was stored as `id`.
    pub(crate) fn record(&mut self, e: &NewEvent, place: &Place, id: i64) {
        let project = e.project.as_str();
        if let (Some(n), Some(name)) = (place.thread_seq, &e.thread) {
            self.0.insert(
                (Sequence::Thread, project.to_owned(), name.clone(), None),
                (n, id),
            );
        }
        if let (Some(n), Some(name)) = (place.session_seq, &e.session) {
            self.0.insert(
                (Sequence::Session, project.to_owned(), name.clone(), None),
                (n, id),
            );
        }
        if let (Some(n), Some(t), Some(name)) = (place.turn_seq, e.turn, &e.thread) {
            self.0.insert(
                (Sequence::Turn, project.to_owned(), name.clone(), Some(t)),
                (n, id),
            );
        }
    }
}

impl Ledger {
    /// For each event, the stored event with the same project and source id, if any (an
    /// observation retried after a failure is the stored one, not a second row).
    ///
    /// # Errors
    /// `conflict` (a [`LedgerError::Refused`]) when a stored event has the source id with
    /// other content; the store's failures.
    pub fn stored_by_source(&self, events: &[NewEvent]) -> LedgerResult<Vec<Option<EventId>>> {
        if events.iter().all(|e| e.source_id.is_none()) {
            return Ok(vec![None; events.len()]);
        }
        self.exec_read(|x| {
            events
                .iter()
                .map(|e| {
                    let Some(source) = &e.source_id else {
                        return Ok(None);
                    };
                    let row: Option<(u64, String)> = x.one(
                        "SELECT id, content_hash FROM events WHERE project = ?1 AND source_id = ?2",
                        args![e.project.as_str(), source],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )?;
                    match row {
                        None => Ok(None),
                        Some((id, hash)) if hash == content_hash(&e.content) => Ok(Some(EventId(id))),
                        Some((id, _)) => Err(LedgerError::Refused {
                            reason: crate::base::Reason::Conflict,
                            message: format!(
                                "source id {source:?} of project `{}` is stored as event {id} with other content",
                                e.project
                            ),
                        }),
                    }
                })
                .collect()
        })
    }

    /// The source ids of `project`'s events with their content (an import skips the turns
    /// it already holds and refuses one whose text changed).
    ///
    /// # Errors
    /// The store's failures.
    pub fn source_contents(&self, project: &ProjectId) -> LedgerResult<HashMap<String, String>> {
        self.exec_read(|x| {
            Ok(x.all(
                "SELECT source_id, content FROM events WHERE project = ?1 AND source_id IS NOT NULL",
                args![project.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .into_iter()
            .collect())
        })
    }

    /// Appends one event.
    ///
    /// # Errors
    /// As [`append_batch`](Self::append_batch).
    pub fn append(&self, event: NewEvent) -> LedgerResult<Event> {
        let id = self.append_batch(std::slice::from_ref(&event))?[0];
        self.get(&event.project, id)?
            .ok_or(LedgerError::UnknownEvent(id))
    }

    /// Appends events in one transaction: all of them, or (on any error) none.
    ///
    /// # Errors
    /// [`LedgerError::ContentTooLarge`], [`LedgerError::UnknownEvent`] for a bad parent, a
    /// duplicate `source_id`, the store's failures.
    pub fn append_batch(&self, events: &[NewEvent]) -> LedgerResult<Vec<EventId>> {
        Ok(self
            .append_batch_with(events, &[], false)?
            .into_iter()
            .map(|a| a.id)
            .collect())
    }

    /// As [`append_batch`](Self::append_batch), and in the same transaction the semantic
    /// vector of each event that has one (`semantic[i]` belongs to `events[i]`; a shorter
    /// slice leaves the rest without): `(embedding dimensions, projected bits)`. Returns
    /// each event's id and `prev`, so a caller need not read them back. With `queue_rest`,
    /// every event without bits is queued for the background embedder
    /// ([`semantic_pending`](Self::semantic_pending)) in the same transaction.
    ///
    /// # Errors
    /// As [`append_batch`](Self::append_batch).
    pub fn append_batch_with(
        &self,
        events: &[NewEvent],
        semantic: &[Option<(u32, Vec<u8>)>],
        queue_rest: bool,
    ) -> LedgerResult<Vec<Appended>> {
        check_new_events(events, self.config.max_content_bytes)?;
        let now = self.now_ms();
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.append_with(events, semantic, queue_rest, now);
        }
        self.write(|tx| {
            let mut cursors = Cursors::default();
            let mut ids = Vec::with_capacity(events.len());
            let mut projects: Vec<&str> = events.iter().map(|e| e.project.as_str()).collect();
            projects.sort_unstable();
            projects.dedup();
            // Only a project whose full-text table has been built keeps it up to date.
            let mut indexed = Vec::new();
            for p in projects {
                if fts_exists(tx, p).map_err(|err| self.sql(err))? {
                    indexed.push(p);
                }
            }
            for (i, e) in events.iter().enumerate() {
                let fts = indexed.contains(&e.project.as_str());
                let (id, prev) = self.insert_event(tx, e, now, &mut cursors, fts)?;
                if let Some(Some((input, bits))) = semantic.get(i) {
                    tx.prepare_cached(
                        "INSERT INTO semantic_vectors (project, event_id, input_dim, bits)
                         VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut s| {
                        s.execute(params![e.project.as_str(), id.0 as i64, input, bits])
                    })
                    .map_err(|err| self.sql(err))?;
                } else if queue_rest {
                    tx.prepare_cached(
                        "INSERT INTO semantic_pending (project, event_id) VALUES (?1, ?2)",
                    )
                    .and_then(|mut s| s.execute(params![e.project.as_str(), id.0 as i64]))
                    .map_err(|err| self.sql(err))?;
                }
                ids.push(Appended { id, prev });
            }
            Ok(ids)
        })
    }
    /// Inserts one event; its id and `prev`.
    fn insert_event(
        &self,
        tx: &Transaction<'_>,
        e: &NewEvent,
        now: i64,
        cursors: &mut Cursors,
        fts: bool,
    ) -> LedgerResult<(EventId, Option<EventId>)> {
        let project = e.project.as_str();
        if let Some(parent) = e.parent {
            let owner: Option<String> = tx
                .prepare_cached("SELECT project FROM events WHERE id = ?1")
                .and_then(|mut s| s.query_row([parent.0 as i64], |r| r.get(0)).optional())
                .map_err(|err| self.sql(err))?;
            // A parent in another project is answered as one that does not exist.
            if owner.as_deref() != Some(project) {
                return Err(LedgerError::UnknownEvent(parent));
            }
        }
        let place = cursors.place(e, |seq, name, turn| {
            let sql = match seq {
                Sequence::Thread => {
                    "SELECT thread_seq, id FROM events WHERE project = ?1 AND thread = ?2 ORDER BY thread_seq DESC LIMIT 1"
                }
                Sequence::Session => {
                    "SELECT session_seq, id FROM events WHERE project = ?1 AND session = ?2 ORDER BY session_seq DESC LIMIT 1"
                }
                Sequence::Turn => {
                    "SELECT turn_seq, id FROM events WHERE project = ?1 AND thread = ?2 AND turn = ?3 ORDER BY turn_seq DESC LIMIT 1"
                }
            };
            let mut stmt = tx.prepare_cached(sql).map_err(|err| self.sql(err))?;
            if seq == Sequence::Turn {
                stmt.query_row(params![project, name, turn], |r| Ok((r.get(0)?, r.get(1)?)))
            } else {
                stmt.query_row(params![project, name], |r| Ok((r.get(0)?, r.get(1)?)))
            }
            .optional()
            .map_err(|err| self.sql(err))
        })?;
        let created = e.created_at.unwrap_or(now);
        tx.prepare_cached(
            "INSERT INTO events (project, source_id, agent, thread, thread_seq, session, session_seq,
                turn, turn_seq, role, kind, content, content_hash, parent_id, causality, prev_id,
                created_at, ingested_at, source, source_offset, source_len, ordering_confidence,
                speaker)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18, ?19, ?20, ?21, ?22, ?23)",
        )
        .and_then(|mut s| {
            s.execute(params![
                project,
                e.source_id,
                e.agent,
                e.thread,
                place.thread_seq,
                e.session,
                place.session_seq,
                e.turn,
                place.turn_seq,
                e.role.as_str(),
                e.kind.as_str(),
                e.content,
                content_hash(&e.content),
                e.parent.map(|p| p.0 as i64),
                e.causality.map(Causality::as_str),
                place.prev,
                created,
                now,
                e.source,
                e.source_offset,
                e.source_len,
                e.ordering_confidence,
                e.speaker,
            ])
        })
        .map_err(|err| match err {
            rusqlite::Error::SqliteFailure(f, Some(msg)) if msg.contains("events.project, events.source_id") => {
                LedgerError::Invalid {
                    what: "source_id",
                    reason: format!("{:?} already exists in project `{project}` ({f})", e.source_id.as_deref().unwrap_or("")),
                }
            }
            other => self.sql(other),
        })?;
        let id = tx.last_insert_rowid();
        if fts {
            tx.prepare_cached(&format!(
                "INSERT INTO {} (rowid, content) VALUES (?1, ?2)",
                fts_table(project)
            ))
            .and_then(|mut s| s.execute(params![id, e.content]))
            .map_err(|err| self.sql(err))?;
        }
        cursors.record(e, &place, id);
        Ok((EventId(id as u64), place.prev.map(|p| EventId(p as u64))))
    }

    /// The event `id` of `project` (`None` if absent or of another project).
    ///
    /// # Errors
    /// The store's failures.
    pub fn get(&self, project: &ProjectId, id: EventId) -> LedgerResult<Option<Event>> {
        Ok(self.get_many(project, &[id])?.pop().flatten())
    }

    /// The events `ids` of `project`, in the order asked (`None` where there is none): one
    /// read, one statement per 64 ids (a round trip each on a server).
    ///
    /// # Errors
    /// The store's failures.
    pub fn get_many(
        &self,
        project: &ProjectId,
        ids: &[EventId],
    ) -> LedgerResult<Vec<Option<Event>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {COLUMNS} FROM events WHERE project = ?1 AND id IN ({})",
            chunk_marks()
        );
        let mut found: HashMap<u64, Event> = self.exec_read(|x| {
            let mut found = HashMap::with_capacity(ids.len());
            for chunk in ids.chunks(GET_CHUNK) {
                for e in x.all(&sql, &chunk_args(project, chunk), event_of)? {
                    found.insert(e.id.0, e);
                }
            }
            Ok(found)
        })?;
        let mut first: HashMap<u64, usize> = HashMap::with_capacity(ids.len());
        let mut out: Vec<Option<Event>> = Vec::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            let event = match first.get(&id.0) {
                // Asked twice: the same event again.
                Some(&at) => out[at].clone(),
                None => {
                    first.insert(id.0, i);
                    found.remove(&id.0)
                }
            };
            out.push(event);
        }
        Ok(out)
    }

    fn query_events(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<Vec<Event>> {
        self.exec_read(|x| x.all(sql, args, event_of))
    }

    /// Every event of a thread, in thread order.
    ///
    /// # Errors
    /// The store's failures.
    pub fn replay_thread(&self, project: &ProjectId, thread: &str) -> LedgerResult<Vec<Event>> {
        self.query_events(
            &format!("SELECT {COLUMNS} FROM events WHERE project = ?1 AND thread = ?2 ORDER BY thread_seq"),
            args![project.as_str(), thread],
        )
    }

    /// `(id, role, content, speaker)` of every event of `project`, oldest first: what
    /// derived indexes are rebuilt from.
    ///
    /// # Errors
    /// The store's failures.
    pub fn contents(&self, project: &ProjectId) -> LedgerResult<Vec<EventText>> {
        self.contents_after(project, EventId(0))
    }

    /// As [`contents`](Self::contents), only events with an id above `after` (what a saved
    /// derived index has not seen).
    ///
    /// # Errors
    /// The store's failures.
    pub fn contents_after(
        &self,
        project: &ProjectId,
        after: EventId,
    ) -> LedgerResult<Vec<EventText>> {
        self.exec_read(|x| {
            x.all(
                "SELECT id, role, content, speaker FROM events WHERE project = ?1 AND id > ?2 ORDER BY id",
                args![project.as_str(), after.0],
                |r| {
                    let role: String = r.get(1)?;
                    Ok((EventId(r.get(0)?), Role::parse(&role)?, r.get(2)?, r.get(3)?))
                },
            )
        })
    }

    /// The conversation place of every event of `project` after `after`, in append order:
    /// `(id, session, else thread)` (what recall's neighbour smoothing follows).
    ///
    /// # Errors
    /// The store's failures.
    pub fn sessions_after(
        &self,
        project: &ProjectId,
        after: EventId,
    ) -> LedgerResult<Vec<(EventId, Option<String>)>> {
        self.exec_read(|x| {
            x.all(
                "SELECT id, coalesce(session, thread) FROM events WHERE project = ?1 AND id > ?2 ORDER BY id",
                args![project.as_str(), after.0],
                |r| Ok((EventId(r.get(0)?), r.get(1)?)),
            )
        })
    }

    /// Up to `limit` events waiting for the background embedder, oldest first (of
    /// `project`, or of every project).
    ///
    /// # Errors
    /// The store's failures.
    pub fn semantic_pending(
        &self,
        project: Option<&ProjectId>,
        limit: usize,
    ) -> LedgerResult<Vec<PendingEmbedding>> {
        let rows: Vec<(String, u64, Option<String>, String)> = self.exec_read(|x| {
            x.all(
                "SELECT p.project, p.event_id, e.speaker, e.content
                 FROM semantic_pending p JOIN events e ON e.id = p.event_id
                 WHERE p.project = COALESCE(?1, p.project)
                 ORDER BY p.event_id LIMIT ?2",
                args![project.map(ProjectId::as_str), limit as u64],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
        })?;
        rows.into_iter()
            .map(|(p, id, speaker, content)| {
                let p = ProjectId::new(p).map_err(|e| LedgerError::Invalid {
                    what: "project",
                    reason: e.to_string(),
                })?;
                Ok(PendingEmbedding {
                    project: p,
                    id: EventId(id),
                    speaker,
                    content,
                })
            })
            .collect()
    }

    /// Events of `project` waiting for the background embedder.
    ///
    /// # Errors
    /// The store's failures.
    pub fn semantic_backlog(&self, project: &ProjectId) -> LedgerResult<u64> {
        self.exec_read(|x| {
            Ok(x.one(
                "SELECT COUNT(*) FROM semantic_pending WHERE project = ?1",
                args![project.as_str()],
                |r| r.get(0),
            )?
            .unwrap_or(0))
        })
    }

    /// Stores the background embedder's results in one transaction: for each queued
    /// event still queued, its vector (`Some((embedding dimensions, bits))`) or none (it
    /// cannot be embedded), and takes it off the queue. An event erased meanwhile is not
    /// queued any more and gets nothing. Returns the events whose vectors were stored.
    ///
    /// # Errors
    /// The store's failures (nothing is stored then).
    pub fn store_semantic(
        &self,
        done: &[(PendingEmbedding, Option<SemanticBits>)],
    ) -> LedgerResult<Vec<EventId>> {
        self.exec_write(|x| {
            let mut stored = Vec::new();
            for (PendingEmbedding { project, id, .. }, vector) in done {
                let queued = x.run(
                    "DELETE FROM semantic_pending WHERE project = ?1 AND event_id = ?2",
                    args![project.as_str(), id.0],
                )?;
                if let (1, Some((input, bits))) = (queued, vector) {
                    x.run(
                        "INSERT INTO semantic_vectors (project, event_id, input_dim, bits)
                         VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT (project, event_id) DO UPDATE SET
                            input_dim = excluded.input_dim, bits = excluded.bits",
                        args![project.as_str(), id.0, i64::from(*input), &bits[..]],
                    )?;
                    stored.push(*id);
                }
            }
            Ok(stored)
        })
    }

    /// Queues for the background embedder every event that has no semantic vector and is
    /// not queued (stored before a sentence model was configured, or by a process without
    /// one), looking only past the mark the previous call left; returns how many it
    /// queued.
    ///
    /// # Errors
    /// The store's failures.
    pub fn queue_unembedded(&self) -> LedgerResult<u64> {
        self.exec_write(|x| {
            let after: i64 = x
                .one(
                    "SELECT after FROM semantic_queue_mark WHERE id = 1",
                    args![],
                    |r| r.get(0),
                )?
                .unwrap_or(0);
            let queued = x.run(
                "INSERT INTO semantic_pending (project, event_id)
                 SELECT e.project, e.id FROM events e
                 WHERE e.id > ?1 AND NOT EXISTS (SELECT 1 FROM semantic_vectors s
                     WHERE s.project = e.project AND s.event_id = e.id)
                 ON CONFLICT DO NOTHING",
                args![after],
            )?;
            x.run(
                "INSERT INTO semantic_queue_mark (id, after)
                 SELECT 1, COALESCE(MAX(id), 0) FROM events WHERE true
                 ON CONFLICT (id) DO UPDATE SET after = CASE
                     WHEN excluded.after > semantic_queue_mark.after THEN excluded.after
                     ELSE semantic_queue_mark.after END",
                args![],
            )?;
            Ok(queued as u64)
        })
    }

    /// The semantic vectors of `project` after event `after`, in event order:
    /// `(event, embedding dimensions, bits)`.
    ///
    /// # Errors
    /// The store's failures.
    pub fn semantic_vectors_after(
        &self,
        project: &ProjectId,
        after: EventId,
    ) -> LedgerResult<Vec<(EventId, u32, Vec<u8>)>> {
        self.exec_read(|x| {
            x.all(
                "SELECT event_id, input_dim, bits FROM semantic_vectors
                 WHERE project = ?1 AND event_id > ?2 ORDER BY event_id",
                args![project.as_str(), after.0],
                |r| {
                    let dim: u64 = r.get(1)?;
                    Ok((
                        EventId(r.get(0)?),
                        u32::try_from(dim).unwrap_or(u32::MAX),
                        r.get(2)?,
                    ))
                },
            )
        })
    }

    /// The semantic vectors stored for the events `ids` of `project` (those that have
    /// one), in event order: `(event, embedding dimensions, bits)`. One statement per 64
    /// ids.
    ///
    /// # Errors
    /// The store's failures.
    pub fn semantic_vectors_of(
        &self,
        project: &ProjectId,
        ids: &[EventId],
    ) -> LedgerResult<Vec<(EventId, u32, Vec<u8>)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT event_id, input_dim, bits FROM semantic_vectors
             WHERE project = ?1 AND event_id IN ({})",
            chunk_marks()
        );
        let mut found: Vec<(EventId, u32, Vec<u8>)> = self.exec_read(|x| {
            let mut found = Vec::new();
            for chunk in ids.chunks(GET_CHUNK) {
                found.extend(x.all(&sql, &chunk_args(project, chunk), |r| {
                    let dim: u64 = r.get(1)?;
                    Ok((
                        EventId(r.get(0)?),
                        u32::try_from(dim).unwrap_or(u32::MAX),
                        r.get(2)?,
                    ))
                })?);
            }
            Ok(found)
        })?;
        found.sort_unstable_by_key(|(id, ..)| *id);
        found.dedup_by_key(|(id, ..)| *id);
        Ok(found)
    }

    /// The distinct speaker names of `project`'s events.
    ///
    /// # Errors
    /// The store's failures.
    pub fn speakers(&self, project: &ProjectId) -> LedgerResult<Vec<String>> {
        self.exec_read(|x| {
            x.all(
                "SELECT DISTINCT speaker FROM events WHERE project = ?1 AND speaker IS NOT NULL",
                args![project.as_str()],
                |r| r.get(0),
            )
        })
    }

    /// The ledger's sequence: the highest event id it has committed in any project (0
    /// before the first append); see [`super::EventLog::sequence`].
    ///
    /// # Errors
    /// The store's failures.
    pub fn sequence(&self) -> LedgerResult<u64> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.sequence();
        }
        // AUTOINCREMENT keeps the highest id ever committed, erased events included, so
        // the sequence never goes back.
        self.read(|c| {
            c.query_row(
                "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|s| s.max(0) as u64)
            .map_err(|e| self.sql(e))
        })
    }

    /// The newest event id of `project`, if it has any.
    ///
    /// # Errors
    /// The store's failures.
    pub fn last_id(&self, project: &ProjectId) -> LedgerResult<Option<EventId>> {
        self.exec_read(|x| {
            Ok(x.one(
                "SELECT MAX(id) FROM events WHERE project = ?1",
                args![project.as_str()],
                |r| r.get::<Option<u64>>(0),
            )?
            .flatten()
            .map(EventId))
        })
    }

    /// Number of events in `project`.
    ///
    /// # Errors
    /// The store's failures.
    pub fn count(&self, project: &ProjectId) -> LedgerResult<u64> {
        self.exec_read(|x| {
            Ok(x.one(
                "SELECT COUNT(*) FROM events WHERE project = ?1",
                args![project.as_str()],
                |r| r.get(0),
            )?
            .unwrap_or(0))
        })
    }

    /// Up to `limit` events of `project` with ids above `after` (all with `None`), oldest
    /// first: what a reader catching up with the log reads.
    ///
    /// # Errors
    /// The store's failures.
    pub fn events_after(
        &self,
        project: &ProjectId,
        after: Option<EventId>,
        limit: usize,
    ) -> LedgerResult<Vec<Event>> {
        self.query_events(
            &format!(
                "SELECT {COLUMNS} FROM events WHERE project = ?1 AND id > ?2 ORDER BY id LIMIT ?3"
            ),
            args![
                project.as_str(),
                after.map_or(0, |a| a.0),
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
        )
    }

    /// Up to `n` events after `anchor` in its conversation: its thread, else its session,
    /// else its project, in order.
    ///
    /// # Errors
    /// The store's failures.
    pub fn following(
        &self,
        project: &ProjectId,
        anchor: &Event,
        n: usize,
    ) -> LedgerResult<Vec<Event>> {
        let p = project.as_str();
        match (&anchor.thread, &anchor.session) {
            (Some(t), _) => self.query_events(
                &format!("SELECT {COLUMNS} FROM events WHERE project = ?1 AND thread = ?2 AND thread_seq > ?3 ORDER BY thread_seq LIMIT ?4"),
                args![p, t, anchor.thread_seq, n as u64],
            ),
            (None, Some(s)) => self.query_events(
                &format!("SELECT {COLUMNS} FROM events WHERE project = ?1 AND session = ?2 AND session_seq > ?3 ORDER BY session_seq LIMIT ?4"),
                args![p, s, anchor.session_seq, n as u64],
            ),
            (None, None) => self.query_events(
                &format!("SELECT {COLUMNS} FROM events WHERE project = ?1 AND id > ?2 ORDER BY id LIMIT ?3"),
                args![p, anchor.id.0, n as u64],
            ),
        }
    }

    /// Up to `n` events before `anchor` in its conversation: its thread, else its session,
    /// else its project, oldest first.
    ///
    /// # Errors
    /// The store's failures.
    pub fn preceding(
        &self,
        project: &ProjectId,
        anchor: &Event,
        n: usize,
    ) -> LedgerResult<Vec<Event>> {
        let p = project.as_str();
        let mut earlier = match (&anchor.thread, &anchor.session) {
            (Some(t), _) => self.query_events(
                &format!("SELECT {COLUMNS} FROM events WHERE project = ?1 AND thread = ?2 AND thread_seq < ?3 ORDER BY thread_seq DESC LIMIT ?4"),
                args![p, t, anchor.thread_seq, n as u64],
            )?,
            (None, Some(s)) => self.query_events(
                &format!("SELECT {COLUMNS} FROM events WHERE project = ?1 AND session = ?2 AND session_seq < ?3 ORDER BY session_seq DESC LIMIT ?4"),
                args![p, s, anchor.session_seq, n as u64],
            )?,
            (None, None) => self.query_events(
                &format!("SELECT {COLUMNS} FROM events WHERE project = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3"),
                args![p, anchor.id.0, n as u64],
            )?,
        };
        earlier.reverse();
        Ok(earlier)
    }

    /// The anchor with up to `before` / `after` chronological neighbours of its thread (or
    /// session, or else project), its parent and its children.
    ///
    /// # Errors
    /// [`LedgerError::UnknownEvent`] if the anchor is not in `project`.
    pub fn event_context(
        &self,
        project: &ProjectId,
        id: EventId,
        before: usize,
        after: usize,
    ) -> LedgerResult<EventContext> {
        let anchor = self
            .get(project, id)?
            .ok_or(LedgerError::UnknownEvent(id))?;
        let earlier = self.preceding(project, &anchor, before)?;
        let later = self.following(project, &anchor, after)?;
        let parent = match anchor.parent {
            Some(pid) => self.get(project, pid)?,
            None => None,
        };
        let children = self.query_events(
            &format!(
                "SELECT {COLUMNS} FROM events WHERE project = ?1 AND parent_id = ?2 ORDER BY id"
            ),
            args![project.as_str(), id.0],
        )?;
        Ok(EventContext {
            anchor,
            before: earlier,
            after: later,
            parent,
            children,
        })
    }

    /// Full-text search over the raw content of `project`, best first (SQLite: bm25 of
    /// FTS5; PostgreSQL: `ts_rank`; lower scores are better). Every word of `query` is a
    /// term (any may match); query syntax in `query` is treated as text. On SQLite the
    /// project's first search builds its full-text table from the events stored so far
    /// (a write); later appends keep it up to date.
    ///
    /// # Errors
    /// The store's failures.
    pub fn search(&self, project: &ProjectId, query: &str, k: usize) -> LedgerResult<Vec<FtsHit>> {
        let terms = fts_terms(query);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return Ok(pg
                .search(project.as_str(), &terms, k)?
                .into_iter()
                .map(|(event, score)| FtsHit { event, score })
                .collect());
        }
        let terms = terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR ");
        let table = fts_table(project.as_str());
        let cols: String = COLUMNS
            .split(", ")
            .map(|c| format!("e.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        // The project's first search builds its full-text table (see `ensure_fts`).
        if !self.read(|c| fts_exists(c, project.as_str()).map_err(|e| self.sql(e)))? {
            self.write(|tx| ensure_fts(tx, project.as_str()).map_err(|e| self.sql(e)))?;
        }
        self.exec_read(|x| {
            x.all(
                &format!(
                    "SELECT {cols}, f.score FROM
                        (SELECT rowid, bm25({table}) AS score FROM {table}
                         WHERE {table} MATCH ?1 ORDER BY score LIMIT ?3) AS f
                     JOIN events e ON e.id = f.rowid
                     WHERE e.project = ?2 ORDER BY f.score, e.id"
                ),
                args![terms.as_str(), project.as_str(), k as u64],
                |r| {
                    Ok(FtsHit {
                        event: event_of(r)?,
                        score: r.get(24)?,
                    })
                },
            )
        })
    }
}
