//! Context packs: one more consumer of a recall's compiled query. Current beliefs the
//! query touches, suggested procedures, then the recalled items (direct, directive,
//! associative), greedily filled under the token budget ([`fill`]); a text longer than
//! the room left is carried as its most relevant excerpt. The receipt lists every selected
//! item and every suppressed candidate with its reason.

use std::collections::HashMap;

use super::plan::Context;
use super::{Part, RecallResult, Signal};
use crate::error::Result;
use crate::index::lexical;

/// Default share of the available tokens a pack may use.
pub const DEFAULT_BUDGET_SHARE: f64 = 0.25;
/// Hard ceiling of that share.
pub const MAX_BUDGET_SHARE: f64 = 0.30;

/// The token budget of a pack: `requested` (default 25 % of `available`) capped at 30 %.
pub fn pack_budget(available_tokens: usize, requested: Option<usize>) -> usize {
    let cap = (available_tokens as f64 * MAX_BUDGET_SHARE).floor() as usize;
    let default = (available_tokens as f64 * DEFAULT_BUDGET_SHARE).floor() as usize;
    requested.unwrap_or(default).min(cap)
}

/// Token estimate of a text: about four bytes per token, at least one.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4).max(1)
}

/// Where a pack item comes from: the event it is (or, for a belief, its first evidence),
/// with its place in the conversation and its source.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Anchor {
    /// The event.
    pub event: u64,
    /// The caller's id of the event (`source_id`).
    pub source_id: Option<String>,
    /// Its thread.
    pub thread: Option<String>,
    /// Its session.
    pub session: Option<String>,
    /// The document or collection it was recorded from.
    pub source: Option<String>,
    /// Who spoke, by name.
    pub speaker: Option<String>,
    /// When it happened (ms since the epoch).
    pub created_at: Option<i64>,
}

impl From<&crate::ledger::Event> for Anchor {
    fn from(e: &crate::ledger::Event) -> Self {
        Self {
            event: e.id.0,
            source_id: e.source_id.clone(),
            thread: e.thread.clone(),
            session: e.session.clone(),
            source: e.source.clone(),
            speaker: e.speaker.clone(),
            created_at: Some(e.created_at),
        }
    }
}

crate::base::names! {
    /// What place an item takes in a pack, named in receipts by its snake_case name.
    pub enum Slot {
        /// A current belief the query touches.
        Belief = "belief",
        /// A suggested procedure.
        Procedure = "procedure",
        /// A recalled item with evidence of its own.
        Direct = "direct",
        /// A standing directive.
        Directive = "directive",
        /// A recalled item linked to a match (a neighbouring turn, a synapse).
        Associative = "associative",
    }
}

/// One line of a pack receipt.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ReceiptLine {
    /// The item.
    pub id: u64,
    /// Its slot.
    pub slot: Slot,
    /// Tokens it takes.
    pub tokens: usize,
    /// Why it was selected or suppressed.
    pub reason: String,
    /// Who said it, for an event (beliefs and procedures have none).
    pub role: Option<crate::ledger::Role>,
    /// Where it comes from.
    pub anchor: Option<Anchor>,
    /// For an item carried in part: the byte range of its text the pack holds (the whole
    /// did not fit what was left of the budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<(usize, usize)>,
    /// Every other event with the same text once folded ([`crate::text::fold`]) that this
    /// item stands for: those recall collapsed into it and those the pack met again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<u64>,
}

/// The fewest tokens an excerpt of an item may take: below this, what is left of a budget
/// holds too little of a long text to be worth carrying.
pub const EXCERPT_MIN_TOKENS: usize = 48;

/// A candidate for a pack slot.
#[derive(Debug, Clone, PartialEq)]
pub struct PackCandidate {
    /// The item (event, belief or procedure id).
    pub id: u64,
    /// Its slot.
    pub slot: Slot,
    /// Why it is a candidate.
    pub reason: String,
    /// The text the pack would carry.
    pub text: String,
    /// Who said it, for an event.
    pub role: Option<crate::ledger::Role>,
    /// Where it comes from.
    pub anchor: Option<Anchor>,
    /// Other events with the same text once folded ([`crate::text::fold`]) that recall
    /// collapsed into this one.
    pub folded: Vec<u64>,
}

/// A context pack: the selected texts and the receipt accounting for every candidate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Pack {
    /// Token budget used for this pack.
    pub budget: usize,
    /// Tokens used (never above `budget`).
    pub used: usize,
    /// Selected items in order, with their text.
    pub items: Vec<(ReceiptLine, String)>,
    /// Candidates left out, with the reason.
    pub suppressed: Vec<ReceiptLine>,
}

impl PackCandidate {
    /// Its receipt line: `tokens` taken, `reason`, and the byte range of its text carried
    /// when only an `excerpt` of it is.
    fn line(&self, reason: String, tokens: usize, excerpt: Option<(usize, usize)>) -> ReceiptLine {
        ReceiptLine {
            id: self.id,
            slot: self.slot,
            tokens,
            reason,
            role: self.role,
            anchor: self.anchor.clone(),
            excerpt,
            folded: self.folded.clone(),
        }
    }
}

/// Greedy fill: candidates in order, each taken if it fits in what is left of the budget
/// and its text is not already in the pack (one slot per text once folded, whichever slot
/// brought it). Then what is left of the budget, if at least [`EXCERPT_MIN_TOKENS`], goes
/// to excerpts of the items that did not fit whole, best first, each at its rank's place:
/// the run of words of the item that fits and holds the most of the query's `words`
/// (stems), cut at word boundaries and marked with "…" where it was cut; its receipt names
/// the byte range (`excerpt`).
pub fn fill(
    budget: usize,
    candidates: Vec<PackCandidate>,
    words: &std::collections::HashSet<String>,
) -> Pack {
    let mut pack = Pack {
        budget,
        used: 0,
        items: Vec::new(),
        suppressed: Vec::new(),
    };
    // Each text in the pack (folded) with its item and, once placed whole, its line.
    let mut texts: HashMap<String, (u64, Option<usize>)> = HashMap::new();
    // Items in pack order with their candidate's place; the candidates too long to fit.
    let mut placed: Vec<(usize, (ReceiptLine, String))> = Vec::new();
    let mut over: Vec<(usize, PackCandidate)> = Vec::new();
    for (at, c) in candidates.into_iter().enumerate() {
        let tokens = estimate_tokens(&c.text);
        let key = crate::text::fold(&c.text);
        if let Some(&(first, line)) = texts.get(&key) {
            if let Some(line) = line {
                let folded = &mut placed[line].1.0.folded;
                folded.push(c.id);
                folded.extend(&c.folded);
            }
            pack.suppressed.push(c.line(
                format!("the same text as item {first}, already in the pack"),
                tokens,
                None,
            ));
            continue;
        }
        if pack.used + tokens <= budget {
            pack.used += tokens;
            texts.insert(key, (c.id, Some(placed.len())));
            placed.push((at, (c.line(c.reason.clone(), tokens, None), c.text.clone())));
        } else {
            over.push((at, c));
        }
    }
    for (at, c) in over {
        let left = budget - pack.used;
        let tokens = estimate_tokens(&c.text);
        let excerpt = (left >= EXCERPT_MIN_TOKENS)
            .then(|| excerpt(&c.text, left, words))
            .flatten();
        match excerpt {
            Some((start, end, text)) => {
                let taken = estimate_tokens(&text);
                pack.used += taken;
                placed.push((
                    at,
                    (
                        c.line(
                            format!(
                                "{}; an excerpt (bytes {start}–{end} of {}): the whole, {tokens} tokens, is over budget",
                                c.reason,
                                c.text.len()
                            ),
                            taken,
                            Some((start, end)),
                        ),
                        text,
                    ),
                ));
            }
            None => pack.suppressed.push(c.line(
                format!("over budget ({} of {budget} tokens used)", pack.used),
                tokens,
                None,
            )),
        }
    }
    placed.sort_by_key(|p| p.0);
    pack.items = placed.into_iter().map(|p| p.1).collect();
    pack
}

/// The part of `text` a pack carries in at most `tokens` tokens: the run of whole words
/// holding the most query `words` (by stem; the earliest such run on a tie), the matched
/// words centred in it, with "…" where it was cut. `(start, end, text)`, the byte range of `text` it holds; `None` when
/// not even one word fits.
fn excerpt(
    text: &str,
    tokens: usize,
    words: &std::collections::HashSet<String>,
) -> Option<(usize, usize, String)> {
    const MARK: &str = "…";
    // Room for a mark at both ends, in the pack's estimate (four bytes a token).
    let room = (tokens * 4).checked_sub(2 * MARK.len())?;
    // Words: runs of letters and digits.
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    let mut start = None;
    for (i, ch) in text.char_indices().chain([(text.len(), ' ')]) {
        match (start, ch.is_alphanumeric()) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let hit = crate::text::tokens(&text[s..i])
                    .iter()
                    .any(|t| words.contains(crate::text::stem(t)));
                spans.push((s, i, hit));
                start = None;
            }
            _ => {}
        }
    }
    let (mut best, mut best_hits) = (None, 0usize);
    let (mut lo, mut hits) = (0usize, 0usize);
    for hi in 0..spans.len() {
        hits += usize::from(spans[hi].2);
        while lo <= hi && spans[hi].1 - spans[lo].0 > room {
            hits -= usize::from(spans[lo].2);
            lo += 1;
        }
        if lo <= hi && (best.is_none() || hits > best_hits) {
            best = Some((lo, hi));
            best_hits = hits;
        }
    }
    let (start, end) = match best {
        Some((lo, hi)) => {
            // The matched words centred in the room: as much before the first as after
            // the last, as far as the text goes.
            let first = (lo..=hi).find(|&i| spans[i].2).unwrap_or(lo);
            let last = (lo..=hi).rev().find(|&i| spans[i].2).unwrap_or(hi);
            let half = (room - (spans[last].1 - spans[first].0)) / 2;
            let mut s = first;
            while s > 0 && spans[last].1 - spans[s - 1].0 <= spans[last].1 - spans[first].0 + half {
                s -= 1;
            }
            let mut e = last;
            while e + 1 < spans.len() && spans[e + 1].1 - spans[s].0 <= room {
                e += 1;
            }
            while s > 0 && spans[e].1 - spans[s - 1].0 <= room {
                s -= 1;
            }
            (spans[s].0, spans[e].1)
        }
        // One word longer than the room (a script written without spaces): its opening.
        None if !text.is_empty() => {
            let mut end = room.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (0, end)
        }
        None => return None,
    };
    if start == end {
        return None;
    }
    let mut out = String::with_capacity(end - start + 2 * MARK.len());
    if start > 0 {
        out.push_str(MARK);
    }
    out.push_str(&text[start..end]);
    if end < text.len() {
        out.push_str(MARK);
    }
    Some((start, end, out))
}

/// The pack of a recall's answer `recalled` to `query` (its words, filters taken out)
/// under `budget` tokens: current beliefs first (those the recalled events are evidence
/// for, then those sharing a word with the query), suggested procedures, then the recalled
/// items in rank order; superseded evidence and suppressed candidates go to the receipt.
///
/// # Errors
/// Ledger and cognition errors.
pub(crate) fn assemble(
    cx: &Context<'_>,
    query: &str,
    budget: usize,
    recalled: RecallResult,
) -> Result<Pack> {
    let project = cx.project;
    let RecallResult {
        items: direct,
        suppressed,
        ..
    } = recalled;
    let mut candidates = Vec::new();
    // Current beliefs come first: concise and governed (only active rows, never
    // superseded ones; user-owned ones exist only with user evidence). First those the
    // recalled events are evidence for, best recalled first; then those whose key or
    // statement shares a word with the query.
    let active = cx
        .ledger
        .beliefs_with_status(project, crate::governance::BeliefStatus::Active)?;
    let mut chosen: Vec<(usize, String)> = Vec::new();
    for (rank, item) in direct.iter().enumerate() {
        for (id, _, _, status) in cx.ledger.beliefs_citing(project, item.event.id)? {
            if status != crate::governance::BeliefStatus::Active {
                continue;
            }
            if let Some(i) = active.iter().position(|b| b.id == id)
                && chosen.iter().all(|c| c.0 != i)
            {
                chosen.push((
                    i,
                    format!(
                        "current belief {} v{} (evidence: recalled event {} at rank {})",
                        active[i].key,
                        active[i].version,
                        item.event.id,
                        rank + 1
                    ),
                ));
            }
        }
    }
    let words: std::collections::HashSet<String> = lexical::query_terms(query)
        .into_iter()
        .map(|t| crate::text::stem(&t).to_owned())
        .collect();
    for (i, b) in active.iter().enumerate() {
        if chosen.iter().any(|c| c.0 == i) {
            continue;
        }
        let text = format!("{} {}", b.key.replace(['.', '_'], " "), b.statement);
        let overlap: Vec<String> = crate::text::tokens(&text)
            .into_iter()
            .filter(|t| !crate::text::is_stop_word(t) && words.contains(crate::text::stem(t)))
            .collect();
        if !overlap.is_empty() {
            chosen.push((
                i,
                format!(
                    "current belief {} v{} (matches {:?})",
                    b.key, b.version, overlap
                ),
            ));
        }
    }
    for (i, reason) in chosen {
        let b = &active[i];
        candidates.push(PackCandidate {
            id: b.id.0,
            slot: Slot::Belief,
            reason,
            text: format!("{}: {}", b.key, b.statement),
            role: None,
            anchor: b.evidence.first().map(|e| Anchor {
                event: e.0,
                ..Anchor::default()
            }),
            folded: Vec::new(),
        });
    }
    if let Some(q) = cx
        .encoders
        .with(|e| e.encode(query, &hdv::encode::UniformWeights).ok())
    {
        for s in cx.cognition.suggest_procedures(project, &q, 2)? {
            if s.score > 0.05 {
                let steps: Vec<&str> = s
                    .procedure
                    .steps
                    .iter()
                    .map(|st| st.instruction.as_str())
                    .collect();
                candidates.push(PackCandidate {
                    id: s.procedure.id.0,
                    slot: Slot::Procedure,
                    reason: format!("procedure score {:.3} (similarity x reliability)", s.score),
                    text: format!("{}: {}", s.procedure.name, steps.join("; ")),
                    role: None,
                    anchor: None,
                    folded: Vec::new(),
                });
            }
        }
    }
    // The recalled items, in rank order: every one passed recall's relevance floor (its
    // own evidence, or a link to a lexical match), whatever its length; a pack adds no
    // floor of its own and no item recall did not return.
    let mut outdated = Vec::new();
    for (i, item) in direct.iter().enumerate() {
        let directive = item
            .fused
            .breakdown
            .first()
            .filter(|b| b.signal == Signal::Directive)
            .and_then(Part::rank);
        let (slot, reason) = if let Some(rank) = directive {
            (
                Slot::Directive,
                format!(
                    "standing directive, #{rank} by similarity ({:.3})",
                    item.similarity.unwrap_or(0.0)
                ),
            )
        } else if let Some((key, version)) = &item.superseded_belief {
            outdated.push(ReceiptLine {
                id: item.event.id.0,
                slot: Slot::Direct,
                role: Some(item.event.role),
                anchor: Some((&item.event).into()),
                tokens: estimate_tokens(&item.event.content),
                reason: format!(
                    "evidence of belief {key} v{version}, since superseded (the current version is governed; history keeps the old one)"
                ),
                excerpt: None,
                folded: Vec::new(),
            });
            continue;
        } else if item.associative {
            (
                Slot::Associative,
                format!(
                    "rank {}: linked to a match ({})",
                    i + 1,
                    item.fused
                        .breakdown
                        .iter()
                        .map(|b| match b.lender() {
                            Some(lender) => format!("the turn next to event {lender}"),
                            None => b.signal.name().to_owned(),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        } else {
            (
                Slot::Direct,
                format!("rank {} (fused {:.4})", i + 1, item.fused.score),
            )
        };
        candidates.push(PackCandidate {
            id: item.event.id.0,
            slot,
            reason,
            text: item.event.content.clone(),
            role: Some(item.event.role),
            anchor: Some((&item.event).into()),
            folded: item.duplicates.iter().map(|d| d.0).collect(),
        });
    }
    let mut pack = fill(budget, candidates, &words);
    pack.suppressed.extend(outdated);
    pack.suppressed
        .extend(suppressed.into_iter().map(|(id, reason)| ReceiptLine {
            id: id.0,
            slot: Slot::Direct,
            role: None,
            anchor: Some(Anchor {
                event: id.0,
                ..Anchor::default()
            }),
            tokens: 0,
            reason: reason.detail,
            excerpt: None,
            folded: Vec::new(),
        }));
    Ok(pack)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_capped_at_thirty_percent() {
        assert_eq!(pack_budget(1000, None), 250);
        assert_eq!(pack_budget(1000, Some(100)), 100);
        assert_eq!(pack_budget(1000, Some(10_000)), 300);
        let c = |id, text: String| PackCandidate {
            id,
            slot: Slot::Direct,
            reason: "r".into(),
            text,
            role: None,
            anchor: None,
            folded: Vec::new(),
        };
        let none = std::collections::HashSet::new();
        let pack = fill(10, vec![c(1, "x".repeat(30)), c(2, "y".repeat(80))], &none);
        assert_eq!(pack.used, 8);
        assert_eq!(pack.suppressed.len(), 1);
    }

    proptest::proptest! {
        /// Whatever the text and the room, an excerpt is a piece of the text cut at its
        /// byte range and never takes more tokens than it was given.
        #[test]
        fn an_excerpt_is_a_piece_of_the_text_within_its_tokens(
            text in "[a-zé ,.日本]{0,400}",
            tokens in 2usize..60,
        ) {
            let words: std::collections::HashSet<String> =
                ["a", "b"].iter().map(|w| (*w).to_owned()).collect();
            if let Some((start, end, out)) = excerpt(&text, tokens, &words) {
                proptest::prop_assert!(estimate_tokens(&out) <= tokens);
                proptest::prop_assert!(start < end && end <= text.len());
                proptest::prop_assert!(out.contains(&text[start..end]));
            }
        }
    }

    #[test]
    fn a_text_over_what_is_left_is_carried_as_its_best_excerpt_in_rank_order() {
        let c = |id, text: String| PackCandidate {
            id,
            slot: Slot::Direct,
            reason: format!("rank {id}"),
            text,
            role: None,
            anchor: None,
            folded: Vec::new(),
        };
        let words: std::collections::HashSet<String> = ["kiln", "glaze"]
            .iter()
            .map(|w| crate::text::stem(w).to_owned())
            .collect();
        let long = format!(
            "{} The kiln cracked the glaze at dawn. {}",
            "filler words about nothing much. ".repeat(60),
            "more filler text here. ".repeat(60)
        );
        let short = "The glaze recipe is in the blue notebook.".to_owned();
        let pack = fill(100, vec![c(1, long.clone()), c(2, short.clone())], &words);
        assert_eq!(pack.items.len(), 2, "{pack:?}");
        assert!(pack.used <= 100);
        let (line, text) = &pack.items[0];
        assert_eq!(line.id, 1, "the excerpt keeps its rank's place");
        let (start, end) = line.excerpt.expect("an excerpt");
        assert!(text.contains("The kiln cracked the glaze"), "{text}");
        assert!(text.starts_with('…') && text.ends_with('…'));
        assert_eq!(
            &text['…'.len_utf8()..text.len() - '…'.len_utf8()],
            &long[start..end]
        );
        assert_eq!(pack.items[1].1, short, "whole items are taken first");
        // Too little left for an excerpt: the item is over budget.
        let pack = fill(20, vec![c(1, long), c(2, short)], &words);
        assert_eq!(pack.items.len(), 1);
        assert!(pack.suppressed[0].reason.starts_with("over budget"));
    }
}
