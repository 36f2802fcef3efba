//! Lexical recall: an in-memory BM25 inverted index per project.
//!
//! The ledger's FTS5 table (built by a project's first `Ledger::search`) is the durable,
//! governed full-text index for operators. Ranking with it is another matter: `bm25()` looks up the size of every
//! matching document in a b-tree, so a query whose terms match 30,000 of 100,000 events
//! costs ≈ 40 ms. Recall ranks instead over postings held in RAM: term → (document, term
//! frequency), document lengths alongside, scored term-at-a-time into a dense accumulator.
//! The index is derived data: built from the ledger the first time a project is recalled,
//! extended by every observation after its ledger commit, dropped with the project.
//!
//! Tokens follow the ledger's FTS tokenizer (`unicode61`): NFKC, lowercase, split on
//! everything that is not a letter or digit; diacritics are kept.

use std::collections::{BTreeSet, HashMap};

use crate::text::{is_stop_word, tokens};

/// BM25 term-frequency saturation where turns are long (Robertson & Zaragoza's usual
/// value; FTS5's default).
pub const K1: f32 = 1.2;
/// BM25 term-frequency saturation where turns are short (a chat of one-line turns). With
/// full length normalization `k1` also scales the length penalty, and there a turn twice
/// the average length is a fuller statement rather than a diluted one: in chats of short
/// turns the evidence is longer than what outranks it. Where turns are long it loses, so
/// their setting stays [`K1`] (0.3 to 1.2 measured: `docs/EXPERIMENTS.md`).
pub const K1_SHORT: f32 = 0.5;
/// Average turn lengths (tokens, reply context at half weight) at and below which `k1` is
/// [`K1_SHORT`], and at and above which it is [`K1`]; between them it moves with the
/// logarithm of the length (the development sets' conversations average 11–45 and
/// 134–386 tokens a turn: `docs/EXPERIMENTS.md`). `[recall] turn_regime` can fix the
/// regime instead ([`TurnRegime`]).
pub const SHORT_TURNS: f32 = 60.0;
/// See [`SHORT_TURNS`].
pub const LONG_TURNS: f32 = 120.0;

/// BM25's `k1` for an index whose documents average `tokens` tokens: [`K1_SHORT`] for
/// short turns, [`K1`] for long ones ([`by_turn_length`]).
pub fn k1(tokens: f32) -> f32 {
    by_turn_length(tokens, K1_SHORT, K1)
}

/// A setting that differs between chats of short turns and conversations of long ones:
/// `short` where the documents average [`SHORT_TURNS`] tokens or fewer, `long` at
/// [`LONG_TURNS`] and above, and between them moving with the logarithm of the length (no
/// jump as a project grows from one regime into the other).
pub fn by_turn_length(tokens: f32, short: f32, long: f32) -> f32 {
    if tokens <= SHORT_TURNS {
        short
    } else if tokens >= LONG_TURNS {
        long
    } else {
        let t = (tokens / SHORT_TURNS).ln() / (LONG_TURNS / SHORT_TURNS).ln();
        short + t * (long - short)
    }
}

/// BM25 length normalization: full (1.0, not FTS5's 0.75). Conversations mix one-line
/// turns with long replies that restate the question; on both development sets full
/// normalization helped recall and MRR (`docs/EXPERIMENTS.md`).
pub const B: f32 = 1.0;

/// Units of term frequency and length per token of a document's own text: a token of the
/// turn it replies to counts one unit, half a token ([`Postings::add_with_context`]).
const HALVES: u32 = 2;

/// The longest turn, in characters, that carries or lends reply context: a short reply
/// ("Thanks, so excited!") is about what the turn before named; a long turn states its
/// own subject, and a long turn's text would drown a short reply's own words.
pub const CONTEXT_CHARS: usize = 400;

/// What a term of the speaker field is stored under: the term after this prefix (a
/// control character no token holds).
const FIELD: char = '\u{1}';

/// The word pairs of a token sequence: each two consecutive tokens that are not
/// [stop words](crate::text::is_stop_word) (stop words are dropped first, so "name of my dog" gives "name dog"),
/// as one term `"a b"`. Documents and queries pair the same way.
pub fn bigrams(tokens: &[String]) -> Vec<String> {
    let content: Vec<&str> = tokens
        .iter()
        .map(String::as_str)
        .filter(|t| !is_stop_word(t))
        .collect();
    content
        .windows(2)
        .map(|w| format!("{} {}", w[0], w[1]))
        .collect()
}

/// The lexical terms of a query: its [`tokens`] without the [stop words](crate::text::is_stop_word) (all of them
/// when nothing else remains).
pub fn query_terms(text: &str) -> Vec<String> {
    let all = tokens(text);
    let content: Vec<String> = all.iter().filter(|t| !is_stop_word(t)).cloned().collect();
    if content.is_empty() { all } else { content }
}

/// BM25 IDF, always positive: `ln(1 + (N − df + ½) / (df + ½))`.
pub fn idf(documents: u64, df: u64) -> f64 {
    let (n, d) = (documents as f64, df as f64);
    (1.0 + (n - d + 0.5) / (d + 0.5)).ln()
}

thread_local! {
    /// The per-document BM25 accumulators of [`Postings::search`] on this thread.
    static SCORES: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A scored document (score, event id), ordered worst first: a lower score, or at an
/// equal score the newer event, is greater (so a max-heap keeps the worst on top).
#[derive(Debug, Clone, Copy)]
struct Ranked(f32, u64);

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// Whether an indexed word can be found as the longer or shorter form of a query word
/// ([`Postings::extensions`]): letters alone, not a speaker field.
fn extensible(word: &str) -> bool {
    word.chars().all(char::is_alphabetic)
}

/// Whether `a` and `b` differ by exactly one edit: a character replaced, added or dropped,
/// or two neighbouring characters swapped.
fn one_edit(a: &[char], b: &[char]) -> bool {
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if long.len() > short.len() {
        return long[same + 1..] == short[same..];
    }
    let rest = same + 1;
    long[rest..] == short[rest..]
        || (rest < long.len()
            && long[same] == short[rest]
            && long[rest] == short[same]
            && long[rest + 1..] == short[rest + 1..])
}

crate::base::names! {
    /// How a project's turns are read where a rule depends on their length: BM25's `k1`
    /// ([`k1`]), and in recall the weight of the query's character n-grams and the share of
    /// the other inflections and compounds of its words ([`by_turn_length`]). `auto` decides
    /// by the project's average turn length ([`SHORT_TURNS`], [`LONG_TURNS`], log-linear
    /// between); `short` and `long` fix the rules whatever the length. The profile's
    /// `[recall] turn_regime`, reported with every recall and by `eval`.
    #[derive(Default)]
    pub enum TurnRegime {
        /// By the project's average turn length.
        #[default]
        Auto = "auto",
        /// As a chat of short turns, whatever their length.
        Short = "short",
        /// As a collection of long turns, whatever their length.
        Long = "long",
    }
}

impl TurnRegime {
    /// The turn length the rules read for an index whose turns average `average` tokens.
    pub fn tokens(self, average: f32) -> f32 {
        match self {
            Self::Auto => average,
            Self::Short => 0.0,
            Self::Long => f32::INFINITY,
        }
    }

    /// Which rules `tokens` (as [`tokens`](Self::tokens) gives it) selects.
    pub fn reads_as(tokens: f32) -> TurnLength {
        if tokens <= SHORT_TURNS {
            TurnLength::Short
        } else if tokens >= LONG_TURNS {
            TurnLength::Long
        } else {
            TurnLength::Between
        }
    }
}

crate::base::names! {
    /// Which of the length-dependent rules a project gets ([`TurnRegime::reads_as`]).
    #[derive(Default)]
    pub enum TurnLength {
        /// The short-turn rules.
        #[default]
        Short = "short",
        /// Between the two, log-linear in the length.
        Between = "between",
        /// The long-turn rules.
        Long = "long",
    }
}

/// The postings of one project.
#[derive(Debug, Default, Clone)]
pub struct Postings {
    /// How its turns are read where a rule depends on their length (not saved: the
    /// profile's, set when the index is loaded).
    regime: TurnRegime,
    vocabulary: HashMap<Box<str>, u32>,
    /// The vocabulary's words of letters alone (speaker fields, numbers and codes left
    /// out) in order, for the words that begin with another
    /// ([`extensions`](Self::extensions)): built on the first such question, then kept
    /// up to date as words are first indexed.
    sorted: std::sync::OnceLock<BTreeSet<Box<str>>>,
    /// Per term: (local document, term frequency in half tokens), in insertion order.
    lists: Vec<Vec<(u32, u32)>>,
    /// Local document → event id.
    ids: Vec<u64>,
    /// Local document → length in half tokens.
    lengths: Vec<u32>,
    total_length: u64,
}

impl Postings {
    /// Indexes the document `id` (its text already tokenized with [`tokens`]).
    pub fn add(&mut self, id: u64, tokens: &[String]) {
        self.add_with_context(id, tokens, &[], &[]);
    }

    /// Indexes the document `id`: its own `tokens` at full weight and `context` (the text
    /// of the turn it replies to) at half weight, in term frequency and in length alike
    /// (held in half-token units), and its speaker's name as a field of its own.
    ///
    /// The speaker field is scored without length normalization and adds nothing to the
    /// document's length: every turn of a speaker matches the name equally, so a one-word
    /// turn ("Scrambled.") does not outrank what the speaker said at length only because
    /// it is short.
    pub fn add_with_context(
        &mut self,
        id: u64,
        tokens: &[String],
        context: &[String],
        speaker: &[String],
    ) {
        let doc = u32::try_from(self.ids.len()).expect("fewer than 2^32 documents per project");
        // Term frequencies by sorting (terms in a stable order, so postings do not depend on
        // hash iteration, and no hashing of every token).
        let fields: Vec<String> = speaker.iter().map(|t| format!("{FIELD}{t}")).collect();
        let mut sorted: Vec<(&str, u32)> = tokens
            .iter()
            .map(|t| (t.as_str(), HALVES))
            .chain(context.iter().map(|t| (t.as_str(), 1)))
            .chain(fields.iter().map(|t| (t.as_str(), HALVES)))
            .collect();
        sorted.sort_unstable();
        let mut counts: Vec<(&str, u32)> = Vec::with_capacity(sorted.len());
        for (t, units) in sorted {
            match counts.last_mut() {
                Some((last, n)) if *last == t => *n += units,
                _ => counts.push((t, units)),
            }
        }
        for (term, tf) in counts {
            let next = self.lists.len() as u32;
            let t = *self.vocabulary.entry(term.into()).or_insert(next);
            if t == next {
                self.lists.push(Vec::new());
                if let Some(sorted) = self.sorted.get_mut()
                    && extensible(term)
                {
                    sorted.insert(term.into());
                }
            }
            self.lists[t as usize].push((doc, tf));
        }
        let length =
            u32::try_from(tokens.len() * HALVES as usize + context.len()).unwrap_or(u32::MAX);
        self.ids.push(id);
        self.lengths.push(length);
        self.total_length += u64::from(length);
    }

    /// Tokens per indexed document on average (reply context at half weight; 0 when
    /// empty).
    pub fn average_tokens(&self) -> f32 {
        if self.ids.is_empty() {
            return 0.0;
        }
        self.total_length as f32 / self.ids.len() as f32 / HALVES as f32
    }

    /// The turn length the length-dependent rules read: the average
    /// ([`average_tokens`](Self::average_tokens)) under [`TurnRegime::Auto`], else the
    /// regime's fixed one.
    pub fn turn_tokens(&self) -> f32 {
        self.regime.tokens(self.average_tokens())
    }

    /// The regime its length-dependent rules follow.
    pub fn regime(&self) -> TurnRegime {
        self.regime
    }

    /// Sets the regime its length-dependent rules follow.
    pub fn set_regime(&mut self, regime: TurnRegime) {
        self.regime = regime;
    }

    /// Documents indexed.
    pub fn documents(&self) -> u64 {
        self.ids.len() as u64
    }

    /// The indexed event ids, in indexing order.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// Up to `n` indexed event ids spread evenly over the index (first, then every
    /// `documents / n`-th).
    pub fn ids_spread(&self, n: usize) -> Vec<u64> {
        if n == 0 || self.ids.is_empty() {
            return Vec::new();
        }
        let step = self.ids.len().div_ceil(n);
        self.ids.iter().step_by(step).copied().collect()
    }

    /// The words of letters the project holds that are `word` with up to `letters` more
    /// letters at its end ("postgresql" for "postgres"), or `word` with up to `letters`
    /// fewer where at least `min` remain ("music" for "musical"), `word` itself left out.
    pub fn extensions(&self, word: &str, letters: usize, min: usize) -> Vec<&str> {
        let length = word.chars().count();
        let mut out: Vec<&str> = self
            .ordered()
            .range::<str, _>((std::ops::Bound::Excluded(word), std::ops::Bound::Unbounded))
            .take_while(|w| w.starts_with(word))
            .filter(|w| w.chars().count() <= length + letters)
            .map(AsRef::as_ref)
            .collect();
        // Prefixes of `min` letters or more, at most `letters` shorter than `word`.
        let shorter = word
            .char_indices()
            .enumerate()
            .skip(min.max(length.saturating_sub(letters)))
            .map(|(_, (end, _))| end);
        for end in shorter {
            if let Some((w, _)) = self.vocabulary.get_key_value(&word[..end]) {
                out.push(w);
            }
        }
        out
    }

    /// The words of letters the project holds one edit away from `word` (a letter
    /// replaced, added, dropped, or two neighbours swapped: "torunament" → "tournament",
    /// "accomodation" → "accommodation") that begin with its first letter.
    pub fn one_edit_away(&self, word: &str) -> Vec<&str> {
        let Some(first) = word.chars().next() else {
            return Vec::new();
        };
        let chars: Vec<char> = word.chars().collect();
        let mut start = [0u8; 4];
        let start: &str = first.encode_utf8(&mut start);
        self.ordered()
            .range::<str, _>((std::ops::Bound::Included(start), std::ops::Bound::Unbounded))
            .take_while(|w| w.starts_with(first))
            .filter(|w| w.chars().count().abs_diff(chars.len()) <= 1)
            .filter(|w| one_edit(&chars, &w.chars().collect::<Vec<char>>()))
            .map(AsRef::as_ref)
            .collect()
    }

    /// The vocabulary's words of letters in order ([`Postings::sorted`]).
    fn ordered(&self) -> &BTreeSet<Box<str>> {
        self.sorted.get_or_init(|| {
            self.vocabulary
                .keys()
                .filter(|w| extensible(w))
                .cloned()
                .collect()
        })
    }

    /// Documents holding `term`, in their text or in their speaker field (counted as the
    /// search weighs it: the two lists together, at most every document).
    pub fn df(&self, term: &str) -> u64 {
        let count = |t: &str| {
            self.vocabulary
                .get(t)
                .map_or(0, |&t| self.lists[t as usize].len() as u64)
        };
        (count(term) + count(&format!("{FIELD}{term}"))).min(self.documents())
    }

    /// The share of the query's IDF mass that document `id` contains: Σ idf of the
    /// (distinct) `terms` it holds ÷ Σ idf of all of them, where a term the project never
    /// saw weighs the most (df 0). 1 when it holds every term; near 0 when it shares only
    /// common words. `None` for an unknown document or no terms.
    pub fn coverage(&self, terms: &[String], id: u64) -> Option<f64> {
        let doc = self.ids.binary_search(&id).ok()? as u32;
        let mut wanted: Vec<&str> = terms.iter().map(String::as_str).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let n = self.documents();
        let (mut held, mut total) = (0.0, 0.0);
        for t in wanted {
            let list = self.vocabulary.get(t).map(|&t| &self.lists[t as usize]);
            let w = idf(n, list.map_or(0, |l| l.len() as u64));
            total += w;
            if list.is_some_and(|l| l.binary_search_by_key(&doc, |&(d, _)| d).is_ok()) {
                held += w;
            }
        }
        (total > 0.0).then(|| held / total)
    }

    /// The `k` best documents for the query `terms` by BM25 (duplicates count once), as
    /// `(event id, score)`, best first; ties go to the older event.
    pub fn search(&self, terms: &[String], k: usize) -> Vec<(u64, f32)> {
        let weighted: Vec<(&str, f32)> = terms.iter().map(|t| (t.as_str(), 1.0)).collect();
        self.score(&weighted, k, false)
    }

    /// As [`search`](Self::search), each term's IDF scaled by its weight (a term given
    /// twice counts once, at its first weight).
    pub fn search_weighted<T: AsRef<str>>(&self, terms: &[(T, f32)], k: usize) -> Vec<(u64, f32)> {
        let weighted: Vec<(&str, f32)> = terms.iter().map(|(t, w)| (t.as_ref(), *w)).collect();
        self.score(&weighted, k, false)
    }

    /// As [`search`](Self::search), among the documents containing every term only.
    pub fn search_all(&self, terms: &[String], k: usize) -> Vec<(u64, f32)> {
        let weighted: Vec<(&str, f32)> = terms.iter().map(|t| (t.as_str(), 1.0)).collect();
        self.score(&weighted, k, true)
    }

    fn score(&self, terms: &[(&str, f32)], k: usize, conjunctive: bool) -> Vec<(u64, f32)> {
        if k == 0 || self.ids.is_empty() {
            return Vec::new();
        }
        // Sorted stably by term, so a term given twice keeps its first weight.
        let mut wanted = terms.to_vec();
        wanted.sort_by(|a, b| a.0.cmp(b.0));
        wanted.dedup_by(|later, first| later.0 == first.0);
        let lists: Vec<u32> = wanted
            .iter()
            .filter_map(|t| self.vocabulary.get(t.0).copied())
            .collect();
        if conjunctive && lists.len() < wanted.len() {
            return Vec::new();
        }
        // Per wanted term, its text list and its speaker-field list (not for a conjunctive
        // search: phrases are text), weighed by one IDF over both: a name is as common as
        // the turns that say it and the turns its speaker said.
        let mut scored: Vec<(u32, bool, f32)> = Vec::new();
        let n = self.documents();
        for &(t, weight) in &wanted {
            let text = self.vocabulary.get(t).copied();
            let field = if conjunctive {
                None
            } else {
                self.vocabulary.get(&*format!("{FIELD}{t}")).copied()
            };
            let df: usize = [text, field]
                .into_iter()
                .flatten()
                .map(|l| self.lists[l as usize].len())
                .sum();
            let w = weight * idf(n, (df as u64).min(n)) as f32;
            scored.extend(text.map(|l| (l, false, w)));
            scored.extend(field.map(|l| (l, true, w)));
        }
        if scored.is_empty() {
            return Vec::new();
        }
        let avg = self.total_length as f32 / n as f32;
        let k1 = k1(self.turn_tokens());
        // Per-document accumulators: a buffer of the thread's, kept between calls (a
        // project's worth of f32, zero between calls: only the touched entries are reset).
        let heap = SCORES.with_borrow_mut(|acc| {
            if acc.len() < self.ids.len() {
                acc.resize(self.ids.len(), 0.0);
            }
            let mut matched = vec![0u16; if conjunctive { self.ids.len() } else { 0 }];
            let mut touched: Vec<u32> = Vec::new();
            for &(t, field, w) in &scored {
                let postings = &self.lists[t as usize];
                for &(doc, tf) in postings {
                    // A field has no length: a name matches every turn of its speaker
                    // alike, a one-word turn no more than a long one.
                    let len = if field {
                        avg
                    } else {
                        self.lengths[doc as usize] as f32
                    };
                    let tf = tf as f32 / HALVES as f32;
                    let s = &mut acc[doc as usize];
                    if *s == 0.0 {
                        touched.push(doc);
                    }
                    *s += w * tf * (k1 + 1.0) / (tf + k1 * (1.0 - B + B * len / avg));
                    if conjunctive && !field {
                        matched[doc as usize] += 1;
                    }
                }
            }
            // The k best in one pass with a bounded heap whose top is the worst kept (most
            // documents lose one comparison with it); a tie goes to the older event.
            let mut heap: std::collections::BinaryHeap<Ranked> =
                std::collections::BinaryHeap::with_capacity(k + 1);
            for &d in &touched {
                if conjunctive && usize::from(matched[d as usize]) < lists.len() {
                    continue;
                }
                let entry = Ranked(acc[d as usize], self.ids[d as usize]);
                if heap.len() < k {
                    heap.push(entry);
                } else if let Some(mut worst) = heap.peek_mut()
                    && entry < *worst
                {
                    *worst = entry;
                }
            }
            for &d in &touched {
                acc[d as usize] = 0.0;
            }
            heap
        });
        heap.into_sorted_vec()
            .into_iter()
            .map(|Ranked(s, id)| (id, s))
            .collect()
    }

    /// Appends the postings to `out` (little-endian; layout in `docs/FORMAT.md`).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.ids.len() as u64).to_le_bytes());
        for id in &self.ids {
            out.extend_from_slice(&id.to_le_bytes());
        }
        for len in &self.lengths {
            out.extend_from_slice(&len.to_le_bytes());
        }
        out.extend_from_slice(&self.total_length.to_le_bytes());
        let mut terms: Vec<(&str, u32)> = self
            .vocabulary
            .iter()
            .map(|(t, &i)| (t.as_ref(), i))
            .collect();
        terms.sort_unstable_by_key(|&(_, i)| i);
        out.extend_from_slice(&(terms.len() as u64).to_le_bytes());
        for (term, i) in terms {
            out.extend_from_slice(&(term.len() as u32).to_le_bytes());
            out.extend_from_slice(term.as_bytes());
            let list = &self.lists[i as usize];
            out.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for &(doc, tf) in list {
                out.extend_from_slice(&doc.to_le_bytes());
                out.extend_from_slice(&tf.to_le_bytes());
            }
        }
    }

    /// Reads postings written by [`write_to`](Self::write_to) from the front of `input`
    /// (advancing it); `None` if they are malformed.
    pub fn read_from(input: &mut &[u8]) -> Option<Self> {
        let mut r = Reader(input);
        let n = usize::try_from(r.u64()?).ok()?;
        let ids = (0..n).map(|_| r.u64()).collect::<Option<Vec<_>>>()?;
        let lengths = (0..n).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
        let total_length = r.u64()?;
        if lengths.iter().map(|&l| u64::from(l)).sum::<u64>() != total_length {
            return None;
        }
        let terms = usize::try_from(r.u64()?).ok()?;
        let mut vocabulary = HashMap::with_capacity(terms);
        let mut lists = Vec::with_capacity(terms);
        for i in 0..terms {
            let len = r.u32()? as usize;
            let term = std::str::from_utf8(r.bytes(len)?).ok()?;
            let count = usize::try_from(r.u64()?).ok()?;
            let mut list = Vec::with_capacity(count.min(n));
            for _ in 0..count {
                let (doc, tf) = (r.u32()?, r.u32()?);
                if doc as usize >= n || tf == 0 {
                    return None;
                }
                list.push((doc, tf));
            }
            if vocabulary.insert(term.into(), i as u32).is_some() {
                return None;
            }
            lists.push(list);
        }
        Some(Self {
            regime: TurnRegime::Auto,
            vocabulary,
            sorted: std::sync::OnceLock::new(),
            lists,
            ids,
            lengths,
            total_length,
        })
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let postings: usize = self.lists.iter().map(|l| l.capacity() * 8 + 24).sum();
        let vocabulary: usize = self.vocabulary.keys().map(|k| k.len() + 24).sum();
        let sorted: usize = self
            .sorted
            .get()
            .map_or(0, |s| s.iter().map(|k| k.len() + 32).sum());
        postings + vocabulary + sorted + self.ids.capacity() * 8 + self.lengths.capacity() * 4
    }
}

/// A little-endian cursor that fails instead of panicking on short input.
pub(crate) struct Reader<'a, 'b>(pub(crate) &'a mut &'b [u8]);

impl<'b> Reader<'_, 'b> {
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'b [u8]> {
        let input: &'b [u8] = self.0;
        if input.len() < n {
            return None;
        }
        let (head, tail) = input.split_at(n);
        *self.0 = tail;
        Some(head)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stop_words_are_left_out_of_queries() {
        assert_eq!(
            super::query_terms("What is the name of my dog?"),
            ["name", "dog"]
        );
        assert_eq!(super::query_terms("who is it"), ["who", "is", "it"]);
    }

    use super::*;

    fn index(docs: &[(u64, &str)]) -> Postings {
        let mut p = Postings::default();
        for (id, text) in docs {
            p.add(*id, &tokens(text));
        }
        p
    }

    /// BM25 of one document, computed from the definition.
    fn reference(docs: &[(u64, &str)], query: &[&str], id: u64) -> f32 {
        let toks: Vec<Vec<String>> = docs.iter().map(|(_, t)| tokens(t)).collect();
        let n = docs.len() as u64;
        let avg = toks.iter().map(Vec::len).sum::<usize>() as f32 / n as f32;
        let d = docs.iter().position(|(i, _)| *i == id).unwrap();
        let mut q: Vec<&str> = query.to_vec();
        q.sort_unstable();
        q.dedup();
        q.iter()
            .map(|term| {
                let df = toks.iter().filter(|t| t.iter().any(|x| x == term)).count() as u64;
                let tf = toks[d].iter().filter(|x| x == term).count() as f32;
                if tf == 0.0 {
                    return 0.0;
                }
                let len = toks[d].len() as f32;
                let k1 = k1(avg);
                idf(n, df) as f32 * tf * (k1 + 1.0) / (tf + k1 * (1.0 - B + B * len / avg))
            })
            .sum()
    }

    #[test]
    fn postings_round_trip_and_damage_is_detected() {
        let docs = [
            (3, "alpha beta beta"),
            (9, "beta gamma"),
            (12, "délta alpha"),
        ];
        let p = index(&docs);
        let mut bytes = Vec::new();
        p.write_to(&mut bytes);
        let mut input = &bytes[..];
        let back = Postings::read_from(&mut input).unwrap();
        assert!(input.is_empty());
        let q = ["alpha".to_owned(), "beta".to_owned(), "délta".to_owned()];
        assert_eq!(back.search(&q, 10), p.search(&q, 10));
        assert_eq!(back.df("beta"), 2);
        for cut in [0, 7, bytes.len() / 2, bytes.len() - 1] {
            assert!(
                Postings::read_from(&mut &bytes[..cut]).is_none(),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_turn_length_setting_moves_either_way_between_its_ends() {
        assert_eq!(by_turn_length(0.0, 1.0, 0.5), 1.0);
        assert_eq!(by_turn_length(SHORT_TURNS, 1.0, 0.5), 1.0);
        assert_eq!(by_turn_length(LONG_TURNS, 1.0, 0.5), 0.5);
        assert_eq!(by_turn_length(1e6, 1.0, 0.5), 0.5);
        let mut last = 1.0;
        for tokens in (61..120).map(|t| t as f32) {
            let v = by_turn_length(tokens, 1.0, 0.5);
            assert!(v <= last && v > 0.5 && last - v < 0.02, "{tokens}: {v}");
            last = v;
        }
    }

    #[test]
    fn k1_rises_with_the_turn_length_without_a_jump() {
        assert_eq!(k1(1.0), K1_SHORT);
        assert_eq!(k1(SHORT_TURNS), K1_SHORT);
        assert_eq!(k1(LONG_TURNS), K1);
        assert_eq!(k1(10_000.0), K1);
        let mut last = k1(0.0);
        for step in 1..=2_000 {
            let next = k1(step as f32 * 0.1);
            assert!(next >= last, "k1 falls at {} tokens", step as f32 * 0.1);
            assert!(
                next - last < 0.01,
                "k1 jumps at {} tokens",
                step as f32 * 0.1
            );
            last = next;
        }
    }

    #[test]
    fn a_weighted_term_counts_its_share_of_its_idf() {
        let p = index(&[
            (1, "window seats on flights"),
            (2, "a seat by the door"),
            (3, "dinner with friends"),
        ]);
        let full = p.search(&["seats".to_owned()], 10);
        let half = p.search_weighted(&[("seats", 0.5)], 10);
        assert_eq!(full.len(), 1);
        assert!((half[0].1 - full[0].1 / 2.0).abs() < 1e-6);
        // A term and another inflection at a share: the exact word ranks first, the other
        // form is found; a term given twice counts once.
        let both = p.search_weighted(&[("seat", 1.0), ("seats", 0.5), ("seat", 1.0)], 10);
        assert_eq!(both.iter().map(|h| h.0).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(
            p.search_weighted(&[("seat", 1.0)], 10),
            p.search(&["seat".to_owned()], 10)
        );
    }

    #[test]
    fn a_chat_of_short_turns_penalizes_the_fuller_turn_less() {
        // The same one-occurrence match in a turn three times longer than another: the
        // longer one's score relative to the shorter one's is higher where turns are
        // short (k1 0.5) than BM25's usual 1.2 would make it.
        let docs = [
            (1, "pottery class"),
            (2, "pottery class today with the kids again"),
        ];
        let p = index(&docs);
        let hits = p.search(&["pottery".to_owned()], 10);
        let ratio = hits[1].1 / hits[0].1;
        let usual = {
            let (short, long) = (
                tokens(docs[0].1).len() as f32,
                tokens(docs[1].1).len() as f32,
            );
            let avg = (short + long) / 2.0;
            let score = |len: f32| (K1 + 1.0) / (1.0 + K1 * len / avg);
            score(long) / score(short)
        };
        assert_eq!(hits[0].0, 1, "the shorter turn still ranks first");
        assert!(
            ratio > usual * 1.1,
            "{ratio} against {usual} with k1 = {K1}"
        );
    }

    #[test]
    fn reply_context_counts_half_a_token_in_frequency_and_length() {
        let mut p = Postings::default();
        p.add(1, &tokens("dog park today"));
        p.add_with_context(2, &tokens("so excited"), &tokens("dog park"), &[]);
        p.add(3, &tokens("cat nap"));
        let (n, avg) = (3, (3.0 + 3.0 + 2.0) / 3.0);
        let k1 = k1(avg);
        let bm25 = |tf: f32, len: f32| {
            idf(n, 2) as f32 * tf * (k1 + 1.0) / (tf + k1 * (1.0 - B + B * len / avg))
        };
        let hits = p.search(&["dog".to_owned()], 10);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].0, 1, "its own word outranks a word of its context");
        assert!((hits[0].1 - bm25(1.0, 3.0)).abs() < 1e-5, "{hits:?}");
        assert!((hits[1].1 - bm25(0.5, 3.0)).abs() < 1e-5, "{hits:?}");
        let mut bytes = Vec::new();
        p.write_to(&mut bytes);
        let back = Postings::read_from(&mut &bytes[..]).unwrap();
        assert_eq!(
            back.search(&["park".to_owned()], 10),
            p.search(&["park".to_owned()], 10)
        );
    }

    #[test]
    fn scores_match_the_bm25_definition_and_rank_best_first() {
        let docs = [
            (10, "the deploy failed on the staging cluster"),
            (11, "deploy deploy deploy again"),
            (12, "lunch with the team"),
            (13, "the staging cluster is back after the deploy fix"),
        ];
        let p = index(&docs);
        let q = ["deploy", "staging", "deploy"];
        let hits = p.search(&q.map(str::to_owned), 10);
        assert_eq!(hits.len(), 3, "the lunch note matches nothing");
        for w in hits.windows(2) {
            assert!(w[0].1 >= w[1].1);
        }
        for (id, score) in &hits {
            let r = reference(&docs, &q, *id);
            assert!((score - r).abs() < 1e-5, "{id}: {score} vs {r}");
        }
        assert_eq!(p.df("deploy"), 3);
        assert_eq!(p.df("absent"), 0);
    }

    #[test]
    fn top_k_is_the_prefix_of_the_full_ranking_with_ties_to_the_older() {
        let docs: Vec<(u64, String)> = (0..200u64)
            .map(|i| {
                (
                    1000 - i,
                    format!("alpha {} beta {}", "gamma ".repeat((i % 7) as usize), i % 3),
                )
            })
            .collect();
        let refs: Vec<(u64, &str)> = docs.iter().map(|(i, t)| (*i, t.as_str())).collect();
        let p = index(&refs);
        let q = ["gamma".to_owned(), "1".to_owned()];
        let all = p.search(&q, 1000);
        for k in [1, 5, 17, 64] {
            assert_eq!(p.search(&q, k), all[..k]);
        }
        for w in all.windows(2) {
            assert!(w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0));
        }
        assert!(p.search(&q, 0).is_empty());
        // Conjunctive: only documents with both terms, same scores.
        let both = p.search_all(&q, 1000);
        assert!(!both.is_empty() && both.len() < all.len());
        for (id, score) in &both {
            let text = &docs.iter().find(|d| d.0 == *id).unwrap().1;
            assert!(text.contains("gamma") && text.ends_with(" 1"));
            assert_eq!(all.iter().find(|h| h.0 == *id).unwrap().1, *score);
        }
        assert!(
            p.search_all(&["gamma".to_owned(), "absent".to_owned()], 5)
                .is_empty()
        );
        assert!(Postings::default().search(&q, 5).is_empty());
    }

    #[test]
    fn one_edit_is_a_letter_replaced_added_dropped_or_swapped() {
        let e = |a: &str, b: &str| {
            let c = |s: &str| s.chars().collect::<Vec<char>>();
            one_edit(&c(a), &c(b))
        };
        assert!(e("torunament", "tournament"));
        assert!(e("accomodation", "accommodation"));
        assert!(e("accommodation", "accomodation"));
        assert!(e("seperate", "separate"));
        assert!(e("café", "cafe"));
        assert!(!e("separate", "separate"));
        assert!(!e("tournament", "turnament1"));
        assert!(!e("adventure", "advent"));
        let p = index(&[
            (1, "the tournament and the accommodation"),
            (2, "a torment"),
        ]);
        assert_eq!(p.one_edit_away("torunament"), ["tournament"]);
        assert_eq!(p.one_edit_away("accomodation"), ["accommodation"]);
        assert!(
            p.one_edit_away("xournament").is_empty(),
            "same first letter"
        );
    }

    #[test]
    fn extensions_are_the_held_words_a_few_letters_longer_or_shorter() {
        let mut p = index(&[
            (1, "We use PostgreSQL and postgresql-contrib"),
            (2, "the music was symbolic of a symbol"),
            (3, "musicals and musicianship"),
        ]);
        p.add_with_context(4, &tokens("plain words"), &[], &tokens("Postgresqlx"));
        let mut longer = p.extensions("postgres", 3, 5);
        longer.sort_unstable();
        // Not the speaker field of the same spelling, nor "contrib".
        assert_eq!(longer, ["postgresql"]);
        let mut shorter = p.extensions("musical", 3, 5);
        shorter.sort_unstable();
        assert_eq!(shorter, ["music", "musicals"]);
        // "symbol" is the shorter form of "symbolic", and "symbolic" itself is left out;
        // "musicianship" is four letters longer than "musician".
        assert_eq!(p.extensions("symbolic", 3, 5), ["symbol"]);
        assert_eq!(p.extensions("musician", 3, 5), ["music"]);
        // Nothing shorter than the minimum is looked up ("music" has five letters).
        assert_eq!(p.extensions("musical", 3, 6), ["musicals"]);
        // A word first indexed after the ordered words were built is among them; a code
        // with digits never is.
        p.add(5, &tokens("postgresdb and postgres9"));
        let mut longer = p.extensions("postgres", 3, 5);
        longer.sort_unstable();
        assert_eq!(longer, ["postgresdb", "postgresql"]);
        // The ordered words survive a round trip through the saved form.
        let mut out = Vec::new();
        p.write_to(&mut out);
        let back = Postings::read_from(&mut out.as_slice()).unwrap();
        let mut longer = back.extensions("postgres", 3, 5);
        longer.sort_unstable();
        assert_eq!(longer, ["postgresdb", "postgresql"]);
    }
}
