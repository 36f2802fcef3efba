//! Text as every part of the engine reads it: one normalizer, one tokenizer, one stemmer,
//! one stop list. A leaf module: it imports nothing from the engine (only the `hdv`
//! encoder's word splitter, which the stored vectors were made with), and the ledger's
//! full-text search, the lexical index, cognition and recall all read text through it.
//!
//! - [`normalize`]: Unicode NFKC, then lowercase (what the HDC text encoder reads).
//! - [`words`]: the normalized text split into UAX #29 words ("don't" and "3.5" stay one
//!   word); the encoder's features are made from these.
//! - [`tokens`]: words split further on anything that is not a letter or digit, as the
//!   ledger's FTS5 `unicode61` tokenizer splits: what the lexical index holds.
//! - [`fold`]: the key under which two texts are the same text (normalized, whitespace
//!   collapsed and trimmed).
//! - [`stem`], [`word_forms`], [`is_stop_word`]: the language's rules, read from its
//!   tables ([`en`]): another language is a new table, not a code change.

pub mod en;
pub mod statements;

use hdv::encode::TextEncoder;

/// NFKC + lowercase. ASCII text is its own NFKC form, so it is only lowercased.
pub fn normalize(text: &str) -> String {
    TextEncoder::normalize(text)
}

/// The [`normalize`]d UAX #29 words of `text`, in order.
pub fn words(text: &str) -> Vec<String> {
    TextEncoder::tokens(text)
}

/// The lexical tokens of `text`: its [`words`], split further on anything that is not a
/// letter or digit ("e-mail" → "e", "mail"), as the ledger's FTS tokenizer does.
pub fn tokens(text: &str) -> Vec<String> {
    let words = words(text);
    let mut out = Vec::with_capacity(words.len());
    for word in words {
        // Most words are letters and digits only: kept as they are, not copied.
        if word.chars().all(char::is_alphanumeric) {
            out.push(word);
        } else {
            out.extend(
                word.split(|c: char| !c.is_alphanumeric())
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
        }
    }
    out
}

/// The key under which two texts are one text: [`normalize`]d, every run of whitespace
/// one space, trimmed. "Ship it.\n", "ship  it." and the NFD spelling of either fold
/// together; "Ship it!" does not (punctuation can change what a text says).
pub fn fold(text: &str) -> String {
    let normalized = normalize(text);
    let mut out = String::with_capacity(normalized.len());
    for part in normalized.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// Whether `token` (already lowercase) is a function word of the language ([`en::STOP_WORDS`])
/// or a lone letter (what the tokenizer leaves of a clitic: "user's" → "user", "s").
pub fn is_stop_word(token: &str) -> bool {
    en::STOP_WORDS.binary_search(&token).is_ok() || {
        let mut chars = token.chars();
        chars.next().is_some_and(char::is_alphabetic) && chars.next().is_none()
    }
}

/// The other regular inflections of `word` (lowercase): the words one plural, past or
/// present-participle ending away from it, through its base ("seats" → "seat", "seated",
/// "seating"; "lives" → "live", "lived", "living"; "planned" → "plan", "plans",
/// "planning"; "studies" → "study", "studied"). A plural "-es" is cut only after a
/// sibilant or "o" ("boxes" → "box"), so "planes" gives "plane", never "plan". Some of
/// the forms are not words: a caller keeps those a vocabulary holds.
pub fn inflections(word: &str) -> Vec<String> {
    let ends = |s: &str, e: &str| s.len() >= e.len() + 3 && s.ends_with(e);
    let cut = |s: &str, n: usize| s[..s.len() - n].to_owned();
    let mut bases = vec![word.to_owned()];
    if ends(word, "ies") {
        bases.push(format!("{}y", cut(word, 3)));
    } else if ends(word, "es") {
        let rest = cut(word, 2);
        if ["s", "x", "z", "ch", "sh", "o"]
            .iter()
            .any(|e| rest.ends_with(e))
        {
            bases.push(rest);
        }
        bases.push(cut(word, 1));
    } else if ends(word, "s") && !word.ends_with("ss") {
        bases.push(cut(word, 1));
    }
    for suffix in ["ed", "ing"] {
        if ends(word, suffix) {
            let rest = cut(word, suffix.len());
            if suffix == "ed" && rest.ends_with('i') {
                bases.push(format!("{}y", cut(&rest, 1)));
            }
            bases.push(format!("{rest}e"));
            let b = rest.as_bytes();
            if rest.is_ascii() && b.len() >= 4 && b[b.len() - 1] == b[b.len() - 2] {
                bases.push(cut(&rest, 1));
            }
            bases.push(rest);
        }
    }
    let vowel = |c: u8| b"aeiou".contains(&c);
    let mut out = Vec::new();
    for base in bases.iter().filter(|b| b.len() >= 3 && b.is_ascii()) {
        out.push(base.clone());
        let b = base.as_bytes();
        let last = b[b.len() - 1];
        if last == b'y' && !vowel(b[b.len() - 2]) {
            let stem = cut(base, 1);
            out.extend([
                format!("{stem}ies"),
                format!("{stem}ied"),
                format!("{base}ing"),
            ]);
            continue;
        }
        if last == b'e' {
            let stem = cut(base, 1);
            out.extend([format!("{base}s"), format!("{base}d"), format!("{stem}ing")]);
            continue;
        }
        out.extend([
            format!("{base}s"),
            format!("{base}es"),
            format!("{base}ed"),
            format!("{base}ing"),
        ]);
        // A final consonant after one vowel doubles ("plan" → "planned").
        if !vowel(last) && vowel(b[b.len() - 2]) && !vowel(b[b.len() - 3]) {
            let c = last as char;
            out.extend([format!("{base}{c}ed"), format!("{base}{c}ing")]);
        }
    }
    out.retain(|w| w != word);
    out.sort_unstable();
    out.dedup();
    out
}

/// A light stem: the first of [`en::INFLECTIONS`] that leaves at least three letters is
/// cut ("lives" → "liv", "living" → "liv", "completed" → "complet").
pub fn stem(word: &str) -> &str {
    en::INFLECTIONS
        .iter()
        .find_map(|suffix| word.strip_suffix(suffix).filter(|s| s.len() >= 3))
        .unwrap_or(word)
}

/// `word` and the forms sharing its stem: its longest ending in [`en::ENDINGS`] cut when at
/// least four letters remain, then each ending added ("allergy" gives "allergic",
/// "allergies", …). For asking whether a project holds a word in any form.
pub fn word_forms(word: &str) -> Vec<String> {
    let stem = en::ENDINGS
        .iter()
        .find_map(|e| word.strip_suffix(e).filter(|s| s.chars().count() >= 4))
        .unwrap_or(word);
    let mut forms = vec![word.to_owned(), stem.to_owned()];
    forms.extend(en::ENDINGS.iter().map(|e| format!("{stem}{e}")));
    forms.sort_unstable();
    forms.dedup();
    forms
}

/// Whether `word` (lowercase) can say what a value is the value of: a word that is not a
/// function word, not a number and not part of a value's own spelling (a month, a unit).
pub fn is_content_word(word: &str) -> bool {
    word.len() > 1
        && word.chars().all(char::is_alphabetic)
        && !en::FUNCTION_WORDS.contains(&word)
        && month_of(word).is_none()
        && !en::DURATION_UNITS.contains(&singular(word).as_str())
        && !matches!(word, "am" | "pm" | "percent" | "dollars" | "usd" | "euros")
}

/// The three-letter name of the month `word` names ([`crate::clock::month_number`]).
pub(crate) fn month_of(word: &str) -> Option<&'static str> {
    crate::clock::month_number(word).map(|m| &crate::clock::MONTHS[m as usize - 1][..3])
}

/// A light English singular (`stories` → `story`, `branches` → `branch`, `hours` →
/// `hour`, `class` unchanged): enough to match a counted noun with a query word, both
/// passed through it.
pub fn singular(word: &str) -> String {
    if word.len() <= 3 || word.ends_with("ss") || word.ends_with("us") {
        return word.to_owned();
    }
    if let Some(stem) = word.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for suffix in ["ches", "shes", "sses", "xes", "zes"] {
        if word.ends_with(suffix) {
            return word[..word.len() - 2].to_owned();
        }
    }
    word.strip_suffix('s').unwrap_or(word).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_are_one_regular_ending_away_and_never_a_false_stem() {
        let has = |w: &str, all: &[&str]| {
            let forms = inflections(w);
            for f in all {
                assert!(forms.iter().any(|x| x == f), "{w}: {f} not in {forms:?}");
            }
            forms
        };
        has("seat", &["seats", "seated", "seating"]);
        has("seats", &["seat", "seated", "seating"]);
        has("lives", &["live", "lived", "living"]);
        has("living", &["live", "lives", "lived"]);
        has("planned", &["plan", "plans", "planning"]);
        has("studies", &["study", "studied", "studying"]);
        has("boxes", &["box", "boxed"]);
        let planes = has("planes", &["plane", "planed"]);
        assert!(!planes.iter().any(|f| f == "plan"), "{planes:?}");
        assert!(!inflections("seat").iter().any(|f| f == "seat"));
        assert!(inflections("bed").is_empty() || !inflections("bed").contains(&"b".to_owned()));
        assert!(inflections("glass").iter().all(|f| f.starts_with("glass")));
        // Any word, any script: no panic, never the word itself.
        for w in [
            "",
            "a",
            "ies",
            "été",
            "日本語",
            "xes",
            "ing",
            "eds",
            "\u{fff}\u{fff}ed",
        ] {
            assert!(!inflections(w).iter().any(|f| f == w), "{w}");
        }
    }

    proptest::proptest! {
        #[test]
        fn inflections_of_any_word_are_other_words_of_its_letters(base in "[a-z]{1,9}", other in "\\PC{0,6}") {
            for form in inflections(&base) {
                proptest::prop_assert!(form != base);
                // One ending away: the two share all but their last four letters.
                let keep = base.len().saturating_sub(4);
                proptest::prop_assert!(form.starts_with(&base[..keep]), "{} {}", base, form);
            }
            for suffix in ["", "s", "es", "ies", "ed", "ied", "ing"] {
                let w = format!("{other}{suffix}");
                proptest::prop_assert!(!inflections(&w).contains(&w));
            }
        }
    }

    #[test]
    fn tokens_split_like_the_fts_tokenizer() {
        assert_eq!(
            tokens("E-mail the ÉQUIPE: 3.5 km"),
            ["e", "mail", "the", "équipe", "3", "5", "km"]
        );
        assert_eq!(
            tokens("Don't use v3.11-beta!"),
            ["don", "t", "use", "v3", "11", "beta"]
        );
        assert!(tokens("  ,;  ").is_empty());
    }

    #[test]
    fn texts_fold_across_normal_forms_case_and_whitespace() {
        let nfc = "Café au lait.";
        let nfd = "Cafe\u{301} au lait.";
        assert_eq!(fold(nfc), fold(nfd));
        assert_eq!(fold(nfc), fold(" café  au\tlait.\n"));
        assert_ne!(fold("Ship it."), fold("Ship it!"));
        assert_eq!(fold(""), "");
    }

    #[test]
    fn stop_words_are_sorted_and_lone_letters_are_stop_words() {
        assert!(en::STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stop_word("the") && is_stop_word("s") && !is_stop_word("dog"));
    }

    #[test]
    fn forms_of_a_word_share_its_stem() {
        let forms = word_forms("allergy");
        for f in ["allergy", "allergic", "allergies", "allerg"] {
            assert!(forms.iter().any(|x| x == f), "{f}: {forms:?}");
        }
        assert!(!word_forms("runs").iter().any(|x| x == "running"));
        assert!(word_forms("dog").iter().any(|x| x == "dogs"));
        assert!(word_forms("seat").iter().all(|f| f.starts_with("seat")));
        assert_eq!(stem("completed"), stem("completing"));
        assert_eq!(stem("lives"), stem("living"));
        assert_eq!(stem("dog"), "dog");
    }
}
