//! Recall-time supersession: a newer statement of a different value outranks the older one.
//!
//! Governed beliefs carry explicit supersession; raw events do not. When a user says "the
//! deadline is April 1" and later "I moved the sprint deadline to April 5", both events match
//! a question about the deadline, usually the older one better (it states the fact plainly).
//! Without an extraction model, recall recognises the pattern when all of these hold:
//!
//! 1. **Same speaker, newer**: the later event has the same role, the same agent when the
//!    role is not the user's, and, when both open with a speaker name ("Caroline: ..."),
//!    the same name; one person's new value never supersedes another's, unless the
//!    other corrects it ("no, it's the 15th") or announces a change of a thing neither
//!    speaks of as their own ("standup moved to 10:15"; `announced_to_all`).
//! 2. **An update statement**: the newer event sets a value — a typed value
//!    ([`values`]) within a few words after a revision cue ("moved ... to April 5",
//!    "increased to $550", "the new April 25 deadline", "from 12 to 5 hours"), or the
//!    value after a "to" further on in the cue's clause ("extended my rest day on June 6
//!    to two full days"; [`CLAUSE_SPAN`]).
//! 3. **A different value of the same kind** in the older event, which lacks the new one.
//! 4. **For the same thing**: the two values share a query content word within
//!    [`ANCHOR_WINDOW`] words, or a neighbouring value ("March 22 at 3 PM" → "March 22 at
//!    4:30 PM"), or the question asks for that kind of value ("how long", "when", "what
//!    time", "how much ... budget", "what percentage"; [`values::asked_kinds`]) *and* a
//!    content word stands near both values (the same subject: a new time for the dentist
//!    does not revise the time of the standup).
//! 5. **Not a change of something else**: a "from X to Y" whose `X` the older event never
//!    stated does not revise it.
//!
//! A newer event also revises an older one, cue or not, when it repeats the older one's
//! count of a queried noun with the same predicate and another number ("I secured 3
//! interviews" → "I secured 5 interviews"), or restates an amount, percentage, duration or
//! fraction of the older one with another value near three or more of the same query words
//! and with at least half its evidence ([`RESTATE_ANCHORS`], [`RESTATE_RATIO`]), or, when
//! the question asks for a time of day, gives another time for the same day and the same
//! thing ("visit the store next Saturday at 3 PM" → "free at 4 PM next Saturday for the
//! store visit"; [`reschedules`]).
//!
//! A statement that says what it does *instead* replaces what an earlier one said, typed
//! value or not ("bringing brownies instead" after "I'm bringing lemon bars";
//! [`Candidate::replaces`]).
//!
//! A short turn often gives a value by reference, naming nothing it is the value of ("make
//! that 5 kg", "they put it up to £165"; [`Candidate::elliptical`]): read as continuing an
//! earlier statement of its conversation ([`Candidate::continuing`]), it is anchored by
//! that statement's words, and [`follow`] finds such turns after an answer (recall reads
//! them from the ledger: the question shares no word with them).
//!
//! The newer event then moves directly above the older one when its rank-fusion evidence is
//! at least `ratio` of the older one's (measured with `hypermem eval`'s update order:
//! `docs/EXPERIMENTS.md`). An earlier rule (a revision cue anywhere, differing numbers
//! near a query term) cost MRR: without types and anchors it moved unrelated numbers.

use crate::ledger::Role;
use crate::recall::values::{self, Kind, Value};
use crate::text::en::{
    ALTERITY, ASKING_WORDS, COORDINATORS, COPULAS, DETERMINERS, INSTEAD, OTHERS_POSSESSIVES,
    PAST_AUXILIARIES, PERIOD_PLACERS, REFERRING_PRONOUNS, REVISION_CUES, VALUE_ADJECTIVES,
};
use crate::text::stem;

/// Words after a revision cue in which the value it sets is looked for.
pub const UPDATE_SPAN: usize = 6;

/// Words after a revision cue in which the value it changes something *to* ("extended my
/// rest day on June 6 to two full days") is looked for, within the cue's clause. Measured
/// on all three development sets: 9, 12, 20 and unbounded give the same results (the
/// clause is what bounds it; `docs/EXPERIMENTS.md`).
pub const CLAUSE_SPAN: usize = 12;

/// Words after `new` or `latest` in which the value it qualifies is looked for.
pub const ADJECTIVE_SPAN: usize = 5;

/// Content words right before a query word read as what qualifies it ([`same_subject`]).
pub const QUALIFIERS: usize = 2;

/// Words on each side of a value searched for what it is the value of.
pub const ANCHOR_WINDOW: usize = 6;

/// Words on each side of a value in which a statement names its subject (a clause, about):
/// two statements of a value of the kind the question asks for are about the same thing
/// when a content word stands this near both values.
pub const SUBJECT_WINDOW: usize = 12;

/// Query content words that must stand near both values for a restatement without a
/// revision cue ([`restates_typed`]): one or two shared words tie unrelated amounts of a
/// long turn together (measured: two cost MRR in long turns, three none).
pub const RESTATE_ANCHORS: usize = 3;

/// Rank-fusion evidence a restatement without a cue needs, as a share of the older
/// event's: a passing mention does not overturn the statement that answers the query.
pub const RESTATE_RATIO: f64 = 0.5;

/// Turns after an answer in its conversation that recall reads for a statement
/// continuing it ([`follow`]).
pub const FOLLOW_TURNS: usize = 6;

/// How soon after a statement its speaker's next turn is read as going on with it
/// ([`Candidate::takes_up`]): a correction typed straight after ("sorry, 181").
pub const ADJACENT_MS: i64 = 10 * 60 * 1000;

/// What the reordering needs from the query.
#[derive(Debug, Clone)]
pub struct Query {
    /// Query terms, singular.
    terms: Vec<String>,
    /// The content words among them ([`values::is_content_word`]), singular.
    content: Vec<String>,
    /// The kinds of value the question asks for.
    asked: Vec<Kind>,
    /// Its words that say what kind of answer it wants ([`values::asking_words`]).
    asking: Vec<String>,
    /// The values the question itself states ("note 417", "the 3 PM slot").
    stated: Vec<Value>,
    /// The months the question names ("the rent in January").
    months: Vec<&'static str>,
    /// The owners the question names by a possessive ("Radek's bike", "the user's bike").
    owners: Vec<String>,
    /// The end of the time the question asks about (its time hint's window): a statement
    /// made then or later was not yet valid, so it supersedes nothing.
    horizon: Option<i64>,
    /// It asks where ("where" opening a clause): a place is a value ([`values::places`]).
    locative: bool,
}

impl Query {
    /// `question` is the query text, `terms` the lexical terms recall searched with.
    pub fn new(question: &str, terms: &[String]) -> Self {
        let scan = values::scan(question);
        Self {
            terms: terms.iter().map(|t| values::singular(t)).collect(),
            content: terms
                .iter()
                .filter(|t| values::is_content_word(t))
                .map(|t| values::singular(t))
                .collect(),
            asked: values::asked_kinds(question),
            asking: values::asking_words(question)
                .iter()
                .map(|w| values::singular(w))
                .collect(),
            months: values::months(&scan),
            owners: entities(&scan).owners,
            stated: scan.values,
            horizon: None,
            locative: values::words(question)
                .first()
                .is_some_and(|w| w == "where"),
        }
    }

    /// What the question is about: its content words but those that say what kind of
    /// answer it wants ("time" in "what time") and the days and months it names (a time
    /// it asks about, shared by every appointment that day: "the car inspection on
    /// Thursday" is not about the piano lesson on Thursday).
    fn subject(&self) -> Vec<String> {
        self.content
            .iter()
            .filter(|w| !(self.asking.contains(w) || values::is_month(w) || values::is_weekday(w)))
            .cloned()
            .collect()
    }

    /// The question asks about the time before `until` (ms): only what was stated before
    /// then can be the value valid then.
    #[must_use]
    pub fn valid_until(mut self, until: Option<i64>) -> Self {
        self.horizon = until;
        self
    }

    /// Whether the question names a value `older` states that `newer` does not mention at
    /// all (neither as a value nor as what it changed), or a month `older` names and
    /// `newer` does not: the question is about the older statement itself (a time the
    /// question names selects the value valid then), so a different value later does not
    /// answer it better. A statement read as continuing `older`
    /// ([`Candidate::continuing`]) mentions what `older` says, unless it states another
    /// value of that kind.
    fn pins(&self, older: &Candidate, newer: &Candidate) -> bool {
        let same = |a: &Value, b: &Value| a.kind == b.kind && a.value == b.value;
        let month = |m: &&str| older.months.contains(m) && !newer.months.contains(m);
        // Continuing `older` carries its value over unless it states another of the kind
        // ("client 6" is no continuation of "client 5" the question names).
        let continued = |v: &Value| {
            older.words[v.word]
                .iter()
                .any(|w| newer.context.contains(w))
                && !newer.values.iter().any(|u| compatible(&u.kind, &v.kind))
        };
        self.months.iter().any(month)
            || self.stated.iter().any(|q| {
                older.values.iter().any(|v| same(v, q) && !continued(v))
                    && !newer
                        .values
                        .iter()
                        .chain(&newer.origins)
                        .any(|v| same(v, q))
            })
    }
}

/// A candidate as the reordering sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Event id (ids grow with append order).
    pub id: u64,
    /// When it was said (ms; `i64::MIN` when unknown: then ids order statements).
    at: i64,
    /// Speaker role.
    pub role: Role,
    /// Who spoke, beyond the role: the agent of a non-user event, and the event's named
    /// speaker ([`speaker`](Self::speaker)).
    speaker: (Option<String>, Option<String>),
    /// Rank-fusion evidence (priors excluded).
    pub evidence: f64,
    /// Per word of the content ([`values::Scan::words`]), its lexical pieces, singular.
    words: Vec<Vec<String>>,
    /// Per word, whether a phrase ends after it ([`values::Scan::breaks`]).
    breaks: Vec<bool>,
    /// Typed values of the content.
    values: Vec<Value>,
    /// Per slot ([`slots`](Self::slots): the values first), the stem of the word right
    /// before it when that word can say what it is the value of ("secured" in "secured 5
    /// interviews"; not "to", "by", ...).
    predicates: Vec<Option<String>>,
    /// The values it says something was changed to: those within [`UPDATE_SPAN`] words
    /// after a revision cue (or [`ADJECTIVE_SPAN`] after "new"), and the `Y` of a "from X
    /// to Y" there; never the `X`, nor a difference ("by 20%").
    updates: Vec<Value>,
    /// The values it says something was changed from (the `X` of "from X to Y").
    origins: Vec<Value>,
    /// The months it names.
    months: Vec<&'static str>,
    /// Its values and its identifiers ([`values::identifiers`]): what a slot it fills
    /// again holds ([`fills_again`]).
    slots: Vec<Value>,
    /// The names its sentences open with ([`values::opening_names`]): slots only where
    /// the question asks for a name ([`fills_again`]).
    openers: Vec<Value>,
    /// The places it puts something at ([`values::places`]): slots only where the
    /// question asks where ([`fills_again`]).
    places: Vec<Value>,
    /// Per word, whether a negation ("not", "never", "-n't") stands before it in its
    /// clause: a value there is denied, not set ("all-hands is NOT moving to Fridays").
    negated: Vec<bool>,
    /// Whether it is a correction by its form ("Actually, ...", "no, it's ...").
    corrects: bool,
    /// Whether it asserts what it says ([`crate::text::statements::asserts`]).
    asserts: bool,
    /// Per word, whether its clause weighs something not yet settled
    /// ([`crate::text::en::DELIBERATIONS`]: "thinking about upgrading to the £45 plan").
    deliberated: Vec<bool>,
    /// The entities it names by form, lowercased: a possessor ("Leo's") and a capitalised
    /// word inside a sentence, not a value, a month or a weekday.
    entities: Vec<String>,
    /// The possessors among them.
    owners: Vec<String>,
    /// Each possessor with the words of what it owns, singular ("leo" with "school",
    /// "shoe" in "Leo's school shoes are size 2").
    owned: Vec<(String, Vec<String>)>,
    /// It gives a value without saying what it is the value of ([`Candidate::elliptical`]).
    elliptical: bool,
    /// What it is about when it is elliptical and continues an earlier statement
    /// ([`Candidate::continuing`]): that statement's words, as [`words`](Self::words)
    /// pieces. Its values are anchored by them where none of its own words anchors one.
    context: Vec<String>,
    /// It states a recurring time ("Monday evenings", "on Thursdays", "every week").
    recurring: bool,
    /// It confines what it says to one current occasion ("only this week", "tonight"),
    /// not from then on ("from this week", "as of today").
    one_off: bool,
    /// It is the turn right after the statement it is read as continuing (set by
    /// [`follow`]).
    adjacent: bool,
    /// The content words of what it says it replaces: the phrase after "instead of"
    /// ("doing a mushroom wellington instead of *the lamb*"), singular.
    replaced: Vec<String>,
    /// In a settled clause that ends its object with "instead" ("bringing fried plantain
    /// instead"), each content word with the content word after it, singular: what that
    /// word now goes with ([`Candidate::replaces`]).
    swapped: Vec<(String, String)>,
    /// It settles something "instead" (not "instead of" something it names): in the
    /// turn right after another it replaces what that one said ([`Candidate::replaces`]).
    instead: bool,
    /// It says what one of its values is the value of in the value's own clause: a word
    /// of content, then a copula or a label's colon, then the value ("Locker is
    /// 7B", "Member number: 55120", "shoes are size 9"; [`predicated`]). Such a turn
    /// states a subject of its own, so coming straight after another does not make it
    /// about the other's.
    predicated: bool,
}

impl Candidate {
    /// How many values `vals` (in text order) are, weekdays coordinated with nothing but
    /// "and", "or" or a comma between them counting as one: "Mondays and Wednesdays" is
    /// one schedule, not two values of a list.
    fn schedules_as_one(&self, vals: &[&Value]) -> usize {
        let weekday = |v: &Value| {
            v.kind == Kind::Date
                && self
                    .words
                    .get(v.word)
                    .is_some_and(|w| w.iter().any(|p| values::is_weekday(p)))
        };
        let joined = |a: &Value, b: &Value| {
            a.word < b.word
                && self.words[a.word + 1..b.word]
                    .iter()
                    .flatten()
                    .all(|w| COORDINATORS.contains(&w.as_str()))
        };
        vals.len()
            - vals
                .windows(2)
                .filter(|p| weekday(p[0]) && weekday(p[1]) && joined(p[0], p[1]))
                .count()
    }

    /// Reads the speaker, values and update statements of `content`, said in `role` by
    /// `agent`.
    pub fn new(id: u64, role: Role, agent: Option<&str>, content: &str, evidence: f64) -> Self {
        let scan = values::scan(content);
        let months = values::months(&scan);

        let negated = {
            let mut on = false;
            let mut out = Vec::with_capacity(scan.words.len());
            for (w, &brk) in scan.words.iter().zip(&scan.breaks) {
                out.push(on);
                on |= matches!(w.as_str(), "not" | "never")
                    || w.ends_with("n't")
                    || w.ends_with("n’t");
                if brk {
                    on = false;
                }
            }
            out
        };
        let identifiers = values::identifiers(&scan);
        let openers = values::opening_names(&scan);
        let places = values::places(&scan);
        let Entities {
            entities,
            owners,
            owned,
        } = entities(&scan);
        let mut slots = scan.values.clone();
        slots.extend(identifiers);
        // A change written as notation: "35 → 39" (an arrow between two values), "s/14/30/"
        // (a substitution, which edits what was said before: it refers back by its form).
        let (noted_from, noted_to, substitutes) = notation(&scan);
        // A long turn states its own subject; a short one may exist only to give a value.
        let layout = Layout::of(&scan);
        let elliptical = content.chars().count() <= crate::index::lexical::CONTEXT_CHARS
            && (substitutes
                || refers_back(&scan, &layout, &slots)
                || elides_subject(&scan, &layout, &slots));
        let predicated = predicated(&scan, &slots);
        let (recurring, one_off) = occasions(&scan.words);
        let values::Scan {
            raw,
            words,
            values,
            breaks,
            ..
        } = scan;
        let after = |v: &Value, word: &str| v.word > 0 && words[v.word - 1] == word;
        // A correction by its form ("Actually, it is on Thursday, not Wednesday"): its
        // opening is a revision cue, and a value after "not" is the one corrected away.
        // So is a turn that opens with a bare "no" standing as a phrase of its own ("no,
        // it's the 15th"): it denies what was said and states what holds instead.
        let corrects = crate::text::statements::stated(content)
            == Some(crate::text::statements::Stated::Correction)
            || (words.first().is_some_and(|w| w == "no") && breaks.first() == Some(&true));
        let origins: Vec<Value> = values
            .iter()
            .filter(|v| after(v, "from") || (corrects && after(v, "not")))
            .cloned()
            .chain(noted_from)
            .collect();
        let mut cues: Vec<(usize, usize)> = if corrects {
            vec![(0, UPDATE_SPAN)]
        } else {
            Vec::new()
        };
        cues.extend(words.iter().enumerate().filter_map(|(i, w)| {
            if REVISION_CUES.contains(&w.as_str()) {
                return Some((i, UPDATE_SPAN));
            }
            let name = raw
                .get(i + 1)
                .is_some_and(|n| n.starts_with(char::is_uppercase))
                && !values::is_month(&words[i + 1]);
            (VALUE_ADJECTIVES.contains(&w.as_str()) && !name).then_some((i, ADJECTIVE_SPAN))
        }));
        let in_span = |v: &Value| {
            cues.iter()
                .any(|&(c, span)| v.word > c && v.word <= c + span)
        };
        let targets = values.iter().filter(|v| {
            after(v, "to")
                && origins
                    .iter()
                    .any(|o| in_span(o) && o.word < v.word && v.word <= o.word + 3)
        });
        // "extended my rest day on June 6 to two full days": the value a cue's verb changes
        // something *to*, past the span but in the cue's clause (no `,.;:!?` between).
        let clause_to = values.iter().filter(|v| {
            after(v, "to")
                && cues.iter().any(|&(c, span)| {
                    span == UPDATE_SPAN
                        && v.word > c
                        && v.word <= c + CLAUSE_SPAN
                        && !breaks[c..v.word - 1].iter().any(|&b| b)
                })
        });
        // "cut it to 3", "pushed that to Friday": in a short turn, a value something
        // referred back to is put to is what it was changed to, whatever the verb (in a
        // long one the pronoun is as often about something else: BEAM-500K MRR -0.0004).
        let short = content.chars().count() <= crate::index::lexical::CONTEXT_CHARS;
        let moved_to = values.iter().filter(|v| {
            short
                && after(v, "to")
                && v.word >= 2
                && REFERRING_PRONOUNS.contains(&words[v.word - 2].as_str())
                && !breaks[v.word - 2]
        });
        let weighs = |w: &[String]| {
            crate::text::en::DELIBERATIONS
                .iter()
                .any(|p| crate::text::statements::contains(w, p))
        };
        // Per word, whether its clause supposes what it says ("if it moved to the 6th"),
        // and whether it weighs it ("thinking about the £45 plan"). A supposed value is
        // no change at all; a weighed one sets no slot, though a cue may still mark it as
        // changed ("considering buying sneakers with my increased budget of $650").
        // A clause's words are a run: each clause is read once.
        let (mut supposed, mut deliberated) = (Vec::new(), Vec::new());
        for run in layout.clause.chunk_by(|a, b| a == b) {
            let at = supposed.len();
            let own = &words[at..at + run.len()];
            let supposes = crate::text::en::HYPOTHETICAL_OPENINGS
                .iter()
                .any(|p| crate::text::statements::opens(own, p));
            let weighed = supposes || weighs(own);
            supposed.extend(std::iter::repeat_n(supposes, run.len()));
            deliberated.extend(std::iter::repeat_n(weighed, run.len()));
        }
        let mut updates: Vec<Value> = values
            .iter()
            .filter(|v| in_span(v) && !origins.contains(v) && !after(v, "by"))
            .chain(targets)
            .chain(clause_to)
            .chain(moved_to)
            .cloned()
            .chain(noted_to)
            .collect();
        updates.sort();
        updates.dedup();
        // "moved to 10:15, not confirmed": what a turn withholds announces no change.
        if crate::text::statements::withholds(content) {
            updates.clear();
        }
        updates.retain(|v| !supposed.get(v.word).copied().unwrap_or(false));
        // "instead of the lamb": what comes after it, up to a break or a word of no content;
        // only in a turn that settles it: asking nothing, deliberating nothing ("I'm
        // considering X instead of Y - is this wise?" replaces nothing yet).
        let settled = !content.contains('?') && !weighs(&words);
        let [instead, of] = INSTEAD;
        // Where it says "instead" with nothing after naming what it replaces.
        let instead_at: Vec<usize> = (0..words.len())
            .filter(|&i| settled && words[i] == instead && words.get(i + 1).is_none_or(|n| n != of))
            .collect();
        let replaced = words
            .windows(2)
            .filter(|_| settled)
            .position(|p| p[0] == instead && p[1] == of)
            .map(|i| {
                words[i + 2..]
                    .iter()
                    .zip(&breaks[i + 2..])
                    .skip_while(|(w, _)| DETERMINERS.contains(&w.as_str()))
                    .scan(false, |stop, (w, &brk)| {
                        let take = !*stop && values::is_content_word(w);
                        *stop |= brk || !take;
                        take.then(|| values::singular(w))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let predicates = slots
            .iter()
            .map(|v| {
                let w = words.get(v.word.checked_sub(1)?)?;
                (w.chars().all(char::is_alphabetic) && !crate::text::is_function_word(w))
                    .then(|| stem(w).to_owned())
            })
            .collect();
        let mut c = Self {
            id,
            role,
            speaker: (
                agent.filter(|_| role != Role::User).map(str::to_owned),
                None,
            ),
            evidence,
            words: words
                .iter()
                .map(|w| {
                    w.split(|c: char| !c.is_alphanumeric())
                        .filter(|p| !p.is_empty())
                        .map(values::singular)
                        .collect()
                })
                .collect(),
            breaks,
            values,
            predicates,
            updates,
            origins,
            months,
            asserts: crate::text::statements::asserts(content),
            deliberated,
            entities,
            owners,
            owned,
            slots,
            openers,
            places,
            negated,
            corrects,
            at: i64::MIN,
            elliptical,
            context: Vec::new(),
            adjacent: false,
            predicated,
            replaced,
            recurring,
            one_off,
            swapped: Vec::new(),
            instead: !instead_at.is_empty(),
        };
        c.swapped = c.swapped_pairs(&instead_at);
        c
    }

    /// The content word after word `k` in its phrase, determiners skipped ("bringing *the*
    /// jollof" gives "jollof").
    fn next_content(&self, k: usize) -> Option<&str> {
        let mut m = k + 1;
        if self.breaks.get(k).copied().unwrap_or(true) {
            return None;
        }
        while let [w] = self.words.get(m)?.as_slice()
            && DETERMINERS.contains(&w.as_str())
        {
            if self.breaks[m] {
                return None;
            }
            m += 1;
        }
        let w = self.words.get(m)?.first()?;
        values::is_content_word(w).then_some(w.as_str())
    }

    /// The pairs of [`swapped`](Self::swapped): in each clause whose last word before
    /// a bare "instead" (at the words `instead_at`) is reached without a phrase break,
    /// every content word with the content word after it, both before "instead".
    fn swapped_pairs(&self, instead_at: &[usize]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for &i in instead_at {
            if i == 0 || self.breaks[i - 1] {
                continue;
            }
            let start = (0..i).rev().find(|&j| self.breaks[j]).map_or(0, |j| j + 1);
            for k in start..i {
                let Some(head) = self.words[k].first().filter(|h| values::is_content_word(h))
                else {
                    continue;
                };
                if let Some(next) = self.next_content(k).filter(|_| k + 1 < i) {
                    out.push((head.clone(), next.to_owned()));
                }
            }
        }
        out
    }

    /// The same statement with the names its sentences open with among its slots (no
    /// word before them says what they are of).
    fn opened(&self, placed: bool) -> Self {
        let mut c = self.clone();
        let places = if placed {
            std::mem::take(&mut c.places)
        } else {
            Vec::new()
        };
        // A place's words hold the names inside it ("Elm Street" of "the café on Elm
        // Street"): one value. Opening names weigh only beside names written inside
        // sentences, which "I" is not.
        let inside = |v: &Value| {
            v.kind == Kind::Name
                && places.iter().any(|p| {
                    v.word >= p.word
                        && v.word < p.word + p.value.split(' ').count() + 2
                        && p.value.contains(&v.value)
                })
        };
        let speaker = |v: &Value| {
            v.kind == Kind::Name && crate::text::en::FIRST_PERSON.contains(&v.value.as_str())
        };
        let (slots, predicates) = c
            .slots
            .into_iter()
            .zip(c.predicates)
            .filter(|(v, _)| !inside(v) && !speaker(v))
            .unzip();
        (c.slots, c.predicates) = (slots, predicates);
        let openers: Vec<Value> = std::mem::take(&mut c.openers)
            .into_iter()
            .filter(|v| !inside(v) && !c.slots.iter().any(|s| s.word == v.word))
            .collect();
        for v in places.iter().cloned().chain(openers) {
            c.slots.push(v);
            c.predicates.push(None);
        }
        c
    }

    /// Whether it gives a value without saying what it is the value of: a short turn
    /// ([`crate::index::lexical::CONTEXT_CHARS`]: a long one states its own subject) whose
    /// clause holding one of its values refers back by a pronoun ("make *that* 5 kg", "the
    /// school changed *it* to the 11th"; [`REFERRING_PRONOUNS`]), in a clause that does not
    /// ask.
    pub fn elliptical(&self) -> bool {
        self.elliptical
    }

    /// The same statement read as continuing `antecedent`, an earlier statement of its
    /// conversation: when it is elliptical, what it says its values are of is what
    /// `antecedent` (or what `antecedent` itself continued) spoke of.
    #[must_use]
    pub fn continuing(mut self, antecedent: &Candidate) -> Self {
        if self.elliptical || self.takes_up(antecedent) {
            self.context = antecedent
                .words
                .iter()
                .flatten()
                .chain(&antecedent.context)
                .cloned()
                .collect();
        }
        self
    }

    /// Whether it takes up the slot `antecedent` (an earlier statement of its conversation)
    /// holds without a pronoun, giving another value of its kind: it names that statement's
    /// value itself ("build-01 was retired for build-02", "left the Quays, joined the
    /// Harriers"), or counts the same unit of nothing it names itself ("upgraded to 60
    /// litres" after "40 litres"), or it is the same speaker's next turn, said within
    /// [`ADJACENT_MS`], giving a value that is not a name, of nothing it names itself
    /// ("oops, 181 sorry" right after "locker 118"; not "Locker is 7B" after "bike code
    /// 4471"). What it then says is read as about what `antecedent` spoke of; whether it
    /// revises it is still [`revises`]' decision.
    fn takes_up(&self, antecedent: &Candidate) -> bool {
        if self.replaces(antecedent) {
            return true;
        }
        let other = |u: &Value| {
            antecedent
                .slots
                .iter()
                .any(|v| compatible(&u.kind, &v.kind) && v.value != u.value)
        };
        if !self.asserts || !self.slots.iter().any(other) {
            return false;
        }
        let names_old = antecedent.slots.iter().any(|v| {
            self.slots
                .iter()
                .any(|u| u.value == v.value && compatible(&u.kind, &v.kind))
        });
        let same_unit = !self.predicated
            && self.slots.iter().any(|u| {
                matches!(&u.kind, Kind::Count(Some(_)))
                    && antecedent
                        .slots
                        .iter()
                        .any(|v| v.kind == u.kind && v.value != u.value)
            });
        // Names come up in every other turn; a value of another kind, straight after, is
        // a correction of the one just given.
        let next = self.adjacent
            && !self.predicated
            && self.slots.iter().any(|u| u.kind != Kind::Name && other(u))
            && same_speaker_later(antecedent, self)
            && self.at.saturating_sub(antecedent.at) <= ADJACENT_MS;
        names_old || same_unit || next
    }

    /// Whether it says it replaces what `earlier` said, asserted, settled (it asks and
    /// weighs nothing) and not the assistant's: its "instead of" names a content word
    /// `earlier` says and does not itself put in place of something else ("doing a
    /// mushroom wellington instead of the lamb" after "I'm doing roast lamb"); or a word
    /// of the clause it ends with "instead" goes with another object than it does in
    /// `earlier` ([`swapped`](Self::swapped)); or it is the turn right after `earlier` and
    /// says "instead" (set by [`follow`]).
    fn replaces(&self, earlier: &Candidate) -> bool {
        let instead_of = || {
            self.replaced
                .iter()
                .any(|w| earlier.says(w) && !earlier.replaced.contains(w))
        };
        // "bringing fried plantain instead" after "I'm bringing jollof rice": the same
        // word now goes with something `earlier` never said.
        let swapped = || {
            self.swapped.iter().any(|(head, now)| {
                !earlier.says(now)
                    && earlier.words.iter().enumerate().any(|(k, w)| {
                        w.first() == Some(head)
                            && earlier.next_content(k).is_some_and(|was| was != now)
                    })
            })
        };
        // "going with the teal one instead", the turn right after: instead of what that
        // turn said.
        let next = self.instead && self.adjacent;
        self.asserts && self.role != Role::Assistant && (instead_of() || swapped() || next)
    }

    /// When it was said (ms since the epoch): a statement is newer than another when it was
    /// said later, or at the same time and appended later.
    #[must_use]
    pub fn at(mut self, ms: i64) -> Self {
        self.at = ms;
        self
    }

    /// The speaker's name: the event's own `speaker` field (a named participant of a
    /// multi-party conversation), never a name read from the content.
    #[must_use]
    pub fn speaker(mut self, name: Option<&str>) -> Self {
        self.speaker.1 = name.map(str::to_owned);
        self
    }

    /// Its values and identifiers: what a slot it sets holds.
    pub fn slots(&self) -> &[Value] {
        &self.slots
    }

    /// The values this event says something was changed to.
    pub fn updates(&self) -> &[Value] {
        &self.updates
    }

    /// The `terms` within [`ANCHOR_WINDOW`] words of `v`: what `v` is a value of.
    /// A statement that continues another ([`continuing`](Self::continuing)) and has no
    /// such term near `v` is anchored by the terms of what it continues. `inflected`: a
    /// term in another inflection anchors too (between a statement and one continuing it).
    fn anchors<'a>(&self, terms: &'a [String], v: &Value, inflected: bool) -> Vec<&'a String> {
        let lo = v.word.saturating_sub(ANCHOR_WINDOW);
        let hi = (v.word + ANCHOR_WINDOW + 1).min(self.words.len());
        let near = &self.words[lo..hi];
        let is = |t: &String, w: &String| w == t || (inflected && stem(w) == stem(t));
        let own: Vec<&String> = terms
            .iter()
            .filter(|t| near.iter().flatten().any(|w| is(t, w)))
            .collect();
        if own.is_empty() {
            terms
                .iter()
                .filter(|t| self.context.iter().any(|w| is(t, w)))
                .collect()
        } else {
            own
        }
    }

    /// Whether `word` names an entity it mentions but does not own anything of: a person
    /// or place that says who or where, not which thing ("with Stacy", "at Cookly").
    /// `word` may be a [`stem`] of the name ([`subject`](Self::subject) words are).
    fn bystander(&self, word: &str) -> bool {
        let is = |e: &String| e == word || stem(e) == word;
        self.entities.iter().any(is) && !self.owners.iter().any(is)
    }

    /// Whether it is read as continuing an earlier statement ([`Self::continuing`]): its
    /// values and that statement's are then anchored by query words in any inflection
    /// ("86 kg this morning" after "Weighed in at 92 kg", asked what the user weighed).
    fn continues(&self) -> bool {
        !self.context.is_empty()
    }

    /// Whether it holds `word` (a [`words`](Self::words) piece), in its own words or in
    /// what it continues.
    fn holds(&self, word: &str) -> bool {
        let piece = values::singular(word);
        self.says(word) || self.context.iter().any(|x| *x == piece || x == word)
    }

    /// Whether its own words hold `word` (a [`words`](Self::words) piece, or a word as
    /// written: an entity, "Leeds", is held as its piece "leed").
    fn says(&self, word: &str) -> bool {
        let piece = values::singular(word);
        self.words
            .iter()
            .flatten()
            .any(|x| *x == piece || x == word)
    }

    /// The content words within [`SUBJECT_WINDOW`] words of `v` (revision cues and value
    /// adjectives left out), lightly stemmed: what the statement says `v` is the value of.
    fn subject(&self, v: &Value) -> Vec<&str> {
        let lo = v.word.saturating_sub(SUBJECT_WINDOW);
        let hi = (v.word + SUBJECT_WINDOW + 1).min(self.words.len());
        self.words[lo..hi]
            .iter()
            .flatten()
            .filter(|w| {
                values::is_content_word(w)
                    && !REVISION_CUES.contains(&w.as_str())
                    && !VALUE_ADJECTIVES.contains(&w.as_str())
            })
            .map(|w| stem(w))
            .collect()
    }

    /// The words that qualify each occurrence of `head` (a query content word, singular)
    /// as a noun: the content words between a determiner and it, at most [`QUALIFIERS`]
    /// ("back gate" in "the back-gate code", "first" in "my first draft"; revision cues and
    /// value adjectives are not qualifiers). `None` when `head` does not occur; an
    /// occurrence without such a noun phrase ("the code", "prioritize buying") gives an
    /// empty set.
    fn qualifiers(&self, head: &str) -> Option<Vec<Vec<&str>>> {
        let flat: Vec<&str> = self.words.iter().flatten().map(String::as_str).collect();
        let found: Vec<Vec<&str>> = flat
            .iter()
            .enumerate()
            .filter(|(_, w)| **w == head)
            .map(|(i, _)| {
                let run: Vec<&str> = flat[..i]
                    .iter()
                    .rev()
                    .take(QUALIFIERS)
                    .take_while(|w| {
                        values::is_content_word(w)
                            && !REVISION_CUES.contains(w)
                            && !VALUE_ADJECTIVES.contains(w)
                    })
                    .copied()
                    .collect();
                let opened = i
                    .checked_sub(run.len() + 1)
                    .is_some_and(|d| DETERMINERS.contains(&flat[d]));
                if opened { run } else { Vec::new() }
            })
            .collect();
        (!found.is_empty()).then_some(found)
    }

    /// The other values within [`ANCHOR_WINDOW`] words of `v`.
    fn beside<'a>(&'a self, v: &'a Value) -> impl Iterator<Item = &'a Value> {
        self.values
            .iter()
            .filter(move |w| w != &v && w.word.abs_diff(v.word) <= ANCHOR_WINDOW)
    }
}

/// Whether `newer` revises `older`: same speaker, later, and it sets a value that `older`
/// states differently for the same thing (conditions 2–5 of the module documentation), or
/// restates one of its counts with another number, or gives another time of day for the
/// same appointment ([`reschedules`]).
/// A count with no noun ("now 165") compares with counts of a queried noun ("150 commits"),
/// and with another bare number near the same query words ("the locker code is 1234" →
/// "changed the locker code; it is now 4821").
pub fn revises(query: &Query, older: &Candidate, newer: &Candidate) -> bool {
    if exception(older, newer) {
        return false;
    }
    if fills_again(query, older, newer) {
        return true;
    }
    let same = same_speaker_later(older, newer);
    if !same && !announced_to_all(older, newer) {
        return false;
    }
    if same && newer.replaces(older) {
        return true;
    }
    let queried = |noun: &str| query.terms.iter().any(|t| t == noun);
    (same && (restates(query, older, newer) || reschedules(query, older, newer)))
        || newer.updates.iter().any(|u| {
            // A change of another owner's value ("Anya's lesson moved to Thursday" for
            // Ravi's lesson) revises nothing of this one.
            if another_owner(query, older, newer, u) {
                return false;
            }
            let same_kind = |v: &&Value| match (&u.kind, &v.kind) {
                (Kind::Count(None), Kind::Count(Some(noun))) => queried(noun),
                (Kind::Count(None), Kind::Count(None)) => true,
                (a, b) => a == b,
            };
            // A bare number changed from a number the older statement gives in a unit
            // ("storage plan 35 → 39" after "£35 a month") is a value of that kind.
            fn number(v: &Value) -> &str {
                v.value.split(' ').next().unwrap_or_default()
            }
            let restated = |v: &&Value| {
                u.kind == Kind::Count(None)
                    && newer
                        .origins
                        .iter()
                        .any(|o| o.kind == Kind::Count(None) && o.value == number(v))
            };
            let old: Vec<&Value> = older
                .values
                .iter()
                .filter(|v| same_kind(v) || restated(v))
                .collect();
            let other_origin = newer.origins.iter().filter(|o| same_kind(o)).any(|o| {
                !old.iter()
                    .any(|v| v.value == o.value || number(v) == o.value)
            });
            if old.is_empty()
                || other_origin
                || old
                    .iter()
                    .any(|v| v.value == u.value || number(v) == u.value)
            {
                return false;
            }
            if u.kind == Kind::Count(None)
                && old.iter().any(|v| matches!(v.kind, Kind::Count(Some(_))))
            {
                return true;
            }
            if query.asked.contains(&u.kind) {
                // The question asks for this kind of value; the two statements must still
                // be about the same thing: a content word near both values (or, below, a
                // shared query word or neighbouring value).
                let subject = newer.subject(u);
                let shared =
                    |w: &&str| subject.contains(w) && !older.bystander(w) && !newer.bystander(w);
                if old.iter().any(|v| older.subject(v).iter().any(shared)) {
                    return true;
                }
            }
            let u_anchors = newer.anchors(&query.content, u, newer.continues());
            old.iter().any(|v| {
                let v_anchors = older.anchors(&query.content, v, newer.continues());
                // A bare number says nothing of what it counts: the newer one must stand
                // near every query word the older one does (a "guest room count" is not
                // the "test case count"), unless it names that number as what it changes
                // ("is 12, not 10", "from 10 to 12"); typed values need one shared word.
                let changes_it = newer
                    .origins
                    .iter()
                    .any(|o| same_kind(&o) && (o.value == v.value || o.value == number(v)))
                    && !another_entity(query, &query.subject(), older, newer, u);
                let same_thing = if v.kind == Kind::Count(None) && !changes_it {
                    !v_anchors.is_empty() && v_anchors.iter().all(|a| u_anchors.contains(a))
                } else {
                    v_anchors.iter().any(|a| {
                        u_anchors.contains(a) && !older.bystander(a) && !newer.bystander(a)
                    })
                };
                same_thing
                    || newer.beside(u).any(|a| {
                        older
                            .beside(v)
                            .any(|b| a.kind == b.kind && a.value == b.value)
                    })
            })
        })
}

/// The entities `scan` names by form, lowercased: possessors ("Leo's", "the Hendersons'")
/// and words capitalised inside a sentence (not after a phrase break; values, months and
/// weekdays are not entities); and the possessors alone. Read by capitalisation, not from
/// the names among the identifiers: "Next.js" is an entity here and a code as a value
/// (reading entities from names alone let more technical turns revise each other:
/// BEAM-100K MRR −0.003, BEAM-500K −0.003).
fn entities(scan: &values::Scan<'_>) -> Entities {
    let valued: Vec<usize> = scan.values.iter().map(|v| v.word).collect();
    let (mut entities, mut owners, mut owned) = (Vec::new(), Vec::new(), Vec::new());
    for (i, raw) in scan.raw.iter().enumerate() {
        let word = &scan.words[i];
        let owner = ["'s", "’s"]
            .iter()
            .find_map(|p| word.strip_suffix(p))
            .or_else(|| {
                // "the Hendersons' gate": the apostrophe the split trimmed.
                let written = scan.tails[i];
                (written.starts_with(['\'', '’']) && word.ends_with('s')).then_some(word.as_str())
            })
            // "it's", "that's", "here's", "let's": a function word's or a verb's
            // contraction ([`crate::text::en::CONTRACTED_VERBS`]) owns nothing; nor does a
            // word whose "'s" is followed by no noun ("the invite's out", "the milk's gone",
            // "Sam's."; [`crate::text::en::PARTICLES`]), nor a time
            // ("tuesday's release", "today's build": when, not whose).
            .filter(|o| {
                !o.is_empty()
                    && o.chars().all(char::is_alphabetic)
                    && !REFERRING_PRONOUNS.contains(o)
                    && !crate::text::is_function_word(o)
                    && !crate::text::en::CONTRACTED_VERBS.contains(o)
                    && !scan
                        .words
                        .get(i + 1)
                        .is_some_and(|w| crate::text::en::PARTICLES.contains(&w.as_str()))
                    && !values::is_weekday(o)
                    && !values::is_month(o)
                    && !crate::text::en::RELATIVE_DAYS.contains(o)
                    && !scan.breaks[i]
                    && scan
                        .words
                        .get(i + 1)
                        .is_some_and(|w| !crate::text::is_function_word(w))
            });
        let inside = i > 0 && !scan.breaks[i - 1];
        // "100 Mbps": a capitalised word right after a number is its unit.
        let unit = i > 0 && scan.words[i - 1].starts_with(|c: char| c.is_ascii_digit());
        let named = inside
            && !unit
            && raw.starts_with(char::is_uppercase)
            && raw.chars().skip(1).any(char::is_lowercase)
            && !valued.contains(&i)
            && !values::is_month(word)
            && !values::is_weekday(word);
        if let Some(o) = owner {
            // What it owns: the noun phrase after it, to the end of the phrase or the
            // first function word.
            let things = (i + 1..scan.words.len())
                .take_while(|&j| j == i + 1 || !scan.breaks[j - 1])
                .map(|j| &scan.words[j])
                .take_while(|w| !crate::text::is_function_word(w))
                .take(QUALIFIERS + 1)
                .flat_map(|w| crate::text::tokens(w))
                .map(|w| values::singular(&w))
                .collect();
            owned.push((o.to_owned(), things));
            owners.push(o.to_owned());
            entities.push(o.to_owned());
        } else if named {
            entities.push(word.clone());
        }
    }
    for v in [&mut entities, &mut owners] {
        v.sort_unstable();
        v.dedup();
    }
    Entities {
        entities,
        owners,
        owned,
    }
}

/// What [`entities`] reads.
struct Entities {
    /// Possessors and words capitalised inside a sentence, lowercased, sorted.
    entities: Vec<String>,
    /// The possessors among them.
    owners: Vec<String>,
    /// Each possessor with the words of the noun phrase it owns, singular.
    owned: Vec<(String, Vec<String>)>,
}

/// Whether `candidate` gives what the question asks about to an owner the question does
/// not name: the question names whose it is ("How much is Radek's bike?", "the user's
/// car"), and the candidate puts a word of the question's subject in the noun phrase of
/// another possessor ("Ingeborg's bike is £90"). It is the value of another entity of the
/// same kind, not an answer, however many words it shares.
pub fn owned_by_another(query: &Query, candidate: &Candidate) -> bool {
    if query.owners.is_empty() {
        return false;
    }
    let subject = query.subject();
    candidate.owned.iter().any(|(owner, things)| {
        !query.owners.contains(owner)
            && !query.terms.contains(owner)
            && things.iter().any(|t| subject.contains(t))
    })
}

/// Whether `newer` is an exception to what `older` says recurs, not a change of it: it
/// confines itself to one current occasion ("only this week it's on Monday") where
/// `older` states a recurring time ("Thursday evenings") and `newer` none.
fn exception(older: &Candidate, newer: &Candidate) -> bool {
    older.recurring && newer.one_off && !newer.recurring
}

/// Whether `newer` fills again the slot the question asks about, with no revision cue: a
/// later statement, asserted ([`crate::text::statements::asserts`]) and not the
/// assistant's, gives another value of the kind the question asks for (of a kind both
/// statements hold, when the question does not say) next to a query word that stands
/// next to the older value too, and it is not about another entity: where it lacks a query
/// word the older one holds ("gymnastics moved to Thursdays" after "Maya's gymnastics is
/// on Tuesdays"), it names no entity of its own that neither the question nor the older
/// statement names ("Leo's gymnastics is on Thursdays"). Said by the same speaker or by
/// another participant correcting it.
pub fn fills_again(query: &Query, older: &Candidate, newer: &Candidate) -> bool {
    // Where the question asks for a name, the names sentences open with are slots too
    // ("Tomasz took over as build captain" after "Priyanka is build captain").
    if query.asked.contains(&Kind::Name)
        && (!older.openers.is_empty()
            || !newer.openers.is_empty()
            || (query.locative && (!older.places.is_empty() || !newer.places.is_empty())))
    {
        return fills_again(
            query,
            &older.opened(query.locative),
            &newer.opened(query.locative),
        );
    }
    // Another participant revises a value only by correcting it ("no, it's the 15th"): in
    // a conversation between friends each states values of their own life.
    let apart = newer.role != older.role
        || matches!((&older.speaker.1, &newer.speaker.1), (Some(a), Some(b)) if a != b);
    // Where the question asks for a clock time, a bare number is one said without its
    // minutes ("it's 9 on weeknights now" after "lights out at 9:30").
    let clock_asked = query.asked.contains(&Kind::Clock);
    let bare_clock = |a: &Value, b: &Value| {
        clock_asked
            && matches!(
                (&a.kind, &b.kind),
                (Kind::Count(None), Kind::Clock) | (Kind::Clock, Kind::Count(None))
            )
    };
    let same_value = |a: &Value, b: &Value| {
        if bare_clock(a, b) {
            let (bare, clock) = if a.kind == Kind::Clock {
                (b, a)
            } else {
                (a, b)
            };
            values::bare_hour_of(&bare.value, &clock.value)
        } else {
            compatible(&a.kind, &b.kind) && a.value == b.value
        }
    };
    if (newer.at, newer.id) <= (older.at, older.id)
        || exception(older, newer)
        || newer.role == Role::Assistant
        || !newer.asserts
        || (apart && !newer.corrects && !announced_to_all(older, newer))
    {
        return false;
    }
    // A statement sets a slot when it gives one value of its kind; a turn listing several
    // (an enumeration, a plan, a comparison) sets none of them (measured: without it the
    // rule moved long turns of many amounts, BEAM-500K MRR -0.006; docs/EXPERIMENTS.md).
    // A name is a value only where the question asks for one: a conversation names people
    // and things in every other turn.
    // A bare number answers "what time" ("drinks Friday at 6", "let's make it 7"); an
    // identifier answers "where" and "who" as a name does (a host, a room, a handle).
    let kind_asked = |k: &Kind| {
        query.asked.iter().any(|a| {
            compatible(a, k)
                || (*a == Kind::Clock && *k == Kind::Count(None))
                || (*a == Kind::Name && *k == Kind::Code)
                // "How long" asks a length as well as a span ("60 km").
                || (*a == Kind::Duration && matches!(k, Kind::Count(_)))
        }) || (query.asked.is_empty() && *k != Kind::Name)
    };
    // What the question itself names is not a value it asks for ("Brightline" in "who is
    // our account manager at Brightline").
    // A code is one word: the question names it when it holds its pieces in its order
    // ("ticket INC-123"), not when it uses words the code is made of ("where is the
    // team wiki" of "wiki.team").
    let free = |v: &Value| {
        let pieces: Vec<String> = crate::text::tokens(&v.value)
            .iter()
            .map(|w| values::singular(w))
            .collect();
        if v.kind == Kind::Code {
            return !query
                .terms
                .windows(pieces.len().max(1))
                .any(|w| w == pieces);
        }
        !pieces.iter().all(|w| query.terms.contains(w))
    };
    // One value of the kind, not counting what the question names, nor in the newer
    // statement the older one's name or code named again ("Tomas took over, Marta moved
    // on"). Quantities are all counted: a turn of several amounts that repeats one ("it
    // was supposed to be 15 guests but we ended up with 20") sets no slot (counting them
    // moved three BEAM-500K evidence turns down, MRR -0.0009). A name is held when the
    // older one's holds each of its words ("Olsen" of "Marta Olsen": a name after a comma
    // is read from its second word).
    let held = |v: &Value| {
        matches!(v.kind, Kind::Name | Kind::Code | Kind::Version)
            && older.slots.iter().any(|o| {
                compatible(&o.kind, &v.kind)
                    && (o.value == v.value
                        || (v.kind == Kind::Name
                            && v.value
                                .split(' ')
                                .all(|p| o.value.split(' ').any(|q| q == p))))
            })
    };
    let asked = |c: &Candidate, k: &Kind| {
        let of_kind: Vec<&Value> = c
            .slots
            .iter()
            .filter(|v| compatible(&v.kind, k) && free(v) && !(c.id == newer.id && held(v)))
            .collect();
        kind_asked(k) && c.schedules_as_one(&of_kind) == 1
    };
    // Among several values of its kind, the one a revision cue marks as what something
    // was changed to ("trimmed it to 5, 6 was overkill") sets the slot, when it is the only
    // one so marked.
    let marked = |u: &Value| {
        kind_asked(&u.kind)
            && newer.updates.iter().any(|x| x == u)
            && newer
                .updates
                .iter()
                .filter(|x| compatible(&x.kind, &u.kind))
                .count()
                == 1
            // A change "from" a value is read by the cue rule, which checks that value.
            && !newer.origins.iter().any(|o| compatible(&o.kind, &u.kind))
    };
    let subject = query.subject();
    newer
        .slots
        .iter()
        .zip(&newer.predicates)
        .filter(|(u, _)| {
            free(u)
                && (asked(newer, &u.kind) || marked(u))
                && !newer.negated.get(u.word).copied().unwrap_or(false)
                && !newer.deliberated.get(u.word).copied().unwrap_or(false)
                // "raised by 20%" gives a difference; "replaced by #ship-it" a value.
                && !(u.word > 0
                    && !matches!(u.kind, Kind::Code | Kind::Name | Kind::Version)
                    && newer.words[u.word - 1].first().is_some_and(|w| w == "by"))
        })
        .any(|(u, pu)| {
            if older.slots.iter().any(|v| same_value(v, u)) {
                return false;
            }
            let near_new = newer.anchors(&subject, u, newer.continues());
            !near_new.is_empty()
                && older
                    .slots
                    .iter()
                    .zip(&older.predicates)
                    .filter(|(v, _)| {
                        free(v)
                            && (compatible(&v.kind, &u.kind) || bare_clock(v, u))
                            && asked(older, &v.kind)
                    })
                    // "secured 3 interviews" and "declined 5 interviews" count two things.
                    .filter(|(v, pv)| {
                        !matches!(
                            (&v.kind, &u.kind),
                            (Kind::Count(Some(_)), Kind::Count(Some(_)))
                        ) || match (pv, pu) {
                            (Some(a), Some(b)) => a == b,
                            _ => true,
                        }
                    })
                    // A person or place both name is who or where, not what: the slot is
                    // told by a shared word that names no entity but an owner ("rearranging
                    // with Stacy on September 22" does not revise "painting with Stacy on
                    // April 4"; "Dad's 60th" is Dad's).
                    .any(|(v, _)| {
                        older
                            .anchors(&subject, v, newer.continues())
                            .iter()
                            .any(|a| {
                                near_new.contains(a) && !older.bystander(a) && !newer.bystander(a)
                            })
                    })
                && !another_entity(query, &subject, older, newer, u)
        })
}

/// Whether values of kinds `a` and `b` can fill one slot: the same kind, two counts, or a
/// bare number and an amount ("3,580" after "£3,850").
fn compatible(a: &Kind, b: &Kind) -> bool {
    match (a, b) {
        (Kind::Count(_), Kind::Count(_)) => true,
        (Kind::Count(None), Kind::Money) | (Kind::Money, Kind::Count(None)) => true,
        (a, b) => a == b,
    }
}

/// Where each word of a text stands: its clause (a new one after `,;:.!?` or a dash
/// standing free) and whether that clause asks (ends with `?`: "what should I bring on
/// March 25?" asks, "I've got an inspection on March 25, is there anything to do?" states
/// the date and asks about something else).
struct Layout {
    clause: Vec<usize>,
    asks: Vec<bool>,
}

impl Layout {
    fn of(scan: &values::Scan<'_>) -> Self {
        let mut clause = Vec::with_capacity(scan.tails.len());
        let mut asking = Vec::new();
        for (i, tail) in scan.tails.iter().enumerate() {
            clause.push(asking.len());
            if tail.contains([',', ';', ':', '.', '!', '?'])
                || scan.dashes[i]
                || i + 1 == scan.tails.len()
            {
                asking.push(tail.contains('?'));
            }
        }
        let asks = clause.iter().map(|&c| asking[c]).collect();
        Self { clause, asks }
    }
}

/// Whether `words` state a recurring time (a weekday or a period in the plural, "every"
/// or "each" before a period or a weekday) and whether they confine what they say to one
/// current occasion (a relative day, or "this" or "next" before a period, unless a span
/// relation or "as of" before it says that it starts then: "from this week").
fn occasions(words: &[String]) -> (bool, bool) {
    use crate::text::en::{CALENDAR_PERIODS, RELATIVE_DAYS, SPAN_RELATIONS};
    let period = |w: &str| CALENDAR_PERIODS.contains(&w);
    let plural_period = |w: &str| w.strip_suffix('s').is_some_and(period);
    let recurring = words.iter().enumerate().any(|(i, w)| {
        (values::is_weekday(w) && w.ends_with('s'))
            || plural_period(w)
            || (matches!(w.as_str(), "every" | "each")
                && words
                    .get(i + 1)
                    .is_some_and(|n| period(n) || values::is_weekday(n)))
    });
    let starts = |i: usize| {
        i.checked_sub(1).is_some_and(|j| {
            SPAN_RELATIONS.contains(&words[j].as_str())
                || (words[j] == "of" && j > 0 && words[j - 1] == "as")
        })
    };
    let one_off = words.iter().enumerate().any(|(i, w)| {
        let placed =
            matches!(w.as_str(), "this" | "next") && words.get(i + 1).is_some_and(|n| period(n));
        (placed || RELATIVE_DAYS.contains(&w.as_str())) && !starts(i)
    });
    (recurring, one_off)
}

/// Whether `scan` predicates one of its `slots` of a subject it names in the value's own
/// clause: before the value, a copula ([`COPULAS`]) or a word ending in a label's colon,
/// with a word of content before the copula, or the labelling word one itself
/// ([`Candidate::predicated`]).
fn predicated(scan: &values::Scan<'_>, slots: &[Value]) -> bool {
    slots.iter().any(|v| {
        // The clause before the value, nearest word first.
        let clause: Vec<usize> = (0..v.word)
            .rev()
            .take_while(|&i| i + 1 == v.word || !scan.breaks[i] || scan.tails[i].contains(':'))
            .collect();
        clause.iter().enumerate().any(|(n, &link)| {
            let copula = COPULAS.contains(&scan.words[link].as_str());
            let labelled = scan.tails[link].contains(':');
            (copula || labelled)
                && clause[n + usize::from(copula)..]
                    .iter()
                    .take_while(|&&i| i == link || !scan.breaks[i])
                    .any(|&i| values::is_content_word(&scan.words[i]))
        })
    })
}

/// The values a change written as notation changes from and to, and whether one is a
/// substitution: two values with an arrow standing between them ("35 → 39"), and the
/// parts of a word `s/X/Y/` ("s/14/30/"), read as bare numbers when they are numbers and
/// as codes otherwise.
fn notation(scan: &values::Scan<'_>) -> (Vec<Value>, Vec<Value>, bool) {
    let (mut from, mut to) = (Vec::new(), Vec::new());
    let at = |w: usize| scan.values.iter().find(|v| v.word == w);
    for (i, &arrow) in scan.arrows.iter().enumerate() {
        if arrow && let (Some(a), Some(b)) = (at(i), at(i + 1)) {
            from.push(a.clone());
            to.push(b.clone());
        }
    }
    // "12 (was 10)": a bracket that opens with a past copula right after a value gives
    // what that value was before, a value of its kind.
    let past_copula = |w: &str| COPULAS.contains(&w) && PAST_AUXILIARIES.contains(&w);
    for (i, &open) in scan.bracketed.iter().enumerate() {
        if open
            && past_copula(&scan.words[i])
            && let (Some(now), Some(was)) = (i.checked_sub(1).and_then(at), at(i + 1))
            && compatible(&now.kind, &was.kind)
        {
            from.push(was.clone());
            to.push(now.clone());
        }
    }
    let mut substitutes = false;
    for (i, raw) in scan.raw.iter().enumerate() {
        let Some(rest) = raw.strip_prefix("s/").or_else(|| raw.strip_prefix("S/")) else {
            continue;
        };
        let mut parts = rest.split('/');
        if let (Some(x), Some(y)) = (parts.next(), parts.next())
            && !x.is_empty()
            && !y.is_empty()
        {
            let value = |p: &str| {
                let number = values::values(p)
                    .into_iter()
                    .next()
                    .filter(|v| v.kind == Kind::Count(None));
                Value {
                    kind: if number.is_some() {
                        Kind::Count(None)
                    } else if values::is_version(p) {
                        Kind::Version
                    } else {
                        Kind::Code
                    },
                    value: number.map_or_else(|| p.to_lowercase(), |n| n.value),
                    word: i,
                }
            };
            from.push(value(x));
            to.push(value(y));
            substitutes = true;
        }
    }
    (from, to, substitutes)
}

/// Whether a clause of `scan` gives one of `slots` with its subject left out, as chat
/// does: it opens with a past form ("switched to Orbitel", "rebooked for the 21st") and holds
/// nothing else but function words and that value, so it names nothing the value could be
/// of. A clause that asks is not one.
fn elides_subject(scan: &values::Scan<'_>, layout: &Layout, slots: &[Value]) -> bool {
    slots.iter().any(|v| {
        let own = layout.clause[v.word];
        let words: Vec<usize> = (0..scan.words.len())
            .filter(|&i| layout.clause[i] == own)
            .collect();
        let valued = |i: usize| slots.iter().any(|s| s.word == i) || i >= v.word;
        let Some((&first, rest)) = words.split_first() else {
            return false;
        };
        let verb = &scan.words[first];
        !layout.asks[v.word]
            && first < v.word
            && verb.len() > 4
            && verb.ends_with("ed")
            && verb.chars().all(char::is_alphabetic)
            && rest
                .iter()
                .all(|&i| valued(i) || crate::text::is_function_word(&scan.words[i]))
    })
}

/// Whether the clause of `scan` holding one of `slots` (with the clause before it, when
/// the value's own holds no content word: "changed it to the 11th, 5:20") refers back by
/// a pronoun ([`REFERRING_PRONOUNS`]; "this" and "that" only where no content word follows
/// them) and the value's clause does not ask ("remember when it was £5.99?").
fn refers_back(scan: &values::Scan<'_>, layout: &Layout, slots: &[Value]) -> bool {
    let clause = &layout.clause;
    let pronoun = |i: usize| {
        scan.words[i]
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .is_some_and(|p| {
                REFERRING_PRONOUNS.contains(&p)
                    && (!matches!(p, "this" | "that")
                        || !scan.words.get(i + 1).is_some_and(|w| {
                            clause[i + 1] == clause[i] && values::is_content_word(w)
                        }))
            })
    };
    slots.iter().any(|v| {
        let own = clause[v.word];
        let bare = !(0..scan.words.len())
            .any(|i| clause[i] == own && values::is_content_word(&scan.words[i]));
        let first = if bare { own.saturating_sub(1) } else { own };
        !layout.asks[v.word]
            && (0..scan.words.len()).any(|i| (first..=own).contains(&clause[i]) && pronoun(i))
    })
}

/// The statements among `later` (the turns after `antecedent` in its conversation, in
/// order, read only as far as needed) that revise it one after the other: each revises the one before it
/// ([`revises`]), read as continuing it ([`Candidate::continuing`]: "make that 5 kg"
/// after "need 3 kg of flour" is about the flour). Following stops at a statement that
/// gives a value of a kind the last one holds about something else of its own, or at one
/// that names an entity neither the last one nor the question names and could itself hold
/// such a value, giving one or asking ("How old is Luna?" between "Max is 8 years old" and
/// "she is 5"): the conversation moved on. An aside that names something else and holds
/// no such value ("need to dig out last year's P60") leaves the pronoun to the value's
/// holder. A statement that names what it speaks of is followed only when
/// `answers` says it is an answer already (retrieval found it on its own words); one that
/// does not is what following is for. Returns indexes into `later`, each with the
/// statement as read.
pub fn follow(
    query: &Query,
    antecedent: &Candidate,
    later: impl IntoIterator<Item = Candidate>,
    answers: impl Fn(u64) -> bool,
) -> Vec<(usize, Candidate)> {
    let mut chain = Vec::new();
    let mut head = antecedent.clone();
    let mut head_at = None;
    for (i, mut t) in later.into_iter().enumerate() {
        t.adjacent = head_at.map_or(i == 0, |h| i == h + 1);
        let t = t.continuing(&head);
        if (t.elliptical || !t.context.is_empty() || answers(t.id))
            && same_subject(query, &head, &t)
            && revises(query, &head, &t)
        {
            head = t.clone();
            head_at = Some(i);
            chain.push((i, t));
        } else {
            let rival = t
                .slots
                .iter()
                .any(|u| head.slots.iter().any(|v| compatible(&u.kind, &v.kind)));
            // Something else named in between takes over what a later pronoun refers to
            // only where it could hold such a value: it gives one, or it asks about it.
            let moved_on = (rival || !t.asserts)
                && t.entities
                    .iter()
                    .any(|e| !head.holds(e) && !query.terms.contains(e));
            if (!t.elliptical && rival) || moved_on {
                break;
            }
        }
    }
    chain
}

/// Whether `newer` names a possessor ("Elif's car insurance") that neither `older`, the
/// question nor its own `value` names.
fn another_owner(query: &Query, older: &Candidate, newer: &Candidate, value: &Value) -> bool {
    newer.owners.iter().any(|o| {
        !(query.terms.iter().any(|t| t == o)
            || older.holds(o)
            || value.value.split(' ').any(|v| v == o))
    })
}

/// Whether `newer` is about another entity than the one `older` and the question name: it
/// names a possessor neither of them names ("Elif's car insurance" for "my car
/// insurance"), or, lacking a query word `older` holds, it names an entity of its own or
/// qualifies a query word they share with a word of its own ("billing service" where the
/// question and `older` say "auth service").
fn another_entity(
    query: &Query,
    subject: &[String],
    older: &Candidate,
    newer: &Candidate,
    value: &Value,
) -> bool {
    let holds = |c: &Candidate, w: &str| c.holds(w);
    let named = |w: &str| {
        query.terms.iter().any(|t| t == w)
            || holds(older, w)
            || value.value.split(' ').any(|v| v == w)
    };
    if another_owner(query, older, newer, value) {
        return true;
    }
    // In its own words: a statement continuing another names no more of the subject for it
    // ("Thabo lands at 11:40 that day" after "we land in Cape Town at 06:15").
    let lacks_one = subject.iter().any(|w| holds(older, w) && !newer.says(w));
    if !lacks_one {
        return false;
    }
    if newer.entities.iter().any(|e| !named(e)) {
        return true;
    }
    let flat: Vec<&str> = newer.words.iter().flatten().map(String::as_str).collect();
    // A weekday is a value, not a qualifier ("as of Monday pickup is 2:50").
    let own = |w: &str| {
        values::is_content_word(w)
            && !DETERMINERS.contains(&w)
            && !values::is_weekday(w)
            && !named(w)
            && !REVISION_CUES.contains(&w)
            && !VALUE_ADJECTIVES.contains(&w)
    };
    // Adjacent pieces, within a word or across words with no phrase break between them
    // ("effective immediately, manager approval": "immediately" does not qualify it).
    // A past form opening its clause is the clause's verb, its subject left out as chat
    // does ("scaled prod API to 6 replicas", "moved standup to 10"), not a qualifier.
    let pairs: Vec<(&str, &str)> = newer
        .words
        .iter()
        .enumerate()
        .flat_map(|(i, pieces)| {
            let opens = i == 0 || newer.breaks[i - 1];
            let verb = opens && pieces.len() == 1 && pieces[0].ends_with("ed");
            let inside = pieces.windows(2).map(|p| (p[0].as_str(), p[1].as_str()));
            let across = pieces
                .last()
                .zip(newer.words.get(i + 1).and_then(|n| n.first()))
                .filter(|_| !newer.breaks[i] && !verb)
                .map(|(a, b)| (a.as_str(), b.as_str()));
            inside.chain(across).collect::<Vec<_>>()
        })
        .collect();
    let shared = |w: &str| subject.iter().any(|s| s == w && holds(older, s));
    // "the other team", "another branch"; "billing service" for "auth service". (A word
    // after the shared one is not read: it is as often a verb, "season ticket *went* up",
    // as another head, "gym *bag*"; measured on the understanding corpus, it lost four
    // changes to save none.)
    // "her seat" for "my seat": a possessive of another person before the shared word.
    // "every other week" says how often, not which one.
    flat.iter()
        .enumerate()
        .any(|(i, w)| ALTERITY.contains(w) && !(i > 0 && flat[i - 1] == "every"))
        || pairs
            .iter()
            .any(|&(a, b)| shared(b) && (own(a) || OTHERS_POSSESSIVES.contains(&a)))
}

/// Whether two statements are about the same subject as far as the question can tell:
/// not when a query content word both name is qualified in each, every time, and neither
/// statement uses any of the other's qualifiers anywhere ("the back-gate code is now 5521"
/// does not revise "the garage code is 1180": the same attribute of another entity),
/// unless the question itself names the newer statement's qualifier and not the older's
/// (asked about "my final draft", the final draft answers where the first one does not).
/// An unqualified mention ("the code is now 5521") is compatible with any qualifier, and
/// so is a qualifier the other statement names elsewhere ("the gym membership fee" and
/// "the monthly fee for my gym membership").
pub fn same_subject(query: &Query, older: &Candidate, newer: &Candidate) -> bool {
    query.content.iter().all(|head| {
        let (Some(old), Some(new)) = (older.qualifiers(head), newer.qualifiers(head)) else {
            return true;
        };
        let qualified = |all: &[Vec<&str>]| all.iter().all(|q| !q.is_empty());
        if !(qualified(&old) && qualified(&new)) {
            return true;
        }
        let uses = |c: &Candidate, w: &str| c.words.iter().flatten().any(|x| x == w);
        let asked = |w: &&str| query.terms.iter().any(|t| t == w);
        old.iter().flatten().any(|w| uses(newer, w))
            || new.iter().flatten().any(|w| uses(older, w))
            || (new.iter().flatten().any(asked) && !old.iter().flatten().any(asked))
    })
}

/// Whether `newer`, another participant's later turn, announces a change of something
/// neither turn speaks of as anyone's own ("standup moved to 10" after "Standup is at
/// 9:30"): it asserts, a revision cue marks one of its values, and a cue of its is a past
/// form, something done to the thing ("moved", "changed"; "now 3 dogs" may be the
/// speaker's own). In a conversation between friends each states values of their own
/// life, and says so ("I", "my"). Never the assistant's.
fn announced_to_all(older: &Candidate, newer: &Candidate) -> bool {
    let own = |c: &Candidate| {
        crate::text::en::FIRST_PERSON
            .iter()
            .any(|w| c.words.iter().flatten().any(|x| x == w))
    };
    (newer.at, newer.id) > (older.at, older.id)
        && newer.role == older.role
        && newer.role != Role::Assistant
        && newer.asserts
        && !newer.updates.is_empty()
        && newer
            .words
            .iter()
            .flatten()
            .any(|w| REVISION_CUES.contains(&w.as_str()) && w.ends_with("ed"))
        && !own(older)
        && !own(newer)
}

/// Whether `newer` is later than `older` and said by the same speaker (condition 1).
fn same_speaker_later(older: &Candidate, newer: &Candidate) -> bool {
    // Leading names are compared only when both events have one: "Update: ..." after a
    // plain sentence is the same speaker as far as anyone can tell.
    let named_apart = matches!((&older.speaker.1, &newer.speaker.1), (Some(a), Some(b)) if a != b);
    (newer.at, newer.id) > (older.at, older.id)
        && newer.role == older.role
        && newer.speaker.0 == older.speaker.0
        && !named_apart
}

/// Whether `newer` restates a count of a queried noun that `older` gave, with the same
/// predicate and a different number, and `older` never gave the new number ("I secured 3
/// interviews" → "I secured 5 interviews"): no revision cue is needed when the statement is
/// repeated word for word but for the number.
fn restates(query: &Query, older: &Candidate, newer: &Candidate) -> bool {
    newer.values.iter().zip(&newer.predicates).any(|(u, pu)| {
        let (Kind::Count(Some(noun)), Some(pu)) = (&u.kind, pu) else {
            return false;
        };
        query.terms.iter().any(|t| t == noun)
            && !older
                .values
                .iter()
                .any(|v| v.kind == u.kind && v.value == u.value)
            && older
                .values
                .iter()
                .zip(&older.predicates)
                .any(|(v, pv)| v.kind == u.kind && pv.as_ref() == Some(pu))
    })
}

/// Whether `newer` restates a typed value of `older` with another value, cue or not: an
/// amount, a percentage, a duration or a fraction (not a date or a time of day: one
/// subject has many of those, a start and a deadline), at least [`RESTATE_ANCHORS`] query
/// content words stand near both values, and `older` never gave the new value ("my rent is
/// $1,200 for the flat on Elm Street" → "the Elm Street flat rent is $1,350 for me").
fn restates_typed(query: &Query, older: &Candidate, newer: &Candidate) -> bool {
    newer.values.iter().any(|u| {
        if matches!(u.kind, Kind::Count(_) | Kind::Date | Kind::Clock)
            || older
                .values
                .iter()
                .any(|v| v.kind == u.kind && v.value == u.value)
        {
            return false;
        }
        let u_anchors = newer.anchors(&query.content, u, false);
        u_anchors.len() >= RESTATE_ANCHORS
            && older.values.iter().filter(|v| v.kind == u.kind).any(|v| {
                older
                    .anchors(&query.content, v, false)
                    .iter()
                    .filter(|a| u_anchors.contains(a))
                    .count()
                    >= RESTATE_ANCHORS
            })
    })
}

/// Whether `newer` gives another time of day for the same day and the same thing as
/// `older`, cue or not, when the question asks for a time of day: both clock values stand
/// next to the same day ("next Saturday at 3 PM" → "free at 4 PM next Saturday"), and a
/// query content word other than the day stands near both (the same appointment, not
/// another one that day).
fn reschedules(query: &Query, older: &Candidate, newer: &Candidate) -> bool {
    if !query.asked.contains(&Kind::Clock) {
        return false;
    }
    // What the time is for: the query's content words but the day and the words that ask
    // for the value ("what *time*").
    let about: Vec<&str> = query
        .content
        .iter()
        .map(String::as_str)
        .filter(|w| {
            !(values::is_weekday(w)
                || values::is_month(w)
                || PERIOD_PLACERS.contains(w)
                || ASKING_WORDS.iter().any(|(_, asks)| asks.contains(w)))
        })
        .map(stem)
        .collect();
    fn clocks(c: &Candidate) -> impl Iterator<Item = &Value> {
        c.values.iter().filter(|v| v.kind == Kind::Clock)
    }
    clocks(newer).any(|u| {
        if clocks(older).any(|v| v.value == u.value) {
            return false;
        }
        let subject_u = newer.subject(u);
        clocks(older).any(|v| {
            let same_day = older.beside(v).any(|d| {
                d.kind == Kind::Date
                    && newer
                        .beside(u)
                        .any(|e| e.kind == Kind::Date && e.value == d.value)
            });
            same_day && {
                let subject_v = older.subject(v);
                about
                    .iter()
                    .any(|w| subject_u.contains(w) && subject_v.contains(w))
            }
        })
    })
}

/// Reorders `ranked` (best first) in place: each candidate that [`revises`] a higher-ranked
/// one with at least `ratio` of its evidence moves directly above the highest such one.
/// With a horizon ([`Query::valid_until`]) a statement made at or after it revises nothing
/// made before it, and a statement made before it that such a later one revises moves above
/// that one: the value valid at the time asked about comes first. Two statements both made
/// after the horizon are ordered as without one (the time named is not when either held:
/// "is the conference still in January?" asks about January's conference, not about what
/// was said then). Returns `(moved, superseded)` id pairs,
/// for receipts.
pub fn reorder(query: &Query, ranked: &mut Vec<Candidate>, ratio: f64) -> Vec<(u64, u64)> {
    let mut moves = Vec::new();
    for j in 1..ranked.len() {
        let target = (0..j).find(|&i| {
            let (older, newer) = (&ranked[i], &ranked[j]);
            if query.pins(older, newer)
                || query.horizon.is_some_and(|h| older.at < h && newer.at >= h)
                || !same_subject(query, older, newer)
            {
                return false;
            }
            (newer.evidence >= ratio * older.evidence && revises(query, older, newer))
                || (newer.evidence >= RESTATE_RATIO * older.evidence
                    && same_speaker_later(older, newer)
                    && restates_typed(query, older, newer))
        });
        if let Some(i) = target {
            moves.push((ranked[j].id, ranked[i].id));
            let item = ranked.remove(j);
            ranked.insert(i, item);
        }
    }
    // The time the question asks about: a value stated before its end that a later
    // statement revises was the value valid then, and goes above that later statement.
    if let Some(horizon) = query.horizon {
        for j in 1..ranked.len() {
            if ranked[j].at >= horizon {
                continue;
            }
            let target = (0..j).find(|&i| {
                let (valid, later) = (&ranked[j], &ranked[i]);
                later.at >= horizon
                    && !query.pins(later, valid)
                    && same_subject(query, valid, later)
                    && revises(query, valid, later)
            });
            if let Some(i) = target {
                moves.push((ranked[j].id, ranked[i].id));
                let item = ranked.remove(j);
                ranked.insert(i, item);
            }
        }
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(q: &str) -> Query {
        Query::new(q, &crate::text::tokens(q))
    }

    fn cand(id: u64, text: &str, evidence: f64) -> Candidate {
        Candidate::new(id, Role::User, None, text, evidence)
    }

    /// The values a statement says something was changed to.
    fn updates_of(text: &str) -> Vec<String> {
        cand(1, text, 1.0)
            .updates()
            .iter()
            .map(|v| v.value.clone())
            .collect()
    }

    fn ids(ranked: &[Candidate]) -> Vec<u64> {
        ranked.iter().map(|c| c.id).collect()
    }

    #[test]
    fn an_update_statement_moves_above_the_value_it_changes() {
        let q = query("which sprint deadline did I set");
        let mut ranked = vec![
            cand(1, "my first sprint deadline is April 1, 2024", 1.0),
            cand(7, "lunch was great", 0.95),
            cand(9, "I moved the sprint deadline to April 5, 2024", 0.5),
        ];
        let moves = reorder(&q, &mut ranked, 0.4);
        assert_eq!(moves, [(9, 1)]);
        assert_eq!(ids(&ranked), [9, 1, 7]);
    }

    #[test]
    fn a_correction_revises_and_what_it_corrects_away_is_not_its_value() {
        let q = query("when is the budget review meeting");
        let mut ranked = vec![
            cand(1, "The budget review meeting is on Wednesday at 2 PM.", 1.0),
            cand(
                2,
                "Actually, the budget review is on Thursday, not Wednesday.",
                0.5,
            ),
        ];
        assert_eq!(reorder(&q, &mut ranked, 0.4), [(2, 1)]);
        // Not a correction by its form: no revision.
        let mut ranked = vec![
            cand(1, "The budget review meeting is on Wednesday at 2 PM.", 1.0),
            cand(
                2,
                "The budget review is on Thursday for the other team.",
                0.5,
            ),
        ];
        assert!(reorder(&q, &mut ranked, 0.4).is_empty());
        // The value corrected away is an origin, never an update.
        let c = cand(
            3,
            "Actually, the review is on Thursday, not Wednesday.",
            1.0,
        );
        assert_eq!(
            c.updates()
                .iter()
                .map(|v| v.value.as_str())
                .collect::<Vec<_>>(),
            ["thu"]
        );
    }

    #[test]
    fn a_cue_sets_the_value_after_to_anywhere_in_its_clause() {
        let updates = updates_of;
        assert!(
            updates("I extended my rest day on June 6 to two full days to recover")
                .contains(&"2 day".to_owned())
        );
        // Another clause: its "to" is not what the cue changed.
        assert!(
            !updates("I extended my rest day on June 6, then drove to 3 markets")
                .iter()
                .any(|v| v == "3")
        );
        // Past the clause span, a "to" is something else too.
        assert!(
            !updates(
                "I extended the lease on the flat above the bakery near the old station and \
                 walked to 3 markets"
            )
            .iter()
            .any(|v| v == "3")
        );
    }

    #[test]
    fn a_horizon_keeps_the_value_valid_then_first() {
        let q = query("what was the rent");
        let valid = || cand(1, "The rent is 1,200 dollars a month.", 1.0).at(100);
        let later = || cand(2, "The rent was raised to 1,350 dollars a month.", 1.0).at(300);
        // Without a time the later value comes first, wherever it ranked.
        let mut ranked = vec![valid(), later()];
        assert_eq!(reorder(&q, &mut ranked, 0.4), [(2, 1)]);
        // Asked about a time between the two, the earlier value stays first ...
        let before = query("what was the rent").valid_until(Some(200));
        let mut ranked = vec![valid(), later()];
        assert!(reorder(&before, &mut ranked, 0.4).is_empty());
        assert_eq!(ids(&ranked), [1, 2]);
        // ... and moves above the later one that fusion ranked higher.
        let mut ranked = vec![later(), valid()];
        assert_eq!(reorder(&before, &mut ranked, 0.4), [(1, 2)]);
        assert_eq!(ids(&ranked), [1, 2]);
        // Asked about a time after both, the later value is the one valid then.
        let after = query("what was the rent").valid_until(Some(400));
        let mut ranked = vec![valid(), later()];
        assert_eq!(reorder(&after, &mut ranked, 0.4), [(2, 1)]);
        // Asked about a time before both, the horizon says nothing of them.
        let earlier = query("what was the rent").valid_until(Some(50));
        let mut ranked = vec![valid(), later()];
        assert_eq!(reorder(&earlier, &mut ranked, 0.4), [(2, 1)]);
    }

    #[test]
    fn every_condition_is_required() {
        let q = query("which sprint deadline did I set");
        let older = cand(5, "my sprint deadline is April 1", 1.0);
        let revise = |newer: &Candidate| revises(&q, &older, newer);
        assert!(revise(&cand(
            9,
            "I moved the sprint deadline to April 5",
            1.0
        )));
        // Same value restated.
        assert!(!revise(&cand(
            9,
            "I updated the sprint deadline: April 1",
            1.0
        )));
        // No revision cue: a later statement of another value still revises ...
        assert!(revise(&cand(9, "the sprint deadline April 5 fits", 1.0)));
        // ... but not a hypothetical, a question or a denial.
        assert!(!revise(&cand(
            9,
            "if the sprint deadline were April 5 it would fit",
            1.0
        )));
        assert!(!revise(&cand(9, "is the sprint deadline April 5?", 1.0)));
        assert!(!revise(&cand(
            9,
            "the sprint deadline is not moving to April 5",
            1.0
        )));
        // Another entity of the same kind.
        assert!(!revise(&cand(
            9,
            "the other team's sprint deadline is April 5",
            1.0
        )));
        assert!(!revise(&cand(9, "Ana's sprint deadline is April 5", 1.0)));
        // Another speaker.
        let assistant = Candidate::new(
            9,
            Role::Assistant,
            None,
            "moved the sprint deadline to April 5",
            1.0,
        );
        assert!(!revise(&assistant));
        // Older, not newer.
        assert!(!revise(&cand(
            2,
            "I moved the sprint deadline to April 5",
            1.0
        )));
        // No value of that kind.
        assert!(!revise(&cand(9, "I moved the sprint deadline again", 1.0)));
        // A date of something else: no shared query word, no shared neighbour.
        assert!(!revise(&cand(9, "lunch was moved to April 5", 1.0)));
        // A change from a value the older event never stated changes something else.
        assert!(!revise(&cand(
            9,
            "I moved the sprint deadline from April 3 to April 5",
            1.0
        )));
        assert!(revise(&cand(
            9,
            "I moved the sprint deadline from April 1 to April 5",
            1.0
        )));
    }

    #[test]
    fn a_new_value_of_something_else_does_not_revise() {
        let cases = [
            (
                "what time is the standup",
                "the standup is at 9 AM",
                "I rescheduled the dentist to 4 PM",
            ),
            (
                "when is my dentist appointment",
                "my dentist appointment is on May 3",
                "I moved my haircut to May 10",
            ),
            (
                "what is my monthly budget for books",
                "my monthly budget for books is $50",
                "my rent increased to $1,400",
            ),
        ];
        for (q, older, newer) in cases {
            let mut ranked = vec![cand(1, older, 1.0), cand(5, newer, 0.9)];
            assert!(
                reorder(&query(q), &mut ranked, 0.2).is_empty(),
                "{newer:?} must not supersede {older:?} for {q:?}"
            );
            assert_eq!(ids(&ranked), [1, 5]);
        }
        // The same subject with a new value does.
        let mut ranked = vec![
            cand(1, "the standup is at 9 AM", 1.0),
            cand(5, "we moved the standup to 10 AM", 0.9),
        ];
        assert_eq!(
            reorder(&query("what time is the standup"), &mut ranked, 0.2),
            [(5, 1)]
        );
    }

    #[test]
    fn a_code_changed_to_a_new_number_revises() {
        let mut ranked = vec![
            cand(1, "the locker code is 1234", 1.0),
            cand(5, "Sam changed the locker code; it is now 4821", 0.8),
        ];
        assert_eq!(
            reorder(&query("what is the locker code"), &mut ranked, 0.2),
            [(5, 1)]
        );
    }

    #[test]
    fn among_several_values_the_one_a_cue_marks_sets_the_slot() {
        // Written for this test: the later turn names the old number too.
        let mut ranked = vec![
            cand(1, "the pool lane fee is £4", 1.0),
            cand(
                5,
                "they raised the pool lane fee to £6, £4 was a bargain",
                0.8,
            ),
        ];
        assert_eq!(
            reorder(&query("how much is the pool lane fee"), &mut ranked, 0.2),
            [(5, 1)]
        );
    }

    #[test]
    fn a_name_the_question_gives_is_not_one_of_the_values_of_the_slot() {
        // Written for this test: "Hollis" is named by the question, so the older turn
        // states one name of the kind asked, not two.
        let mut ranked = vec![
            cand(1, "Our landlord at Hollis Estates is Marta Quinn.", 1.0),
            cand(
                5,
                "Hollis Estates sold the block, our landlord is now Ben Ortiz.",
                0.8,
            ),
        ];
        assert_eq!(
            reorder(
                &query("Who is our landlord at Hollis Estates?"),
                &mut ranked,
                0.2
            ),
            [(5, 1)]
        );
    }

    #[test]
    fn a_new_value_of_another_entity_with_the_same_attribute_does_not_revise() {
        for q in [
            "what is the code",
            "what is the garage code",
            "garage code?",
        ] {
            let mut ranked = vec![
                cand(1, "the garage code is 1180", 1.0),
                cand(5, "The back-gate code is now 5521", 0.9),
            ];
            assert!(reorder(&query(q), &mut ranked, 0.0).is_empty(), "{q}");
        }
        // The same entity still revises.
        for newer in [
            "The garage code is now 5521",
            "I changed the garage code to 5521",
        ] {
            let mut ranked = vec![cand(1, "the garage code is 1180", 1.0), cand(5, newer, 0.9)];
            assert_eq!(
                reorder(&query("what is the garage code"), &mut ranked, 0.0),
                [(5, 1)],
                "{newer}"
            );
        }
    }

    #[test]
    fn a_change_worded_as_a_move_revises() {
        let mut ranked = vec![
            cand(1, "The stand-up is at 9:15 every morning.", 1.0),
            cand(
                6,
                "Sofia moved the stand-up; from now on it is at 10:30",
                0.7,
            ),
        ];
        assert_eq!(
            reorder(&query("what time is the stand-up?"), &mut ranked, 0.0),
            [(6, 1)]
        );
    }

    #[test]
    fn a_value_the_question_names_keeps_its_statement_in_place() {
        let ranked = || {
            vec![
                cand(1, "my first sprint deadline is April 1, 2024", 1.0),
                cand(9, "I moved the sprint deadline to April 5, 2024", 0.5),
            ]
        };
        // Not named: the update moves up.
        let mut r = ranked();
        assert_eq!(
            reorder(&query("which sprint deadline did I set"), &mut r, 0.4),
            [(9, 1)]
        );
        // The question names the older value: it asks about that statement.
        let mut r = ranked();
        assert!(
            reorder(
                &query("what did I plan for the sprint deadline of April 1, 2024"),
                &mut r,
                0.4
            )
            .is_empty()
        );
        assert_eq!(ids(&r), [1, 9]);
        // Unless the newer statement says it changed that very value.
        let changed = || {
            vec![
                cand(1, "the locker code is 1234", 1.0),
                cand(5, "I changed the locker code from 1234 to 4821", 0.8),
            ]
        };
        let mut r = changed();
        assert_eq!(
            reorder(&query("what is the locker code"), &mut r, 0.2),
            [(5, 1)]
        );
        let mut r = changed();
        assert_eq!(
            reorder(&query("is the locker code still 1234"), &mut r, 0.2),
            [(5, 1)]
        );
    }

    #[test]
    fn a_month_the_question_names_keeps_the_statement_of_that_month_in_place() {
        let ranked = || {
            vec![
                cand(1, "My rent in January was 1450 dollars.", 1.0),
                cand(6, "The rent went up; it is now 1600 dollars.", 0.8),
            ]
        };
        // Not named: the newer value moves up.
        let mut r = ranked();
        assert_eq!(
            reorder(&query("how much is the rent"), &mut r, 0.2),
            [(6, 1)]
        );
        // Named, in any case: the January statement answers it.
        for q in ["what was the rent in January?", "rent in january"] {
            let mut r = ranked();
            assert!(reorder(&query(q), &mut r, 0.2).is_empty(), "{q}");
            assert_eq!(ids(&r), [1, 6]);
        }
        // A month both statements name pins neither; "may" in lower case is a verb.
        let mut r = vec![
            cand(1, "In March the gym fee was $40.", 1.0),
            cand(6, "Since March the gym fee is now $55.", 0.8),
        ];
        assert_eq!(
            reorder(&query("what was the gym fee in March"), &mut r, 0.2),
            [(6, 1)]
        );
        let mut r = vec![
            cand(1, "In May the gym fee was $40.", 1.0),
            cand(6, "The gym fee is now $55.", 0.8),
        ];
        assert_eq!(
            reorder(&query("what may the gym fee be"), &mut r, 0.2),
            [(6, 1)]
        );
    }

    #[test]
    fn a_shared_neighbouring_value_ties_two_values_together() {
        let q = query("what time is the review");
        let older = cand(1, "the review with Dana is on March 22 at 3 PM", 1.0);
        let newer = cand(
            2,
            "please remind me that it's rescheduled to March 22 at 4:30 PM",
            1.0,
        );
        assert!(revises(&q, &older, &newer));
        let other_day = cand(
            2,
            "please remind me that it's rescheduled to March 23 at 4:30 PM",
            1.0,
        );
        // "what time" asks for a clock time, but the kind alone does not tie them: no
        // content word stands near both values.
        assert!(!revises(&q, &older, &other_day));
        let q = query("tell me about the review");
        assert!(revises(&q, &older, &newer));
        assert!(!revises(&q, &older, &other_day));
    }

    #[test]
    fn a_bare_count_revises_a_count_of_the_queried_noun() {
        let q = query("how many commits are merged");
        let older = cand(1, "we pushed 150 commits and 12 branches", 1.0);
        assert!(revises(
            &q,
            &older,
            &cand(2, "the commits merged have now reached 165, nice", 1.0)
        ));
        let q = query("how many branches are merged");
        assert!(revises(
            &q,
            &older,
            &cand(2, "the merged total has now reached 14", 1.0)
        ));
        let q = query("how many tests pass");
        assert!(!revises(
            &q,
            &older,
            &cand(2, "the total has now reached 165", 1.0)
        ));
    }

    #[test]
    fn differences_and_names_are_not_update_values() {
        let older = cand(1, "my quiz score is 70%", 1.0);
        let q = query("what is my quiz score percentage");
        assert!(!revises(
            &q,
            &older,
            &cand(2, "my quiz score improved by 20%", 1.0)
        ));
        assert!(revises(
            &q,
            &older,
            &cand(2, "my quiz score improved to 90%", 1.0)
        ));
        let budget = cand(1, "my sneaker budget is $200", 1.0);
        let q = query("what is my sneaker budget");
        assert!(!revises(
            &q,
            &budget,
            &cand(2, "New Balance 990v5 costs $250", 1.0)
        ));
        assert!(revises(
            &q,
            &budget,
            &cand(2, "my new sneaker budget: $250", 1.0)
        ));
    }

    #[test]
    fn another_speaker_does_not_revise() {
        let q = query("how many dogs");
        let older = cand(1, "I have 2 dogs now", 1.0).speaker(Some("Caroline"));
        assert!(!revises(
            &q,
            &older,
            &cand(2, "now I have 3 dogs", 1.0).speaker(Some("Melanie"))
        ));
        assert!(revises(
            &q,
            &older,
            &cand(2, "now I have 3 dogs", 1.0).speaker(Some("Caroline"))
        ));
        let plain = cand(1, "I have 2 dogs", 1.0);
        assert!(revises(
            &q,
            &plain,
            &cand(2, "Update: now I have 3 dogs", 1.0)
        ));
        let bot = |agent| Candidate::new(2, Role::Assistant, Some(agent), "now 3 dogs", 1.0);
        let older = Candidate::new(1, Role::Assistant, Some("a"), "there are 2 dogs", 1.0);
        assert!(revises(&q, &older, &bot("a")));
        assert!(!revises(&q, &older, &bot("b")));
        // Named speakers come from the event's field: another participant's newer value
        // does not revise; the same participant's does; a "Name:" in the text is text.
        let said = |id, name, text| cand(id, text, 1.0).speaker(Some(name));
        let older = said(1, "Jane", "there are 2 dogs");
        assert!(revises(&q, &older, &said(2, "Jane", "now 3 dogs")));
        assert!(!revises(&q, &older, &said(2, "Raj", "now 3 dogs")));
        assert!(revises(
            &q,
            &cand(1, "Raj: there are 2 dogs", 1.0),
            &cand(2, "Jane: now 3 dogs", 1.0)
        ));
    }

    #[test]
    fn a_count_restated_with_another_number_revises_without_a_cue() {
        let q = query("how many interviews did I secure");
        let older = cand(1, "I only secured 3 interviews this week", 1.0);
        assert!(revises(
            &q,
            &older,
            &cand(2, "so I secured 5 interviews", 1.0)
        ));
        // Another predicate, the same number, an unqueried noun, a range: no.
        assert!(!revises(
            &q,
            &older,
            &cand(2, "I declined 5 interviews", 1.0)
        ));
        assert!(!revises(
            &q,
            &older,
            &cand(2, "I secured 3 interviews again", 1.0)
        ));
        assert!(!revises(&q, &older, &cand(2, "I secured 5 offers", 1.0)));
        // A later count of the same thing with another number revises it, cue or not.
        let older = cand(1, "my goal went to 3 interviews", 1.0);
        assert!(revises(
            &q,
            &older,
            &cand(2, "it went to 5 interviews", 1.0)
        ));
        assert_eq!(stem("completed"), stem("completing"));
    }

    #[test]
    fn a_typed_value_restated_near_the_same_subject_moves_up_without_a_cue() {
        let q = query("how much is the monthly fee for my downtown gym membership");
        let older = "the monthly fee for my downtown gym membership is $45";
        let ids_after = |newer: &str, evidence: f64| {
            let mut ranked = vec![cand(1, older, 1.0), cand(7, newer, evidence)];
            reorder(&q, &mut ranked, 0.0);
            ids(&ranked)
        };
        // The same subject (fee, downtown, gym, membership) with another amount: it moves.
        assert_eq!(
            ids_after("the downtown gym membership fee is $52 a month for me", 0.8),
            vec![7, 1]
        );
        // A later statement of the amount moves up however weak its evidence (a passing
        // mention is a statement of the value too) ...
        assert_eq!(
            ids_after("the downtown gym membership fee is $52 a month", 0.3),
            vec![7, 1]
        );
        // ... not another gym's, the same amount, or another kind of value.
        for (newer, evidence) in [
            ("the other gym's membership fee is $52 a month", 0.8),
            ("the downtown gym membership fee is still $45 a month", 0.8),
            ("the downtown gym membership fee rose 10% this month", 0.8),
            ("the downtown gym membership fee is due on March 3", 0.8),
        ] {
            assert_eq!(ids_after(newer, evidence), vec![1, 7], "{newer}");
        }
        // Another speaker's amount never restates the user's.
        let mut ranked = vec![
            cand(1, older, 1.0),
            Candidate::new(
                7,
                Role::Assistant,
                None,
                "the downtown gym membership fee is $52 a month",
                1.0,
            ),
        ];
        reorder(&q, &mut ranked, 0.0);
        assert_eq!(ids(&ranked), vec![1, 7]);
    }

    #[test]
    fn weak_evidence_does_not_move() {
        let q = query("sprint deadline");
        let mut ranked = vec![
            cand(1, "sprint deadline April 1", 1.0),
            cand(9, "now the sprint deadline is April 5", 0.3),
        ];
        assert!(reorder(&q, &mut ranked, 0.4).is_empty());
        assert_eq!(ranked[0].id, 1);
    }

    /// One way to say that subject `s` has value `v`.
    type Phrasing = dyn Fn(&str, &str) -> String;

    /// A generator of update statements in varied phrasing (written for this test, from no
    /// data set): subjects of every value kind, several ways to state a value and several
    /// ways to change it. Each case checks the mechanism both ways: the same subject with
    /// a new value moves above the old statement; the same change said about another
    /// subject does not.
    #[test]
    fn generated_updates_revise_their_subject_and_nothing_else() {
        // (question, subject, another subject of the same kind, old value, new value)
        let subjects = [
            (
                "what time is the {s}",
                "design review",
                "dentist visit",
                "9 AM",
                "11 AM",
            ),
            (
                "what time is the {s}",
                "team standup",
                "piano lesson",
                "8:30 AM",
                "9:15 AM",
            ),
            (
                "when is the {s}",
                "product launch",
                "family reunion",
                "May 3",
                "May 17",
            ),
            (
                "when is the {s}",
                "thesis defense",
                "car inspection",
                "June 2",
                "June 9",
            ),
            (
                "what is the {s} budget",
                "marketing",
                "grocery",
                "$400",
                "$650",
            ),
            (
                "how much is the {s} fee",
                "gym membership",
                "parking permit",
                "$35",
                "$42",
            ),
            (
                "how long is the {s}",
                "onboarding course",
                "road trip",
                "3 weeks",
                "5 weeks",
            ),
            (
                "how long is the {s}",
                "daily run",
                "lunch break",
                "30 minutes",
                "45 minutes",
            ),
            (
                "what is the {s} rate",
                "conversion",
                "interest",
                "12%",
                "18%",
            ),
            (
                "how many {s} are there",
                "test case count",
                "guest room count",
                "120",
                "150",
            ),
            (
                "how many {s} are planned",
                "sprint ticket total",
                "wedding guest total",
                "40",
                "55",
            ),
        ];
        let states: [&Phrasing; 3] = [
            &|s, v| format!("the {s} is {v}"),
            &|s, v| format!("just so you know, our {s} is set for {v}"),
            &|s, v| format!("I noted that the {s} is {v} for now"),
        ];
        let changes: [&Phrasing; 6] = [
            &|s, v| format!("we moved the {s} to {v}"),
            &|s, v| format!("the {s} was changed to {v}"),
            &|s, v| format!("heads up: the {s} is now {v}"),
            &|s, v| format!("I rescheduled the {s} to {v} after the call"),
            &|s, v| format!("quick update, the new {s} is {v}"),
            &|s, v| format!("we pushed the {s} way back to {v}"),
        ];
        let mut failures = Vec::new();
        for (question, subject, other, old, new) in subjects {
            let q = query(&question.replace("{s}", subject));
            for state in states {
                let older = cand(1, &state(subject, old), 1.0);
                for change in changes {
                    let same = cand(5, &change(subject, new), 0.5);
                    if !revises(&q, &older, &same) {
                        failures.push(format!(
                            "missed: {:?} -> {:?}",
                            state(subject, old),
                            change(subject, new)
                        ));
                    }
                    let elsewhere = cand(5, &change(other, new), 0.5);
                    if revises(&q, &older, &elsewhere) {
                        failures.push(format!(
                            "misfired: {:?} -> {:?}",
                            state(subject, old),
                            change(other, new)
                        ));
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases:\n{}",
            failures.len(),
            subjects.len() * states.len() * changes.len() * 2,
            failures.join("\n")
        );
    }

    /// Made-up appointments (no data set's words): the same appointment on the same day at
    /// another time, cue or not, is a revision when the question asks for a time; another
    /// appointment that day, or the same one on another day, is not.
    #[test]
    fn another_time_for_the_same_appointment_that_day_revises_it() {
        let cases = [
            (
                "what time is my haircut on Friday",
                "I booked a haircut at the Elm Street salon on Friday at 10 AM",
                "I have to be at work early, so I'll get my haircut at 2 PM on Friday instead",
                true,
            ),
            (
                "what time should I go to the pottery class next Tuesday",
                "I'm joining the pottery class next Tuesday at 6 PM, any tips?",
                "the studio emailed me: pottery class is at 7:30 PM next Tuesday",
                true,
            ),
            (
                "what time is my haircut on Friday",
                "I booked a haircut at the Elm Street salon on Friday at 10 AM",
                "my piano lesson is at 2 PM on Friday this week",
                false,
            ),
            (
                "what time is my haircut on Friday",
                "I booked a haircut at the Elm Street salon on Friday at 10 AM",
                "I booked another haircut for my son on Monday at 2 PM",
                false,
            ),
            (
                "what time is my haircut on Friday",
                "I booked a haircut on Friday at 10 AM, the only time they had",
                "my piano lesson moved to 2 PM on Friday, a better time for the teacher",
                false,
            ),
            (
                "how much was my haircut on Friday",
                "I booked a haircut at the Elm Street salon on Friday at 10 AM",
                "I'll get my haircut at 2 PM on Friday instead",
                false,
            ),
        ];
        for (question, older, newer, revised) in cases {
            let q = Query::new(question, &crate::text::tokens(question));
            assert_eq!(
                reschedules(&q, &cand(1, older, 1.0), &cand(2, newer, 1.0)),
                revised,
                "{question:?}: {older:?} -> {newer:?}"
            );
        }
    }

    #[test]
    fn a_value_given_by_reference_is_elliptical_and_a_named_one_is_not() {
        let elliptical = |t: &str| cand(1, t, 1.0).elliptical();
        // A pronoun in the value's clause, or in the clause before a bare value.
        assert!(elliptical("ok they pushed it to 14:30"));
        assert!(elliptical("make that 12 chairs, two more are coming"));
        assert!(elliptical("the garage rang and moved it to the 3rd, 9:45."));
        // A clause opening with a past form and holding nothing but the value leaves its
        // subject out; one that names something, or asks, does not.
        assert!(elliptical("switched to Orbitel last spring"));
        assert!(elliptical("rebooked for the 21st"));
        assert!(!elliptical("switched the router to Orbitel"));
        assert!(!elliptical("switched to Orbitel?"));
        // The value's clause names its own subject; a pronoun elsewhere does not count.
        assert!(!elliptical("The ferry is at 14:30."));
        assert!(!elliptical(
            "Tomas needs a costume for Book Week — he wants to be a owl."
        ));
        // "this"/"that" before a noun are determiners, not pronouns.
        assert!(!elliptical("this recipe needs 400 g of rice"));
        // A clause that asks sets nothing.
        assert!(!elliptical("wasn't it £30 back then?"));
        // A long turn states its own subject, whatever its pronouns.
        let long = format!(
            "it is 40 euros now, {}",
            "and we talked about the weather ".repeat(15)
        );
        assert!(!elliptical(&long));
    }

    #[test]
    fn following_a_conversation_chains_revisions_and_stops_where_it_moves_on() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("how much is the ferry crossing");
        let fee = cand(1, "The ferry crossing is £140 each way.", 1.0).at(1);
        let later = |turns: &[&str]| -> Vec<Candidate> {
            turns
                .iter()
                .enumerate()
                .map(|(i, t)| cand(i as u64 + 2, t, 1.0).at(i as i64 + 2))
                .collect()
        };
        let chain = |turns: &[&str]| -> Vec<usize> {
            follow(&query, &fee, later(turns), |_| false)
                .into_iter()
                .map(|(i, _)| i)
                .collect()
        };
        // Filler is passed over; each revision continues the one before it.
        assert_eq!(
            chain(&[
                "packing the tent tonight",
                "they put it up to £165",
                "and now it's £170"
            ]),
            vec![1, 2]
        );
        // Another value of the same kind with a subject of its own: the talk moved on.
        assert_eq!(
            chain(&["The campsite is £30 a night.", "they put it up to £35"]),
            Vec::<usize>::new()
        );
        // A turn naming someone else: "she" is not the ferry.
        assert_eq!(
            chain(&["What did Harriet pay?", "she paid £90 for it"]),
            Vec::<usize>::new()
        );
        // An aside naming something else that holds no such value leaves "it" to the
        // ferry; one that asks about it or gives one takes "it" over.
        assert_eq!(
            chain(&["must find the Hallam receipt", "turns out it's £150 now"]),
            vec![1]
        );
        assert!(chain(&["what did the Hallam stove cost?", "it's £150 now"]).is_empty());
        // The same value again is no revision.
        assert!(chain(&["yes it's £140"]).is_empty());
        // A statement that names its subject is followed only when retrieval found it.
        let named = ["The ferry crossing is now £150."];
        assert!(chain(&named).is_empty());
        assert_eq!(
            follow(&query, &fee, later(&named), |_| true)
                .into_iter()
                .map(|(i, _)| i)
                .collect::<Vec<_>>(),
            vec![0]
        );
    }

    #[test]
    fn a_turn_takes_up_a_value_by_its_unit_by_naming_it_or_straight_after_it() {
        let minute = 60_000;
        // The turns `follow` chains after `older` for `question`, each said at its time.
        let chain = |question: &str, older: &Candidate, turns: &[(&str, i64)]| -> Vec<usize> {
            let query = Query::new(question, &crate::text::tokens(question));
            let later = turns
                .iter()
                .enumerate()
                .map(|(i, (t, at))| cand(i as u64 + 2, t, 1.0).at(*at));
            follow(&query, older, later, |_| false)
                .into_iter()
                .map(|(i, _)| i)
                .collect()
        };
        let tank = cand(1, "The fish tank holds 40 litres.", 1.0).at(0);
        let size = "size fish tank";
        // The same unit, no subject of its own: about the tank, weeks later.
        let weeks = 30 * 24 * 60 * minute;
        assert_eq!(
            chain(
                size,
                &tank,
                &[
                    ("feeding the cat now", 1),
                    ("upgraded to 60 litres at the weekend", weeks)
                ]
            ),
            vec![1]
        );
        // The same unit of something it names itself is not the tank's.
        assert!(chain(size, &tank, &[("the new bucket is 10 litres", weeks)]).is_empty());
        // Straight after, a bare correction of the value just given; not after another
        // turn, not much later, and not a value it states of something of its own.
        let locker = cand(1, "Meet me at locker 118.", 1.0).at(0);
        let lockers = |turns: &[(&str, i64)]| chain("locker", &locker, turns);
        assert_eq!(lockers(&[("oops, 181 sorry", minute)]), vec![0]);
        assert!(lockers(&[("bring a towel", minute), ("oops, 181 sorry", 2 * minute)]).is_empty());
        assert!(lockers(&[("oops, 181 sorry", 3 * 60 * minute)]).is_empty());
        assert!(lockers(&[("My bike lock code is 4471", minute)]).is_empty());
        // A name straight after is not a correction: names come up in every turn.
        let venue = cand(1, "Drinks at the Anchor tonight, 7pm.", 1.0).at(0);
        let q = Query::new("where are drinks", &crate::text::tokens("where drinks"));
        let later = [cand(2, "Sam might bring Priya", 1.0).at(minute)];
        assert!(follow(&q, &venue, later, |_| false).is_empty());
        // "let's" owns nothing: a turn with it names no other owner's value; nor does a
        // word before "'s out" or "'s gone".
        for text in [
            "let's make it 8 then",
            "the invite's out",
            "the milk's gone again",
        ] {
            assert!(cand(3, text, 1.0).owners.is_empty(), "{text}");
        }
        assert_eq!(cand(3, "Leo's bike is blue", 1.0).owners, ["leo"]);
    }

    #[test]
    fn every_other_week_says_how_often_not_which_one() {
        let q = query("which day is swim club");
        let older = cand(1, "Swim club is on Tuesday.", 1.0).at(1);
        let read = |t: &str| cand(2, t, 1.0).at(2).continuing(&older);
        assert!(revises(
            &q,
            &older,
            &read("no wait, it's Thursday, every other week")
        ));
        assert!(!revises(
            &q,
            &older,
            &read("no wait, it's Thursday for the other group")
        ));
    }

    #[test]
    fn a_one_off_occasion_is_an_exception_to_what_recurs_not_a_change() {
        let q = query("which day is choir practice");
        let older = cand(1, "Choir practice is on Thursdays.", 1.0).at(1);
        let newer = |t: &str| cand(2, t, 1.0).at(2);
        assert!(!revises(
            &q,
            &older,
            &newer("just this week choir practice is on Monday")
        ));
        assert!(!revises(
            &q,
            &older,
            &newer("choir practice is on Monday tonight only")
        ));
        // From then on, it is a change.
        assert!(revises(
            &q,
            &older,
            &newer("from this week choir practice is on Mondays")
        ));
        assert!(revises(
            &q,
            &older,
            &newer("choir practice moved to Mondays")
        ));
        // A single occasion is changed by another single one.
        let once = cand(1, "The choir concert is on Friday.", 1.0).at(1);
        let q = query("which day is the choir concert");
        assert!(revises(
            &q,
            &once,
            &newer("the choir concert moved to Saturday this week")
        ));
    }

    #[test]
    fn a_value_something_referred_back_to_is_put_to_is_its_new_value() {
        let updates = updates_of;
        assert_eq!(
            updates("cut it to 3 after the launch, 5 was too many"),
            ["3"]
        );
        assert_eq!(updates("we pushed that to 14:30"), ["14:30"]);
        // Not through a pronoun, or in a long turn.
        assert!(updates("walked to 5 shops after the launch").is_empty());
        let long = format!(
            "cut it to 3 after the launch, {}",
            "and then we talked ".repeat(20)
        );
        assert!(updates(&long).is_empty());
    }

    #[test]
    fn identifiers_by_their_form_and_a_number_after_by() {
        for (question, older, newer, fills) in [
            // A channel keeps its mark; one after "by" is what it was replaced by.
            (
                "which channel do deploy notices go to",
                "Deploy notices go to the #releases channel.",
                "#releases has been replaced by #ship-it, every notice lands there now",
                true,
            ),
            // A code made of query words in another order is still a value, and answers
            // "where" as a name does.
            (
                "where is the team wiki",
                "The team wiki is at confluence.acme.io",
                "team wiki now lives at wiki.team, the old one is read-only",
                true,
            ),
            // A code the question names in its own order is what it asks about.
            (
                "when was ticket INC-512 closed",
                "ticket INC-512 was opened on Monday",
                "ticket INC-512 got reopened as INC-600",
                false,
            ),
            // A number after "by" is a difference, not the value.
            (
                "how many seats do we have",
                "We have 12 seats on the plan.",
                "the seats went up by 3 this month",
                false,
            ),
        ] {
            let (older, newer) = (cand(1, older, 1.0).at(1), cand(2, newer, 1.0).at(2));
            assert_eq!(
                fills_again(&query(question), &older, &newer),
                fills,
                "{question}"
            );
        }
    }

    #[test]
    fn the_old_value_named_again_a_version_a_time_of_day_s_and_a_bare_no() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        // Each newer statement fills the older one's slot again: the old value named
        // beside the new one does not make two values of the slot; a version is not a
        // code (the code in an aside leaves one version) and a weekday's "'s" says when,
        // not whose; a past form opening a clause is its verb, not a qualifier.
        for (question, older, newer) in [
            (
                "who is the budget committee chair",
                "The budget committee chair is Marta Olsen.",
                "The budget committee chair is Tomas Berg, Marta Olsen stepped down.",
            ),
            (
                "which runtime version does the build use",
                "The build uses runtime 2.4.1.",
                "we're on 2.5.0 of the runtime since monday's upgrade (fixes the X9 bug)",
            ),
            (
                "how many workers does the ingest queue run",
                "Ingest queue runs 3 workers.",
                "scaled ingest queue to 5 workers",
            ),
        ] {
            let (old, new) = (cand(1, older, 1.0).at(1), cand(2, newer, 1.0).at(2));
            assert!(fills_again(&q(question), &old, &new), "{newer}");
        }
        // Another participant who opens with a bare "no" corrects the value; one who
        // states another value without denying the first states their own.
        let query = q("when is the deposit due");
        let old = cand(1, "The deposit is due on the 5th.", 1.0)
            .at(1)
            .speaker(Some("Ana"));
        let said = |text: &str| {
            cand(2, text, 1.0)
                .at(2)
                .speaker(Some("Ben"))
                .continuing(&old)
        };
        assert!(revises(&query, &old, &said("no, it's the 15th")));
        assert!(!revises(&query, &old, &said("mine is due on the 15th")));
    }

    #[test]
    fn a_unit_a_contraction_and_a_bystander_name_no_other_entity() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        // "Gbps" after a number is a unit; "the order's in" owns nothing.
        let query = q("what speed is the office line");
        let older = cand(1, "The office line runs at 2 Gbps.", 1.0).at(1);
        let newer = cand(2, "office line upgraded to 10 Gbps, the order's in", 1.0).at(2);
        assert!(revises(&query, &older, &newer));
        // A weekday before the subject is when, not which one.
        let query = q("what time is the shuttle from the depot");
        let older = cand(1, "The shuttle from the depot leaves at 7:40.", 1.0).at(1);
        let newer = cand(2, "As of Tuesday shuttle departures are at 7:10.", 1.0).at(2);
        assert!(revises(&query, &older, &newer));
        // A qualifier across a comma qualifies nothing.
        let query = q("above what amount does a refund need sign-off");
        let older = cand(1, "A refund over $200 needs sign-off.", 1.0).at(1);
        let newer = cand(
            2,
            "Starting today, refund sign-off is needed over $500.",
            1.0,
        )
        .at(2);
        assert!(revises(&query, &older, &newer));
        // People both statements name say who took part, not which slot: two dates of two
        // different outings with the same friends.
        let query = q("what did I do with Priya and Tom");
        let older = cand(1, "Went bouldering with Priya and Tom on May 3.", 1.0).at(1);
        let newer = cand(2, "Planning a picnic with Priya and Tom on June 14.", 1.0).at(2);
        assert!(!fills_again(&query, &older, &newer));
        // An owner does say which: "Rosa's recital".
        let query = q("when is Rosa's recital");
        let older = cand(1, "Rosa's recital is on May 3.", 1.0).at(1);
        let newer = cand(2, "Rosa's recital got moved, it's June 14 now.", 1.0).at(2);
        assert!(fills_again(&query, &older, &newer));
    }

    #[test]
    fn a_cue_worded_change_of_another_owners_or_a_bystanders_thing_revises_nothing() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        // (question, older, another's change, its own change): another owner's thing, and
        // the shop both name, which says where, not which price.
        for (question, older, other, own) in [
            (
                "when is Ravi's recital",
                "Ravi's recital is on Wednesday at 4.",
                "Mia's recital moved to Thursday at 5.",
                "Ravi's recital moved to Thursday at 5.",
            ),
            (
                "how much is the kettle at Brewhaus",
                "The kettle is £40 at Brewhaus.",
                "the toaster at Brewhaus dropped to £25",
                "the kettle at Brewhaus dropped to £32",
            ),
        ] {
            let (query, older) = (q(question), cand(1, older, 1.0).at(1));
            assert!(
                !revises(&query, &older, &cand(2, other, 1.0).at(2)),
                "{other}"
            );
            assert!(revises(&query, &older, &cand(3, own, 1.0).at(3)), "{own}");
        }
    }

    #[test]
    fn another_owners_value_of_the_asked_thing_is_owned_by_another() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("How much is Radek's gym membership?");
        for (text, another) in [
            // Another owner's membership: the same kind of thing, someone else's.
            ("Ingeborg's gym membership went up to £45.", true),
            ("the user's gym membership is £38", true),
            // The asked owner's, an unowned one, and another owner of something else.
            ("Radek's gym membership is £38 a month.", false),
            ("My gym membership is £38 a month.", false),
            (
                "Ingeborg's car needs a service, the gym membership is £38",
                false,
            ),
        ] {
            assert_eq!(
                owned_by_another(&query, &cand(1, text, 1.0)),
                another,
                "{text}"
            );
        }
        // A question naming no owner asks about no one's in particular.
        let query = q("How much is the gym membership?");
        assert!(!owned_by_another(
            &query,
            &cand(1, "Ingeborg's gym membership went up to £45.", 1.0)
        ));
    }

    #[test]
    fn coordinated_weekdays_are_one_schedule_that_a_later_one_fills_again() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("Which days is archery practice?");
        let older = cand(1, "Archery practice is on Mondays and Wednesdays.", 1.0);
        // One schedule, so a later one fills its slot again, cue or not.
        assert_eq!(
            older.schedules_as_one(&older.slots.iter().collect::<Vec<_>>()),
            1
        );
        for newer in [
            "Archery practice is on Tuesdays now.",
            "Archery practice is on Tuesdays and Fridays.",
        ] {
            assert!(revises(&query, &older, &cand(2, newer, 0.5)), "{newer}");
        }
        // The same schedule said again revises nothing.
        let again = cand(
            2,
            "Archery practice is on Mondays and Wednesdays, as ever.",
            0.5,
        );
        assert!(!revises(&query, &older, &again));
        // Weekdays of different things, with words between them, are two values.
        let two = cand(1, "Archery on Mondays, the climbing wall on Fridays.", 1.0);
        assert_eq!(
            two.schedules_as_one(&two.slots.iter().collect::<Vec<_>>()),
            2
        );
    }

    #[test]
    fn a_name_a_sentence_opens_with_fills_a_who_slot() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("Who is the quiz master?");
        let older = cand(1, "Anneliese is quiz master this season.", 1.0).at(1);
        let newer = cand(
            2,
            "Wojciech took over as quiz master, Anneliese moved to the bar rota.",
            0.5,
        )
        .at(2);
        assert!(revises(&query, &older, &newer));
        // The same person said again revises nothing.
        let again = cand(3, "Anneliese is still quiz master, she loves it.", 0.5).at(3);
        assert!(!revises(&query, &older, &again));
        let scan = values::scan("Location for the reunion: The Old Mill. Wojciech booked it.");
        let names: Vec<String> = values::opening_names(&scan)
            .into_iter()
            .map(|v| v.value)
            .collect();
        // A phrase ending in a colon is a label, not a name.
        assert_eq!(names, vec!["wojciech".to_owned()]);
    }

    #[test]
    fn a_place_fills_a_where_slot_with_or_without_a_capital() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("Where is poker night held?");
        let older = cand(
            1,
            "Poker night is at Dimitri's flat, first Friday of the month.",
            1.0,
        )
        .at(1);
        let moved = cand(
            2,
            "poker night is moving to the pub on Quarry Road, Dimitri's decorating for weeks",
            0.5,
        )
        .at(2);
        assert!(revises(&query, &older, &moved));
        let scan = values::scan("poker night is moving to the pub on Quarry Road");
        let places: Vec<String> = values::places(&scan).into_iter().map(|v| v.value).collect();
        assert_eq!(places, vec!["pub quarry road".to_owned()]);
        // The same place said again is no change; "to" before a verb places nothing.
        let again = cand(2, "poker night at Dimitri's flat again, bring snacks", 0.5).at(2);
        assert!(!revises(&query, &older, &again));
        let scan = values::scan("I plan to visit the coast after the scout hut on Tuesday");
        let places: Vec<String> = values::places(&scan).into_iter().map(|v| v.value).collect();
        assert_eq!(places, Vec::<String>::new());
    }

    #[test]
    fn how_long_asks_a_length_as_well_as_a_span() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("How long is the long hike?");
        let older = cand(1, "The long hike in my walking plan is 12 km.", 1.0).at(1);
        let upped = cand(2, "upped the long hike to 15k for this month", 0.5).at(2);
        assert!(revises(&query, &older, &upped));
        let same = cand(2, "the long hike was 12 km again, lovely views", 0.5).at(2);
        assert!(!revises(&query, &older, &same));
    }

    #[test]
    fn a_bare_hour_revises_a_clock_time_where_the_question_asks_for_one() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("What time is lights out on weekdays?");
        let older = cand(1, "Lights out is 9:30 on weekdays.", 1.0).at(1);
        let newer = cand(
            2,
            "forget what I said earlier about lights out, it's 9 on weekdays now",
            0.5,
        )
        .at(2);
        assert!(revises(&query, &older, &newer));
        // The same hour without its minutes or its half of the day is no change.
        let query = q("What time is the dinner?");
        let older = cand(1, "The dinner is at 8pm.", 1.0).at(1);
        let same = cand(2, "the dinner at 8 is fine for everyone", 0.5).at(2);
        assert!(!revises(&query, &older, &same));
        assert!(values::bare_hour_of("8", "20:00") && values::bare_hour_of("8", "08:00"));
        assert!(!values::bare_hour_of("8", "08:30") && !values::bare_hour_of("9", "20:00"));
    }

    #[test]
    fn a_change_written_as_an_arrow_or_a_substitution_revises() {
        let q = |t: &str| Query::new(t, &crate::text::tokens(t));
        let query = q("how much is the gym membership");
        let older = cand(1, "The gym membership is £42 a month.", 1.0).at(1);
        let arrow = cand(2, "gym membership 42 -> 47 from January, sigh", 1.0).at(2);
        assert!(revises(&query, &older, &arrow));
        // An arrow from a value the older statement never gave changes something else.
        let other = cand(3, "gym membership 30 → 35 for students", 1.0).at(3);
        assert!(!revises(&query, &older, &other));
        // "s/X/Y/" edits what was said: it refers back by its form, and its Y is the value
        // of what the edited statement said (the unit carried from X).
        let query = q("how long is the trial period");
        let older = cand(1, "The trial period is 14 days.", 1.0).at(1);
        let edit = cand(2, "s/14/21/ sorry", 1.0).at(2);
        assert!(edit.elliptical());
        let chain: Vec<usize> = follow(&query, &older, [edit], |_| false)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(chain, vec![0]);
    }

    #[test]
    fn what_a_statement_says_it_does_instead_of_revises_what_named_it() {
        // The question shares no word with the newer statement: following the answer's
        // conversation finds it, and the older statement's value the question names
        // ("Friday") does not pin the older one above what continues it.
        let query = query("what's the plan for the Friday picnic");
        let older = cand(1, "For the Friday picnic I'm making a spinach quiche.", 1.0).at(1);
        let aside = cand(2, "the forecast looks dry at least", 1.0).at(2);
        let newer = cand(
            3,
            "making sandwiches instead of the quiche, the oven died",
            1.0,
        )
        .at(3);
        assert!(revises(&query, &older, &newer));
        let chain: Vec<(usize, Candidate)> =
            follow(&query, &older, [aside.clone(), newer], |_| false);
        assert_eq!(chain.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![1]);
        let mut ranked = vec![older.clone(), chain[0].1.clone()];
        reorder(&query, &mut ranked, 0.0);
        assert_eq!(ids(&ranked), vec![3, 1]);
        // One that names another day than the question's is about another picnic.
        let saturday = cand(
            3,
            "making sandwiches instead of the quiche on Saturday",
            1.0,
        )
        .at(3);
        let chain = follow(&query, &older, [saturday], |_| false);
        let mut ranked: Vec<Candidate> = std::iter::once(older.clone())
            .chain(chain.into_iter().map(|(_, c)| c))
            .collect();
        reorder(&query, &mut ranked, 0.0);
        assert_eq!(ids(&ranked)[0], 1);
        // A turn that asks, or still weighs it, replaces nothing yet.
        for open in [
            "making sandwiches instead of the quiche, would that work?",
            "thinking of sandwiches instead of the quiche",
        ] {
            let newer = cand(3, open, 1.0).at(3);
            assert!(!revises(&query, &older, &newer), "{open}");
        }
        // Nor does one whose "instead of" names nothing the older statement says.
        let other = cand(3, "taking the bus instead of the car", 1.0).at(3);
        assert!(!revises(&query, &older, &other));
    }

    #[test]
    fn a_statement_continued_is_anchored_by_the_query_word_in_another_inflection() {
        // "cycle" is "cycled" in the statement: the bare distance after it continues it.
        let query = query("how far did the user cycle");
        let older = cand(1, "Cycled 40 km on Saturday.", 1.0).at(1);
        let newer = cand(2, "55 km today!! legs are jelly", 1.0).at(2);
        let chain = follow(&query, &older, [newer], |_| false);
        assert_eq!(chain.len(), 1);
        // A distance of something else in the same unit is not taken for it.
        let other = cand(2, "Drove 55 km to the coast", 1.0).at(2);
        assert!(follow(&query, &older, [other], |_| false).is_empty());
    }

    #[test]
    fn instead_in_the_turn_right_after_replaces_what_it_said() {
        let query = query("which font did the banner get");
        let older = cand(1, "The banner will use the navy serif font.", 1.0).at(1);
        let newer = cand(
            2,
            "after the vote we're going with the coral one instead",
            1.0,
        )
        .at(2);
        let chain = follow(&query, &older, [newer.clone()], |_| false);
        assert_eq!(chain.len(), 1);
        let mut ranked = vec![older.clone(), chain[0].1.clone()];
        reorder(&query, &mut ranked, 0.0);
        assert_eq!(ids(&ranked), vec![2, 1]);
        // With another turn between, "instead" names nothing of it.
        let aside = cand(2, "printer is out of magenta again", 1.0).at(2);
        let later = cand(
            3,
            "after the vote we're going with the coral one instead",
            1.0,
        )
        .at(3);
        assert!(follow(&query, &older, [aside, later], |_| false).is_empty());
    }

    #[test]
    fn the_same_word_with_another_object_instead_revises() {
        let query = query("what is the user bringing to the bake sale");
        let older = cand(1, "Bake sale list: I'm bringing lemon bars.", 1.0).at(1);
        let newer = cand(2, "bringing brownies instead, the lemons were mouldy", 1.0).at(2);
        assert!(revises(&query, &older, &newer));
        let chain = follow(&query, &older, [newer], |_| false);
        assert_eq!(chain.len(), 1);
        // Another word, the object the older statement already gave, an assistant's
        // suggestion, a question, or "instead" opening its own phrase: no replacement.
        for (text, role) in [
            (
                "baking brownies instead, the lemons were mouldy",
                Role::User,
            ),
            ("bringing the lemon bars instead", Role::User),
            ("bringing brownies instead might be easier", Role::Assistant),
            ("bringing brownies instead?", Role::User),
            ("Instead, bringing brownies.", Role::User),
        ] {
            let newer = Candidate::new(2, role, None, text, 1.0).at(2);
            assert!(!revises(&query, &older, &newer), "{text}");
        }
    }

    #[test]
    fn a_number_named_as_what_it_changes_ties_the_change_to_its_slot() {
        // The older statement names the team as well; a bare number is tied to it by every
        // query word it stands near, unless the newer one names that number as what it
        // changes: "not 10", "from 10".
        let q = query("what is the team's WIP limit");
        let older = cand(1, "The team's WIP limit is 10.", 1.0).at(1);
        for text in [
            "Correction: the WIP limit is 12, not 10.",
            "bumped the WIP limit from 10 to 12",
        ] {
            assert!(revises(&q, &older, &cand(2, text, 1.0).at(2)), "{text}");
        }
        for text in [
            // Another limit, though it names the number.
            "Correction: the review limit is 12, not 10.",
            "bumped the review limit from 10 to 12",
            // No word of the question's subject near it.
            "moved the retro from 10 to 12",
        ] {
            assert!(!revises(&q, &older, &cand(2, text, 1.0).at(2)), "{text}");
        }
        let mut ranked = vec![
            older.clone(),
            cand(2, "Correction: the WIP limit is 12, not 10.", 0.6).at(2),
        ];
        assert_eq!(reorder(&q, &mut ranked, 0.4), [(2, 1)]);
    }

    #[test]
    fn a_bracket_saying_what_a_value_was_changes_it() {
        let q = query("what is the team's WIP limit");
        let older = cand(1, "The team's WIP limit is 10.", 1.0).at(1);
        for text in ["WIP limit: 12 (was 10)", "WIP limit now 12 [was 10]"] {
            let newer = cand(2, text, 1.0).at(2);
            assert_eq!(newer.updates().len(), 1, "{text}");
            assert!(revises(&q, &older, &newer), "{text}");
        }
        for text in [
            // Another limit.
            "review limit: 12 (was 10)",
            // No value right before the bracket.
            "WIP limit stays (was 10 and is 10)",
            // The same value.
            "WIP limit: 10 (was 10 in March too)",
        ] {
            assert!(!revises(&q, &older, &cand(2, text, 1.0).at(2)), "{text}");
        }
    }

    #[test]
    fn a_correction_naming_a_place_ending_in_s_revises() {
        // "Leeds" is held by the older statement as its piece "leed": the name corrected
        // away is no entity of the newer statement's own.
        let q = query("where is the team offsite");
        let older = cand(1, "The team offsite is in Leeds.", 1.0).at(1);
        let newer = cand(2, "Correction: the offsite is in York, not Leeds.", 1.0).at(2);
        assert!(revises(&q, &older, &newer));
        // Another offsite, though it names the same place.
        let other = cand(
            3,
            "Correction: the sales offsite is in York, not Leeds.",
            1.0,
        )
        .at(3);
        assert!(!revises(&q, &older, &other));
    }

    #[test]
    fn another_participant_announcing_a_change_of_a_shared_thing_revises() {
        let q = query("what time is standup");
        let said =
            |id: u64, who: &str, text: &str| cand(id, text, 1.0).at(id as i64).speaker(Some(who));
        let older = said(1, "Ravi", "Standup is at 9:30.");
        assert!(revises(
            &q,
            &older,
            &said(2, "Elif", "standup moved to 10:15")
        ));
        for newer in [
            // Their own standup.
            said(2, "Elif", "my standup moved to 10:15"),
            // No change announced: a value stated, or asked about.
            said(2, "Elif", "standup is at 10:15"),
            said(2, "Elif", "has standup moved to 10:15?"),
            // The assistant announces nothing.
            Candidate::new(2, Role::Assistant, None, "standup moved to 10:15", 1.0).at(2),
        ] {
            assert!(!revises(&q, &older, &newer));
        }
        // What one participant speaks of as their own, another's change does not revise.
        let q = query("what time is yoga");
        let older = said(1, "Ana", "My yoga class is at 9:00.");
        assert!(!revises(
            &q,
            &older,
            &said(2, "Bea", "yoga class moved to 10:15")
        ));
    }

    #[test]
    fn a_change_withheld_in_the_same_sentence_announces_nothing() {
        let q = query("what time is standup");
        let older = cand(1, "Standup is at 9:30.", 1.0).at(1);
        for text in [
            "standup moves to 10:15, not confirmed yet",
            "word is standup moved to 10:15, nothing decided",
        ] {
            let newer = cand(2, text, 1.0).at(2);
            assert!(newer.updates().is_empty(), "{text}");
            assert!(!revises(&q, &older, &newer), "{text}");
        }
        // A short negated clause that is no participle, or that names the value corrected
        // away, withholds nothing.
        for text in [
            "standup moved to 10:15, not ideal",
            "Correction: standup is at 10:15, not 9:30",
        ] {
            assert!(revises(&q, &older, &cand(2, text, 1.0).at(2)), "{text}");
        }
    }

    #[test]
    fn a_value_in_a_clause_that_weighs_it_fills_no_slot() {
        let q = query("how much is the gym membership");
        let older = cand(1, "The gym membership is £30 a month.", 1.0).at(1);
        for text in [
            "thinking about upgrading to the £45 gym membership",
            "we could go for the £45 gym membership",
            // Supposed, cue or not.
            "if the gym membership is raised to £35 I'll cancel",
        ] {
            assert!(!revises(&q, &older, &cand(2, text, 1.0).at(2)), "{text}");
        }
        // The weighing is another clause's: the value is settled.
        for text in [
            "they asked if we could pay less - the gym membership is £25 now",
            "the gym membership is £45 from May",
            "if it rains we stay in; the gym membership was raised to £35",
        ] {
            assert!(revises(&q, &older, &cand(2, text, 1.0).at(2)), "{text}");
        }
    }
}
