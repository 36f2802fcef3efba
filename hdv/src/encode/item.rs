use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::hypervector::{Dim, Hypervector};

/// Item memory: maps each symbol to a random hypervector derived only from the symbol's
/// bytes and the memory's seed, so the mapping is identical on every run and machine:
/// `vector(s) = Hypervector::random(D, xxh3_64_with_seed(utf8(s), seed))` (see
/// `docs/FORMAT.md`). Generated vectors are cached.
#[derive(Debug, Clone)]
pub struct ItemMemory {
    dim: Dim,
    seed: u64,
    cache: HashMap<Box<[u8]>, Hypervector>,
}

impl ItemMemory {
    /// An empty item memory for vectors of `dim` bits, keyed by `seed`.
    pub fn new(dim: Dim, seed: u64) -> Self {
        Self {
            dim,
            seed,
            cache: HashMap::new(),
        }
    }

    /// The dimension.
    pub fn dim(&self) -> Dim {
        self.dim
    }

    /// The seed all symbol seeds are derived from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The seed of `symbol`'s vector: XXH3-64 of its bytes with the memory's seed.
    pub fn symbol_seed(&self, symbol: &[u8]) -> u64 {
        xxh3_64_with_seed(symbol, self.seed)
    }

    /// The vector of `symbol`, computed without touching the cache.
    pub fn vector(&self, symbol: &str) -> Hypervector {
        self.vector_bytes(symbol.as_bytes())
    }

    /// The vector of a byte-string symbol, computed without touching the cache.
    pub fn vector_bytes(&self, symbol: &[u8]) -> Hypervector {
        Hypervector::random(self.dim, self.symbol_seed(symbol))
    }

    /// The vector of `symbol`, generated on first use and cached.
    pub fn get(&mut self, symbol: &str) -> &Hypervector {
        self.get_bytes(symbol.as_bytes())
    }

    /// The vector of a byte-string symbol, generated on first use and cached.
    pub fn get_bytes(&mut self, symbol: &[u8]) -> &Hypervector {
        if !self.cache.contains_key(symbol) {
            let hv = self.vector_bytes(symbol);
            self.cache.insert(symbol.into(), hv);
        }
        &self.cache[symbol]
    }

    /// Generates and caches the vectors of `symbols`, so that [`lookup`](Self::lookup)
    /// can then hand out several of them at once through `&self` ([`get`](Self::get)
    /// borrows the memory mutably, one vector at a time).
    ///
    /// ```
    /// use hdv::encode::{ItemMemory, encode_ngram};
    /// use hdv::Dim;
    /// let mut items = ItemMemory::new(Dim::new(2048).unwrap(), 1);
    /// items.fill(["a", "b", "c"]);
    /// let (a, b, c) = (
    ///     items.lookup("a").unwrap(),
    ///     items.lookup("b").unwrap(),
    ///     items.lookup("c").unwrap(),
    /// );
    /// let abc = encode_ngram(&[a, b, c]).unwrap();
    /// assert_eq!(a.bind(b), items.vector("a").bind(&items.vector("b")));
    /// assert!(abc.similarity(a).abs() < 0.1);
    /// ```
    pub fn fill<'s>(&mut self, symbols: impl IntoIterator<Item = &'s str>) {
        for s in symbols {
            self.get(s);
        }
    }

    /// The cached vector of `symbol`, if it was generated ([`get`](Self::get),
    /// [`fill`](Self::fill)); `None` otherwise ([`vector`](Self::vector) computes it
    /// without the cache).
    pub fn lookup(&self, symbol: &str) -> Option<&Hypervector> {
        self.cache.get(symbol.as_bytes())
    }

    /// The vector of the one-character symbol `c` (its UTF-8 bytes), generated on first
    /// use and cached: the same vector as `get(&c.to_string())`.
    pub fn get_char(&mut self, c: char) -> &Hypervector {
        let mut buf = [0u8; 4];
        self.get_bytes(c.encode_utf8(&mut buf).as_bytes())
    }

    /// The cached vector of the one-character symbol `c`, if it was generated.
    pub fn lookup_char(&self, c: char) -> Option<&Hypervector> {
        let mut buf = [0u8; 4];
        self.cache.get(c.encode_utf8(&mut buf).as_bytes())
    }

    /// Number of cached symbols.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether no symbol is cached.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    /// Drops the cache (vectors are regenerated identically on demand).
    pub fn clear_cache(&mut self) {
        self.cache.clear();
    }
}
