//! Reading back the engine's fixed names (source, slot, phase and operation names) that its
//! results carry as `&'static str`: a deserialized name is interned, so a decoded result is
//! the same type the engine returns. The names form a small closed set, so the interner
//! holds each distinct name once, for the life of the process.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Deserializer};

/// A name field of a result. Spelled through this alias so serde's derive does not infer
/// a borrow from the input (it would for a literal `&'static str` field, and a result
/// could then only be decoded from `'static` text).
pub type Name = &'static str;

/// The `&'static str` equal to `name`, interned on first use.
pub(crate) fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// `deserialize_with` for a `&'static str` field.
pub(crate) fn name<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    Ok(intern(&String::deserialize(d)?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn interning_gives_one_static_str_per_name() {
        let a = super::intern("lexical");
        let b = super::intern(&String::from("lexical"));
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, "lexical");
    }
}
