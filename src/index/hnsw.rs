//! Approximate search: HNSW graphs (`hnsw_rs`) over **bit-level** Hamming distance.
//!
//! `hnsw_rs`'s own `DistHamming` counts differing *elements* (whole `u64` words), not bits,
//! so the graph uses [`BitHamming`], which calls the `hdv` SIMD kernel. Graphs are built
//! incrementally, saved with their data, and reloaded so a restart does not rebuild.
//! `hnsw_rs` cannot delete: deleted ids are filtered at search time and dropped when the
//! graph is rebuilt.
//!
//! Reloaded data is read into RAM, not memory-mapped: `hnsw_rs` only sets up its data map in
//! `HnswIo::load_hnsw(&mut self)`, whose graph then borrows the loader mutably for its whole
//! life, which can only be held by leaking the loader — and a leaked map would keep the
//! bytes of erased vectors on disk until the process exits. The saved files are checksummed
//! and verified before `hnsw_rs` reads them, because its loader exits the process on
//! malformed data.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::RwLock;

use hdv::{Dim, HvRef, Kernel};
use hnsw_rs::prelude::{AnnT, DataId, Distance, FilterT, HnswIo};

use crate::store::{Hit, SearchRequest, VectorId};

/// Bit-level Hamming distance for `hnsw_rs`, computed by an `hdv` kernel.
#[derive(Debug, Clone, Copy)]
pub struct BitHamming(Kernel);

impl BitHamming {
    /// The distance with the process's active kernel.
    ///
    /// # Errors
    /// If `HDV_KERNEL` is invalid.
    pub fn active() -> Result<Self, hdv::Error> {
        Ok(Self(hdv::kernels::try_active()?))
    }
}

impl Distance<u64> for BitHamming {
    fn eval(&self, va: &[u64], vb: &[u64]) -> f32 {
        self.0.hamming(va, vb) as f32
    }
}

/// HNSW parameters (from the profile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HnswConfig {
    /// Links per node per layer (`M`).
    pub m: usize,
    /// Candidate list size while building.
    pub ef_construction: usize,
    /// Candidate list size while searching (at least `k` is used).
    pub ef_search: usize,
    /// Expected number of points (allocation hint).
    pub max_elements: usize,
}

impl Default for HnswConfig {
    fn default() -> Self {
        Self {
            m: 16,
            ef_construction: 128,
            ef_search: 64,
            max_elements: 100_000,
        }
    }
}

/// Errors of the HNSW index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HnswError {
    /// Saving or loading failed.
    #[error("HNSW index at {path}: {reason}")]
    Persist {
        /// The index directory.
        path: std::path::PathBuf,
        /// What failed.
        reason: String,
    },
    /// A vector or query has another dimension than the index.
    #[error("HNSW dimension mismatch: expected {expected} bits, found {found} bits")]
    DimensionMismatch {
        /// Index dimension.
        expected: usize,
        /// Offending dimension.
        found: usize,
    },
    /// The kernel could not be selected.
    #[error(transparent)]
    Hdv(#[from] hdv::Error),
}

type Graph<'a> = hnsw_rs::hnsw::Hnsw<'a, u64, BitHamming>;

self_cell::self_cell!(
    /// A graph reloaded from disk, borrowing its memory-mapped data from the loader.
    struct LoadedGraph {
        owner: HnswIo,
        #[not_covariant]
        dependent: Graph,
    }
);

enum Inner {
    Built(Graph<'static>),
    Loaded(LoadedGraph),
}

impl Inner {
    fn with<R>(&self, f: impl for<'a> FnOnce(&Graph<'a>) -> R) -> R {
        match self {
            Inner::Built(g) => f(g),
            Inner::Loaded(l) => l.with_dependent(|_, g| f(g)),
        }
    }
}

/// An HNSW index of hypervectors keyed by [`VectorId`].
pub struct Hnsw {
    dim: Dim,
    config: HnswConfig,
    graph: Inner,
    deleted: RwLock<HashSet<u64>>,
}

impl std::fmt::Debug for Hnsw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hnsw")
            .field("dim", &self.dim)
            .field("config", &self.config)
            .field("points", &self.points())
            .finish()
    }
}

/// Search-time filter: not deleted, and the caller's predicate.
struct Keep<'a> {
    deleted: &'a HashSet<u64>,
    request: &'a SearchRequest<'a>,
}

impl FilterT for Keep<'_> {
    fn hnsw_filter(&self, id: &DataId) -> bool {
        let id = *id as u64;
        !self.deleted.contains(&id) && self.request.accepts(VectorId(id))
    }
}

const BASENAME: &str = "graph";
const GRAPH_FILE: &str = "graph.hnsw.graph";
const DATA_FILE: &str = "graph.hnsw.data";

fn file_checksum(path: &Path) -> Result<u64, String> {
    let bytes = fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(xxhash_rust::xxh3::xxh3_64(&bytes))
}

/// `hnsw_rs` can only dump graphs created with its maximum of 16 layers (unused upper
/// layers cost nothing).
const MAX_LAYER: usize = 16;

impl Hnsw {
    /// An empty index.
    ///
    /// # Errors
    /// If `HDV_KERNEL` is invalid.
    pub fn new(dim: Dim, config: HnswConfig) -> Result<Self, HnswError> {
        let graph = Graph::new(
            config.m,
            config.max_elements,
            MAX_LAYER,
            config.ef_construction,
            BitHamming::active()?,
        );
        Ok(Self {
            dim,
            config,
            graph: Inner::Built(graph),
            deleted: RwLock::new(HashSet::new()),
        })
    }

    /// Builds an index from `items` (in parallel).
    ///
    /// # Errors
    /// Dimension mismatch, invalid `HDV_KERNEL`.
    pub fn build(dim: Dim, config: HnswConfig, items: &[(VectorId, HvRef<'_>)]) -> Result<Self, HnswError> {
        let config = HnswConfig {
            max_elements: config.max_elements.max(items.len()),
            ..config
        };
        let index = Self::new(dim, config)?;
        index.insert_batch(items)?;
        Ok(index)
    }

    /// The dimension.
    pub fn dim(&self) -> Dim {
        self.dim
    }

    /// The parameters.
    pub fn config(&self) -> HnswConfig {
        self.config
    }

    /// Changes the search candidate list size.
    pub fn set_ef_search(&mut self, ef_search: usize) {
        self.config.ef_search = ef_search.max(1);
    }

    /// Points in the graph (deleted ones included until a rebuild).
    pub fn points(&self) -> usize {
        self.graph.with(|g| g.get_nb_point())
    }

    /// Number of deleted ids still in the graph.
    pub fn deleted(&self) -> usize {
        self.deleted.read().expect("lock").len()
    }

    fn check(&self, v: HvRef<'_>) -> Result<(), HnswError> {
        if v.dim() != self.dim {
            return Err(HnswError::DimensionMismatch {
                expected: self.dim.bits(),
                found: v.dim().bits(),
            });
        }
        Ok(())
    }

    /// Adds vectors (in parallel for large batches).
    ///
    /// # Errors
    /// Dimension mismatch (nothing is inserted).
    pub fn insert_batch(&self, items: &[(VectorId, HvRef<'_>)]) -> Result<(), HnswError> {
        for (_, v) in items {
            self.check(*v)?;
        }
        let data: Vec<(&[u64], usize)> = items.iter().map(|(id, v)| (v.words(), id.0 as usize)).collect();
        {
            let mut deleted = self.deleted.write().expect("lock");
            for (id, _) in items {
                deleted.remove(&id.0);
            }
        }
        self.graph.with(|g| {
            if data.len() >= 64 {
                g.parallel_insert_slice(&data);
            } else {
                for d in &data {
                    g.insert_slice(*d);
                }
            }
        });
        Ok(())
    }

    /// Marks an id deleted (filtered from results until the next rebuild).
    pub fn delete(&self, id: VectorId) {
        self.deleted.write().expect("lock").insert(id.0);
    }

    /// Approximate `k` nearest neighbours (nearest first, ties by id), after filters.
    ///
    /// # Errors
    /// Dimension mismatch.
    pub fn search(&self, request: &SearchRequest<'_>) -> Result<Vec<Hit>, HnswError> {
        self.check(request.query)?;
        if request.k == 0 || self.points() == 0 {
            return Ok(Vec::new());
        }
        let deleted = self.deleted.read().expect("lock");
        let keep = Keep {
            deleted: &deleted,
            request,
        };
        let filtered = !deleted.is_empty() || request.filter.is_some();
        let ef = self.config.ef_search.max(request.k);
        let found = self.graph.with(|g| {
            if filtered {
                g.search_filter(request.query.words(), request.k, ef, Some(&keep))
            } else {
                g.search(request.query.words(), request.k, ef)
            }
        });
        let max = request.max_distance.unwrap_or(u32::MAX);
        let mut hits: Vec<Hit> = found
            .into_iter()
            .map(|n| Hit {
                id: VectorId(n.d_id as u64),
                distance: n.distance as u32,
            })
            .filter(|h| h.distance <= max)
            .collect();
        hits.sort_by_key(Hit::key);
        hits.truncate(request.k);
        Ok(hits)
    }

    /// Writes the graph and its data to `dir` (replacing what is there).
    ///
    /// # Errors
    /// I/O failures.
    pub fn save(&self, dir: &Path) -> Result<(), HnswError> {
        let err = |reason: String| HnswError::Persist {
            path: dir.to_owned(),
            reason,
        };
        let tmp = dir.with_extension("tmp");
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(|e| err(e.to_string()))?;
        }
        fs::create_dir_all(&tmp).map_err(|e| err(e.to_string()))?;
        let name = self
            .graph
            .with(|g| g.file_dump(&tmp, BASENAME))
            .map_err(|e| err(e.to_string()))?;
        if name != BASENAME {
            return Err(err(format!("dump used basename {name}")));
        }
        let deleted: Vec<String> = self
            .deleted
            .read()
            .expect("lock")
            .iter()
            .map(u64::to_string)
            .collect();
        let graph_sum = file_checksum(&tmp.join(GRAPH_FILE)).map_err(err)?;
        let data_sum = file_checksum(&tmp.join(DATA_FILE)).map_err(err)?;
        let meta = format!(
            "dim {}\nm {}\nef_construction {}\nef_search {}\nchecksums {graph_sum} {data_sum}\ndeleted {}\n",
            self.dim.bits(),
            self.config.m,
            self.config.ef_construction,
            self.config.ef_search,
            deleted.join(",")
        );
        fs::write(tmp.join("meta"), meta).map_err(|e| err(e.to_string()))?;
        if dir.exists() {
            fs::remove_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        fs::rename(&tmp, dir).map_err(|e| err(e.to_string()))?;
        Ok(())
    }

    /// Reloads a saved index (graph and data) after verifying the files' checksums.
    ///
    /// # Errors
    /// [`HnswError::Persist`] for missing or damaged files, dimension mismatch.
    pub fn load(dir: &Path, dim: Dim, ef_search: usize) -> Result<Self, HnswError> {
        let err = |reason: String| HnswError::Persist {
            path: dir.to_owned(),
            reason,
        };
        let meta = fs::read_to_string(dir.join("meta")).map_err(|e| err(format!("meta: {e}")))?;
        let field = |key: &str| -> Result<&str, HnswError> {
            meta.lines()
                .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(' ')))
                .ok_or_else(|| err(format!("meta has no `{key}`")))
        };
        let num = |key: &str| -> Result<usize, HnswError> {
            field(key)?
                .trim()
                .parse()
                .map_err(|_| err(format!("meta `{key}` is not a number")))
        };
        if num("dim")? != dim.bits() {
            return Err(HnswError::DimensionMismatch {
                expected: dim.bits(),
                found: num("dim")?,
            });
        }
        let deleted: HashSet<u64> = field("deleted")?
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse().map_err(|_| err("bad deleted id".to_owned())))
            .collect::<Result<_, _>>()?;
        let config = HnswConfig {
            m: num("m")?,
            ef_construction: num("ef_construction")?,
            ef_search,
            max_elements: 0,
        };
        let want = format!(
            "{} {}",
            file_checksum(&dir.join(GRAPH_FILE)).map_err(err)?,
            file_checksum(&dir.join(DATA_FILE)).map_err(err)?
        );
        if field("checksums")?.trim() != want {
            return Err(err("graph or data file does not match its checksum".to_owned()));
        }
        let dist = BitHamming::active()?;
        let io = HnswIo::new(dir, BASENAME);
        let loaded = LoadedGraph::try_new(io, |io| io.load_hnsw_with_dist(dist))
            .map_err(|e| err(e.to_string()))?;
        Ok(Self {
            dim,
            config,
            graph: Inner::Loaded(loaded),
            deleted: RwLock::new(deleted),
        })
    }
}
