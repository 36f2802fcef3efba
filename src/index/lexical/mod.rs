//! The lexical index of one project: BM25 postings of its words and word pairs, where each
//! turn sits in its conversation ([`Chronology`]), which turns state standing directives
//! ([`directives`]), the speakers' names and each word's document frequency. Observe
//! writes it (after the ledger commit, with a short reply's context); recall reads it.
//! It is derived data: saved per project (`lexical/<project>.lex`), caught up from the
//! ledger on load, rebuilt when the file is missing or damaged.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use hdv::Hypervector;
use rayon::prelude::*;

use crate::base::ProjectId;
use crate::ledger::{EventId, Ledger, LedgerResult, Role};
use crate::sync::RecoverRw as _;

mod chronology;
pub mod directives;
mod postings;

pub use chronology::Chronology;
pub use postings::{
    B, CONTEXT_CHARS, K1, K1_SHORT, LONG_TURNS, Postings, SHORT_TURNS, TurnLength, TurnRegime,
    bigrams, by_turn_length, idf, k1, query_terms,
};

/// Stored vectors sampled per project for the relevance floor's baseline.
pub(crate) const BASELINE_SAMPLE: usize = 64;
/// IDF of a word in a quarter of the events: `ln(1 + 3)`; below it a word is "common".
pub(crate) const COMMON_IDF: f64 = 1.386;
/// Events a word can be held by and still tell them apart, however small the project: in
/// a project of eight events, a subject two of them share (a value and its update) is in a
/// quarter of them without being common.
const FEW_EVENTS: u64 = 2;

/// Whether a word `df` of a project's `documents` events hold is common: more than
/// [`FEW_EVENTS`] hold it and its IDF is under [`COMMON_IDF`] (a quarter of them or more).
pub(crate) fn common(documents: u64, df: u64) -> bool {
    df > FEW_EVENTS && idf(documents, df) < COMMON_IDF
}

/// Derived text indexes of one project: loaded from `lexical/<project>.lex` (then caught
/// up with the events the file has not seen) or built from the ledger on first use.
#[derive(Debug, Default)]
pub(crate) struct ProjectText {
    /// BM25 postings.
    pub(crate) postings: Postings,
    /// BM25 postings of word pairs ([`postings::bigrams`]).
    pub(crate) bigrams: Postings,
    /// Events stating standing directives ([`directives`]), oldest first.
    pub(crate) directives: Vec<u64>,
    /// The highest event id indexed.
    pub(crate) last_id: u64,
    /// Documents in the valid file on disk (as loaded or last saved); `None` when there is
    /// none (missing or damaged).
    pub(crate) saved_documents: Option<u64>,
    /// Each event's session and its neighbours there (saved with the index, caught up
    /// from the ledger's `(id, session)` pairs).
    pub(crate) chronology: Chronology,
    /// The lexical tokens of the project's speaker names: a query naming a speaker keeps
    /// the name as a term even where the speaker said most of the turns (a field match,
    /// not a common word). Read from the ledger when the index loads.
    pub(crate) speakers: std::collections::HashSet<String>,
    /// Whether short replies are indexed with the turn before them (the profile's
    /// `[recall] reply_context` when the index was built; saved with it).
    pub(crate) reply_context: bool,
    /// The last turn of each session (by chronology index), for the reply context of the
    /// next one: not saved (after a load, the ledger is asked once per session).
    pub(crate) tails: HashMap<u32, Tail>,
    /// The stored vectors against which a query's similarity to unrelated memories is
    /// estimated (the relevance floor), as last drawn.
    pub(crate) baseline: Option<Baseline>,
}

/// Up to [`BASELINE_SAMPLE`] stored vectors spread evenly over a project's documents
/// (`recall::plan::baseline` draws and updates it).
#[derive(Debug, Clone)]
pub(crate) struct Baseline {
    /// Documents indexed when it was drawn.
    pub(crate) documents: u64,
    /// `(event id, vector)` of the memories drawn, in index order.
    pub(crate) sample: Vec<(u64, Hypervector)>,
    /// Whether a memory drawn had no stored vector yet (it is asked for again).
    pub(crate) missing: bool,
}

/// The last indexed turn of a session, as the next turn's reply context needs it.
#[derive(Debug, Clone)]
pub(crate) struct Tail {
    id: u64,
    role: Role,
    speaker: Option<String>,
    /// Its lexical tokens when it is short enough to lend context
    /// ([`postings::CONTEXT_CHARS`]).
    short: Option<Vec<String>>,
}

impl Tail {
    /// The tail view of a turn; `tokens` are its content's tokens when the caller has
    /// them (they are computed here otherwise, and only for a short turn).
    pub(crate) fn of(
        id: u64,
        role: Role,
        speaker: Option<&str>,
        content: &str,
        tokens: Option<&[String]>,
    ) -> Self {
        let short = content.chars().count() <= postings::CONTEXT_CHARS;
        Self {
            id,
            role,
            speaker: speaker.map(str::to_owned),
            short: short
                .then(|| tokens.map_or_else(|| crate::text::tokens(content), <[String]>::to_vec)),
        }
    }
}

/// Documents a saved lexical index may lag its project before it is rewritten (catching
/// them up from the ledger on load takes a few milliseconds).
const LEXICAL_LAG: u64 = 4096;

/// Magic and version of a saved lexical index.
const LEXICAL_MAGIC: &[u8; 8] = b"HMLEX007";

/// One event as the text indexes take it.
pub(crate) struct Indexed<'a> {
    pub(crate) id: u64,
    pub(crate) role: Role,
    pub(crate) speaker: Option<&'a str>,
    /// Its conversation place: the session, else the thread.
    pub(crate) session: Option<&'a str>,
    pub(crate) content: &'a str,
    /// Its content's [`crate::text::tokens`].
    pub(crate) tokens: &'a [String],
}

impl ProjectText {
    /// Indexes one event after those already indexed: its place in the chronology, then
    /// its postings with its reply context, the text of the turn before it in its session
    /// at half weight, when a different speaker said that turn and both are short (a
    /// reply such as "Thanks! I'm so excited!" is about what the turn before named).
    /// `earlier` reads a turn this index has not seen since it was loaded.
    pub(crate) fn index(&mut self, e: &Indexed<'_>, earlier: impl FnOnce(u64) -> Option<Tail>) {
        self.chronology.push(e.id, e.session);
        if crate::text::statements::asks_only(e.content) {
            self.chronology.bridge(e.id);
        }
        let place = self.chronology.place(e.id);
        let mut context: &[String] = &[];
        let fetched;
        if let Some((session, [Some(prev), _])) = place {
            let tail = match self.tails.get(&session).filter(|t| t.id == prev) {
                Some(t) => Some(t),
                None => {
                    fetched = earlier(prev);
                    fetched.as_ref()
                }
            };
            let replies =
                tail.is_some_and(|t| (t.role, t.speaker.as_deref()) != (e.role, e.speaker));
            if tail.is_some() && !replies {
                self.chronology.continues(e.id);
            }
            let short = e.content.chars().count() <= postings::CONTEXT_CHARS;
            if let Some(t) = tail
                && self.reply_context
                && short
                && replies
                && let Some(tokens) = &t.short
            {
                context = tokens;
            }
        }
        let context = context.to_vec();
        self.add(e.id, e.role, e.speaker, e.content, e.tokens, &context);
        if let Some((session, _)) = place {
            self.tails.insert(
                session,
                Tail::of(e.id, e.role, e.speaker, e.content, Some(e.tokens)),
            );
        }
    }

    fn add(
        &mut self,
        id: u64,
        role: Role,
        speaker: Option<&str>,
        text: &str,
        tokens: &[String],
        context: &[String],
    ) {
        let name = speaker.map(crate::text::tokens).unwrap_or_default();
        self.postings.add_with_context(id, tokens, context, &name);
        self.bigrams.add(id, &postings::bigrams(tokens));
        if directives::is_directive(role, speaker, text) {
            self.directives.push(id);
        }
        self.last_id = self.last_id.max(id);
    }

    /// Whether the file must be written: there is no valid file, or it lags the index by
    /// [`LEXICAL_LAG`] documents or more. A smaller lag is caught up from the ledger on the
    /// next load, so a process that adds a few events does not rewrite the whole file.
    pub(crate) fn needs_save(&self) -> bool {
        let documents = self.postings.documents();
        match self.saved_documents {
            None => documents > 0,
            Some(saved) => documents.saturating_sub(saved) >= LEXICAL_LAG,
        }
    }

    /// The file image: magic, payload (reply-context flag, last id, postings, bigram postings, directives,
    /// chronology), XXH3-64 of the payload; all little-endian.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = LEXICAL_MAGIC.to_vec();
        out.push(u8::from(self.reply_context));
        out.extend_from_slice(&self.last_id.to_le_bytes());
        self.postings.write_to(&mut out);
        self.bigrams.write_to(&mut out);
        out.extend_from_slice(&(self.directives.len() as u64).to_le_bytes());
        for d in &self.directives {
            out.extend_from_slice(&d.to_le_bytes());
        }
        self.chronology.write_to(self.postings.ids(), &mut out);
        let sum = xxhash_rust::xxh3::xxh3_64(&out[LEXICAL_MAGIC.len()..]);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Parses a file image (which is then the valid file on disk); `None` if it is damaged
    /// or of another version.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let body = bytes.strip_prefix(LEXICAL_MAGIC)?;
        let (payload, sum) = body.split_at_checked(body.len().checked_sub(8)?)?;
        if xxhash_rust::xxh3::xxh3_64(payload) != u64::from_le_bytes(sum.try_into().ok()?) {
            return None;
        }
        let (&flag, mut input) = payload.split_first()?;
        let reply_context = match flag {
            0 => false,
            1 => true,
            _ => return None,
        };
        let last_id = postings::Reader(&mut input).u64()?;
        let postings = Postings::read_from(&mut input)?;
        let bigrams = Postings::read_from(&mut input)?;
        let mut r = postings::Reader(&mut input);
        let n = usize::try_from(r.u64()?).ok()?;
        let directives = (0..n).map(|_| r.u64()).collect::<Option<Vec<_>>>()?;
        let chronology = Chronology::read_from(&mut input, postings.ids())?;
        input.is_empty().then(|| Self {
            reply_context,
            saved_documents: Some(postings.documents()),
            postings,
            bigrams,
            directives,
            last_id,
            chronology,
            speakers: Default::default(),
            tails: HashMap::new(),
            baseline: None,
        })
    }
}

impl ProjectText {
    /// Indexes the events of `project` after `text.last_id` (lexical postings, speakers,
    /// chronology) from the ledger; returns their ids.
    pub(crate) fn catch_up(
        &mut self,
        ledger: &Ledger,
        project: &ProjectId,
    ) -> LedgerResult<Vec<u64>> {
        self.catch_up_below(ledger, project, u64::MAX)
    }

    /// As [`catch_up`](Self::catch_up), only the events with ids below `below` (what other
    /// writers of a shared ledger appended before a batch this process indexes itself).
    pub(crate) fn catch_up_below(
        &mut self,
        ledger: &Ledger,
        project: &ProjectId,
        below: u64,
    ) -> LedgerResult<Vec<u64>> {
        let saved_last = self.last_id;
        let mut contents = ledger.contents_after(project, EventId(self.last_id))?;
        contents.retain(|(id, ..)| id.0 < below);
        let tokens: Vec<Vec<String>> = contents
            .par_iter()
            .map(|(_, _, text, _)| crate::text::tokens(text))
            .collect();
        // The file holds the chronology of the events it indexed; the rest follows.
        let sessions: HashMap<u64, Option<String>> = ledger
            .sessions_after(project, EventId(saved_last))?
            .into_iter()
            .map(|(id, s)| (id.0, s))
            .collect();
        for ((id, role, content, speaker), t) in contents.iter().zip(&tokens) {
            let e = Indexed {
                id: id.0,
                role: *role,
                speaker: speaker.as_deref(),
                session: sessions.get(&id.0).and_then(Option::as_deref),
                content,
                tokens: t,
            };
            self.index(&e, |prev| tail_of(ledger, project, prev));
        }
        for name in ledger.speakers(project)? {
            self.speakers.extend(crate::text::tokens(&name));
        }
        Ok(contents.iter().map(|(id, ..)| id.0).collect())
    }

    /// Where the lexical index of `project` is saved under `data_dir`.
    pub(crate) fn path(data_dir: &Path, project: &ProjectId) -> PathBuf {
        data_dir
            .join("lexical")
            .join(format!("{}.lex", project.as_str()))
    }

    /// The saved index at `path` when it is valid and was built with `reply_context`,
    /// else an empty one (a damaged file is reported and rebuilt from the ledger); its
    /// length-dependent rules follow `regime`.
    pub(crate) fn load(path: &Path, reply_context: bool, regime: TurnRegime) -> Self {
        let saved = match std::fs::read(path) {
            Ok(bytes) => {
                let parsed = Self::from_bytes(&bytes);
                if parsed.is_none() {
                    tracing::warn!(path = %path.display(), "damaged lexical index ignored; rebuilding from the ledger");
                }
                parsed
            }
            Err(_) => None,
        };
        // An index built with the other reply-context setting is rebuilt.
        let mut text = saved
            .filter(|t| t.reply_context == reply_context)
            .unwrap_or_else(|| Self {
                reply_context,
                ..Self::default()
            });
        text.postings.set_regime(regime);
        text.bigrams.set_regime(regime);
        text
    }

    /// Writes `text` to `path` when [`needs_save`](Self::needs_save) says so, atomically
    /// (a synced temporary file renamed over the old one); the caller names `path` in an
    /// error.
    pub(crate) fn save(text: &RwLock<Self>, path: &Path) -> std::io::Result<()> {
        let (bytes, documents) = {
            let t = text.reading();
            if !t.needs_save() {
                return Ok(());
            }
            (t.to_bytes(), t.postings.documents())
        };
        let dir = path.parent().expect("lexical/<project>.lex");
        std::fs::create_dir_all(dir)?;
        let tmp = path.with_extension("lex.tmp");
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        text.writing().saved_documents = Some(documents);
        Ok(())
    }
}

/// The reply-context view of event `id` of `project`, read from the ledger. A read
/// that fails costs only that reply's context (logged), never the event's indexing.
pub(crate) fn tail_of(ledger: &Ledger, project: &ProjectId, id: u64) -> Option<Tail> {
    match ledger.get(project, EventId(id)) {
        Ok(e) => e.map(|e| Tail::of(id, e.role, e.speaker.as_deref(), &e.content, None)),
        Err(error) => {
            tracing::warn!(project = project.as_str(), id, %error, "reply context unread");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lexical_file_is_rewritten_when_missing_damaged_or_lagging() {
        let mut t = ProjectText::default();
        assert!(!t.needs_save(), "nothing to save");
        t.add(1, Role::User, None, "one", &["one".to_owned()], &[]);
        assert!(t.needs_save(), "no valid file");
        let mut t = ProjectText::from_bytes(&t.to_bytes()).unwrap();
        assert!(!t.needs_save(), "the file holds it all");
        for id in 2..=LEXICAL_LAG {
            t.add(id, Role::User, None, "more", &["more".to_owned()], &[]);
        }
        assert!(!t.needs_save(), "lagging by one less than the limit");
        t.add(
            LEXICAL_LAG + 1,
            Role::User,
            None,
            "more",
            &["more".to_owned()],
            &[],
        );
        assert!(t.needs_save());
    }
}
