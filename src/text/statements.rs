//! What a user states, by sentence structure: a preference, a decision, a boundary, a
//! correction or a standing instruction — what the curator proposes as a candidate belief.
//!
//! A sentence counts by its form, from the language data in [`super::en`] (a new language
//! is a new table): an imperative of permanence or a negated imperative at its opening
//! (shared with recall's directive detection: [`en::DIRECTIVE_OPENINGS`],
//! [`en::PREFERENCE_PHRASES`]), a bare imperative with a marker of permanence later on, a
//! first-person decision or "let's" + a verb, a first-person liking, a correcting opening.
//! What only looks like one is left out: questions (a sentence ending in `?`),
//! hypotheticals and reported sources at the opening ("if", "suppose", "according to"),
//! reported speech ("my boss said ..."), hedges, past habits and jokes anywhere ("maybe",
//! "used to", "lol"). Third persons never
//! match: every form is the user's own, or addressed to the agent.
//!
//! Measured on `tests/data/statements.tsv` (154 statements written for the purpose, half
//! of them decoys): see `tests/statements.rs`.

use super::en;

/// What a sentence states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stated {
    /// A liking or a choice between options ("I prefer short answers").
    Preference,
    /// A decision or commitment of the user or their team ("We decided to ship on
    /// Thursdays", "Let's use Postgres").
    Decision,
    /// A limit the agent must respect ("Never share my phone number").
    Boundary,
    /// A correction of something said before ("Actually, the deadline is the 14th").
    Correction,
    /// A standing instruction ("Going forward, keep answers under 200 words").
    Instruction,
}

impl Stated {
    /// Its name, as in candidate keys (`user.preference`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Stated::Preference => "preference",
            Stated::Decision => "decision",
            Stated::Boundary => "boundary",
            Stated::Correction => "correction",
            Stated::Instruction => "instruction",
        }
    }
}

/// One sentence: its words ([`super::tokens`]) and whether it asks.
struct Sentence {
    words: Vec<String>,
    asks: bool,
}

/// The sentences of `text`, cut at `.`, `!`, `?`, `;` and line breaks.
fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | ';' | '\n') {
            let words = super::tokens(&text[start..i]);
            if !words.is_empty() {
                out.push(Sentence {
                    words,
                    asks: c == '?',
                });
            }
            start = i + c.len_utf8();
        }
    }
    let words = super::tokens(&text[start..]);
    if !words.is_empty() {
        out.push(Sentence { words, asks: false });
    }
    out
}

/// Whether `words` open with one of the `openings` of an instruction (a table such as
/// [`en::DIRECTIVE_OPENINGS`]) as an instruction: not a set phrase that only looks like
/// one ([`en::NOT_DIRECTIVE_OPENINGS`]), and with no subject of its own right after a
/// multi-word opening ([`en::STATEMENT_SUBJECTS`]: "from now on it is at 10:30" states a
/// change; "always" and "never" take no subject after them in English).
pub fn instructs(words: &[String], openings: &[&[&str]]) -> bool {
    if en::NOT_DIRECTIVE_OPENINGS.iter().any(|p| opens(words, p)) {
        return false;
    }
    openings.iter().any(|o| {
        opens(words, o)
            && !(o.len() > 1
                && words
                    .get(o.len())
                    .is_some_and(|w| en::STATEMENT_SUBJECTS.contains(&w.as_str())))
    })
}

/// Whether `words` open with `phrase`.
pub fn opens(words: &[String], phrase: &[&str]) -> bool {
    words.len() >= phrase.len() && words.iter().zip(phrase).all(|(w, p)| w == p)
}

/// Whether `phrase` occurs in `words`.
pub fn contains(words: &[String], phrase: &[&str]) -> bool {
    (0..words.len()).any(|i| opens(&words[i..], phrase))
}

/// What one sentence states, if anything.
fn sentence(s: &Sentence) -> Option<Stated> {
    let w = &s.words;
    let any_open = |table: &[&[&str]]| table.iter().any(|p| opens(w, p));
    let any_in = |table: &[&[&str]]| table.iter().any(|p| contains(w, p));
    if !tells_as_so(s) {
        return None;
    }
    if any_open(en::CORRECTION_OPENINGS)
        || (opens(w, &["no"]) && contains(w, &["not"]))
        || (opens(w, &["not"]) && contains(w, &["but"]))
    {
        return Some(Stated::Correction);
    }
    if any_open(en::BOUNDARY_OPENINGS) {
        return Some(Stated::Boundary);
    }
    let imperative = |at: usize| {
        w.get(at)
            .is_some_and(|v| en::IMPERATIVE_VERBS.contains(&v.as_str()))
    };
    let standing = (imperative(0) || (opens(w, &["please"]) && imperative(1)))
        && (1..w.len()).any(|i| en::STANDING_MARKERS.iter().any(|m| opens(&w[i..], m)));
    if instructs(w, en::DIRECTIVE_OPENINGS) || instructs(w, en::INSTRUCTION_OPENINGS) || standing {
        return Some(Stated::Instruction);
    }
    let lets = (opens(w, &["let", "s"]) || opens(w, &["let", "us"]))
        && w.get(2)
            .is_some_and(|v| !en::LET_US_NOT_DECISIONS.contains(&v.as_str()));
    if lets || any_in(en::DECISION_PHRASES) {
        return Some(Stated::Decision);
    }
    if any_in(en::PREFERENCE_PHRASES) || any_in(en::LIKING_PHRASES) {
        return Some(Stated::Preference);
    }
    None
}

/// Whether `text` only asks: it ends with a question, every sentence of it with
/// [`ASK_CLAUSE`] words or more is a question (a shorter one is a reaction), and no word
/// of it is the speaker's own ([`en::FIRST_PERSON`]): "Wow! How long have you been
/// playing?" tells nothing of what it names; the turn that answers it does.
pub fn asks_only(text: &str) -> bool {
    // One pass, no allocation (it runs on every candidate of a recall): words are runs of
    // letters and digits, as lexical tokens are; a sentence without a letter (a trailing
    // "2,31" marker) is no sentence.
    if !text.contains('?') {
        return false;
    }
    let (mut words, mut letters, mut last_asks) = (0usize, false, false);
    let mut word: Option<usize> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), '\n')))
    {
        if c.is_alphanumeric() {
            word.get_or_insert(i);
            continue;
        }
        if let Some(start) = word.take() {
            let w = &text[start..i];
            if en::FIRST_PERSON.iter().any(|f| w.eq_ignore_ascii_case(f)) {
                return false;
            }
            words += 1;
            letters |= w.chars().any(char::is_alphabetic);
        }
        if matches!(c, '.' | '!' | '?' | ';' | '\n') {
            if letters {
                let asks = c == '?';
                if !asks && words >= ASK_CLAUSE {
                    return false;
                }
                last_asks = asks;
            }
            (words, letters) = (0, false);
        }
    }
    last_asks
}

/// Words a sentence needs to state something of its own: a reaction ("Wow, that looks
/// great!", "Gotta take time to chill.") before a question tells nothing (4 to 16 words and
/// no limit measured: `docs/EXPERIMENTS.md`).
pub const ASK_CLAUSE: usize = 12;

/// Whether one sentence is told as so: it does not ask, and it is not a hypothetical, a
/// hedge (a guess, a past habit, a joke) or someone else's words reported.
fn tells_as_so(s: &Sentence) -> bool {
    let w = &s.words;
    let reported = w.iter().enumerate().any(|(i, v)| {
        en::REPORTING_VERBS.contains(&v.as_str())
            && !(i > 0 && matches!(w[i - 1].as_str(), "i" | "we"))
    });
    !(s.asks
        || reported
        || en::HYPOTHETICAL_OPENINGS.iter().any(|p| opens(w, p))
        || en::HEDGES.iter().any(|p| contains(w, p)))
}

/// Whether `text` asserts what it says, by its mood: at least one of its sentences is
/// told as so, and none is a hypothetical, a hedge or reported speech ("if it moves to
/// Friday ...", "maybe 30?", "Sam says it's 12 now"). A question asserts nothing. What
/// supersession lets revise a value, and what a candidate belief must be, read alike.
pub fn asserts(text: &str) -> bool {
    let all = sentences(text);
    let told = all.iter().filter(|s| tells_as_so(s)).count();
    let asked = all.iter().filter(|s| s.asks).count();
    told > 0 && told + asked == all.len()
}

/// What `text` states: the kind of its first sentence that states one.
pub fn stated(text: &str) -> Option<Stated> {
    sentences(text).iter().find_map(sentence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_that_only_asks() {
        for text in [
            "How long have you been playing?",
            "Wow, looking good! How long have you been playing?",
            "Yum! Sounds great. Got any favorite flavors for dairy-free desserts?",
            "Thanks, Calvin! Gotta take time to chill. Do you have any hobbies that help you relax?",
            "what about a loading indicator while results load?",
            // A trailing marker without a letter is no sentence.
            "How long have you been playing? ->-> 2,31",
        ] {
            assert!(asks_only(text), "{text}");
        }
        for text in [
            // The speaker's own words: it tells of them.
            "I've been playing for a month, how about you?",
            "What's the best way to store my tools now that I added a pegboard?",
            // A statement of its own before the question.
            "That game took months of balancing the mechanics so that every match felt fair. Did you face any difficulties?",
            // It ends with a statement.
            "How long? About a month now.",
            "The review is on Friday.",
            "",
            "I wonder, is it Friday? ->-> 2,31",
        ] {
            assert!(!asks_only(text), "{text}");
        }
    }

    #[test]
    fn forms_are_read_by_structure() {
        for (text, want) in [
            (
                "Going forward, keep answers under 200 words.",
                Some(Stated::Instruction),
            ),
            (
                "Let's stop using the staging cluster for demos.",
                Some(Stated::Decision),
            ),
            ("We decided to ship on Thursdays.", Some(Stated::Decision)),
            ("Please don't use emojis.", Some(Stated::Boundary)),
            ("Actually, it is the 14th.", Some(Stated::Correction)),
            ("I'd rather take the train.", Some(Stated::Preference)),
            ("Should we ship on Thursdays?", None),
            ("If we decided to ship on Thursdays, would QA cope", None),
            ("My boss said we should ship, lol", None),
            ("Let's see what the logs say.", None),
            ("Show me the last three commits.", None),
            ("From now on, answer in French.", Some(Stated::Instruction)),
            ("From now on the stand-up is at 10:30.", None),
            ("Going forward, the team ships on Fridays.", None),
            ("Never mind, I found the file.", None),
        ] {
            assert_eq!(stated(text), want, "{text}");
        }
    }

    #[test]
    fn a_text_asserts_by_its_mood() {
        for text in [
            "gymnastics got moved to thursdays, same time",
            "The rent is 1,520 now. Can you update the sheet?",
            "no, it's the 15th",
        ] {
            assert!(asserts(text), "{text}");
        }
        for text in [
            "wait do we still use TeamCity?",
            "if the lease moves to June we'd need movers",
            "maybe 30 chairs?",
            "Sam says it's 12 now",
            "",
        ] {
            assert!(!asserts(text), "{text}");
        }
    }
}
