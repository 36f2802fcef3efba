//! What one recall reads and what it computes once, before any source runs: the
//! read-only [`Context`] (the project's ledger, tiers, cognition and lexical index, the
//! profile's settings) and the [`Plan`] (lexical terms, the query's HDC and semantic
//! vectors, the project's baselines and the floors they give).

use std::sync::{Arc, RwLock};

use hdv::Hypervector;

use std::collections::HashMap;

use super::RecallQuery;
use super::fusion::{Candidate, FusionParams};
use super::query::CompiledQuery;
use super::values;
use crate::base::{ProjectId, VectorId};
use crate::cognition::Cognition;
use crate::config::RecallSettings;
use crate::error::Result;
use crate::index::lexical::{self, BASELINE_SAMPLE, COMMON_IDF, ProjectText, common};
use crate::ledger::{Event, Ledger};
use crate::semantic::{Embedder, Encoders, Space};
use crate::store::TierManager;
use crate::sync::RecoverRw as _;

/// The project as one recall reads it: the plan, sources and stages see this, never the
/// memory they run in (the facade builds it).
pub(crate) struct Context<'a> {
    pub project: &'a ProjectId,
    pub ledger: &'a Ledger,
    pub tiers: &'a TierManager,
    pub cognition: &'a Cognition,
    /// The project's lexical index (BM25 postings, chronology, directives, speakers).
    pub text: Arc<RwLock<ProjectText>>,
    pub settings: RecallSettings,
    /// Bits of a hypervector.
    pub bits: usize,
    /// The profile's text encoders (the query's HDC vector).
    pub encoders: &'a Encoders,
    /// The weight of character n-grams in stored vectors (the profile's
    /// `text.ngram_weight`).
    pub ngram_weight: f32,
    /// The profile's embedder (a static model embeds the query; any embedding is projected
    /// to bits).
    pub embedder: &'a Embedder,
    /// The project's semantic space, when the query has an embedding or the profile a
    /// model to embed it with.
    pub space: Option<Arc<RwLock<Space>>>,
}

impl Context<'_> {
    /// The HDC similarity (`1 − 2·hamming / D`) of a Hamming distance.
    pub fn similarity(&self, hamming: u32) -> f64 {
        1.0 - 2.0 * f64::from(hamming) / self.bits as f64
    }
}

/// A similarity source's two thresholds: the relevance floor an item's own similarity
/// must reach to count as evidence, and the higher one at which it says the query is
/// answered (not a knowledge gap).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Floors {
    pub item: f64,
    pub answer: f64,
}

/// The weight of a query's character n-grams, relative to its words, in a chat of short
/// turns ([`lexical::by_turn_length`]; the profile's `text.ngram_weight` where turns are
/// long, log-linear between): as much as a word. Short turns share few words with a
/// question, so an inflection or spelling that differs ("plays" / "played") loses a large
/// share of the match, which the n-grams keep; in long turns most n-grams a question
/// shares with a turn are incidental. Only the query changes (stored vectors are
/// untouched). 0.5 to 2.0 measured; 1.0 for every project costs where turns are long
/// (`docs/EXPERIMENTS.md`).
const QUERY_NGRAMS_SHORT: f32 = 1.0;

/// The weight (a share of its own IDF) at which the lexical source also matches the other
/// inflections a project holds of each query word ("seat" → "seats", "lived" → "living":
/// [`crate::text::inflections`]) in a chat of short turns; none where turns are long,
/// log-linear between ([`lexical::by_turn_length`]), for the reason of
/// [`QUERY_NGRAMS_SHORT`]: a short turn that says a query word in another inflection loses
/// most of its match, while in long turns other inflections mostly match incidentally.
/// 0 to 1.0 measured; for every project it costs where turns are long
/// (`docs/EXPERIMENTS.md`).
const QUERY_INFLECTIONS_SHORT: f32 = 0.5;

/// A query word the project never holds as written is also looked for in the words it
/// does hold that are that word with up to this many letters more or fewer at its end
/// ("postgres" → "postgresql", "symbolic" → "symbol", "entrepreneurial" →
/// "entrepreneur"): in the knowledge-gap decision for every project (as
/// [`crate::text::word_forms`]) and, in a chat of short turns, as terms at
/// [`QUERY_INFLECTIONS_SHORT`], as inflections are. A word held as written never is: the
/// rule only reaches words that would otherwise match nothing (2, 3 and 4 letters
/// measured: `docs/EXPERIMENTS.md`).
const EXTENSION_LETTERS: usize = 3;

/// The fewest letters a word (and the shorter word it is looked for as) has for
/// [`EXTENSION_LETTERS`] to apply: below five, a word's continuations are mostly other
/// words ("plan" → "plane", "plant"); four and six measured the same.
const EXTENSION_MIN: usize = 5;

/// The fewest letters of a query word the project never holds as written for it to be
/// looked for among the held words one edit away (a misspelling: "torunament" →
/// "tournament", `Postings::one_edit_away`): shorter words have too many neighbours that
/// are other words ("adopt" / "adapt"; five and seven measured: `docs/EXPERIMENTS.md`).
const TYPO_MIN: usize = 7;

/// The letters of `word` when it is a word of letters alone, at least `min` of them, that
/// the project never holds as written: the words the held-form rules reach.
fn unheld(text: &ProjectText, word: &str, min: usize) -> Option<usize> {
    let letters = word.chars().count();
    (letters >= min && word.chars().all(char::is_alphabetic) && text.postings.df(word) == 0)
        .then_some(letters)
}

/// The words `word` may be held as when the project never holds it as written: a few
/// letters longer or shorter ([`EXTENSION_LETTERS`]), or, from [`TYPO_MIN`] letters, one
/// edit away; none for a held or short word, nor for one with a digit.
fn held_as<'t>(text: &'t ProjectText, word: &str) -> Vec<&'t str> {
    let Some(letters) = unheld(text, word, EXTENSION_MIN) else {
        return Vec::new();
    };
    let mut held = text
        .postings
        .extensions(word, EXTENSION_LETTERS, EXTENSION_MIN);
    if letters >= TYPO_MIN {
        held.extend(text.postings.one_edit_away(word));
    }
    held
}

/// The fewest letters a form sharing a query word's stem must share with it, from the
/// start, to be searched for it ("vegetar" of "vegetarian" and "vegetarianism"; "plan" of "planes"
/// and "plan" is too short to be a stem rather than another word).
const DERIVED_STEM_MIN: usize = 5;

/// The fewest letters of a query word the project never holds as written for it to be
/// looked for as two words ("wifi" → "wi fi", "smartwatch" → "smart watch"), each part of
/// two letters or more ([`open_compounds`]).
const COMPOUND_MIN: usize = 4;

/// A compound written open in the query and closed in the project: the query's adjacent
/// word pairs that the project holds as one word ("work out" → "workout").
fn closed_compounds(text: &ProjectText, pairs: &[String]) -> Vec<String> {
    pairs
        .iter()
        .map(|p| p.split(' ').collect::<String>())
        .filter(|joined| text.postings.df(joined) > 0)
        .collect()
}

/// A compound written closed in the query and open in the project: the ways to cut a word
/// the project never holds as written into two held adjacent words ("smartwatch" →
/// "smart watch"; "wi-fi" is held as the pair "wi fi").
fn open_compounds(text: &ProjectText, word: &str) -> Vec<String> {
    let Some(letters) = unheld(text, word, COMPOUND_MIN) else {
        return Vec::new();
    };
    word.char_indices()
        .skip(2)
        .take(letters - 3)
        .map(|(i, _)| format!("{} {}", &word[..i], &word[i..]))
        .filter(|pair| text.bigrams.df(pair) > 0)
        .collect()
}

/// The relevance floor: standard deviations above the mean similarity of the project's
/// unrelated baseline a memory without lexical evidence must reach.
pub(crate) const FLOOR_SIGMAS: f64 = 2.0;
/// The similarity (HDC or semantic bits) that counts as evidence, for the floor and for a
/// gap, in a project too small to sample its unrelated memories (fewer than 8): half the
/// bits agreeing beyond chance (for sign-projected embeddings, a cosine of about 0.7),
/// which unrelated texts never reach and a restatement does. Measured nowhere on the
/// development sets (their projects are all large): a prior, not a fitted constant.
const PRIOR_SIMILARITY: f64 = 0.5;
/// How sure a knowledge gap must be that its best candidate is no better than chance.
const GAP_CONFIDENCE: f64 = 0.95;

impl Floors {
    /// The floors of a source whose query similarity to the project's unrelated baseline
    /// sample has this `(mean, sd)`, in a project of `documents` memories; the prior
    /// ([`PRIOR_SIMILARITY`]) when the project is too small to sample.
    fn new(baseline: Option<(f64, f64)>, documents: u64) -> Self {
        let chance_best = chance_best(documents, GAP_CONFIDENCE);
        baseline.map_or(
            Self {
                item: PRIOR_SIMILARITY,
                answer: PRIOR_SIMILARITY,
            },
            |(mean, sd)| Self {
                item: mean + FLOOR_SIGMAS * sd,
                answer: mean + chance_best.max(FLOOR_SIGMAS) * sd,
            },
        )
    }
}

/// One recall's request compiled against the project: everything the sources and stages
/// read that does not depend on the candidates.
pub(crate) struct Plan<'a> {
    /// The caller's request (`k`, filters, session, context width).
    pub rq: &'a RecallQuery<'a>,
    /// The query text compiled (its words, filters, phrases, time hint).
    pub compiled: &'a CompiledQuery,
    /// The query's lexical terms with the share of their IDF they count at: its
    /// distinctive words (all of them when it has none) at 1, then, in a chat of short
    /// turns, the other inflections of its words that the project holds and that are as
    /// distinctive as a term, and the longer, shorter or one-edit-away words it holds for a
    /// word it never holds as written ([`held_as`]) and the words it holds for two adjacent
    /// query words ([`closed_compounds`]), at [`QUERY_INFLECTIONS_SHORT`] (by turn
    /// length).
    pub terms: Vec<(String, f32)>,
    /// The query's word pairs, weighted alike: its own at 1, then those with one word in
    /// another inflection that the project holds, and the pairs it holds for one query
    /// word ([`open_compounds`]).
    pub pairs: Vec<(String, f32)>,
    /// Whether a lexical match says the query is answered (the gap decision).
    pub lexical_answers: bool,
    /// The names the question gives ([`names`]): a match on them alone answers nothing.
    pub names: Vec<String>,
    /// The names with the forms the project holds them in when it never holds one as
    /// written ([`name_forms`]): what a text about them holds ([`Plan::about_named`]).
    pub name_forms: Vec<String>,
    /// The query's words and terms, each with its forms ([`crate::text::word_forms`]):
    /// what a text must hold, besides names, to answer ([`Plan::names_only`]).
    pub forms: Vec<(String, Vec<String>)>,
    /// The kind of value the question asks for, if it says ([`values::Wanted`]).
    pub wanted: values::Wanted,
    /// The query's HDC vector (IDF-weighted), when it has words.
    pub vector: Option<Hypervector>,
    /// The query's similarity to the project's unrelated baseline, `(mean, sd)`.
    pub baseline: Option<(f64, f64)>,
    /// The project's semantic space and the query's bits in it, when both exist.
    pub semantic: Option<(Arc<RwLock<crate::semantic::Space>>, Hypervector)>,
    /// Floors of the HDC vector source and of the semantic source.
    pub vector_floors: Floors,
    pub semantic_floors: Floors,
    pub fusion: FusionParams,
}

impl Plan<'_> {
    /// The query's words (filters and quoted phrases taken out).
    pub fn query(&self) -> &str {
        self.compiled.text.as_str()
    }

    /// Whether the query's time hint applies to `event`: it was said inside the window, or
    /// it tells of a stretch of the past that overlaps the window ("yesterday I met some
    /// artists in Boston", said the day after the day asked about; [`told_past`]).
    ///
    /// [`told_past`]: crate::recall::query::told_past
    pub fn in_hint(&self, event: &Event) -> bool {
        let (since, until) = (self.compiled.since, self.compiled.until);
        let overlaps =
            |(from, to): (i64, i64)| since.is_none_or(|s| to > s) && until.is_none_or(|u| from < u);
        self.compiled.hinted
            && (!outside(event, since, until)
                || crate::recall::query::told_past(&event.content, event.created_at)
                    .is_some_and(overlaps))
    }

    /// A candidate's similarity in each similarity source (semantic, HDC vector), with
    /// that source's floors; `vector` is its HDC similarity, when known.
    pub fn similarities(&self, id: u64, vector: Option<f64>) -> [Option<(f64, Floors)>; 2] {
        let semantic = self.semantic.as_ref().and_then(|(space, q)| {
            let s = space.reading().similarity(q, id)?;
            Some((s, self.semantic_floors))
        });
        [semantic, vector.map(|s| (s, self.vector_floors))]
    }

    /// Evidence of its own: a lexical match (a neighbour's score passed on by smoothing is
    /// not one), or a similarity above its source's relevance floor. A match on the
    /// speaker's name alone keeps an item here (a question about a person is often
    /// answered by what the person said: refusing such items cost LoCoMo recall@10 0.034,
    /// `docs/EXPERIMENTS.md`) but never answers the query ([`Self::answers`]).
    pub fn supported(&self, c: &Candidate, vector: Option<f64>) -> bool {
        c.lexical()
            || self
                .similarities(c.fused.id, vector)
                .into_iter()
                .flatten()
                .any(|(s, floors)| s >= floors.item)
    }

    /// Whether the candidate answers the query: evidence of its own that counts for the
    /// gap decision (a lexical match, not on a name alone, or a similarity above what the
    /// best unrelated memory reaches by chance), and, when the question asks for a kind of
    /// value ("when", "how much … cost"), a value of that kind stated. "How much do the
    /// school photos cost?" is not answered by "School photos are on the 14th".
    pub fn answers(&self, c: &Candidate, event: &Event, vector: Option<f64>) -> bool {
        let evidence = (self.lexical_answers && c.lexical() && !self.names_only(event))
            || self
                .similarities(c.fused.id, vector)
                .into_iter()
                .flatten()
                .any(|(s, floors)| s >= floors.answer);
        evidence && self.wanted.could_be_answered_by(&event.content)
    }

    /// Whether the event is about whom or what the question names ([`names`]): a question
    /// that gives names is answered only by a text that holds one of them, that one of them
    /// said, or that leaves its subject to the turns before it when one of them names
    /// them in the phrase it opens with, its subject ("Coach is Mr Adeyemi" after "Tunde
    /// plays in goal"; "She's allergic to nuts" after "My friend Tunde's sister starts
    /// school"). "How old is Tunde's dog?" is not answered by "My dog turns four in
    /// May", nor by "Dog's vet visit is on Friday" when Tunde was last named as a guest
    /// ("dinner with Tunde"), however many words they share. `earlier` gives the
    /// [`SUBJECT_TURNS`] turns before the event in its conversation; it is read only for
    /// a text that names none of them and does not open with its own subject (a
    /// first-person word, or another name's possessive).
    ///
    /// # Errors
    /// What `earlier` returns.
    pub fn about_named<E>(
        &self,
        event: &Event,
        earlier: impl FnOnce() -> Result<Vec<Event>, E>,
    ) -> Result<bool, E> {
        if self.name_forms.is_empty() || self.named_in(event) {
            return Ok(true);
        }
        let own_subject = event.content.split_whitespace().next().is_some_and(|w| {
            crate::text::tokens(w)
                .first()
                .is_some_and(|t| crate::text::en::FIRST_PERSON.contains(&t.as_str()))
                || possessor(w).is_some()
        });
        if own_subject {
            return Ok(false);
        }
        Ok(earlier()?.iter().any(|e| {
            opening_phrase(&e.content)
                .iter()
                .any(|w| self.name_forms.contains(w))
                || self.said_by_named(e)
        }))
    }

    /// Whether one of the question's names is held by the event's text or is its speaker.
    fn named_in(&self, event: &Event) -> bool {
        let own = crate::text::tokens(&event.content);
        self.said_by_named(event) || self.name_forms.iter().any(|n| own.contains(n))
    }

    /// Whether one of the question's names is the event's speaker.
    fn said_by_named(&self, event: &Event) -> bool {
        let speaker = event
            .speaker
            .as_deref()
            .map(crate::text::tokens)
            .unwrap_or_default();
        self.name_forms.iter().any(|n| speaker.contains(n))
    }

    /// Whether the event matches the query only through a name: its speaker's name or a
    /// name the question gives ([`names`]) is a query term and its text holds no other
    /// query word, in any form ("When is Priya's flight home?" of anything Priya said;
    /// "What is Samir's email address?" of "Our accountant is Samir"). A word too common
    /// to be a term still counts as the text's own ("What does Caroline research?" of her
    /// "I research coral reefs"); a question whose terms are all names is about them.
    pub fn names_only(&self, event: &Event) -> bool {
        let speaker = event
            .speaker
            .as_deref()
            .map(crate::text::tokens)
            .unwrap_or_default();
        let named = |t: &str| speaker.iter().chain(&self.names).any(|n| n == t);
        // A question of names alone ("When was the Harbour Lights Festival?") is about
        // them: matching them is evidence.
        if !self.terms.iter().any(|(t, _)| named(t)) || self.forms.iter().all(|(t, _)| named(t)) {
            return false;
        }
        let own = crate::text::tokens(&event.content);
        // In any form: "meet" is held by "meetings".
        !self
            .forms
            .iter()
            .filter(|(t, _)| !named(t))
            .any(|(_, forms)| own.iter().any(|w| forms.contains(w)))
    }
}

/// The words of the noun phrase `text` opens with, lowercased: its first clause up to its
/// first function word that is no determiner ("my sister priya" of "My sister Priya is
/// visiting"; "dinner" of "Dinner with Priya on Friday").
fn opening_phrase(text: &str) -> Vec<String> {
    let clause = text
        .split(['.', ',', ';', ':', '!', '?', '—', '–'])
        .next()
        .unwrap_or_default();
    crate::text::tokens(clause)
        .into_iter()
        .take_while(|w| {
            !crate::text::is_function_word(w) || crate::text::en::DETERMINERS.contains(&w.as_str())
        })
        .collect()
}

/// Turns before a text in its conversation that may give it the subject it leaves out
/// ([`Plan::about_named`]): a note of a few words carries its subject over from the notes
/// just before it.
pub(crate) const SUBJECT_TURNS: usize = 3;

/// The names `query` gives, as lexical tokens: its words written with a capital inside a
/// sentence (not its first word, nor one after `.`, `!` or `?`) and a small letter after it
/// ("Samir" in "What is Samir's email address?"; not "PB", nor a month or a weekday).
/// Capitals are the script's own mark of a name, in any language that has them.
fn names(query: &str) -> Vec<String> {
    let scan = values::scan(query);
    let mut out = Vec::new();
    for (i, raw) in scan.raw.iter().enumerate() {
        let inside = i > 0 && !scan.tails[i - 1].contains(['.', '!', '?']);
        let word = &scan.words[i];
        if inside
            && raw.starts_with(char::is_uppercase)
            && raw.chars().skip(1).any(char::is_lowercase)
            && !values::is_month(word)
            && !values::is_weekday(word)
        {
            out.extend(crate::text::tokens(possessor(raw).unwrap_or(raw)));
        }
    }
    out
}

/// The fewest letters of a name the project never holds as written for the names one edit
/// away from it to stand for it ("Jonh" for "John"; not "Ali" for "Al").
const NAME_TYPO_MIN: usize = 4;

/// `names` with, for a name the project never holds as written, the forms it holds it
/// in: another inflection ("Johns's" → "john") or, from [`NAME_TYPO_MIN`] letters, one
/// edit away ("Jonh" → "john"). Names are spelt several ways and misspelt; a question about
/// one written otherwise is still about them.
fn name_forms(text: &ProjectText, names: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        out.push(name.clone());
        if text.postings.df(name) > 0 {
            continue;
        }
        out.extend(
            crate::text::inflections(name)
                .into_iter()
                .filter(|f| f != name && text.postings.df(f) > 0),
        );
        if name.chars().count() >= NAME_TYPO_MIN {
            out.extend(
                text.postings
                    .one_edit_away(name)
                    .into_iter()
                    .map(str::to_owned),
            );
        }
    }
    distinct(out)
}

/// The owner a word written with a possessive `'s` names ("Tunde's" → "Tunde"; "She's"
/// is a pronoun and a verb).
fn possessor(word: &str) -> Option<&str> {
    let word = word.trim_end_matches(|c: char| !c.is_alphanumeric());
    ["'s", "\u{2019}s"]
        .iter()
        .find_map(|s| word.strip_suffix(s))
        .filter(|w| {
            w.starts_with(char::is_uppercase)
                && !crate::text::is_function_word(&crate::text::normalize(w))
        })
}

/// `items` without repeats, in their first order.
fn distinct(items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items
        .into_iter()
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

/// Whether `event` happened outside the window `[since, until)`.
pub(crate) fn outside(event: &Event, since: Option<i64>, until: Option<i64>) -> bool {
    since.is_some_and(|t| event.created_at < t) || until.is_some_and(|t| event.created_at >= t)
}

impl<'a> Plan<'a> {
    /// Compiles a validated request against the project: lexical terms, the query
    /// vectors, baselines and floors.
    ///
    /// # Errors
    /// A query embedding the project's semantic space cannot take; store errors.
    pub(crate) fn compile(
        cx: &Context<'_>,
        rq: &'a RecallQuery<'a>,
        compiled: &'a CompiledQuery,
    ) -> Result<Self> {
        let query = compiled.text.as_str();
        let stored = cx.ngram_weight;
        let (idf, ngram_weight) = {
            let text = cx.text.reading();
            let weight = lexical::by_turn_length(
                text.postings.turn_tokens(),
                QUERY_NGRAMS_SHORT.max(stored),
                stored,
            );
            (idf(&text.postings, query), weight)
        };
        let mut vector = encode_query(cx.encoders, query, &idf, ngram_weight);
        let baseline = match &vector {
            Some(v) => baseline(cx, v)?,
            None => None,
        };
        if baseline.is_none() && ngram_weight != stored {
            // A project too small to sample is judged by the prior, a similarity between
            // texts encoded alike: a restatement of a memory must reach it.
            vector = encode_query(cx.encoders, query, &idf, stored);
        }
        let text = cx.text.reading();
        let documents = text.postings.documents();
        let (words, lexical_answers) = lexical_terms(&text, query, baseline.is_some());
        let share =
            lexical::by_turn_length(text.postings.turn_tokens(), QUERY_INFLECTIONS_SHORT, 0.0);
        let own_pairs = lexical::bigrams(&crate::text::tokens(query));
        let mut terms: Vec<(String, f32)> = words.iter().map(|w| (w.clone(), 1.0)).collect();
        let mut pairs: Vec<(String, f32)> = own_pairs.iter().map(|p| (p.clone(), 1.0)).collect();
        // Forms are looked up once per distinct word and pair, against sets: the work
        // grows with the query's length, not with its square (a query repeating its words
        // thousands of times took minutes).
        let own_pairs: Vec<String> = distinct(own_pairs);
        let own_pair_set: std::collections::HashSet<&str> =
            own_pairs.iter().map(String::as_str).collect();
        let word_set: std::collections::HashSet<&str> = words.iter().map(String::as_str).collect();
        if share > 0.0 {
            // Of every query word, also of one the project never holds as written ("chew"
            // where a turn says "chewed"): the forms it holds that are as distinctive as a
            // term must be.
            let query_words = distinct(lexical::query_terms(query));
            // A project too small for any word to be distinctive by its IDF (a handful of
            // notes) searches with every query word; another inflection of one is as good
            // a term there ("weigh" for a note that says "weighed").
            let none_distinctive = !words.iter().any(|w| {
                let df = text.postings.df(w);
                df > 0 && lexical::idf(documents, df) >= COMMON_IDF
            });
            let none_held = !query_words.iter().any(|w| text.postings.df(w) > 0);
            let mut forms: Vec<String> = query_words
                .iter()
                .flat_map(|t| {
                    let mut forms = crate::text::inflections(t);
                    forms.extend(held_as(&text, t).into_iter().map(str::to_owned));
                    // When the project holds none of the query's words as written, a word
                    // is looked for in the forms sharing its stem ("vegetarian" →
                    // "vegetarianism"): the forms the gap decision counts as holding it
                    // ([`lexical_terms`]) are then the only evidence there is. (For every
                    // unheld word of any query: LoCoMo recall@10 and MRR -0.0001.)
                    if none_held && unheld(&text, t, EXTENSION_MIN).is_some() {
                        forms.extend(crate::text::word_forms(t).into_iter().filter(|f| {
                            let shared = f.chars().zip(t.chars()).take_while(|(a, b)| a == b);
                            shared.count() >= DERIVED_STEM_MIN
                        }));
                    }
                    forms
                })
                .filter(|f| {
                    let df = text.postings.df(f);
                    df > 0
                        && !word_set.contains(f.as_str())
                        && (none_distinctive || lexical::idf(documents, df) >= COMMON_IDF)
                })
                .collect();
            forms.extend(
                closed_compounds(&text, &own_pairs)
                    .into_iter()
                    .filter(|joined| {
                        !word_set.contains(joined.as_str())
                            && lexical::idf(documents, text.postings.df(joined)) >= COMMON_IDF
                    }),
            );
            forms.sort_unstable();
            forms.dedup();
            terms.extend(forms.into_iter().map(|f| (f, share)));
            // A pair with one word in another inflection ("playing guitar" for "play
            // guitar").
            let mut forms: Vec<String> = Vec::new();
            for pair in &own_pairs {
                let Some((a, b)) = pair.split_once(' ') else {
                    continue;
                };
                forms.extend(
                    crate::text::inflections(a)
                        .iter()
                        .map(|f| format!("{f} {b}")),
                );
                forms.extend(
                    crate::text::inflections(b)
                        .iter()
                        .map(|f| format!("{a} {f}")),
                );
            }
            // A word the project holds as two ("smartwatch" for "smart watch").
            for t in &query_words {
                forms.extend(open_compounds(&text, t));
            }
            forms.retain(|f| !own_pair_set.contains(f.as_str()) && text.bigrams.df(f) > 0);
            forms.sort_unstable();
            forms.dedup();
            pairs.extend(forms.into_iter().map(|f| (f, share)));
        }
        let names = names(query);
        let name_forms = name_forms(&text, &names);
        drop(text);
        let semantic = semantic_query(cx, rq.embedding, query)?;
        // The semantic side of the relevance floor: the query's similarity to memories
        // spread over the project's semantic space.
        let semantic_baseline = semantic
            .as_ref()
            .and_then(|(space, q)| space.reading().baseline(q, BASELINE_SAMPLE));
        let forms = {
            let mut words = lexical::query_terms(query);
            words.extend(terms.iter().map(|(t, _)| t.clone()));
            words.sort_unstable();
            words.dedup();
            words
                .into_iter()
                .map(|w| {
                    let forms = crate::text::word_forms(&w);
                    (w, forms)
                })
                .collect()
        };
        Ok(Plan {
            rq,
            compiled,
            terms,
            pairs,
            lexical_answers,
            names,
            name_forms,
            forms,
            wanted: values::Wanted::of(query),
            vector,
            baseline,
            semantic,
            vector_floors: Floors::new(baseline, documents),
            semantic_floors: Floors::new(semantic_baseline, documents),
            fusion: FusionParams {
                neighbour: cx.settings.neighbour_weight,
                session: cx.settings.session_weight,
                bridge: cx.settings.question_bridge,
            },
        })
    }
}

/// The mean and standard deviation of the similarity of `query` to the project's
/// baseline sample: the stored vectors of up to [`BASELINE_SAMPLE`] memories spread evenly
/// over all its documents (for almost every query, unrelated ones). The sample is a
/// function of the project alone, never of when this process first answered a question
/// about it: every node of a shared ledger, and a process restarted on the same data, sets
/// the same floor for the same question. It is brought up to date when the project has
/// grown; vectors it held already are kept, so only the memories entering the sample are
/// read (one per new document while the spacing holds, the whole sample when the spacing
/// widens, every `BASELINE_SAMPLE` documents), in one read per tier (one round trip to a
/// remote one). A memory whose vector is not stored yet (another node's write still on
/// its way) is asked for again next time.
fn baseline(cx: &Context<'_>, query: &Hypervector) -> Result<Option<(f64, f64)>> {
    let (project, text) = (cx.project, &*cx.text);
    let documents = text.reading().postings.documents();
    let stale = text
        .reading()
        .baseline
        .as_ref()
        .is_none_or(|b| b.documents != documents || b.missing);
    if stale {
        let ids = text.reading().postings.ids_spread(BASELINE_SAMPLE);
        let mut held: HashMap<u64, Hypervector> = text
            .writing()
            .baseline
            .take()
            .map(|b| b.sample.into_iter().collect())
            .unwrap_or_default();
        let unheld: Vec<VectorId> = ids
            .iter()
            .filter(|id| !held.contains_key(id))
            .map(|&id| VectorId(id))
            .collect();
        let mut read: HashMap<u64, Option<Hypervector>> = unheld
            .iter()
            .map(|id| id.0)
            .zip(cx.tiers.get_many(project, &unheld)?)
            .collect();
        let mut sample = Vec::with_capacity(ids.len());
        let mut missing = false;
        for id in ids {
            match held.remove(&id).or_else(|| read.remove(&id).flatten()) {
                Some(v) => sample.push((id, v)),
                None => missing = true,
            }
        }
        text.writing().baseline = Some(lexical::Baseline {
            documents,
            sample,
            missing,
        });
    }
    let guard = text.reading();
    let Some(b) = guard.baseline.as_ref().filter(|b| b.sample.len() >= 8) else {
        return Ok(None);
    };
    let sims: Vec<f64> = b.sample.iter().map(|(_, v)| query.similarity(v)).collect();
    Ok(Some(crate::semantic::mean_sd(&sims)))
}

/// The project's semantic space and the bits of the query in it: the caller's
/// `embedding`, else the static model's embedding of `text`; `None` when the project
/// has no semantic vectors or there is nothing to embed.
///
/// # Errors
/// An embedding of another dimension than the project's space, or not finite.
fn semantic_query(
    cx: &Context<'_>,
    embedding: Option<&[f32]>,
    text: &str,
) -> Result<Option<(Arc<RwLock<Space>>, Hypervector)>> {
    let Some(space) = cx.space.clone() else {
        return Ok(None);
    };
    let project = cx.project;
    let input = space.reading().input;
    if input == 0 {
        return Ok(None);
    }
    let embedded;
    let query = match embedding {
        Some(v) => v,
        None => match cx.embedder.embed_query(text) {
            Some(v) => {
                embedded = v;
                &embedded[..]
            }
            None => return Ok(None),
        },
    };
    if query.len() != input {
        return Err(crate::ledger::LedgerError::Invalid {
            what: "embedding",
            reason: format!(
                "the query embedding has {} dimensions; the semantic space of project `{project}` holds {input}-dimensional embeddings",
                query.len()
            ),
        }
        .into());
    }
    let bits = cx
        .embedder
        .project(query)
        .map_err(|e| crate::ledger::LedgerError::Invalid {
            what: "embedding",
            reason: e.to_string(),
        })?;
    Ok(Some((space, bits)))
}

/// BM25 IDF weights of the words of `text` in `project`, so rare words dominate a
/// query vector and template words barely count. A word the lexical tokenizer splits
/// (`v3.11`) takes the weight of its rarest piece.
fn idf(postings: &lexical::Postings, text: &str) -> HashMap<String, f32> {
    let n = postings.documents();
    crate::text::words(text)
        .into_iter()
        .map(|word| {
            let df = crate::text::tokens(&word)
                .iter()
                .map(|t| postings.df(t))
                .min()
                .unwrap_or(0);
            (word, lexical::idf(n, df) as f32)
        })
        .collect()
}

/// Encodes a query with IDF weights of its project and its character n-grams at
/// `ngram_weight`.
fn encode_query(
    encoders: &crate::semantic::Encoders,
    text: &str,
    idf: &HashMap<String, f32>,
    ngram_weight: f32,
) -> Option<Hypervector> {
    let weights = |t: &str| idf.get(t).copied().unwrap_or(1.0);
    encoders.with(|e| {
        e.encode_with_ngram_weight(text, &weights, ngram_weight)
            .ok()
    })
}

/// The query's lexical terms and whether a lexical match answers it (`calibrated`: the
/// project is large enough for a baseline).
///
/// Words in more than a quarter of the project's events add almost nothing to BM25
/// (idf ≤ ln 4) but make it score nearly every event: the terms are the query's
/// distinctive words, all of them when it has none. A speaker's name stays distinctive: it
/// matches a field, whoever said most of the turns.
///
/// A query naming something the project never saw, in any form sharing the word's stem
/// ("allergy" is held by "allergic"), whose known words are all common asks about a
/// subject never stored: a match on the common words answers nothing, and counting it
/// made every such question look answered (`docs/EXPERIMENTS.md`, synthetic gaps). A
/// query whose words are all held counts its matches, common or not, and so does every
/// query of a project too small for a baseline (there every word is "common"). Forms are
/// looked at only when no query word is distinctive as it is.
fn lexical_terms(text: &ProjectText, query: &str, calibrated: bool) -> (Vec<String>, bool) {
    let documents = text.postings.documents();
    // A term: a word that does not make BM25 score nearly every event (or a speaker's
    // name). For the gap decision, any word few events hold names a subject stored.
    let distinctive = |t: &str, df: u64| {
        df > 0 && (lexical::idf(documents, df) >= COMMON_IDF || text.speakers.contains(t))
    };
    let held_apart =
        |t: &str, df: u64| df > 0 && (!common(documents, df) || text.speakers.contains(t));
    let terms = lexical::query_terms(query);
    // "time" in "what time ...": how the question asks, not what it is about.
    let asking = values::asking_words(query);
    let kept: Vec<String> = terms
        .iter()
        .filter(|t| distinctive(t, text.postings.df(t)))
        .cloned()
        .collect();
    if !kept.is_empty() {
        return (kept, true);
    }
    let answers = !calibrated || {
        let mut unseen = false;
        let mut form_distinctive = false;
        for t in terms.iter().filter(|t| !asking.contains(t)) {
            let mut forms = crate::text::word_forms(t);
            forms.extend(held_as(text, t).into_iter().map(str::to_owned));
            let held: Vec<(String, u64)> = forms
                .into_iter()
                .map(|f| {
                    let df = text.postings.df(&f);
                    (f, df)
                })
                .chain(open_compounds(text, t).into_iter().map(|pair| {
                    let df = text.bigrams.df(&pair);
                    (pair, df)
                }))
                .filter(|&(_, df)| df > 0)
                .collect();
            unseen |= held.is_empty();
            form_distinctive |= held.iter().any(|(f, df)| held_apart(f, *df));
        }
        form_distinctive || !unseen
    };
    (terms, answers)
}

/// The similarity, in standard deviations above the mean of a project's unrelated
/// baseline, that the most similar of `n` unrelated memories stays below with probability
/// `confidence`: the extreme-value (Gumbel) limit of the maximum of `n` normal draws,
/// location `a = √(2 ln n) − (ln ln n + ln 4π) / (2 √(2 ln n))`, scale `b = 1 / √(2 ln n)`,
/// quantile `a − b · ln(−ln confidence)`. Recall's best candidate is the maximum over the
/// whole project, so comparing it with the baseline's 2 σ would call almost every
/// question answered; comparing it with this does not.
fn chance_best(n: u64, confidence: f64) -> f64 {
    let n = n.max(3) as f64;
    let root = (2.0 * n.ln()).sqrt();
    let location = root - (n.ln().ln() + (4.0 * std::f64::consts::PI).ln()) / (2.0 * root);
    location - (-confidence.ln()).ln() / root
}

#[cfg(test)]
mod tests {
    use super::chance_best;
    use hdv::SeededRng;

    #[test]
    fn chance_best_bounds_the_largest_of_n_normal_draws_at_its_confidence() {
        let mut rng = SeededRng::new(5);
        for n in [64u64, 1_000, 10_000] {
            let threshold = chance_best(n, 0.95);
            let trials = 1_000;
            let below = (0..trials)
                .filter(|_| {
                    let mut best = f64::MIN;
                    for _ in 0..n.div_ceil(2) {
                        let (a, b) = rng.gaussian_pair();
                        best = best.max(a).max(b);
                    }
                    best < threshold
                })
                .count();
            let share = below as f64 / trials as f64;
            // The extreme-value limit is slightly conservative at finite n.
            assert!(
                (0.93..=0.99).contains(&share),
                "n {n}: {share} below {threshold}"
            );
        }
        assert!(chance_best(100_000, 0.95) > chance_best(1_000, 0.95));
        assert!(chance_best(1_000, 0.99) > chance_best(1_000, 0.95));
        assert!(chance_best(0, 0.95).is_finite());
    }
}
