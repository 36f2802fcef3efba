//! Encoders: from symbols, text, scalars, sequences, records and dense embeddings to
//! hypervectors. All are deterministic functions of their input and a seed.

mod item;
mod level;
mod ngram;
mod projector;
mod record;
mod sequence;
mod text;

pub use item::ItemMemory;
pub use level::LevelEncoder;
pub use ngram::NgramEncoder;
pub use projector::Projector;
pub use record::RecordEncoder;
pub use sequence::{encode_ngram, encode_sequence, probe_sequence};
pub use text::{TermWeights, TextConfig, TextEncoder, UniformWeights, WordVectors};
