//! Retrieval evaluation on data sets in the format of `../shared/eval/FORMAT.md` (one
//! project per conversation): ingest through `Memory`, ask every question with evidence,
//! score recall@1/5/10, hit@10, MRR and update order per category and overall.
//!
//! Each turn is recorded as having happened at its `time`, else its session's `date`, when
//! [`crate::clock::parse_when`] reads them, else at the latest earlier time of its
//! conversation, else at import time.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::base::ProjectId;
use crate::ledger::{EventKind, LedgerError, NewEvent, Role};
use crate::{Memory, Reason, Result};

/// Scores of one category (or overall).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Score {
    /// Questions with evidence.
    pub questions: usize,
    /// Mean recall@1.
    pub recall_at_1: f64,
    /// Mean recall@5.
    pub recall_at_5: f64,
    /// Mean recall@10.
    pub recall_at_10: f64,
    /// Fraction with an evidence turn in the top 10.
    pub hit_at_10: f64,
    /// Mean reciprocal rank of the first evidence turn.
    pub mrr: f64,
    /// Questions with superseded evidence.
    pub updates: usize,
    /// Fraction of those whose best evidence ranks above every superseded turn.
    pub update_order: f64,
}

/// How one question fared.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QuestionResult {
    /// Question id.
    pub question_id: String,
    /// Category.
    pub category: String,
    /// Rank (1-based) of each evidence turn in the top k, `None` if absent.
    pub evidence_ranks: Vec<(String, Option<usize>)>,
    /// Rank of each superseded turn in the top k.
    pub superseded_ranks: Vec<(String, Option<usize>)>,
    /// The turn ids returned, best first.
    pub returned: Vec<String>,
}

/// The result of an evaluation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// Turns ingested.
    pub turns: usize,
    /// Ingest time (s), to the last acknowledged observation.
    pub ingest_secs: f64,
    /// Time the sentence model's background embedding of the ingested turns took after
    /// ingest (s); 0 without a sentence model. Questions are asked once it is done.
    #[serde(default)]
    pub embed_secs: f64,
    /// Query time (s) for all questions.
    pub query_secs: f64,
    /// Per category.
    pub categories: BTreeMap<String, Score>,
    /// Overall.
    pub overall: Score,
    /// Every question with evidence, in file order.
    pub questions: Vec<QuestionResult>,
    /// Questions the memory refused to answer, with the reason: a conversation that holds
    /// no stored turn (all its turns empty, or none in the file), an empty question. They
    /// count as returning nothing.
    #[serde(default)]
    pub unasked: Vec<Unasked>,
    /// Which of the turn-length rules the conversations got (the profile's
    /// `[recall] turn_regime`, and how many conversations read as short, between or long).
    #[serde(default)]
    pub turn_regime: RegimeCensus,
    /// The questions the set gives no evidence for (nothing in the conversation answers
    /// them, as BEAM's abstention questions): asked like the others, and counted by
    /// whether recall returned nothing (a knowledge gap). They take no part in the scores.
    #[serde(default)]
    pub no_evidence: NoEvidence,
}

/// What recall did with the questions a set gives no evidence for ([`Report::no_evidence`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NoEvidence {
    /// How many were asked.
    pub asked: usize,
    /// How many returned nothing.
    pub returned_nothing: usize,
    /// The ids of those that returned something, in file order.
    pub answered: Vec<String>,
}

/// The turn-length regime of an evaluation: the setting and the conversations each rule
/// set was applied to (each conversation counted once, at its first answered question).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RegimeCensus {
    /// The profile's `[recall] turn_regime`.
    pub setting: crate::config::TurnRegime,
    /// Conversations per rule set (`short`, `between`, `long`).
    pub conversations: BTreeMap<crate::index::lexical::TurnLength, usize>,
}

/// A question recall refused (see [`Report::unasked`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Unasked {
    /// Its id.
    pub question_id: String,
    /// The refusal's reason name (`unknown_project`, `invalid_argument`).
    pub reason: crate::base::Reason,
    /// What recall said.
    pub message: String,
}

impl Report {
    /// The report as a table for a terminal: ingest and query speed, then recall@1/5/10,
    /// hit@10, MRR and update order per category and overall.
    pub fn table(&self) -> String {
        let mut out = vec![
            format!(
                "ingested {} turns in {:.1} s ({:.0} turns/s); {} questions in {:.2} s ({:.1} ms each)",
                self.turns,
                self.ingest_secs,
                self.turns as f64 / self.ingest_secs.max(1e-9),
                self.overall.questions,
                self.query_secs,
                self.query_secs * 1e3 / self.overall.questions.max(1) as f64
            ) + &if self.embed_secs > 0.0 {
                format!(
                    "; sentence embeddings {:.1} s after ingest",
                    self.embed_secs
                )
            } else {
                String::new()
            },
            format!(
                "turn regime {}: {}",
                self.turn_regime.setting.name(),
                self.turn_regime
                    .conversations
                    .iter()
                    .map(|(length, n)| format!("{n} read as {}", length.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!(
                "{:<28} {:>4} {:>9} {:>9} {:>10} {:>7} {:>6} {:>12}",
                "category",
                "n",
                "recall@1",
                "recall@5",
                "recall@10",
                "hit@10",
                "mrr",
                "update_order"
            ),
        ];
        for (name, s) in self
            .categories
            .iter()
            .chain([(&"overall".to_owned(), &self.overall)])
        {
            let uo = if s.updates == 0 {
                "-".to_owned()
            } else {
                format!("{:.3}", s.update_order)
            };
            out.push(format!(
                "{name:<28} {:>4} {:>9.3} {:>9.3} {:>10.3} {:>7.3} {:>6.3} {uo:>12}",
                s.questions, s.recall_at_1, s.recall_at_5, s.recall_at_10, s.hit_at_10, s.mrr
            ));
        }
        if self.no_evidence.asked > 0 {
            out.push(format!(
                "questions without evidence (nothing answers them): {} of {} returned nothing",
                self.no_evidence.returned_nothing, self.no_evidence.asked
            ));
        }
        if !self.unasked.is_empty() {
            out.push(format!(
                "{} questions returned nothing because recall refused them (scored 0): {}",
                self.unasked.len(),
                self.unasked
                    .iter()
                    .take(5)
                    .map(|u| format!("{} ({})", u.question_id, u.reason))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + if self.unasked.len() > 5 { ", ..." } else { "" }
            ));
        }
        let o = &self.overall;
        out.push(format!(
            "overall recall@10 {:.3} mrr {:.3} update_order {:.3}",
            o.recall_at_10, o.mrr, o.update_order
        ));
        out.join("\n")
    }
}

/// The command line's `import` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// Directory holding conversations.jsonl.
    #[arg(long)]
    pub data: std::path::PathBuf,
    /// Make each session an episode (agent `eval`), sealed at its end.
    #[arg(long)]
    pub episodes: bool,
}

/// The command line's `eval` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    /// Directory holding conversations.jsonl and questions.jsonl.
    #[arg(long)]
    pub data: std::path::PathBuf,
    /// Results per question.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Also write each question's evidence ranks to this file (JSON Lines).
    #[arg(long)]
    pub per_question: Option<std::path::PathBuf>,
    /// Make each session an episode (agent `eval`), sealed at its end.
    #[arg(long)]
    pub episodes: bool,
    /// Only these candidate sources (comma-separated: bm25, vector, episode, ripple);
    /// the others' weights become 0 for this run.
    #[arg(long, value_delimiter = ',')]
    pub sources: Option<Vec<String>>,
    /// Override a source or prior weight for this run, `name=x` (bm25, vector,
    /// episode, ripple, neighbour, session, user, hint); repeatable.
    #[arg(long = "weight", value_name = "NAME=X")]
    pub weights: Vec<String>,
    /// Recall with the data set's own embeddings of this model
    /// (`embeddings/<MODEL>-turns.npy` and `-questions.npy`): the semantic source on
    /// caller-supplied vectors.
    #[arg(long, value_name = "MODEL")]
    pub embeddings: Option<String>,
    /// Recall with this embedding model as the semantic source, instead of the
    /// profile's: a static model (model2vec), or a sentence model (BERT family,
    /// sentence-transformers layout; a build with `--features sentence`), which embeds
    /// every turn before the questions are asked.
    #[arg(long, value_name = "DIR")]
    pub semantic_model: Option<std::path::PathBuf>,
}

/// `hypermem eval`: imports `args.data` into a fresh memory of `profile` (in a scratch
/// directory, removed after), scores recall and writes the per-question file if asked.
/// `progress(done, total)` follows the import.
///
/// # Errors
/// An unknown source or weight, unreadable data or embeddings, an unwritable
/// per-question file, the memory's errors.
pub fn run(
    args: &EvalArgs,
    mut profile: crate::Profile,
    progress: impl FnMut(usize, usize),
) -> Result<Report> {
    ablate(&mut profile.recall, args.sources.as_deref(), &args.weights)?;
    if args.semantic_model.is_some() {
        profile.semantic.model.clone_from(&args.semantic_model);
    }
    let embeddings = args
        .embeddings
        .as_deref()
        .map(|model| Embeddings::load(&args.data, model))
        .transpose()?;
    let scratch = tempfile::tempdir().map_err(|e| bad("scratch directory", e.to_string()))?;
    let memory = Memory::open(&profile, Some(scratch.path()))?;
    let report = evaluate(
        &memory,
        &args.data,
        args.k,
        args.episodes,
        embeddings.as_ref(),
        progress,
    )?;
    if let Some(path) = &args.per_question {
        let mut lines = String::new();
        for q in &report.questions {
            lines.push_str(&serde_json::to_string(q).expect("question results serialize"));
            lines.push('\n');
        }
        std::fs::write(path, lines).map_err(|e| {
            bad(
                "--per-question",
                format!("cannot write {}: {e}", path.display()),
            )
        })?;
    }
    Ok(report)
}

fn bad(what: &'static str, reason: impl Into<String>) -> crate::Error {
    LedgerError::Invalid {
        what,
        reason: reason.into(),
    }
    .into()
}

/// The project of a conversation id: the id itself when it is a valid project name;
/// otherwise its valid characters (others become `-`, at most 47 of them) followed by `-`
/// and 16 hex digits of its XXH3 hash, so distinct ids never share a project.
pub fn project_of(conversation: &str) -> Result<ProjectId> {
    if let Ok(p) = ProjectId::new(conversation) {
        return Ok(p);
    }
    let clean: String = conversation
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(47)
        .collect();
    let hash = xxhash_rust::xxh3::xxh3_64(conversation.as_bytes());
    let clean = clean.trim_start_matches('-');
    let name = if clean.is_empty() {
        format!("c{hash:016x}")
    } else {
        format!("{clean}-{hash:016x}")
    };
    Ok(ProjectId::new(name)?)
}

/// An id as a data set may write it: a non-empty string, or an integer (its decimal text).
fn id_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        _ => None,
    }
}

/// One question of `questions.jsonl`, validated.
struct Question {
    conversation_id: String,
    question_id: String,
    question: String,
    category: String,
    evidence: Vec<String>,
    superseded: Vec<String>,
}

/// Reads and validates `questions.jsonl` completely (before anything is written): ids are
/// non-empty strings or integers, `question` a string (an empty one is asked, and refused
/// as recall refuses it), `category` a string (default `unknown`), `evidence` and
/// `superseded_evidence` arrays of ids (absent: none). Errors name the file, line and field.
fn read_questions(path: &Path) -> Result<Vec<Question>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad("data file", format!("{}: {e}", path.display())))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut questions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), i + 1);
        let q: Value = serde_json::from_str(line)
            .map_err(|e| bad("data file", crate::input::json_error(&at, &e)))?;
        let wrong = |field: &str, expected: &str| {
            bad(
                "data file",
                match q.get(field) {
                    None => format!("{at}: `{field}` is missing"),
                    Some(v) => format!("{at}: `{field}` must be {expected}, not {}", type_name(v)),
                },
            )
        };
        if !q.is_object() {
            return Err(bad(
                "data file",
                format!(
                    "{at}: a question must be a JSON object, not {}",
                    type_name(&q)
                ),
            ));
        }
        let id = |field: &str| {
            q.get(field)
                .and_then(id_of)
                .ok_or_else(|| wrong(field, "a non-empty string or an integer"))
        };
        let ids = |field: &str| -> Result<Vec<String>> {
            match q.get(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| {
                        id_of(v).ok_or_else(|| {
                            wrong(
                                field,
                                "an array of turn ids (non-empty strings or integers)",
                            )
                        })
                    })
                    .collect(),
                Some(_) => Err(wrong(field, "an array of turn ids")),
            }
        };
        let text = |field: &str, default: Option<&str>| match (q.get(field), default) {
            (Some(Value::String(s)), _) => Ok(s.clone()),
            (None | Some(Value::Null), Some(d)) => Ok(d.to_owned()),
            _ => Err(wrong(field, "a string")),
        };
        questions.push(Question {
            conversation_id: id("conversation_id")?,
            question_id: id("question_id")?,
            question: text("question", None)?,
            category: text("category", Some("unknown"))?,
            evidence: ids("evidence")?,
            superseded: ids("superseded_evidence")?,
        });
    }
    Ok(questions)
}

/// Caller-supplied embeddings of a data set (`embeddings/<model>-turns.npy` and
/// `-questions.npy`, rows in the order of `turns.tsv` and `questions.tsv`;
/// `../shared/eval/FORMAT.md`).
#[derive(Debug, Default)]
pub struct Embeddings {
    turns: HashMap<(String, String), Vec<f32>>,
    questions: HashMap<String, Vec<f32>>,
}

impl Embeddings {
    /// Reads the embeddings of `model` under `data/embeddings/`.
    ///
    /// # Errors
    /// Missing or malformed files (naming the file), row counts that differ from the
    /// `.tsv` files.
    pub fn load(data: &Path, model: &str) -> Result<Self> {
        let dir = data.join("embeddings");
        let rows = |name: &str| -> Result<Vec<Vec<f32>>> { read_npy(&dir.join(name)) };
        let lines = |name: &str| -> Result<Vec<String>> {
            let path = dir.join(name);
            Ok(std::fs::read_to_string(&path)
                .map_err(|e| bad("embeddings", format!("{}: {e}", path.display())))?
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect())
        };
        let (turn_rows, turn_ids) = (rows(&format!("{model}-turns.npy"))?, lines("turns.tsv")?);
        let (q_rows, q_ids) = (
            rows(&format!("{model}-questions.npy"))?,
            lines("questions.tsv")?,
        );
        if turn_rows.len() != turn_ids.len() || q_rows.len() != q_ids.len() {
            return Err(bad(
                "embeddings",
                format!(
                    "{}: {} turn rows for {} turns.tsv lines, {} question rows for {} questions.tsv lines",
                    dir.display(),
                    turn_rows.len(),
                    turn_ids.len(),
                    q_rows.len(),
                    q_ids.len()
                ),
            ));
        }
        let mut turns = HashMap::new();
        for (line, row) in turn_ids.iter().zip(turn_rows) {
            let (conv, turn) = line
                .split_once('\t')
                .ok_or_else(|| bad("embeddings", format!("turns.tsv line {line:?} has no tab")))?;
            turns.insert((conv.to_owned(), turn.to_owned()), row);
        }
        let questions = q_ids.into_iter().zip(q_rows).collect();
        Ok(Self { turns, questions })
    }
}

/// A little-endian `float32`, C-order, two-dimensional NumPy `.npy` file, as rows.
fn read_npy(path: &Path) -> Result<Vec<Vec<f32>>> {
    let malformed = |why: &str| bad("embeddings", format!("{}: {why}", path.display()));
    let bytes =
        std::fs::read(path).map_err(|e| bad("embeddings", format!("{}: {e}", path.display())))?;
    let rest = bytes
        .strip_prefix(b"\x93NUMPY")
        .ok_or_else(|| malformed("not a .npy file"))?;
    let (major, rest) = rest
        .split_at_checked(2)
        .ok_or_else(|| malformed("truncated"))?;
    let (len, rest) = match major[0] {
        1 => {
            let (l, r) = rest
                .split_at_checked(2)
                .ok_or_else(|| malformed("truncated"))?;
            (usize::from(u16::from_le_bytes([l[0], l[1]])), r)
        }
        2 | 3 => {
            let (l, r) = rest
                .split_at_checked(4)
                .ok_or_else(|| malformed("truncated"))?;
            (u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize, r)
        }
        v => return Err(malformed(&format!("unknown .npy version {v}"))),
    };
    let (header, data) = rest
        .split_at_checked(len)
        .ok_or_else(|| malformed("truncated"))?;
    let header = String::from_utf8_lossy(header);
    if !header.contains("'<f4'") || header.contains("'fortran_order': True") {
        return Err(malformed("not little-endian float32 in C order"));
    }
    let shape = header
        .split_once("'shape':")
        .and_then(|(_, r)| r.split_once('('))
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(dims, _)| {
            dims.split(',')
                .filter(|d| !d.trim().is_empty())
                .map(|d| d.trim().parse::<usize>())
                .collect::<std::result::Result<Vec<_>, _>>()
        })
        .and_then(|r| r.ok())
        .ok_or_else(|| malformed("no readable shape"))?;
    let [rows, cols] = shape[..] else {
        return Err(malformed("not a matrix"));
    };
    if cols == 0 || data.len() != rows * cols * 4 {
        return Err(malformed(&format!(
            "{} data bytes for shape ({rows}, {cols})",
            data.len()
        )));
    }
    Ok(data
        .chunks_exact(cols * 4)
        .map(|row| {
            row.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .collect())
}

/// Applies an ablation to recall settings: with `sources`, every candidate source not
/// named gets weight 0; each `name=x` of `weights` then sets that source's or prior's
/// weight ([`crate::config::RecallSettings::weight_mut`]).
///
/// # Errors
/// An unknown name or a weight that is not a finite number `>= 0`, naming it.
pub fn ablate(
    settings: &mut crate::config::RecallSettings,
    sources: Option<&[String]>,
    weights: &[String],
) -> Result<()> {
    if let Some(keep) = sources {
        for name in keep {
            if crate::config::RecallSettings::canonical(name).is_none() {
                return Err(bad(
                    "--sources",
                    format!(
                        "unknown source `{name}` (known: {})",
                        crate::config::RecallSettings::SOURCES.join(", ")
                    ),
                ));
            }
        }
        let named: Vec<&str> = keep
            .iter()
            .filter_map(|k| crate::config::RecallSettings::canonical(k))
            .collect();
        for &source in crate::config::RecallSettings::SOURCES {
            if !named.contains(&source) {
                *settings.weight_mut(source).expect("a known source") = 0.0;
            }
        }
    }
    for w in weights {
        let (name, value) = w
            .split_once('=')
            .ok_or_else(|| bad("--weight", format!("`{w}` is not NAME=X")))?;
        let value: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                bad(
                    "--weight",
                    format!("`{w}`: the weight must be a number >= 0"),
                )
            })?;
        *settings
            .weight_mut(name.trim())
            .ok_or_else(|| bad("--weight", format!("unknown source or prior `{name}`")))? = value;
    }
    Ok(())
}

/// The agent of the events of an import with `episodes` (each session one episode).
pub const EPISODE_AGENT: &str = "eval";

/// One turn of a conversation file, validated.
#[derive(Debug, Clone)]
struct Turn {
    turn_id: String,
    role: Option<String>,
    text: String,
    time: Option<String>,
}

/// One session, validated.
#[derive(Debug, Clone)]
struct Session {
    session_id: String,
    date: Option<String>,
    turns: Vec<Turn>,
}

/// One conversation (a line of `conversations.jsonl`), validated.
#[derive(Debug, Clone)]
struct Conversation {
    conversation_id: String,
    sessions: Vec<Session>,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportReport {
    /// Conversations in the file.
    pub conversations: usize,
    /// Turns written now.
    pub new: usize,
    /// Turns already stored (same conversation and turn id), skipped: an import can be
    /// re-run, and an interrupted one resumes where it stopped.
    pub skipped: usize,
    /// Turns without text (nothing to remember, not stored): an empty observation is
    /// refused, so an import leaves them out and counts them here.
    #[serde(default)]
    pub empty: usize,
}

/// Reads and validates `conversations.jsonl` completely: every malformed input is refused
/// before anything is written, naming the file, line and field. A UTF-8 byte-order mark
/// and CRLF line ends are accepted.
fn read_conversations(path: &Path, max_text: usize) -> Result<Vec<Conversation>> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        bad(
            "import file",
            format!("{origin}: cannot be read ({})", e.kind()),
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let column = 1 + at - bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        bad(
            "import file",
            format!(
                "{origin}:{line}: byte {at} (column {column}) is not UTF-8: save the file as UTF-8 (it looks like another encoding, such as Latin-1)"
            ),
        )
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut conversations = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{origin}:{}", i + 1);
        let value: Value = serde_json::from_str(line)
            .map_err(|e| bad("import file", crate::input::json_error(&at, &e)))?;
        let c = conversation(&at, &value, max_text)?;
        if !ids.insert(c.conversation_id.clone()) {
            return Err(bad(
                "import file",
                format!(
                    "{at}: conversation_id {:?} appears twice in the file",
                    c.conversation_id
                ),
            ));
        }
        conversations.push(c);
    }
    if conversations.is_empty() {
        return Err(bad(
            "import file",
            format!("{origin}: the file holds no conversation"),
        ));
    }
    Ok(conversations)
}

/// A JSON value's type, in words.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A field of the wrong type, or missing (`got` is `None`).
fn wrong_field(
    at: &str,
    path: &str,
    field: &str,
    expected: &str,
    got: Option<&Value>,
) -> crate::Error {
    match got {
        None => bad("import file", format!("{at}: `{path}{field}` is missing")),
        Some(v) => bad(
            "import file",
            format!(
                "{at}: `{path}{field}` must be {expected}, not {}",
                type_name(v)
            ),
        ),
    }
}

/// A required string field.
fn string_field(at: &str, obj: &Value, path: &str, field: &str) -> Result<String> {
    match obj.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        other => Err(wrong_field(at, path, field, "a string", other)),
    }
}

/// An optional string field (absent or null is `None`).
fn optional_string(at: &str, obj: &Value, path: &str, field: &str) -> Result<Option<String>> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        other => Err(wrong_field(at, path, field, "a string or null", other)),
    }
}

/// A required array field.
fn array_field<'a>(at: &str, obj: &'a Value, path: &str, field: &str) -> Result<&'a Vec<Value>> {
    match obj.get(field) {
        Some(Value::Array(a)) => Ok(a),
        other => Err(wrong_field(at, path, field, "an array", other)),
    }
}

fn conversation(at: &str, v: &Value, max_text: usize) -> Result<Conversation> {
    if !v.is_object() {
        return Err(bad(
            "import file",
            format!(
                "{at}: a conversation must be a JSON object, not {}",
                type_name(v)
            ),
        ));
    }
    // An integer id is an id; anything else must be a string.
    let conversation_id = match v
        .get("conversation_id")
        .filter(|id| id.is_number())
        .and_then(id_of)
    {
        Some(id) => id,
        None => string_field(at, v, "", "conversation_id")?,
    };
    if conversation_id.trim().is_empty() {
        return Err(bad(
            "import file",
            format!("{at}: `conversation_id` is empty"),
        ));
    }
    let mut sessions = Vec::new();
    let mut turn_ids = std::collections::HashSet::new();
    for (si, s) in array_field(at, v, "", "sessions")?.iter().enumerate() {
        let sp = format!("sessions[{si}].");
        if !s.is_object() {
            return Err(bad(
                "import file",
                format!(
                    "{at}: `sessions[{si}]` must be an object, not {}",
                    type_name(s)
                ),
            ));
        }
        let session_id =
            optional_string(at, s, &sp, "session_id")?.unwrap_or_else(|| format!("session-{si}"));
        let date = optional_string(at, s, &sp, "date")?;
        let mut turns = Vec::new();
        for (ti, t) in array_field(at, s, &sp, "turns")?.iter().enumerate() {
            let tp = format!("{sp}turns[{ti}].");
            if !t.is_object() {
                return Err(bad(
                    "import file",
                    format!(
                        "{at}: `{sp}turns[{ti}]` must be an object, not {}",
                        type_name(t)
                    ),
                ));
            }
            let turn_id = match t.get("turn_id") {
                None => {
                    return Err(bad(
                        "import file",
                        format!("{at}: `{tp}turn_id` is missing"),
                    ));
                }
                Some(v) => id_of(v).ok_or_else(|| {
                    bad(
                        "import file",
                        format!(
                            "{at}: `{tp}turn_id` must be a non-empty string or an integer, not {}",
                            type_name(v)
                        ),
                    )
                })?,
            };
            if !turn_ids.insert(turn_id.clone()) {
                return Err(bad(
                    "import file",
                    format!(
                        "{at}: turn {turn_id:?} (`{tp}turn_id`) appears twice in conversation {conversation_id:?}"
                    ),
                ));
            }
            let text = string_field(at, t, &tp, "text")?;
            if text.len() > max_text {
                return Err(bad(
                    "import file",
                    format!(
                        "{at}: turn {turn_id:?} is {} bytes, more than the limit of {max_text} bytes",
                        text.len()
                    ),
                ));
            }
            let role = optional_string(at, t, &tp, "role")?;
            if role.as_deref().is_some_and(|r| r.trim().is_empty()) {
                return Err(bad(
                    "import file",
                    format!(
                        "{at}: `{tp}role` is empty: give `user`, `assistant` or a speaker's name, or leave the field out"
                    ),
                ));
            }
            turns.push(Turn {
                turn_id,
                role,
                text,
                time: optional_string(at, t, &tp, "time")?,
            });
        }
        sessions.push(Session {
            session_id,
            date,
            turns,
        });
    }
    Ok(Conversation {
        conversation_id,
        sessions,
    })
}

/// Ingests `conversations.jsonl` (one project per conversation, turns as events with their
/// turn id as source id, sessions as threads; with `episodes`, each session also becomes an
/// episode of agent [`EPISODE_AGENT`]); `progress` is called with turns done.
///
/// The whole file is validated before the first write. Turns already stored (same
/// conversation and turn id, same text) are skipped and counted, so an import can be
/// re-run and an interrupted one resumes; one stored with other text is refused
/// (`changed_turn`) before anything is written.
///
/// # Errors
/// Malformed files (naming file, line and field), ledger and store errors.
pub fn import(
    memory: &Memory,
    dir: &Path,
    episodes: bool,
    embeddings: Option<&Embeddings>,
    mut progress: impl FnMut(usize, usize),
) -> Result<ImportReport> {
    let max_text = memory.ledger().config().max_content_bytes;
    let conversations = read_conversations(&dir.join("conversations.jsonl"), max_text)?;
    let total: usize = conversations
        .iter()
        .flat_map(|c| &c.sessions)
        .map(|s| s.turns.len())
        .sum();
    // Every embedding exists before anything is written.
    if let Some(embeddings) = embeddings {
        for c in &conversations {
            for t in c.sessions.iter().flat_map(|s| &s.turns) {
                if !embeddings
                    .turns
                    .contains_key(&(c.conversation_id.clone(), t.turn_id.clone()))
                {
                    return Err(bad(
                        "embeddings",
                        format!(
                            "no embedding for turn {} of {}",
                            t.turn_id, c.conversation_id
                        ),
                    ));
                }
            }
        }
    }
    let mut report = ImportReport {
        conversations: conversations.len(),
        ..ImportReport::default()
    };
    // Before the first write: a turn stored before under the same conversation and turn id
    // with other text is an edit the append-only ledger cannot take silently.
    let mut stored = Vec::with_capacity(conversations.len());
    for conv in &conversations {
        let project = project_of(&conv.conversation_id)?;
        let held = memory.ledger().source_contents(&project)?;
        for turn in conv.sessions.iter().flat_map(|s| &s.turns) {
            if let Some(before) = held.get(&turn.turn_id)
                && *before != turn.text
            {
                return Err(LedgerError::Refused {
                    reason: crate::base::Reason::ChangedTurn,
                    message: format!(
                        "conversation {:?}, turn {:?}: stored before with other text; the ledger is append-only, so an edited turn needs a turn id of its own (nothing was written)",
                        conv.conversation_id, turn.turn_id
                    ),
                }
                .into());
            }
        }
        stored.push((project, held));
    }
    for (conv, (project, stored)) in conversations.iter().zip(stored) {
        let conversation = conv.conversation_id.as_str();
        let mut batch = Vec::new();
        // A turn without a time of its own happened after the turn before it: it takes the
        // latest time known in the conversation (never "now", years after the others).
        let mut known: Option<i64> = None;
        for session in &conv.sessions {
            let sid = session.session_id.as_str();
            let session_date = session.date.as_deref().and_then(crate::clock::parse_when);
            for turn in &session.turns {
                let at = turn
                    .time
                    .as_deref()
                    .and_then(crate::clock::parse_when)
                    .or(session_date)
                    .or(known);
                known = known.max(at);
                if stored.contains_key(&turn.turn_id) {
                    report.skipped += 1;
                    continue;
                }
                if turn.text.trim().is_empty() {
                    report.empty += 1;
                    continue;
                }
                // `user` and `assistant` are roles; any other value names a speaker of a
                // multi-party conversation: role user, the name in the event's speaker
                // field (indexed for recall beside the text), the content raw.
                let (role, speaker) = match turn.role.as_deref() {
                    Some("assistant") => (Role::Assistant, None),
                    Some("user") | None => (Role::User, None),
                    Some(name) => (Role::User, Some(name.to_owned())),
                };
                let mut e = NewEvent::new(project.clone(), role, EventKind::Message, &turn.text)
                    .thread(sid)
                    .session(sid);
                e.speaker = speaker;
                // When it happened: the turn's time, else the session's date, else the
                // latest earlier time of the conversation, else now.
                if let Some(at) = at {
                    e = e.at(at);
                }
                e.source_id = Some(turn.turn_id.clone());
                if let Some(embeddings) = embeddings {
                    e.embedding = embeddings
                        .turns
                        .get(&(conversation.to_owned(), turn.turn_id.clone()))
                        .cloned();
                }
                batch.push(e);
            }
        }
        // Exactly one episode per session when asked (of agent [`EPISODE_AGENT`]): the
        // session's events are appended explicitly, so no topic shift inside a session
        // splits it; it is sealed after its last event.
        for session in batch.chunk_by(|a, b| a.session == b.session) {
            let episode = if episodes {
                Some(memory.start_episode(&project, EPISODE_AGENT)?)
            } else {
                None
            };
            for chunk in session.chunks(1000) {
                let ids = memory.observe_batch(chunk)?;
                if let Some(ep) = episode {
                    memory.append_events(&project, ep, &ids)?;
                }
                report.new += chunk.len();
                progress(report.new + report.skipped + report.empty, total);
            }
            if let Some(ep) = episode {
                memory.end_episode(&project, ep, None, None)?;
            }
        }
        progress(report.new + report.skipped + report.empty, total);
    }
    Ok(report)
}

/// Ingests the data set into `memory`, asks every question with evidence (top `k`) and
/// scores the rankings; with `embeddings`, every turn and question carries its
/// caller-supplied embedding.
///
/// # Errors
/// As [`import`].
pub fn evaluate(
    memory: &Memory,
    dir: &Path,
    k: usize,
    episodes: bool,
    embeddings: Option<&Embeddings>,
    progress: impl FnMut(usize, usize),
) -> Result<Report> {
    let t = Instant::now();
    // Every question is read and checked before anything is written.
    let conversations = dir.join("conversations.jsonl");
    if !conversations.is_file() {
        return Err(bad(
            "data file",
            format!(
                "{}: no such file (a data set is a directory holding conversations.jsonl and questions.jsonl)",
                conversations.display()
            ),
        ));
    }
    let asked = read_questions(&dir.join("questions.jsonl"))?;
    let imported = import(memory, dir, episodes, embeddings, progress)?;
    let turns = imported.new + imported.skipped + imported.empty;
    let ingest_secs = t.elapsed().as_secs_f64();
    // A sentence model embeds off the write path: every turn is embedded before the
    // questions, so the scores do not depend on how far the worker got.
    let t = Instant::now();
    memory.embed_pending(None, usize::MAX, None)?;
    let embed_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    #[derive(Default)]
    struct Sums {
        n: usize,
        r1: f64,
        r5: f64,
        r10: f64,
        hit: f64,
        mrr: f64,
        updates: usize,
        ordered: usize,
    }
    let mut sums: BTreeMap<String, Sums> = BTreeMap::new();
    let mut questions = Vec::new();
    let mut unasked = Vec::new();
    let mut census = RegimeCensus {
        setting: memory.profile().recall.turn_regime,
        conversations: BTreeMap::new(),
    };
    let mut regimes = std::collections::HashSet::new();
    let mut no_evidence = NoEvidence::default();
    for q in asked {
        let (evidence, superseded) = (q.evidence, q.superseded);
        let project = project_of(&q.conversation_id)?;
        let question_id = q.question_id.as_str();
        let mut rq = crate::RecallQuery::new(&q.question, k.max(10));
        if let Some(embeddings) = embeddings {
            match embeddings.questions.get(question_id) {
                Some(e) => rq.embedding = Some(e),
                // A question without evidence is only counted; without its embedding it is
                // not asked.
                None if evidence.is_empty() => continue,
                None => {
                    return Err(bad(
                        "embeddings",
                        format!("no embedding for question {question_id}"),
                    ));
                }
            }
        }
        // A question the memory cannot take (its conversation stored no turn, its text is
        // empty) returns nothing, as it would to an agent; the report names it.
        let hits = match memory.recall_with(&project, &rq) {
            Ok(r) => {
                if regimes.insert(project.clone()) {
                    *census
                        .conversations
                        .entry(r.turn_regime.reads_as)
                        .or_default() += 1;
                }
                r.items
            }
            Err(e) if matches!(e.reason(), Reason::UnknownProject | Reason::InvalidArgument) => {
                tracing::warn!(question = question_id, error = %e, "question returns nothing");
                unasked.push(Unasked {
                    question_id: question_id.to_owned(),
                    reason: e.reason(),
                    message: e.to_string(),
                });
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        if evidence.is_empty() {
            no_evidence.asked += 1;
            if hits.is_empty() {
                no_evidence.returned_nothing += 1;
            } else {
                no_evidence.answered.push(question_id.to_owned());
            }
            continue;
        }
        let rank_of: HashMap<String, usize> = hits
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.event.source_id.clone().map(|s| (s, i + 1)))
            .collect();
        let found = |n: usize| {
            evidence
                .iter()
                .filter(|e| rank_of.get(*e).is_some_and(|&r| r <= n))
                .count() as f64
                / evidence.len() as f64
        };
        let first = evidence
            .iter()
            .filter_map(|e| rank_of.get(e))
            .min()
            .copied();
        let category = q.category;
        let ranks = |ids: &[String]| -> Vec<(String, Option<usize>)> {
            ids.iter()
                .map(|e| (e.clone(), rank_of.get(e).copied()))
                .collect()
        };
        questions.push(QuestionResult {
            question_id: question_id.to_owned(),
            category: category.clone(),
            evidence_ranks: ranks(&evidence),
            superseded_ranks: ranks(&superseded),
            returned: hits
                .iter()
                .map(|h| h.event.source_id.clone().unwrap_or_default())
                .collect(),
        });
        for key in [category, String::new()] {
            let s = sums.entry(key).or_default();
            s.n += 1;
            s.r1 += found(1);
            s.r5 += found(5);
            s.r10 += found(10);
            s.hit += f64::from(u8::from(first.is_some_and(|r| r <= 10)));
            s.mrr += first.map_or(0.0, |r| 1.0 / r as f64);
            if !superseded.is_empty() {
                s.updates += 1;
                let oldest_best = superseded
                    .iter()
                    .filter_map(|e| rank_of.get(e))
                    .min()
                    .copied();
                if first.is_some_and(|f| oldest_best.is_none_or(|o| f < o)) {
                    s.ordered += 1;
                }
            }
        }
    }
    let score = |s: &Sums| {
        let n = s.n.max(1) as f64;
        Score {
            questions: s.n,
            recall_at_1: s.r1 / n,
            recall_at_5: s.r5 / n,
            recall_at_10: s.r10 / n,
            hit_at_10: s.hit / n,
            mrr: s.mrr / n,
            updates: s.updates,
            update_order: if s.updates == 0 {
                0.0
            } else {
                s.ordered as f64 / s.updates as f64
            },
        }
    };
    let overall = sums.remove("").map(|s| score(&s)).unwrap_or_default();
    Ok(Report {
        turns,
        ingest_secs,
        embed_secs,
        query_secs: t.elapsed().as_secs_f64(),
        categories: sums.iter().map(|(k, s)| (k.clone(), score(s))).collect(),
        overall,
        questions,
        unasked,
        turn_regime: census,
        no_evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_ids_map_to_distinct_valid_projects() {
        assert_eq!(project_of("chats100k-1").unwrap().as_str(), "chats100k-1");
        let ids = [
            "c 1",
            "c-1",
            "c/1",
            "-c1",
            "é",
            "",
            &"x".repeat(80),
            &"x".repeat(81),
        ];
        let projects: Vec<String> = ids
            .iter()
            .map(|id| project_of(id).unwrap().as_str().to_owned())
            .collect();
        let mut unique = projects.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{projects:?}");
        assert_eq!(project_of("c 1").unwrap(), project_of("c 1").unwrap());
    }
}
