use crate::bundle::Bundler;
use crate::encode::ItemMemory;
use crate::error::{Error, Result};
use crate::hypervector::{AsHv, Dim, Hypervector};

/// Role–filler records: `R = [role_1 ⊕ filler_1 + role_2 ⊕ filler_2 + …]`, roles drawn from an
/// item memory by name. Binding `R` with a role again yields a noisy copy of its filler.
#[derive(Debug, Clone)]
pub struct RecordEncoder {
    roles: ItemMemory,
}

impl RecordEncoder {
    /// Roles are item-memory vectors of `dim` bits keyed by `seed`.
    pub fn new(dim: Dim, seed: u64) -> Self {
        Self {
            roles: ItemMemory::new(dim, seed),
        }
    }

    /// The vector of a role name.
    pub fn role(&mut self, name: &str) -> &Hypervector {
        self.roles.get(name)
    }

    /// Encodes `(role, filler)` pairs; ties broken by the coin of `seed`.
    ///
    /// # Errors
    /// [`Error::EmptyBundle`] for no fields, [`Error::DimensionMismatch`] if a filler's
    /// dimension differs from the encoder's.
    pub fn encode<V: AsHv>(&mut self, fields: &[(&str, V)], seed: u64) -> Result<Hypervector> {
        let dim = self.roles.dim();
        let mut b = Bundler::new(dim);
        for (role, filler) in fields {
            let filler = filler.as_hv();
            if filler.dim() != dim {
                return Err(Error::DimensionMismatch {
                    expected: dim.bits(),
                    found: filler.dim().bits(),
                });
            }
            b.add(&self.roles.get(role).bind(&filler));
        }
        if fields.is_empty() {
            return Err(Error::EmptyBundle);
        }
        b.binarize(seed)
    }

    /// The noisy filler of `role` in `record`.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the record's dimension differs from the encoder's.
    pub fn unbind(&mut self, record: &Hypervector, role: &str) -> Result<Hypervector> {
        if record.dim() != self.roles.dim() {
            return Err(Error::DimensionMismatch {
                expected: self.roles.dim().bits(),
                found: record.dim().bits(),
            });
        }
        Ok(record.bind(self.roles.get(role)))
    }
}
