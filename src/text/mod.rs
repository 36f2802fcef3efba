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

pub mod lang;
pub use lang::en;
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

/// The key under which two texts are one text: texts that differ only in how they are
/// typed fold together, texts that differ in what they say do not. [`normalize`]d (NFKC,
/// lowercase, `ß` as `ss`), then:
///
/// - dropped everywhere: invisible format characters (zero-width space, word joiner, soft
///   hyphen, byte-order mark), emoji (with their variation selectors, joiners, skin tones
///   and flags), apostrophes and quotation marks of every style ("don't" = "don’t" =
///   "dont");
/// - dropped at the edges of each whitespace-separated word: punctuation ("fixed...",
///   "**freeze**", "saturday??", "— okonkwos", ":)"), except what carries a value: a sign
///   or decimal point before a digit ("-18", ".5"), and the symbols of amounts, units and
///   names (`%`, `°`, `#`, `@`, `+`, currency and mathematical signs: "C++", "50%",
///   "$40");
/// - kept inside a word: everything ("2.5", "10:15", "26/02", "grace.okafor@…",
///   "8-12"), a dash of any form as `-` ("8–12");
/// - whitespace of every kind (tabs, newlines, no-break and thin spaces) is one space.
///
/// A text with nothing left (only emoji or punctuation) keeps its punctuation and
/// symbols, so "👍" and "👎" stay apart. A differing number, word or negation never
/// folds: only characters that carry no value are dropped.
pub fn fold(text: &str) -> String {
    let normalized = normalize(text).replace('ß', "ss");
    let mut out = String::with_capacity(normalized.len());
    for word in normalized.split_whitespace() {
        let kept: String = word
            .chars()
            .filter(|&c| !dropped_anywhere(c))
            .map(|c| if is_dash(c) { '-' } else { c })
            .collect();
        let trimmed = trim_edges(&kept);
        if trimmed.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(trimmed);
    }
    if out.is_empty() {
        // Only emoji or punctuation: their spelling is all the text says.
        for part in normalized.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(part);
        }
    }
    out
}

/// Characters [`fold`] drops wherever they stand: invisible format characters, emoji and
/// their modifiers, apostrophes and quotation marks.
fn dropped_anywhere(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{180E}'
        | '\'' | '"' | '`' | '\u{2018}'..='\u{201F}' | '\u{2032}'..='\u{2037}' | '\u{00AB}' | '\u{00BB}'
        | '\u{2039}' | '\u{203A}' | '\u{02BC}' | '\u{FF02}' | '\u{FF07}'
    ) || is_emoji(c)
}

/// A dash or minus of any typed form (hyphen, non-breaking hyphen, figure, en and em
/// dash, horizontal bar, minus sign): [`fold`] reads each as `-` ("8–12" is "8-12",
/// "−18" is "-18").
fn is_dash(c: char) -> bool {
    matches!(
        c,
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}'
    )
}

/// Emoji, pictographs and their modifiers (variation selectors, the zero-width joiner, the
/// keycap, skin tones, regional indicators and tag characters).
fn is_emoji(c: char) -> bool {
    matches!(u32::from(c),
        0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x2300..=0x23FF
        | 0xFE00..=0xFE0F | 0x200D | 0x20E3 | 0xE0020..=0xE007F | 0x3030 | 0x303D | 0x3297 | 0x3299)
}

/// Symbols that carry a value at a word's edge (amounts, units, names): kept by [`fold`].
fn carries_value(c: char) -> bool {
    matches!(
        c,
        '%' | '\u{2030}'
            | '°'
            | '#'
            | '@'
            | '+'
            | '='
            | '<'
            | '>'
            | '±'
            | '×'
            | '÷'
            | '\u{2212}'
            | '$'
            | '¢'
            | '£'
            | '¤'
            | '¥'
            | '\u{20A0}'..='\u{20CF}'
    ) || ('\u{2200}'..='\u{22FF}').contains(&c)
}

/// `word` without the punctuation at its edges ([`fold`]): a leading sign or decimal point
/// before a digit and the symbols that carry a value stay.
fn trim_edges(word: &str) -> &str {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let strippable = |i: usize| {
        let c = chars[i].1;
        if c.is_alphanumeric() || carries_value(c) {
            return false;
        }
        // A sign or decimal point that opens a number.
        let opens_number = matches!(c, '-' | '.' | '\u{2013}')
            && chars.get(i + 1).is_some_and(|&(_, n)| n.is_ascii_digit())
            && (i == 0 || !chars[i - 1].1.is_alphanumeric());
        !opens_number
    };
    let mut start = 0;
    while start < chars.len() && strippable(start) {
        start += 1;
    }
    let mut end = chars.len();
    while end > start && strippable(end - 1) {
        end -= 1;
    }
    if start >= end {
        return "";
    }
    let from = chars[start].0;
    let to = chars.get(end).map_or(word.len(), |&(i, _)| i);
    &word[from..to]
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

/// Whether `word` (lowercase) is a function word: a stop word ([`en::STOP_WORDS`]) or a
/// word of quantity, comparison or time ([`en::QUANTITY_FUNCTION_WORDS`]).
pub fn is_function_word(word: &str) -> bool {
    en::STOP_WORDS.binary_search(&word).is_ok() || en::QUANTITY_FUNCTION_WORDS.contains(&word)
}

/// Whether `word` (lowercase) can say what a value is the value of: a word that is not a
/// function word, not a number and not part of a value's own spelling (a month, a unit).
pub fn is_content_word(word: &str) -> bool {
    word.len() > 1
        && word.chars().all(char::is_alphabetic)
        && !is_function_word(word)
        && month_of(word).is_none()
        && !en::DURATION_UNITS.contains(&singular(word).as_str())
        && !en::VALUE_SPELLINGS.contains(&word)
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
    fn fold_ignores_how_a_text_is_typed() {
        let same = |a: &str, b: &str| assert_eq!(fold(a), fold(b), "{a:?} / {b:?}");
        same("The printer is jammed", "the printer is jammed!!");
        same("The printer is jammed", "The printer is jammed…");
        same("The printer is jammed", "THE PRINTER IS JAMMED 😤");
        same(
            "The printer is jammed",
            "the\u{00A0}printer\tis  jammed\r\n",
        );
        same("The printer is jammed", "*The printer is jammed*");
        same("The printer is jammed", "The prin\u{200B}ter is jammed");
        same("The printer is jammed", "The printer 🖨\u{FE0F} is jammed");
        same("We can’t print", "we can't print");
        same("We can't print", "we cant print");
        same("Order “blue” toner", "Order \"blue\" toner");
        same("Order toner - today", "Order toner — today");
        same("Order toner today", "Order toner today :)");
        same("Straße", "STRASSE");
        same("Room ３", "Room 3");
        same("cafe\u{0301}", "café");
        same("Is it on?", "is it on ??");
        // A dash typed in any form is one dash, inside a word too.
        same("Plumber 8-12 Tuesday", "plumber 8–12 Tuesday");
        same("Freezer at -18", "Freezer at −18");
        same("well-known", "well‑known");
    }

    #[test]
    fn fold_keeps_apart_texts_that_say_different_things() {
        let apart = |a: &str, b: &str| assert_ne!(fold(a), fold(b), "{a:?} / {b:?}");
        apart("Set the oven to 180", "Set the oven to 160");
        apart("The oven is on", "The oven is not on");
        apart("Add 1.5 cups", "Add 15 cups");
        apart("It is -5 outside", "It is 5 outside");
        apart("It is .5 mm", "It is 5 mm");
        apart("Learn F#", "Learn F");
        apart("We use C++", "We use C");
        apart("Growth was 12%", "Growth was 12");
        apart("It costs $12", "It costs £12");
        apart("mail ana.lee@example.org", "mail analee@example.org");
        apart("mail ana_lee@example.org", "mail ana.lee@example.org");
        apart("due 03/04", "due 04/03");
        apart("Ana thanks Bo", "Bo thanks Ana");
        // Nothing but emoji or punctuation: the symbols are the text.
        apart("👍", "👎");
        apart("?", "!");
        assert_eq!(fold("   "), "");
    }

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
        assert_eq!(fold("Ship it."), fold("Ship it!"));
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
