//! What a speaker states that could become a candidate belief: a preference, a decision,
//! a boundary, a correction, a standing instruction, a limit or a lasting fact of their own
//! — read by structure, from the language data in [`super::en`] (a new language is a new
//! table).
//!
//! A turn is cut into sentences and clauses (at `,`, `:` and dashes). It states nothing
//! when it quotes a clause of someone else's (three words or more in quotation marks),
//! opens with an evaluative interjection (a user's "oh great, ..."), opens by denying ("no,
//! that's not ..."), withdraws what was said ("forget ...", "I never said ..."), reports
//! another person's words, or asks about the speaker themself ("do I ...?"). Otherwise the
//! first clause told as so — not in a question (by its mark or an auxiliary before its
//! subject), not a hypothetical or an unreal consequence ("we'd need"), no hedge or
//! deliberation, no choice said to be open — that states something counts: by its form (a
//! correcting opening, a negated imperative, an imperative of permanence, "let's" + a
//! verb), else by what it says (a verb of deciding or liking of the speaker's own, a modal
//! of necessity, a first-person statement) unless it is placed at one moment ("right now",
//! "today"), on a condition, or narrates a one-off past event. The assistant's words are
//! its own proposals: only its commitment to a standing instruction or a recap of a
//! settled choice counts.
//!
//! Measured on `tests/data/statements.tsv` (written for the purpose, half decoys: see
//! `tests/statements.rs`) and, through the public API, on the understanding corpus
//! (`examples/understanding.rs`).

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
    /// A hard limit ("The deck has to be under 10 slides").
    Constraint,
    /// A lasting fact of the speaker's own: who they are, what they have, who is who to
    /// them ("I'm allergic to penicillin", "Tomasz is my manager").
    Fact,
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
            Stated::Constraint => "constraint",
            Stated::Fact => "fact",
        }
    }
}

/// One sentence: its words ([`super::tokens`]), its clauses (its words cut at `,`, `:`
/// and dashes) and whether it asks.
struct Sentence {
    words: Vec<String>,
    /// Each clause's words and where it starts in `words`.
    clauses: Vec<(Vec<String>, usize)>,
    asks: bool,
}

/// The sentences of `text`, cut at `.`, `!`, `?`, `;` and line breaks.
fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let (mut start, mut clause) = (0, 0);
    let mut clauses = Vec::new();
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), '\n')))
    {
        let ends = matches!(c, '.' | '!' | '?' | ';' | '\n');
        if ends || matches!(c, ',' | ':' | '—' | '–') {
            let words = super::tokens(&text[clause..i]);
            if !words.is_empty() {
                let at = clauses
                    .last()
                    .map_or(0, |(w, at): &(Vec<String>, usize)| at + w.len());
                clauses.push((words, at));
            }
            clause = i + c.len_utf8();
        }
        if ends {
            let words = super::tokens(&text[start..i]);
            if !words.is_empty() {
                out.push(Sentence {
                    words,
                    clauses: std::mem::take(&mut clauses),
                    asks: c == '?',
                });
            }
            start = i + c.len_utf8();
        }
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

/// Whether `word` is `base` or one of its regular inflections ("decided", "books",
/// "picking", "loves").
fn inflects(word: &str, base: &str) -> bool {
    let root = base.strip_suffix('e').unwrap_or(base);
    word.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || en::INFLECTIONS.contains(&rest))
}

/// The position of the first word of `words` that inflects a verb of `verbs`.
fn verb_at(words: &[String], verbs: &[&str]) -> Option<usize> {
    words
        .iter()
        .position(|w| verbs.iter().any(|v| inflects(w, v)))
}

/// Whether a negation ([`en::NEGATIONS`]) stands among the `n` words before `at`.
fn negated_before(words: &[String], at: usize, n: usize) -> bool {
    words[at.saturating_sub(n)..at]
        .iter()
        .any(|w| en::NEGATIONS.contains(&w.as_str()))
}

/// Whether a clause holds nothing but function words and negations ("never ever", "not
/// at all"): inside a sentence it only insists on what the sentence said before it (a
/// sentence it opens goes on to say it: "Never, ever …").
fn insists(w: &[String]) -> bool {
    w.iter()
        .all(|v| super::is_function_word(v) || en::NEGATIONS.contains(&v.as_str()))
}

/// What one clause (`w`; `on` = its sentence from the clause on) states by its form, if
/// anything: a correction, a limit, a standing instruction or a "let's" decision.
fn form(w: &[String], on: &[String]) -> Option<Stated> {
    // "please" or "pls" before a form leaves it the form it is.
    if w.len() > 1
        && matches!(w[0].as_str(), "please" | "pls")
        && let Some(kind) = form(&w[1..], &on[1..])
    {
        return Some(kind);
    }
    if en::CORRECTION_OPENINGS.iter().any(|p| opens(w, p))
        || (opens(w, &["no"]) && contains(w, &["not"]))
        || (opens(w, &["not"]) && contains(w, &["but"]))
    {
        return Some(Stated::Correction);
    }
    // A limit names what it limits: "never ever" after a clause only insists.
    if let Some(p) = en::BOUNDARY_OPENINGS.iter().find(|p| opens(w, p))
        && w[p.len()..].iter().any(|v| !super::is_function_word(v))
    {
        return Some(Stated::Boundary);
    }
    // A bare imperative with a marker of permanence after it ("please" before one is
    // read above), or a request with one anywhere.
    let standing = w
        .first()
        .is_some_and(|v| en::IMPERATIVE_VERBS.contains(&v.as_str()))
        && lasts(&w[1..]);
    let asked = w.iter().any(|v| matches!(v.as_str(), "please" | "pls")) && lasts(w);
    if instructs(on, en::DIRECTIVE_OPENINGS)
        || instructs(on, en::INSTRUCTION_OPENINGS)
        || standing
        || asked
    {
        return Some(Stated::Instruction);
    }
    let lets = (opens(w, &["let", "s"]) || opens(w, &["let", "us"]))
        && w.get(2)
            .is_some_and(|v| !en::LET_US_NOT_DECISIONS.contains(&v.as_str()));
    lets.then_some(Stated::Decision)
}

/// Whether `words` hold a marker of permanence ([`en::STANDING_MARKERS`]: "always",
/// "every", "from now on", ...).
fn lasts(words: &[String]) -> bool {
    en::STANDING_MARKERS.iter().any(|m| contains(words, m))
}

/// Whether a clause places what it says at one moment ("today", "this week", "right
/// now", "again"): a state or an event then, not a lasting item.
fn at_a_moment(w: &[String]) -> bool {
    w.iter().enumerate().any(|(i, v)| {
        en::RELATIVE_DAYS.contains(&v.as_str())
            || (en::PERIOD_PLACERS.contains(&v.as_str())
                && w.get(i + 1)
                    .is_some_and(|n| en::CALENDAR_PERIODS.contains(&n.as_str())))
    }) || en::MOMENT_MARKERS.iter().any(|m| contains(w, m))
}

/// What one clause states by what it says, when its form says nothing: a settled choice
/// (a verb of deciding), a liking, a limit (a modal of necessity) or a lasting fact —
/// each of the speaker's own (a first-person word, or a clause that opens with its
/// verb: "Decided: ...", "Love a window table"). A limit or fact placed at one moment is
/// not lasting.
fn content(w: &[String], sentence: &[String]) -> Option<Stated> {
    // The speaker as the one things are done for ("show me", "for me") is a request,
    // a lasting one only for every occasion ("give me ... every time").
    let object = |v: &String| matches!(v.as_str(), "me" | "us");
    if w.iter().any(object) && lasts(w) {
        return Some(Stated::Instruction);
    }
    let own = w
        .iter()
        .any(|v| en::FIRST_PERSON.contains(&v.as_str()) && !object(v));
    if let Some(at) = verb_at(w, en::DECISION_VERBS)
        && (own || at == 0)
    {
        return Some(Stated::Decision);
    }
    if at_a_moment(sentence) {
        return None;
    }
    if let Some(at) = verb_at(w, en::LIKING_VERBS)
        && (own || at == 0)
    {
        return Some(Stated::Preference);
    }
    // A limit or a fact on a condition ("... if they're in cake form") holds only then.
    if w.iter().any(|v| v == "if") {
        return None;
    }
    // A clause that opens with "no" or "nothing" and names what it forbids: "Nothing
    // with gluten for Amara" (not "no worries").
    let forbids = w.len() >= 4 && matches!(w[0].as_str(), "no" | "nothing");
    if forbids || en::NECESSITY.iter().any(|m| contains(w, m)) {
        return Some(Stated::Constraint);
    }
    // A one-off past event of the speaker's ("we had pizza", "my flight got delayed")
    // is narration, not a lasting fact.
    let narrated = w.windows(2).any(|p| {
        (en::FIRST_PERSON.contains(&p[0].as_str()) || p[0] == "got")
            && (en::PAST_AUXILIARIES.contains(&p[1].as_str())
                || (p[1].len() > 4 && p[1].ends_with("ed")))
    });
    (own && !narrated).then_some(Stated::Fact)
}

/// Whether one clause is told as so: not a hypothetical, an unreal consequence ("we'd
/// need"), a hedge (a guess, a past habit, a joke, a deliberation), nor a choice said to
/// be open ("nothing's decided").
fn clause_told(w: &[String]) -> bool {
    let unreal = w.iter().enumerate().any(|(i, v)| {
        en::UNREAL_MARKERS.contains(&v.as_str())
            && !w[i + 1..]
                .iter()
                .take(2)
                .any(|n| en::CHOICE_COMPARATIVES.contains(&n.as_str()))
    });
    let open = verb_at(w, en::DECISION_VERBS).is_some_and(|at| negated_before(w, at, 3));
    // "may" after a subject is the modal of a guess ("I may go"), not the month.
    let may = w
        .windows(2)
        .any(|p| en::SUBJECT_PRONOUNS.contains(&p[0].as_str()) && p[1] == "may");
    !(unreal || open || may || en::DELIBERATIONS.iter().any(|p| contains(w, p)) || !said_as_so(w))
}

/// Whether words are said as so by the older, shared reading of mood: not opened as a
/// hypothetical and with no hedge ([`en::HEDGES`]).
fn said_as_so(w: &[String]) -> bool {
    !(en::HYPOTHETICAL_OPENINGS.iter().any(|p| opens(w, p))
        || en::HEDGES.iter().any(|p| contains(w, p)))
}

/// Whether a sentence reports another person's words ("my boss said we should ship"):
/// a reporting verb not of the speaker or their team ("I said", "we've told").
fn reported(w: &[String]) -> bool {
    w.iter().enumerate().any(|(i, v)| {
        // After a function word other than a subject ("for *claims*", "the *claims*") the
        // word is a noun, not a verb of saying.
        let noun = i > 0
            && super::is_function_word(&w[i - 1])
            && !en::SUBJECT_PRONOUNS.contains(&w[i - 1].as_str());
        en::REPORTING_VERBS.contains(&v.as_str())
            && !noun
            && !w[i.saturating_sub(2)..i]
                .iter()
                .any(|p| matches!(p.as_str(), "i" | "we"))
    })
}

/// Whether a sentence withdraws something said before: "forget I mentioned it", "I
/// never said ...", "that's not a rule".
fn withdraws(w: &[String]) -> bool {
    en::WITHDRAWALS.iter().any(|p| opens(w, p))
        || w.iter().enumerate().any(|(i, v)| {
            (en::SAYING_VERBS.contains(&v.as_str())
                && negated_before(w, i, 3)
                && w[i.saturating_sub(4)..i]
                    .iter()
                    .any(|p| en::FIRST_PERSON.contains(&p.as_str())))
                || (en::KEPT_ITEMS.contains(&v.as_str())
                    && negated_before(w, i, i)
                    && w[..i]
                        .iter()
                        .any(|p| matches!(p.as_str(), "that" | "this" | "it")))
        })
}

/// Whether `text` quotes a clause of someone else's (three words or more between
/// quotation marks): a sign, a motto, a line read somewhere.
fn quotes_a_clause(text: &str) -> bool {
    let mut open: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c, open) {
            ('"' | '“' | '”', Some(start)) => {
                if super::tokens(&text[start..i]).len() >= 3 {
                    return true;
                }
                open = None;
            }
            ('"' | '“', None) => open = Some(i + c.len_utf8()),
            _ => {}
        }
    }
    false
}

/// Whether `text` opens by denying what was said ("No, that's not ...", "No no, I
/// don't ..."): "no" alone, then a negation in the same sentence.
fn denies(text: &str, first: &Sentence) -> bool {
    let t = text.trim_start();
    t.get(..2).is_some_and(|n| n.eq_ignore_ascii_case("no"))
        && t[2..].starts_with(|c: char| !c.is_alphanumeric())
        && first.words[1..]
            .iter()
            .any(|w| en::NEGATIONS.contains(&w.as_str()))
}

/// What `text` states as a candidate belief, read by who says it, by structure: a turn
/// that quotes someone, reacts to the moment, denies or withdraws what was said, or
/// reports another person's words states nothing; otherwise the first clause told as so
/// (in a sentence that does not ask) that states something by its form ([`form`]) or
/// what it says ([`content`]). The assistant's words are its own proposals: only its
/// commitment to a standing instruction ("from now on I'll ...") or a recap of a settled
/// choice counts.
pub fn candidate(text: &str, by_assistant: bool) -> Option<Stated> {
    if quotes_a_clause(text) {
        return None;
    }
    let all = sentences(text);
    let first = all.first()?;
    // An assistant's "Sure, ..." acknowledges; a user's reacts.
    if (!by_assistant && en::REACTIONS.iter().any(|r| opens(&first.words, r)))
        || denies(text, first)
    {
        return None;
    }
    // A speaker who asks about themself ("Do I like ...?", "what were we talking
    // about?") is not sure of what the turn says.
    let unsure = |s: &Sentence| {
        s.asks
            && s.words.windows(2).any(|p| {
                en::AUXILIARIES.contains(&p[0].as_str()) && matches!(p[1].as_str(), "i" | "we")
            })
    };
    if all
        .iter()
        .any(|s| reported(&s.words) || withdraws(&s.words) || unsure(s))
    {
        return None;
    }
    all.iter()
        .filter(|s| {
            !(s.asks
                || (s.words.len() > 1
                    && en::AUXILIARIES.contains(&s.words[0].as_str())
                    && en::SUBJECT_PRONOUNS.contains(&s.words[1].as_str())))
        })
        .flat_map(|s| s.clauses.iter().map(move |(c, at)| (c, &s.words, *at)))
        .filter(|(c, _, at)| clause_told(c) && !(*at > 0 && insists(c)))
        .find_map(|(c, sentence, at)| {
            if by_assistant {
                let commits =
                    (contains(c, &["i", "ll"]) || contains(c, &["i", "will"])) && lasts(c);
                // A recap of a settled choice is in the past ("everyone agreed").
                return if commits {
                    Some(Stated::Instruction)
                } else {
                    verb_at(c, en::DECISION_VERBS)
                        .filter(|&at| c[at].ends_with('d') || c[at] == "chose")
                        .map(|_| Stated::Decision)
                };
            }
            form(c, &sentence[at..]).or_else(|| content(c, sentence))
        })
}

/// Whether `text` only asks: one of its sentences is a question, every sentence of it with
/// [`ASK_CLAUSE`] words or more is one (a shorter one is a reaction, before or after it:
/// "Wow! How long …?", "… tried it? curious"), and no word
/// of it is the speaker's own ([`en::FIRST_PERSON`]): "Wow! How long have you been
/// playing?" tells nothing of what it names; the turn that answers it does.
pub fn asks_only(text: &str) -> bool {
    // One pass, no allocation (it runs on every candidate of a recall): words are runs of
    // letters and digits, as lexical tokens are; a sentence without a letter (a trailing
    // "2,31" marker) is no sentence.
    if !text.contains('?') {
        return false;
    }
    let (mut words, mut letters, mut asked) = (0usize, false, false);
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
                // A short remark after the question ("… sprints? curious", "That cafe
                // rocks.") is a reaction too: it leaves the turn asking.
                asked |= asks;
            }
            (words, letters) = (0, false);
        }
    }
    asked
}

/// Words a sentence needs to state something of its own: a reaction ("Wow, that looks
/// great!", "Gotta take time to chill.") before a question tells nothing (4 to 16 words and
/// no limit measured: `docs/EXPERIMENTS.md`).
pub const ASK_CLAUSE: usize = 12;

/// Whether one sentence is told as so: it does not ask, and it is not a hypothetical, a
/// hedge (a guess, a past habit, a joke) or someone else's words reported.
fn tells_as_so(s: &Sentence) -> bool {
    !(s.asks || reported(&s.words) || withheld(s)) && said_as_so(&s.words)
}

/// Whether a clause after the first withholds what the sentence says: a clause of at
/// most three words that opens with a negation and holds a past participle, and no number
/// ("moving the office to Utrecht, nothing signed", "standup moves to 10:15, not
/// confirmed yet"). A value after the negation corrects instead ("in York, not Leeds").
fn withheld(s: &Sentence) -> bool {
    s.clauses.iter().skip(1).any(|(w, _)| {
        w.len() <= 3
            && w.first()
                .is_some_and(|n| en::NEGATIONS.contains(&n.as_str()))
            && w[1..]
                .iter()
                .any(|p| p.len() > 4 && p.ends_with("ed") && p.chars().all(char::is_alphabetic))
    })
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

/// Whether a sentence of `text` withholds what it says ("…, not confirmed yet").
pub fn withholds(text: &str) -> bool {
    sentences(text).iter().any(withheld)
}

/// What `text` states, said by a user ([`candidate`]).
pub fn stated(text: &str) -> Option<Stated> {
    candidate(text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clause_that_withholds_what_the_sentence_says() {
        for text in [
            "the office may move to Leiden next spring, nothing signed",
            "Standup moves to 10:15, not confirmed yet.",
        ] {
            assert!(withholds(text), "{text}");
            assert!(!asserts(text), "{text}");
        }
        for text in [
            "Standup moves to 10:15, not ideal.",
            "The offsite is in York, not Leeds.",
            "Not decided yet which room we use, but standup is at 10:15.",
        ] {
            assert!(!withholds(text), "{text}");
        }
    }

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
            // A remark of a word or two after the question.
            "anyone tried the night bus to the airport? curious",
            "Is the pool open on Sundays? just wondering",
            "Sounds good! When do you have in mind? That market is great.",
        ] {
            assert!(asks_only(text), "{text}");
        }
        for text in [
            // The speaker's own words: it tells of them.
            "I've been playing for a month, how about you?",
            "What's the best way to store my tools now that I added a pegboard?",
            // A statement of its own before the question.
            "That game took months of balancing the mechanics so that every match felt fair. Did you face any difficulties?",
            // A statement of its own after the question.
            "How long? The whole team spent about a month of evenings getting the balance right.",
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
            // Words that only insist, inside a sentence, state no limit of their own.
            (
                "At lunch my cousin went on about how he'd never fly again, never ever, then booked Lisbon.",
                None,
            ),
            ("Never, ever share my address.", Some(Stated::Instruction)),
            ("Stop.", None),
            (
                "Stop sending me reminders at night.",
                Some(Stated::Boundary),
            ),
        ] {
            assert_eq!(stated(text), want, "{text}");
        }
    }

    #[test]
    fn candidates_are_lasting_items_of_the_speakers_own() {
        // Written for this test.
        for (text, by_assistant, want) in [
            (
                "I'm a beekeeper, two hives in the garden.",
                false,
                Some(Stated::Fact),
            ),
            ("Leo is my nephew.", false, Some(Stated::Fact)),
            (
                "The report has to fit on one page.",
                false,
                Some(Stated::Constraint),
            ),
            (
                "Decided: the fence gets painted green.",
                false,
                Some(Stated::Decision),
            ),
            (
                "Send me the totals every Friday.",
                false,
                Some(Stated::Instruction),
            ),
            (
                "Sure thing, from now on I'll always add units.",
                true,
                Some(Stated::Instruction),
            ),
            // The moment, a condition, a guess, a quote, someone else, a withdrawal.
            ("I'm so cold right now.", false, None),
            ("I swim only if the pool is empty.", false, None),
            ("I may take up rowing.", false, None),
            (
                "The poster said \"always bring a towel\" in red.",
                false,
                None,
            ),
            ("My neighbour reckons he owns the hedge.", false, None),
            ("I never said I was a beekeeper.", false, None),
            ("Do I keep bees? I forget what I told you.", false, None),
            ("We had soup for lunch.", false, None),
            ("Show me the totals.", false, None),
            ("You could paint the fence green.", true, None),
        ] {
            assert_eq!(candidate(text, by_assistant), want, "{text}");
        }
    }

    #[test]
    fn a_text_asserts_by_its_mood() {
        for text in [
            "gymnastics got moved to thursdays, same time",
            "The rent is 1,520 now. Can you update the sheet?",
            "no, it's the 15th",
            // A noun that looks like a verb of saying.
            "Refunds are only issued for claims over £50.",
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
