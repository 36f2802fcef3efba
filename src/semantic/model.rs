//! Models loaded from a directory with no network, and the WordPiece tokenizer they share.
//!
//! A static model in model2vec format: `tokenizer.json` (a Hugging Face WordPiece
//! tokenizer: BERT normalizer and pre-tokenizer) and `model.safetensors` (one `f32` table,
//! vocabulary × dimensions, under the key `embeddings`). A text's embedding is the mean of
//! its tokens' rows (unknown tokens left out), L2-normalized, as model2vec computes it.
//!
//! The tokenizer ([`WordPiece`]) is written here rather than taken from the `tokenizers`
//! crate: BERT-family models need only BERT normalization, punctuation splitting and
//! greedy WordPiece, and the crate would bring a regex engine and C builds to a lite build
//! that has neither. The sentence model (`semantic::sentence`) reads the same tokenizer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// Why a model directory could not be loaded: the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("semantic model {}: {reason}", path.display())]
pub struct ModelError {
    /// The file (or directory) at fault.
    pub path: PathBuf,
    /// What is wrong.
    pub reason: String,
}

pub(crate) fn model_error(path: &Path, reason: impl Into<String>) -> ModelError {
    ModelError {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// Whether `dir` holds a transformer in the sentence-transformers layout (a `config.json`
/// naming a model type other than `model2vec`) rather than a static model (model2vec, with
/// or without its `config.json`). An unreadable `config.json` counts as a transformer's, so
/// its loader names the file.
pub fn is_sentence_model(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("config.json")) else {
        return dir.join("config.json").exists();
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .map_or(true, |c| c["model_type"].as_str() != Some("model2vec"))
}

/// Longest word WordPiece splits (longer ones are unknown), as BERT's tokenizer does.
const MAX_WORD_CHARS: usize = 100;
/// Tokens read per text (model2vec's `max_length`).
const MAX_TOKENS: usize = 512;

/// A WordPiece tokenizer read from a Hugging Face `tokenizer.json`: BERT normalization,
/// BERT pre-tokenization, greedy longest-match-first WordPiece.
#[derive(Clone)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    prefix: String,
    unknown: Option<u32>,
    lowercase: bool,
}

impl WordPiece {
    /// Reads the `tokenizer.json` at `path`.
    ///
    /// # Errors
    /// A missing or malformed file, or a model other than WordPiece, naming the file.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| model_error(path, format!("cannot read: {e}")))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| model_error(path, format!("is not JSON ({e})")))?;
        let model = &json["model"];
        if model["type"].as_str() != Some("WordPiece") {
            return Err(model_error(
                path,
                format!(
                    "model type {} is not supported (only WordPiece)",
                    model["type"]
                ),
            ));
        }
        let vocab: HashMap<String, u32> = model["vocab"]
            .as_object()
            .ok_or_else(|| model_error(path, "has no model.vocab object"))?
            .iter()
            .map(|(k, v)| {
                v.as_u64()
                    .and_then(|v| u32::try_from(v).ok())
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| model_error(path, format!("vocab entry {k:?} is not an id")))
            })
            .collect::<Result<_, _>>()?;
        let prefix = model["continuing_subword_prefix"]
            .as_str()
            .unwrap_or("##")
            .to_owned();
        let unknown = model["unk_token"]
            .as_str()
            .and_then(|u| vocab.get(u).copied());
        let lowercase = json["normalizer"]["lowercase"].as_bool().unwrap_or(true);
        Ok(Self {
            vocab,
            prefix,
            unknown,
            lowercase,
        })
    }

    /// Entries in the vocabulary.
    pub fn len(&self) -> usize {
        self.vocab.len()
    }

    /// Whether the vocabulary is empty.
    pub fn is_empty(&self) -> bool {
        self.vocab.is_empty()
    }

    /// The highest token id.
    pub fn max_id(&self) -> u32 {
        self.vocab.values().copied().max().unwrap_or(0)
    }

    /// The id of a token (`[CLS]`, `[SEP]`, a word piece), if the vocabulary has it.
    pub fn id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    /// The token ids of `text`, at most `max`. A word WordPiece cannot split is the
    /// unknown token when `keep_unknown` (as a BERT encoder reads it), else left out (as a
    /// static model averages).
    pub fn encode(&self, text: &str, keep_unknown: bool, max: usize) -> Vec<u32> {
        let mut ids = Vec::new();
        for word in pre_tokenize(&self.normalize(text)) {
            self.wordpiece(&word, keep_unknown, &mut ids);
            if ids.len() >= max {
                ids.truncate(max);
                break;
            }
        }
        ids
    }

    /// BERT normalization (as Hugging Face's `BertNormalizer`): NUL, U+FFFD and control
    /// and format characters (general category C*, tab and newlines aside) out,
    /// whitespace to spaces, CJK ideographs spaced, then accents stripped (NFD, nonspacing
    /// marks out) and lowercase.
    fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if c == '\0' || c == '\u{fffd}' || is_control(c) {
                continue;
            }
            if is_whitespace(c) {
                out.push(' ');
            } else if is_cjk(c) {
                out.push(' ');
                out.push(c);
                out.push(' ');
            } else {
                out.push(c);
            }
        }
        if self.lowercase {
            out.nfd()
                .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
                .collect::<String>()
                .to_lowercase()
        } else {
            out
        }
    }

    /// Greedy longest-match-first WordPiece of one word; a word it cannot split (or longer
    /// than [`MAX_WORD_CHARS`]) is the unknown token.
    fn wordpiece(&self, word: &str, keep_unknown: bool, ids: &mut Vec<u32>) {
        let unknown = |ids: &mut Vec<u32>| {
            if keep_unknown && let Some(u) = self.unknown {
                ids.push(u);
            }
        };
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_WORD_CHARS {
            return unknown(ids);
        }
        let start_len = ids.len();
        let mut piece = String::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.extend(&chars[start..end]);
                if let Some(&id) = self.vocab.get(&piece) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) if keep_unknown || Some(id) != self.unknown => ids.push(id),
                Some(_) => {}
                None => {
                    ids.truncate(start_len);
                    return unknown(ids);
                }
            }
            start = end;
        }
    }
}

/// A loaded static model.
#[derive(Clone)]
pub struct StaticModel {
    tokenizer: WordPiece,
    /// Row-major `vocabulary × dim`.
    table: Vec<f32>,
    dim: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("dir", &self.dir)
            .field("vocabulary", &self.tokenizer.len())
            .field("dim", &self.dim)
            .finish()
    }
}

impl StaticModel {
    /// Loads the model in `dir`.
    ///
    /// # Errors
    /// A missing or malformed `tokenizer.json` or `model.safetensors`, naming the file:
    /// not WordPiece, no `embeddings` table, not `f32`, fewer rows than the vocabulary.
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        if !dir.is_dir() {
            return Err(model_error(dir, "is not a directory"));
        }
        let tokenizer = WordPiece::load(&dir.join("tokenizer.json"))?;
        let st_path = dir.join("model.safetensors");
        let bytes = std::fs::read(&st_path)
            .map_err(|e| model_error(&st_path, format!("cannot read: {e}")))?;
        let tensors = safetensors::SafeTensors::deserialize(&bytes)
            .map_err(|e| model_error(&st_path, format!("is not a safetensors file ({e})")))?;
        let view = tensors
            .tensor("embeddings")
            .map_err(|_| model_error(&st_path, "has no `embeddings` tensor"))?;
        if view.dtype() != safetensors::Dtype::F32 {
            return Err(model_error(
                &st_path,
                format!("`embeddings` is {:?}, not F32", view.dtype()),
            ));
        }
        let [rows, dim] = view.shape()[..] else {
            return Err(model_error(&st_path, "`embeddings` is not a matrix"));
        };
        let max_id = tokenizer.max_id() as usize;
        if dim == 0 || rows <= max_id {
            return Err(model_error(
                &st_path,
                format!(
                    "`embeddings` is {rows} x {dim}; the vocabulary needs {} rows",
                    max_id + 1
                ),
            ));
        }
        let table: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if let Some(i) = table.iter().position(|x| !x.is_finite()) {
            return Err(model_error(
                &st_path,
                format!("`embeddings` value {i} is not finite"),
            ));
        }
        Ok(Self {
            tokenizer,
            table,
            dim,
            dir: dir.to_owned(),
        })
    }

    /// Embedding dimensions.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The directory it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The token ids of `text` (unknown words left out), at most [`MAX_TOKENS`].
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, false, MAX_TOKENS)
    }

    /// The embedding of `text` (unit length), `None` when no token of it is known.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let ids = self.token_ids(text);
        if ids.is_empty() {
            return None;
        }
        let mut sum = vec![0.0f32; self.dim];
        for &id in &ids {
            let row = &self.table[id as usize * self.dim..(id as usize + 1) * self.dim];
            for (s, x) in sum.iter_mut().zip(row) {
                *s += x;
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm <= f32::EPSILON {
            return None;
        }
        sum.iter_mut().for_each(|x| *x /= norm);
        Some(sum)
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// BERT's whitespace: tab, newlines, space and the space separators (Zs).
fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
        || get_general_category(c) == GeneralCategory::SpaceSeparator
}

/// BERT's control characters: general category C* (control, format, unassigned, private
/// use, surrogate) except tab and newlines.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r')
        && matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::Unassigned
                | GeneralCategory::PrivateUse
                | GeneralCategory::Surrogate
        )
}

/// BERT's punctuation: every ASCII symbol, and Unicode general category P*.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// BERT's pre-tokenizer: split on whitespace, and every punctuation character is a word
/// of its own.
fn pre_tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        } else if is_punctuation(c) {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            words.push(c.to_string());
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a tiny WordPiece model (vocabulary and a 2-d table) into `dir`.
    pub(crate) fn tiny_model(dir: &Path) {
        let vocab = ["[PAD]", "[UNK]", "cat", "dog", "##s", "sat", "."];
        let vocab_json: serde_json::Map<String, serde_json::Value> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| ((*t).to_owned(), serde_json::json!(i)))
            .collect();
        let tok = serde_json::json!({
            "normalizer": {"type": "BertNormalizer", "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                      "continuing_subword_prefix": "##", "vocab": vocab_json}
        });
        std::fs::write(dir.join("tokenizer.json"), tok.to_string()).unwrap();
        let rows: [[f32; 2]; 7] = [
            [0.0, 0.0],
            [9.0, 9.0],
            [1.0, 0.0],
            [0.9, 0.1],
            [0.0, 0.2],
            [0.0, 1.0],
            [0.0, 0.0],
        ];
        let data: Vec<u8> = rows
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![7, 2], &data)
            .unwrap();
        let bytes = safetensors::serialize([("embeddings", view)], None).unwrap();
        std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
    }

    #[test]
    fn wordpiece_splits_and_skips_unknown_words() {
        let dir = tempfile::tempdir().unwrap();
        tiny_model(dir.path());
        let m = StaticModel::load(dir.path()).unwrap();
        assert_eq!(m.token_ids("Cats sat."), [2, 4, 5, 6]);
        assert_eq!(
            m.token_ids("zebra"),
            Vec::<u32>::new(),
            "unknown words count for nothing"
        );
        let e = m.embed("cat").unwrap();
        assert!((e[0] - 1.0).abs() < 1e-6 && e[1].abs() < 1e-6);
        assert!(m.embed("zebra").is_none());
        let (cat, dog, sat) = (
            m.embed("cat").unwrap(),
            m.embed("dog").unwrap(),
            m.embed("sat").unwrap(),
        );
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!(dot(&cat, &dog) > dot(&cat, &sat));
    }

    #[test]
    fn a_missing_or_malformed_model_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = StaticModel::load(dir.path()).unwrap_err();
        assert!(err.path.ends_with("tokenizer.json"), "{err}");
        tiny_model(dir.path());
        std::fs::write(dir.path().join("model.safetensors"), b"not a tensor file").unwrap();
        let err = StaticModel::load(dir.path()).unwrap_err();
        assert!(err.path.ends_with("model.safetensors"), "{err}");
        let err = StaticModel::load(&dir.path().join("nope")).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    #[test]
    fn the_shared_development_model_loads_when_present() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models/m2v-minilm-256");
        if !dir.is_dir() {
            eprintln!("SKIPPED: {} is not here", dir.display());
            return;
        }
        let m = StaticModel::load(&dir).unwrap();
        assert_eq!(m.dim(), 256);
        let a = m.embed("I adopted a puppy last week").unwrap();
        let b = m.embed("my new dog").unwrap();
        let c = m.embed("quarterly tax filing deadline").unwrap();
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
        assert!(
            dot(&a, &b) > dot(&a, &c),
            "{} vs {}",
            dot(&a, &b),
            dot(&a, &c)
        );
    }
}
