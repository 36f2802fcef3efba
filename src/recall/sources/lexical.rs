//! The lexical sources: BM25 over the words (`bm25`), over word pairs (`bigram`) and over quoted phrases (`phrase`), read from the project's lexical index.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A BM25 hit as a source score.
fn bm25_score((id, score): (u64, f32)) -> (u64, f64) {
    (id, f64::from(score))
}

/// BM25 over the in-memory postings ([`lexical`]).
pub(super) struct LexicalSource;

impl Source for LexicalSource {
    fn name(&self) -> Signal {
        Signal::Bm25
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.fts_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        Ok(probe
            .text
            .postings
            .search_weighted(&probe.plan.terms, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}

/// BM25 over the query's word pairs ([`crate::index::lexical::bigrams`]): phrasing the query shares
/// with a memory beyond its single words.
pub(super) struct BigramSource;

impl Source for BigramSource {
    fn name(&self) -> Signal {
        Signal::Bigram
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.bigram_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        Ok(probe
            .text
            .bigrams
            .search_weighted(&probe.plan.pairs, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}

/// BM25 over the words of the quoted phrases, among events holding all of them (the
/// filter then checks each phrase itself).
pub(super) struct PhraseSource;

impl Source for PhraseSource {
    fn name(&self) -> Signal {
        Signal::Phrase
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.fts_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let phrases = &probe.plan.compiled.phrases;
        if phrases.is_empty() {
            return Ok(Vec::new());
        }
        let words: Vec<String> = phrases
            .iter()
            .flat_map(|p| crate::text::tokens(p))
            .collect();
        Ok(probe
            .text
            .postings
            .search_all(&words, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}
