//! A sentence model of the BERT family, run locally in `f32` with no network: a
//! directory in the sentence-transformers layout (`config.json`, `tokenizer.json`,
//! `model.safetensors`, `modules.json`, `1_Pooling/config.json`,
//! `sentence_bert_config.json`), weights in `f32`, `f16` or `bf16` (read as `f32`).
//!
//! The encoder is the post-norm BERT of `transformers`' `BertModel` with absolute
//! positions: embeddings (word + position + token type 0) and a layer norm, then per
//! layer self-attention with a residual and a layer norm, a GELU feed-forward with a
//! residual and a layer norm. Pooling is the mean of the window's token states (special
//! tokens included, as sentence-transformers' attention mask has them) or the `[CLS]`
//! state, as `1_Pooling/config.json` says; the result is L2-normalized when `modules.json`
//! lists a `Normalize` module.
//!
//! Batches carry no padding: the windows of a batch are laid end to end as one matrix of
//! tokens, so every dense layer is one large matrix product (by `matrixmultiply`, split by
//! rows over the rayon pool), and only attention runs per window. A text longer than the
//! model's window (`max_seq_length`) is cut into consecutive windows of that many tokens
//! (`[CLS]` and `[SEP]` included), at most [`MAX_WINDOWS`]; its embedding is the mean of
//! its windows' normalized embeddings, normalized.

use std::path::{Path, PathBuf};

use hdv::kernels::dense::f16_to_f32;
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};

use super::Windows;
use super::model::{ModelError, WordPiece, model_error};

/// Windows embedded per text; the rest of a longer text is not read.
pub const MAX_WINDOWS: usize = 16;
/// Tokens per forward pass: windows are grouped into batches of about this many tokens.
const BATCH_TOKENS: usize = 4096;
/// Rows per parallel slice of a matrix product.
const ROWS_PER_TASK: usize = 64;

/// How a window's token states become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
}

/// The feed-forward activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activation {
    /// `x Φ(x)` with the exact normal CDF (`"gelu"`).
    Gelu,
    /// The tanh approximation (`"gelu_new"`, `"gelu_pytorch_tanh"`).
    GeluTanh,
    Relu,
}

/// `y = x Wᵀ + b`, `W` kept as stored (`output × input`, row-major).
struct Linear {
    weight: Vec<f32>,
    /// The weight as stored when the file holds it in f16 (exact, half the bytes): the
    /// direct product streams it instead of the f32 copy.
    half: Option<Vec<u16>>,
    bias: Vec<f32>,
    input: usize,
    output: usize,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

struct Layer {
    /// Query, key and value in one product (`3 hidden × hidden`).
    qkv: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    up: Linear,
    down: Linear,
    output_norm: Norm,
}

/// A loaded sentence model.
pub struct SentenceModel {
    tokenizer: WordPiece,
    cls: u32,
    sep: u32,
    hidden: usize,
    heads: usize,
    /// Tokens per window, `[CLS]` and `[SEP]` included.
    window: usize,
    windows: Windows,
    pooling: Pooling,
    normalize: bool,
    activation: Activation,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    dir: PathBuf,
}

impl std::fmt::Debug for SentenceModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentenceModel")
            .field("dir", &self.dir)
            .field("hidden", &self.hidden)
            .field("layers", &self.layers.len())
            .field("window", &self.window)
            .field("pooling", &self.pooling)
            .finish()
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value, ModelError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| model_error(path, format!("cannot read: {e}")))?;
    serde_json::from_str(&text).map_err(|e| model_error(path, format!("is not JSON ({e})")))
}

fn read_json_opt(path: &Path) -> Result<Option<serde_json::Value>, ModelError> {
    if path.is_file() {
        read_json(path).map(Some)
    } else {
        Ok(None)
    }
}

/// The weights of one tensor, read as `f32`, of the expected shape.
struct Tensors<'a> {
    file: SafeTensors<'a>,
    path: &'a Path,
    prefix: &'static str,
}

impl Tensors<'_> {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, ModelError> {
        let full = format!("{}{name}", self.prefix);
        let view = self
            .file
            .tensor(&full)
            .map_err(|_| model_error(self.path, format!("has no tensor `{full}`")))?;
        if view.shape() != shape {
            return Err(model_error(
                self.path,
                format!("`{full}` is {:?}, expected {shape:?}", view.shape()),
            ));
        }
        let data = view.data();
        let values: Vec<f32> = match view.dtype() {
            Dtype::F32 => data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            Dtype::F16 => data
                .chunks_exact(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
            Dtype::BF16 => data
                .chunks_exact(2)
                .map(|c| f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16))
                .collect(),
            other => {
                return Err(model_error(
                    self.path,
                    format!("`{full}` is {other:?}; F32, F16 or BF16 expected"),
                ));
            }
        };
        if let Some(i) = values.iter().position(|x| !x.is_finite()) {
            return Err(model_error(
                self.path,
                format!("`{full}` value {i} is not finite"),
            ));
        }
        Ok(values)
    }

    fn linear(&self, name: &str, input: usize, output: usize) -> Result<Linear, ModelError> {
        let weight = self.get(&format!("{name}.weight"), &[output, input])?;
        let half = self
            .file
            .tensor(&format!("{}{name}.weight", self.prefix))
            .ok()
            .filter(|v| v.dtype() == Dtype::F16)
            .map(|v| {
                v.data()
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect()
            });
        Ok(Linear {
            weight,
            half,
            bias: self.get(&format!("{name}.bias"), &[output])?,
            input,
            output,
        })
    }

    fn norm(&self, name: &str, width: usize, eps: f32) -> Result<Norm, ModelError> {
        Ok(Norm {
            weight: self.get(&format!("{name}.weight"), &[width])?,
            bias: self.get(&format!("{name}.bias"), &[width])?,
            eps,
        })
    }
}

impl SentenceModel {
    /// Loads the model in `dir`.
    ///
    /// # Errors
    /// A missing or malformed file, naming it: a `config.json` that is not a BERT model
    /// with absolute positions, a tokenizer that is not WordPiece, a missing tensor or one
    /// of the wrong shape or type, a pooling mode other than mean or `[CLS]`.
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        if !dir.is_dir() {
            return Err(model_error(dir, "is not a directory"));
        }
        let config_path = dir.join("config.json");
        let config = read_json(&config_path)?;
        let bad = |why: String| model_error(&config_path, why);
        let model_type = config["model_type"].as_str().unwrap_or("");
        if model_type != "bert" {
            return Err(bad(format!(
                "model_type {model_type:?} is not supported (only \"bert\": BERT, MiniLM, BGE, E5 and other BERT encoders)"
            )));
        }
        let number = |key: &str| -> Result<usize, ModelError> {
            config[key]
                .as_u64()
                .and_then(|v| usize::try_from(v).ok())
                .filter(|&v| v > 0)
                .ok_or_else(|| bad(format!("`{key}` is missing or not a positive integer")))
        };
        let hidden = number("hidden_size")?;
        let heads = number("num_attention_heads")?;
        let layers_n = number("num_hidden_layers")?;
        let intermediate = number("intermediate_size")?;
        let positions = number("max_position_embeddings")?;
        let vocab_size = number("vocab_size")?;
        let type_vocab = number("type_vocab_size").unwrap_or(2);
        if hidden % heads != 0 {
            return Err(bad(format!(
                "hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
            )));
        }
        let eps = config["layer_norm_eps"].as_f64().unwrap_or(1e-12) as f32;
        let activation = match config["hidden_act"].as_str().unwrap_or("gelu") {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            other => return Err(bad(format!("hidden_act {other:?} is not supported"))),
        };
        match config["position_embedding_type"].as_str() {
            None | Some("absolute") => {}
            Some(other) => {
                return Err(bad(format!(
                    "position_embedding_type {other:?} is not supported (only absolute)"
                )));
            }
        }
        let tok_path = dir.join("tokenizer.json");
        let tokenizer = WordPiece::load(&tok_path)?;
        let special = |t: &str| {
            tokenizer
                .id(t)
                .ok_or_else(|| model_error(&tok_path, format!("the vocabulary has no {t}")))
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        if tokenizer.max_id() as usize >= vocab_size {
            return Err(model_error(
                &tok_path,
                format!(
                    "token id {} is past the model's vocab_size {vocab_size}",
                    tokenizer.max_id()
                ),
            ));
        }
        // sentence-transformers' window (max_seq_length), within the position table.
        let window = read_json_opt(&dir.join("sentence_bert_config.json"))?
            .and_then(|c| c["max_seq_length"].as_u64())
            .map_or(positions, |w| (w as usize).min(positions));
        if window < 3 {
            return Err(model_error(
                &dir.join("sentence_bert_config.json"),
                format!("max_seq_length {window} leaves no room for a token"),
            ));
        }
        let modules = read_json_opt(&dir.join("modules.json"))?;
        let module = |kind: &str| {
            modules.as_ref().and_then(|m| {
                m.as_array()?.iter().find(|e| {
                    e["type"]
                        .as_str()
                        .is_some_and(|t| t.ends_with(&format!(".{kind}")))
                })
            })
        };
        let normalize = module("Normalize").is_some();
        let pooling_dir = module("Pooling")
            .and_then(|e| e["path"].as_str())
            .unwrap_or("1_Pooling");
        let pooling_path = dir.join(pooling_dir).join("config.json");
        let pooling = match read_json_opt(&pooling_path)? {
            None => Pooling::Mean,
            Some(p) => {
                let on = |k: &str| p[k].as_bool().unwrap_or(false);
                let others = [
                    "pooling_mode_max_tokens",
                    "pooling_mode_mean_sqrt_len_tokens",
                    "pooling_mode_weightedmean_tokens",
                    "pooling_mode_lasttoken",
                ];
                if let Some(k) = others.iter().find(|k| on(k)) {
                    return Err(model_error(
                        &pooling_path,
                        format!("{k} is not supported (mean or [CLS] pooling only)"),
                    ));
                }
                match (on("pooling_mode_cls_token"), on("pooling_mode_mean_tokens")) {
                    (true, false) => Pooling::Cls,
                    (false, true) => Pooling::Mean,
                    _ => {
                        return Err(model_error(
                            &pooling_path,
                            "exactly one of mean and [CLS] pooling must be on",
                        ));
                    }
                }
            }
        };
        let st_path = dir.join("model.safetensors");
        let bytes = std::fs::read(&st_path)
            .map_err(|e| model_error(&st_path, format!("cannot read: {e}")))?;
        let file = SafeTensors::deserialize(&bytes)
            .map_err(|e| model_error(&st_path, format!("is not a safetensors file ({e})")))?;
        let prefix = if file.tensor("embeddings.word_embeddings.weight").is_ok() {
            ""
        } else {
            "bert."
        };
        let t = Tensors {
            file,
            path: &st_path,
            prefix,
        };
        let word = t.get("embeddings.word_embeddings.weight", &[vocab_size, hidden])?;
        let position = t.get(
            "embeddings.position_embeddings.weight",
            &[positions, hidden],
        )?;
        let mut token_type = t.get(
            "embeddings.token_type_embeddings.weight",
            &[type_vocab, hidden],
        )?;
        token_type.truncate(hidden);
        let embedding_norm = t.norm("embeddings.LayerNorm", hidden, eps)?;
        let layers = (0..layers_n)
            .map(|i| {
                let l = format!("encoder.layer.{i}");
                let q = t.linear(&format!("{l}.attention.self.query"), hidden, hidden)?;
                let k = t.linear(&format!("{l}.attention.self.key"), hidden, hidden)?;
                let v = t.linear(&format!("{l}.attention.self.value"), hidden, hidden)?;
                let half = match (q.half, k.half, v.half) {
                    (Some(q), Some(k), Some(v)) => Some([q, k, v].concat()),
                    _ => None,
                };
                let qkv = Linear {
                    weight: [q.weight, k.weight, v.weight].concat(),
                    half,
                    bias: [q.bias, k.bias, v.bias].concat(),
                    input: hidden,
                    output: 3 * hidden,
                };
                Ok(Layer {
                    qkv,
                    attention_out: t.linear(
                        &format!("{l}.attention.output.dense"),
                        hidden,
                        hidden,
                    )?,
                    attention_norm: t.norm(
                        &format!("{l}.attention.output.LayerNorm"),
                        hidden,
                        eps,
                    )?,
                    up: t.linear(&format!("{l}.intermediate.dense"), hidden, intermediate)?,
                    down: t.linear(&format!("{l}.output.dense"), intermediate, hidden)?,
                    output_norm: t.norm(&format!("{l}.output.LayerNorm"), hidden, eps)?,
                })
            })
            .collect::<Result<Vec<_>, ModelError>>()?;
        Ok(Self {
            tokenizer,
            cls,
            sep,
            hidden,
            heads,
            window,
            windows: Windows::Mean,
            pooling,
            normalize,
            activation,
            word,
            position,
            token_type,
            embedding_norm,
            layers,
            dir: dir.to_owned(),
        })
    }

    /// Embedding dimensions.
    pub fn dim(&self) -> usize {
        self.hidden
    }

    /// The directory it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Tokens per window, `[CLS]` and `[SEP]` included.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Reads long texts as `windows` says.
    #[must_use]
    pub fn with_windows(mut self, windows: Windows) -> Self {
        self.windows = windows;
        self
    }

    /// The windows of `text`: consecutive runs of its tokens, each between `[CLS]` and
    /// `[SEP]`, at most [`MAX_WINDOWS`] (one with [`Windows::First`]; an empty text is one
    /// window of the two).
    pub fn windows(&self, text: &str) -> Vec<Vec<u32>> {
        let room = self.window - 2;
        let max = match self.windows {
            Windows::Mean => MAX_WINDOWS,
            Windows::First => 1,
        };
        let tokens = self.tokenizer.encode(text, true, room * max);
        if tokens.is_empty() {
            return vec![vec![self.cls, self.sep]];
        }
        tokens
            .chunks(room)
            .map(|c| {
                let mut w = Vec::with_capacity(c.len() + 2);
                w.push(self.cls);
                w.extend_from_slice(c);
                w.push(self.sep);
                w
            })
            .collect()
    }

    /// The embedding of `text`.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_batch(&[text])
            .pop()
            .expect("one text, one embedding")
    }

    /// The embeddings of `texts`, in order: each the mean of its windows' normalized
    /// embeddings ([`embed_windows`](Self::embed_windows)), normalized when the model says.
    pub fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        self.embed_windows(texts)
            .into_iter()
            .map(|windows| {
                let mut sum = vec![0.0f32; self.hidden];
                for w in &windows {
                    for (s, x) in sum.iter_mut().zip(w) {
                        *s += x;
                    }
                }
                if self.normalize { normalized(sum) } else { sum }
            })
            .collect()
    }

    /// The normalized embedding of every window of each of `texts` ([`windows`](Self::windows)),
    /// in order (one forward pass per [`BATCH_TOKENS`] of windows).
    pub fn embed_windows(&self, texts: &[&str]) -> Vec<Vec<Vec<f32>>> {
        let windows: Vec<(usize, Vec<u32>)> = texts
            .par_iter()
            .enumerate()
            .flat_map_iter(|(i, t)| self.windows(t).into_iter().map(move |w| (i, w)))
            .collect();
        let mut embedded: Vec<Vec<Vec<f32>>> = vec![Vec::new(); texts.len()];
        let mut start = 0;
        while start < windows.len() {
            let mut end = start;
            let mut tokens = 0;
            while end < windows.len()
                && (end == start || tokens + windows[end].1.len() <= BATCH_TOKENS)
            {
                tokens += windows[end].1.len();
                end += 1;
            }
            let group: Vec<&[u32]> = windows[start..end]
                .iter()
                .map(|(_, w)| w.as_slice())
                .collect();
            for ((text, _), pooled) in windows[start..end].iter().zip(self.forward(&group)) {
                embedded[*text].push(normalized(pooled));
            }
            start = end;
        }
        embedded
    }

    /// The pooled states of `windows`, one forward pass over all their tokens.
    fn forward(&self, windows: &[&[u32]]) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let total: usize = windows.iter().map(|w| w.len()).sum();
        let mut x = vec![0.0f32; total * h];
        let mut rows = x.chunks_exact_mut(h);
        for w in windows {
            for (pos, &id) in w.iter().enumerate() {
                let row = rows.next().expect("a row per token");
                let word = &self.word[id as usize * h..(id as usize + 1) * h];
                let position = &self.position[pos * h..(pos + 1) * h];
                for (((r, a), b), c) in row.iter_mut().zip(word).zip(position).zip(&self.token_type)
                {
                    *r = a + b + c;
                }
            }
        }
        layer_norm(&mut x, &self.embedding_norm, None);
        let intermediate = self.layers.first().map_or(0, |l| l.up.output);
        let mut qkv = vec![0.0f32; total * 3 * h];
        let mut context = vec![0.0f32; total * h];
        let mut out = vec![0.0f32; total * h];
        let mut inner = vec![0.0f32; total * intermediate];
        for layer in &self.layers {
            linear(&x, &layer.qkv, &mut qkv);
            self.attention(&qkv, windows, &mut context);
            linear(&context, &layer.attention_out, &mut out);
            layer_norm(&mut x, &layer.attention_norm, Some(&out));
            linear(&x, &layer.up, &mut inner);
            activate(&mut inner, self.activation);
            linear(&inner, &layer.down, &mut out);
            layer_norm(&mut x, &layer.output_norm, Some(&out));
        }
        let mut pooled = Vec::with_capacity(windows.len());
        let mut row = 0;
        for w in windows {
            let states = &x[row * h..(row + w.len()) * h];
            pooled.push(match self.pooling {
                Pooling::Cls => states[..h].to_vec(),
                Pooling::Mean => {
                    let mut m = vec![0.0f32; h];
                    for s in states.chunks_exact(h) {
                        for (a, b) in m.iter_mut().zip(s) {
                            *a += b;
                        }
                    }
                    let n = w.len() as f32;
                    m.iter_mut().for_each(|a| *a /= n);
                    m
                }
            });
            row += w.len();
        }
        pooled
    }

    /// Scaled dot-product self-attention of each window over its own tokens: `qkv` rows
    /// hold query, key and value; `context` gets each head's weighted values.
    fn attention(&self, qkv: &[f32], windows: &[&[u32]], context: &mut [f32]) {
        let h = self.hidden;
        let dh = h / self.heads;
        let scale = 1.0 / (dh as f32).sqrt();
        let mut slices = Vec::with_capacity(windows.len());
        let mut rest = context;
        let mut row = 0;
        for w in windows {
            let (mine, tail) = rest.split_at_mut(w.len() * h);
            slices.push((row, w.len(), mine));
            rest = tail;
            row += w.len();
        }
        slices.into_par_iter().for_each(|(row, len, out)| {
            let block = &qkv[row * 3 * h..(row + len) * 3 * h];
            let mut scores = vec![0.0f32; len * len];
            for head in 0..self.heads {
                let q = &block[head * dh..];
                let k = &block[h + head * dh..];
                let v = &block[2 * h + head * dh..];
                // scores = scale · q kᵀ (k read transposed: row stride 1, column 3h).
                gemm(
                    [len, dh, len],
                    scale,
                    (q, 3 * h, 1),
                    (k, 1, 3 * h),
                    0.0,
                    (&mut scores, len),
                );
                for r in scores.chunks_exact_mut(len) {
                    softmax(r);
                }
                let o = &mut out[head * dh..];
                gemm(
                    [len, len, dh],
                    1.0,
                    (&scores, len, 1),
                    (v, 3 * h, 1),
                    0.0,
                    (o, h),
                );
            }
        });
    }
}

/// Rows up to which a product reads the weights where they lie instead of packing them
/// (a question: packing every weight matrix cost more than the arithmetic).
const DIRECT_ROWS: usize = 32;

/// `out = x Wᵀ + b` for every row of `x`, row slices in parallel.
fn linear(x: &[f32], l: &Linear, out: &mut [f32]) {
    let rows = x.len() / l.input;
    if rows <= DIRECT_ROWS {
        let kernel = hdv::kernels::active();
        // Half precision is read natively by F16C (half the bytes to stream); the portable
        // kernel would convert every weight on every product, so it reads the f32 copy.
        let weights = match &l.half {
            Some(half) if half.len() == l.weight.len() && kernel.dense_simd() => {
                hdv::kernels::dense::Weights::F16(half)
            }
            _ => hdv::kernels::dense::Weights::F32(&l.weight),
        };
        let shape = hdv::kernels::dense::Shape {
            input: l.input,
            output: l.output,
        };
        if kernel.linear(x, weights, &l.bias, shape, out) {
            return;
        }
    }
    debug_assert_eq!(out.len(), rows * l.output);
    let per = ROWS_PER_TASK.max(rows.div_ceil(rayon::current_num_threads().max(1)));
    out.par_chunks_mut(per * l.output)
        .zip(x.par_chunks(per * l.input))
        .for_each(|(o, xs)| {
            let m = xs.len() / l.input;
            for r in o.chunks_exact_mut(l.output) {
                r.copy_from_slice(&l.bias);
            }
            // The weight (output × input) read as its transpose.
            gemm(
                [m, l.input, l.output],
                1.0,
                (xs, l.input, 1),
                (&l.weight, 1, l.input),
                1.0,
                (o, l.output),
            );
        });
}

/// `C = alpha · A B + beta · C` for `[m, k, n]`: `A` is m × k and `B` k × n read with
/// the given (row, column) strides from the start of their slices, `C` m × n with the
/// given row stride and unit column stride. Panics (before touching memory) when a matrix
/// reaches past its slice.
#[allow(unsafe_code)]
fn gemm(
    [m, k, n]: [usize; 3],
    alpha: f32,
    (a, rsa, csa): (&[f32], usize, usize),
    (b, rsb, csb): (&[f32], usize, usize),
    beta: f32,
    (c, rsc): (&mut [f32], usize),
) {
    if m == 0 || n == 0 {
        return;
    }
    let last =
        |rows: usize, cols: usize, rs: usize, cs: usize| (rows - 1) * rs + (cols.max(1) - 1) * cs;
    if k > 0 {
        assert!(last(m, k, rsa, csa) < a.len(), "A out of bounds");
        assert!(last(k, n, rsb, csb) < b.len(), "B out of bounds");
    }
    assert!(last(m, n, rsc, 1) < c.len(), "C out of bounds");
    // SAFETY: the asserts above keep every element sgemm reads of A and B and writes of C
    // inside their slices; `c` is borrowed mutably, so C aliases neither A nor B; all
    // strides fit in isize (they index slices).
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            alpha,
            a.as_ptr(),
            rsa as isize,
            csa as isize,
            b.as_ptr(),
            rsb as isize,
            csb as isize,
            beta,
            c.as_mut_ptr(),
            rsc as isize,
            1,
        );
    }
}

/// `x = norm(x + residual)` row by row (`x = norm(x)` without a residual).
fn layer_norm(x: &mut [f32], n: &Norm, residual: Option<&[f32]>) {
    let width = n.weight.len();
    x.par_chunks_mut(width * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(chunk, rows)| {
            for (i, row) in rows.chunks_exact_mut(width).enumerate() {
                if let Some(res) = residual {
                    let at = (chunk * ROWS_PER_TASK + i) * width;
                    for (a, b) in row.iter_mut().zip(&res[at..at + width]) {
                        *a += b;
                    }
                }
                let mean = lanes_sum(row.iter().copied()) / width as f32;
                let var = lanes_sum(row.iter().map(|v| (v - mean) * (v - mean))) / width as f32;
                let inv = 1.0 / (var + n.eps).sqrt();
                for ((v, g), b) in row.iter_mut().zip(&n.weight).zip(&n.bias) {
                    *v = (*v - mean) * inv * g + b;
                }
            }
        });
}

/// A sum in eight interleaved lanes (vectorizable, and more accurate than one running
/// sum).
fn lanes_sum(values: impl Iterator<Item = f32>) -> f32 {
    let mut lanes = [0.0f32; 8];
    for (i, v) in values.enumerate() {
        lanes[i % 8] += v;
    }
    lanes.iter().sum()
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for v in row.iter_mut() {
        *v = exp(*v - max);
    }
    let sum = lanes_sum(row.iter().copied());
    row.iter_mut().for_each(|v| *v /= sum);
}

fn activate(x: &mut [f32], a: Activation) {
    x.par_chunks_mut(4096).for_each(|c| {
        for v in c {
            let t = *v;
            *v = match a {
                Activation::Gelu => 0.5 * t * (1.0 + erf(t * std::f32::consts::FRAC_1_SQRT_2)),
                Activation::GeluTanh => {
                    let u = 0.797_884_6 * (t + 0.044_715 * t * t * t);
                    // tanh(u) = 1 - 2 / (e^{2u} + 1)
                    0.5 * t * (2.0 - 2.0 / (exp(2.0 * u) + 1.0))
                }
                Activation::Relu => t.max(0.0),
            };
        }
    });
}

/// `e^x` in `f32` with relative error under 1e-6, in straight-line arithmetic the compiler
/// vectorizes (no library call): `x = n ln 2 + r` with `ln 2` in two parts (Cody and
/// Waite), `2^n` set in the exponent bits, `e^r` for `|r| <= ln 2 / 2` by its Taylor
/// series to degree 7.
fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75; // ln 2 to 16 bits: n · LN2_HI is exact
    const LN2_LO: f32 = 1.428_606_8e-6;
    let y = (x * std::f32::consts::LOG2_E).clamp(-126.0, 126.0);
    // Round to nearest by the 1.5 · 2^23 trick (exact for |y| < 2^22; `round` would be
    // a library call on baseline x86-64).
    let n = (y + 12_582_912.0) - 12_582_912.0;
    let r = (x.clamp(-87.3, 87.3) - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// The error function in `f32`, absolute error under 3e-7 (Abramowitz and Stegun 7.1.26:
/// `1 - (a1 t + ... + a5 t^5) e^{-x^2}` with `t = 1 / (1 + p x)`), odd in `x`.
fn erf(x: f32) -> f32 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let r = 1.0 - poly * exp(-z * z);
    r.copysign(x)
}

fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > f32::EPSILON {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct product (few rows, weights in place, f32 or f16) and the packed one
    /// agree, for every remainder of the four-row blocks.
    #[test]
    fn the_direct_product_matches_the_packed_one() {
        let (input, output) = (24, 6);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut bits = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Halves between 2^-7 and 1, either sign, and the same weights in f32.
        let half: Vec<u16> = (0..input * output)
            .map(|_| {
                let b = bits();
                (0x2000 + (b % 0x1c00) as u16) | (((b >> 20) & 1) as u16) << 15
            })
            .collect();
        let weight: Vec<f32> = half.iter().map(|&h| f16_to_f32(h)).collect();
        let mut next = move || (bits() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let bias: Vec<f32> = (0..output).map(|_| next()).collect();
        for with_half in [false, true] {
            let l = Linear {
                weight: weight.clone(),
                half: with_half.then(|| half.clone()),
                bias: bias.clone(),
                input,
                output,
            };
            for rows in 1..=9 {
                let xs: Vec<f32> = (0..rows * input).map(|_| next()).collect();
                let mut packed = vec![0.0f32; rows * output];
                for r in packed.chunks_exact_mut(output) {
                    r.copy_from_slice(&l.bias);
                }
                gemm(
                    [rows, input, output],
                    1.0,
                    (&xs, input, 1),
                    (&l.weight, 1, input),
                    1.0,
                    (&mut packed, output),
                );
                // Every tier this CPU runs (the scalar reference, and AVX2 + FMA + F16C
                // where there is AVX2), through the dispatch `linear` uses.
                for kernel in hdv::Kernel::available() {
                    let weights = match &l.half {
                        Some(h) => hdv::kernels::dense::Weights::F16(h),
                        None => hdv::kernels::dense::Weights::F32(&l.weight),
                    };
                    let shape = hdv::kernels::dense::Shape { input, output };
                    let mut direct = vec![f32::NAN; rows * output];
                    assert!(kernel.linear(&xs, weights, &l.bias, shape, &mut direct));
                    for (a, b) in direct.iter().zip(&packed) {
                        assert!(
                            (a - b).abs() < 1e-5,
                            "{} ({}), {rows} rows, f16 {with_half}: {a} vs {b}",
                            kernel.name(),
                            kernel.dense_name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn erf_and_exp_match_the_library() {
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (-1.0, -0.842_700_8),
            (6.0, 1.0),
        ] {
            assert!((erf(x) - want).abs() < 3e-7, "erf({x}) = {}", erf(x));
        }
        let mut x = -80.0f32;
        while x < 80.0 {
            let (got, want) = (exp(x), x.exp());
            assert!(
                ((got - want) / want).abs() < 1e-6,
                "exp({x}) = {got}, not {want}"
            );
            x += 0.173;
        }
    }
}
