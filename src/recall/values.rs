//! Typed values in free text: amounts, percentages, dates, clock times, durations, counts.
//!
//! Supersession needs to know that "$550" and "$500" are two values of the same kind while
//! "March 22" and "3 PM" are not, and that "rescheduled to March 22 at 4:30 PM" states a new
//! value where "on March 22 at 3 PM" stated the old one. The lexical tokens lose the `$`,
//! `%` and `:` that carry this, so values are read from the raw text with a small
//! rule-based scanner: no model, no locale data beyond English month and unit names.

use crate::text::en::{
    ASKING_WORDS, CALENDAR_PERIODS, DETERMINERS, DURATION_UNITS, MONEY_WORDS, MONTH_HOMOGRAPHS,
    NUMBER_WORDS, PAST_AUXILIARIES, PERIOD_PLACERS, RELATIVE_DAYS, SPAN_RELATIONS, TIME_WORDS,
};
use crate::text::month_of;
pub use crate::text::{is_content_word, singular};

/// What a number measures.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// An amount of money (`$1,200`, `40 dollars`).
    Money,
    /// A percentage (`95%`, `15 percent`).
    Percent,
    /// A calendar day (`March 22`, `22 March`, `2024-03-22`) or a weekday (`thu`).
    Date,
    /// A time of day (`4:30 PM`, `3pm`).
    Clock,
    /// A span of time, with its unit (`5-7 months`).
    Duration,
    /// A part of a whole (`4/5`, `8 out of 10`): a score or a share.
    Fraction,
    /// A count of something, with the counted noun when one follows (`165 commits`).
    Count(Option<String>),
    /// A code or identifier: a word that mixes letters and digits (`QX7P2L`, `B12`,
    /// `db-prod-07`) or joins letters with `.`, `_`, `/` or `@` (`docs.internal`), read
    /// by [`identifiers`]; or digits written with a leading zero and the digit groups
    /// after them (`07700 900431`), read with the other numbers.
    Code,
    /// A version: three or more groups of digits joined by dots, after an optional `v`
    /// (`4.2.1`, `v16.0.3`), read by [`identifiers`]. Not a code: "4.3.0 (fixes the
    /// 3DS bug)" gives one version.
    Version,
    /// A name: a run of words capitalised inside a sentence (`Grace Adjei`). Read by
    /// [`identifiers`], never by [`values`].
    Name,
}

/// One value: its kind and a normalised spelling (equal spellings mean equal values).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value {
    /// What it measures.
    pub kind: Kind,
    /// Normalised text (`550`, `mar 22`, `16:30`, `5-7 month`).
    pub value: String,
    /// Index of the word it starts at, in [`words`] of the text.
    pub word: usize,
}

/// A duration unit written onto its number (`120ms`, `30min`, `2hrs`): the number and
/// the unit.
fn glued_duration(body: &str) -> Option<(&str, String)> {
    let split = body.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = body.split_at(split);
    (!n.is_empty()).then_some(())?;
    Some((n, duration_unit_of(unit)?))
}

/// The duration unit `word` names, singular (`hours` → `hour`, `hrs` → `hr`).
fn duration_unit_of(word: &str) -> Option<String> {
    let known = |u: &str| DURATION_UNITS.contains(&u);
    let one = singular(word);
    if known(&one) {
        return Some(one);
    }
    word.strip_suffix('s')
        .filter(|u| known(u))
        .map(str::to_owned)
}

/// The unit of a duration that `w[i]` starts, if any: the word itself, or the word after
/// one qualifier ("2 full days", "3 more weeks"). Returns the unit and the words it spans.
fn duration_unit(w: &[String], i: usize) -> Option<(String, usize)> {
    let unit = |j: usize| w.get(j).and_then(|u| duration_unit_of(u));
    if let Some(u) = unit(i) {
        return Some((u, 1));
    }
    let qualifier = w.get(i)?;
    // Past a qualifier the unit agrees with the number ("3 more weeks"); "10 last week"
    // is a number and a relative time.
    let agrees = w.get(i + 1).is_some_and(|u| singular(u) != *u)
        || i.checked_sub(1)
            .and_then(|n| w.get(n))
            .is_some_and(|n| matches!(n.as_str(), "1" | "one" | "a" | "an"));
    (qualifier.chars().all(char::is_alphabetic)
        && !crate::text::is_function_word(qualifier)
        && agrees)
        .then(|| unit(i + 1).map(|u| (u, 2)))
        .flatten()
}

/// A text read once: its words as written, lowercased, and its values.
#[derive(Debug, Clone)]
pub struct Scan<'a> {
    /// The words as written: split on whitespace, surrounding punctuation removed except a
    /// leading currency sign and a trailing `%`.
    pub raw: Vec<&'a str>,
    /// The same words, lowercased (what values are read from; [`Value::word`] indexes them).
    pub words: Vec<String>,
    /// Every value, in order.
    pub values: Vec<Value>,
    /// Per word, whether punctuation that ends a phrase (`,.;:!?`) follows it.
    pub breaks: Vec<bool>,
    /// Per word, the punctuation written right after it ("'" in "the Hendersons' gate").
    pub tails: Vec<&'a str>,
    /// Per word, whether a dash standing free follows it ("World Book Day — he wants"):
    /// a clause ends there.
    pub dashes: Vec<bool>,
    /// Per word, whether an arrow standing free follows it ("35 → 39", "14 -> 30"): what
    /// stands before it was changed to what stands after.
    pub arrows: Vec<bool>,
    /// Per word, whether it opens a bracket ("12 *(was* 10)").
    pub bracketed: Vec<bool>,
}

/// Reads `text` once into its words and values.
pub fn scan(text: &str) -> Scan<'_> {
    let split = split(text);
    let words: Vec<String> = split.iter().map(|(w, _)| w.to_lowercase()).collect();
    let breaks: Vec<bool> = split.iter().map(|&(_, t)| ends_phrase(t)).collect();
    let values = read_values(&words, &breaks);
    let mut dashes = vec![false; words.len()];
    let mut arrows = vec![false; words.len()];
    let mut bracketed = vec![false; words.len()];
    let mut kept = 0;
    for token in text.split_whitespace() {
        if word_of(token).is_some() {
            bracketed[kept] = token.starts_with(['(', '[']);
            kept += 1;
        } else if kept > 0 && matches!(token, "→" | "->" | "=>" | "⇒" | "⟶") {
            arrows[kept - 1] = true;
        } else if kept > 0 && token.contains(['-', '–', '—']) {
            dashes[kept - 1] = true;
        }
    }
    Scan {
        dashes,
        arrows,
        bracketed,
        raw: split.iter().map(|&(w, _)| w).collect(),
        tails: split.into_iter().map(|(_, t)| t).collect(),
        words,
        values,
        breaks,
    }
}

/// Whether the punctuation after a word ends a phrase (`,.;:!?`).
fn ends_phrase(tail: &str) -> bool {
    tail.contains([',', '.', ';', ':', '!', '?'])
}

/// The words of `text` as written, each with the punctuation written right after it.
fn split(text: &str) -> Vec<(&str, &str)> {
    text.split_whitespace().filter_map(word_of).collect()
}

/// The word a whitespace-separated token holds, with the punctuation after it; `None` for
/// a token of punctuation alone.
fn word_of(token: &str) -> Option<(&str, &str)> {
    let mut start = token.trim_start_matches(|c: char| !(c.is_alphanumeric() || "$€£".contains(c)));
    // A channel or a tag keeps its mark ("#ship-it"): with it the word is a handle.
    if let Some(tag) = token[..token.len() - start.len()].strip_suffix('#')
        && start.starts_with(char::is_alphabetic)
    {
        start = &token[tag.len()..];
    }
    let word = start.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '%'));
    (!word.is_empty()).then_some((word, &start[word.len()..]))
}

/// The lowercased words of `text` ([`Scan::words`]).
pub fn words(text: &str) -> Vec<String> {
    split(text).iter().map(|(w, _)| w.to_lowercase()).collect()
}

/// Whether `word` (lowercase) names a weekday, in the singular or the plural ("thursday",
/// "thursdays").
pub fn is_weekday(word: &str) -> bool {
    let day = |w: &str| crate::clock::WEEKDAYS.contains(&w);
    day(word) || word.strip_suffix('s').is_some_and(day)
}

/// Whether `word` (lowercase) names a month.
pub fn is_month(word: &str) -> bool {
    month_of(word).is_some()
}

/// The months `scan` names, as three-letter names, in order: a word naming a month
/// counts when it is written with a capital or is not also an English word ("may",
/// "march": [`MONTH_HOMOGRAPHS`]).
pub fn months(scan: &Scan<'_>) -> Vec<&'static str> {
    scan.words
        .iter()
        .zip(&scan.raw)
        .filter(|(w, raw)| {
            !MONTH_HOMOGRAPHS.contains(&w.as_str()) || raw.starts_with(char::is_uppercase)
        })
        .filter_map(|(w, _)| month_of(w))
        .collect()
}

/// A plain number: digits with optional thousands commas and one decimal point, or a range
/// of two (`5-7`). Returns the normalised spelling.
fn number(word: &str) -> Option<String> {
    if let Some((a, b)) = word.split_once(['-', '–'])
        && let (Some(a), Some(b)) = (number(a), number(b))
    {
        return Some(format!("{a}-{b}"));
    }
    let mut groups = word.split(',');
    let first = groups.next()?;
    let rest: Vec<&str> = groups.collect();
    // "1,200" is a thousands separator; "2,27" (a list) is not a number.
    if !rest
        .iter()
        .all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let joined: String = std::iter::once(first).chain(rest).collect();
    let (int, frac) = joined.split_once('.').unwrap_or((&joined, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) {
        return None;
    }
    let frac = frac.trim_end_matches('0');
    Some(if frac.is_empty() {
        int.trim_start_matches('0').to_owned().max("0".to_owned())
    } else {
        format!("{}.{frac}", int.trim_start_matches('0'))
    })
}

/// The month (three letters) and day of a date written `a/b` with digits, when the form
/// tells which is which ([`read_values`]).
fn day_and_month(a: &str, b: &str) -> Option<(&'static str, u32)> {
    let part = |x: &str| {
        (!x.is_empty() && x.len() <= 2 && x.bytes().all(|c| c.is_ascii_digit()))
            .then(|| x.parse::<u32>().ok())
            .flatten()
    };
    let (x, y) = (part(a)?, part(b)?);
    let two = a.len() == 2 && b.len() == 2;
    let day = |d: u32| (13..=31).contains(&d);
    let month = |m: u32| (1..=12).contains(&m);
    let (m, d) = if day(x) && month(y) {
        (y, x)
    } else if month(x) && day(y) && two {
        (x, y)
    } else {
        return None;
    };
    Some((&crate::clock::MONTHS[m as usize - 1][..3], d))
}

fn is_year(n: &str) -> bool {
    n.len() == 4 && n.parse::<u32>().is_ok_and(|y| (1900..=2100).contains(&y))
}

fn clock(hour: &str, minute: &str, meridiem: Option<&str>) -> Option<String> {
    let mut h: u32 = hour.parse().ok()?;
    let m: u32 = if minute.is_empty() {
        0
    } else {
        minute.parse().ok()?
    };
    if m >= 60 || h > 24 {
        return None;
    }
    match meridiem {
        Some("pm" | "p.m") if h < 12 => h += 12,
        Some("am" | "a.m") if h == 12 => h = 0,
        Some(_) if h > 12 => return None,
        _ => {}
    }
    Some(format!("{h:02}:{m:02}"))
}

/// Whether the bare number `bare` can be the clock time `clock` ("HH:MM") said without
/// its minutes or its half of the day: "8" of "08:00" or "20:00", not of "08:30".
pub fn bare_hour_of(bare: &str, clock: &str) -> bool {
    let (Ok(n), Some((h, m))) = (bare.parse::<u32>(), clock.split_once(':')) else {
        return false;
    };
    let (Ok(h), Ok(m)) = (h.parse::<u32>(), m.parse::<u32>()) else {
        return false;
    };
    m == 0 && (1..=24).contains(&n) && (n == h || n % 12 == h % 12)
}

/// The kinds of value a question asks for, from its wording: "how long" and "how many
/// hours" a duration, "when" (opening a clause) a date or a time of day, "what date" a
/// date, "what time" a clock time, "how much" with a money word an amount, "percentage" a
/// percentage, "deadline" a date, "budget" an amount and "rate" either a percentage or an
/// amount. Empty when the question does not say.
pub fn asked_kinds(question: &str) -> Vec<Kind> {
    let split = split(question);
    let w: Vec<String> = split.iter().map(|(w, _)| w.to_lowercase()).collect();
    let has = |x: &str| w.iter().any(|t| t == x);
    // "when" asks for a time where it opens a clause ("When is ...", "..., when should I
    // ..."); after a word it joins two clauses ("what happened when it failed").
    let asks_when = w
        .iter()
        .enumerate()
        .any(|(i, t)| t == "when" && (i == 0 || ends_phrase(split[i - 1].1)));
    let pair = |a: &str, b: &dyn Fn(&str) -> bool| w.windows(2).any(|p| p[0] == a && b(&p[1]));
    let mut out = Vec::new();
    let duration = |t: &str| DURATION_UNITS.contains(&singular(t).as_str());
    if pair("how", &|t| t == "long")
        || w.windows(4)
            .any(|p| p[0] == "how" && p[1] == "many" && p[2..].iter().any(|t| duration(t)))
    {
        out.push(Kind::Duration);
    }
    // What "what" or "which" asks for: the head of its phrase ("what's the launch date").
    let head = wh_head(question);
    // "what time" anywhere ("help me decide what time of day"), unless the word heads no
    // phrase of its own: "what time management techniques" asks for techniques.
    let asks_for = |x: &str| {
        head.as_deref() == Some(x)
            || w.iter().enumerate().any(|(i, t)| {
                t == "what"
                    && w.get(i + 1).is_some_and(|n| n == x)
                    && w.get(i + 2).is_none_or(|n| {
                        ends_phrase(split[i + 1].1) || crate::text::is_function_word(n)
                    })
            })
    };
    if asks_when || has("deadline") || asks_for("date") || asks_for("day") {
        out.push(Kind::Date);
    }
    if asks_when || asks_for("time") {
        out.push(Kind::Clock);
    }
    let money = |t: &str| MONEY_WORDS.contains(&t) || t.starts_with('$');
    // "How much" right before a copula asks what something costs ("how much *is* the
    // council tax"), before a noun a quantity of it ("how much flour").
    let amount = w.windows(3).any(|p| {
        p[0] == "how" && p[1] == "much" && matches!(p[2].as_str(), "is" | "are" | "was" | "were")
    });
    // A rate is a share ("interest rate") or a price ("nightly rate"). Either word asks
    // for an amount where it heads its phrase ("the garden budget", "the budget for
    // the trip"), not where it qualifies another noun ("the budget holder").
    let heads = |x: &str| {
        w.iter().enumerate().any(|(i, t)| {
            t == x
                && (ends_phrase(split[i].1)
                    || w.get(i + 1)
                        .is_none_or(|n| !crate::text::is_content_word(n)))
        })
    };
    if (pair("how", &|t| t == "much") && w.iter().any(|t| money(t)))
        || amount
        || heads("budget")
        || heads("rate")
    {
        out.push(Kind::Money);
    }
    if has("percentage") || has("percent") || heads("rate") {
        out.push(Kind::Percent);
    }
    // "who" and "where" opening a clause ask for a person or a place: a name; so does a
    // question about what something is named or called.
    let opens_clause = |x: &str| {
        w.iter()
            .enumerate()
            .any(|(i, t)| t == x && (i == 0 || ends_phrase(split[i - 1].1)))
    };
    if opens_clause("who") || opens_clause("where") || has("name") || has("called") {
        out.push(Kind::Name);
    }
    out
}

/// What answers a question: a value of a kind it asks for ([`asked_kinds`]), and a date
/// when it asks for a span between events ("how many days between the workshop and the
/// deadline", "how long after I moved"; [`SPAN_RELATIONS`]): such a span is computed from
/// when each happened, and the turns that answer it state dates. A question asking for a
/// date is answered as well by a time said relative to the turn ([`says_when`]:
/// "yesterday", "last week"); a span is not (it needs the dates themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The kinds of value that answer it.
    pub kinds: Vec<Kind>,
    /// A time said relative to the turn answers it too.
    pub relative: bool,
    /// It asks when something happened, in the past tense ("When did Jon start …?",
    /// [`PAST_AUXILIARIES`]): the time a turn was said answers it, whatever it states.
    pub happened: bool,
}

impl Wanted {
    /// What answers `question`.
    pub fn of(question: &str) -> Self {
        // A name is not told by its form well enough to answer "who" (a conversation
        // names people in every other turn): only supersession reads it.
        let mut kinds = asked_kinds(question);
        kinds.retain(|k| *k != Kind::Name);
        let relative = kinds.contains(&Kind::Date);
        if kinds.contains(&Kind::Duration)
            && !relative
            && words(question)
                .iter()
                .any(|t| SPAN_RELATIONS.contains(&t.as_str()))
        {
            kinds.push(Kind::Date);
        }
        let happened = relative
            && words(question)
                .iter()
                .any(|w| PAST_AUXILIARIES.contains(&w.as_str()));
        Self {
            kinds,
            relative,
            happened,
        }
    }

    /// The question asks for no kind of value.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Whether `text` states what answers it.
    pub fn answered_by(&self, text: &str) -> bool {
        if self.kinds.is_empty() {
            return false;
        }
        let scan = scan(text);
        scan.values.iter().any(|v| self.kinds.contains(&v.kind))
            || (self.relative && says_when(&scan))
    }

    /// Whether `text` could answer it at all: it states a quantity or a time of a kind
    /// the question asks for, in any form — a typed value of the kind; for an amount, a
    /// share or a count, any number but a day of the month (a bare "3,850", "28.6p", a
    /// number word); for a day, a month, a weekday, a day of the month ("the 20th"), a
    /// calendar period or a time said relative to the turn; for a time of
    /// day, a bare number ("at 7"), a word for a time ("at dawn") or a part of a day; for
    /// a span, a unit of time or a word for one ("for a long while"). Wider than
    /// [`answered_by`](Self::answered_by) (the reader of typed values does not know every
    /// way to write one: "closes at 6", "the 20th"); what it refuses states no value of
    /// the kind asked ("School photos are on the 14th" for "how much do they cost"). True
    /// for a question that asks for no kind of value, and for one that asks when
    /// something happened ([`Wanted::happened`]).
    pub fn could_be_answered_by(&self, text: &str) -> bool {
        if self.kinds.is_empty() || self.happened {
            return true;
        }
        let scan = scan(text);
        let words: Vec<String> = scan.words.iter().map(|w| singular(w)).collect();
        let word = |f: &dyn Fn(&str) -> bool| words.iter().any(|w| f(w));
        let numeric = |k: &Kind| {
            matches!(
                k,
                Kind::Money | Kind::Percent | Kind::Fraction | Kind::Count(_)
            )
        };
        // A word that opens with a digit and is no day of the month ("28.6p", "3,850",
        // not "the 14th") nor part of a value read as a time, a date, a code or a version
        // ("at 4pm", "on 3 June", "07700 900431"): an amount in some unit the reader does
        // not type.
        let typed = other_than_quantities(&scan);
        let number = scan.words.iter().enumerate().any(|(i, w)| {
            w.starts_with(|c: char| c.is_ascii_digit()) && !is_ordinal(w) && !typed[i]
        });
        self.kinds.iter().any(|k| {
            // "How long" asks a length as well as a span ("60 km"): any amount may answer.
            ((numeric(k) || *k == Kind::Duration) && number)
                || scan.values.iter().any(|v| {
                    v.kind == *k
                        || (numeric(k) && numeric(&v.kind))
                        || (*k == Kind::Clock && v.kind == Kind::Count(None))
                })
                || match k {
                    Kind::Date => {
                        says_when(&scan)
                            || word(&|w| {
                                is_month(w)
                                    || is_weekday(w)
                                    || is_ordinal(w)
                                    || CALENDAR_PERIODS.contains(&w)
                            })
                    }
                    Kind::Clock => {
                        word(&|w| TIME_WORDS.contains(&w) || CALENDAR_PERIODS.contains(&w))
                    }
                    Kind::Duration => word(&|w| {
                        DURATION_UNITS.contains(&w)
                            || TIME_WORDS.contains(&w)
                            || CALENDAR_PERIODS.contains(&w)
                    }),
                    // A number word counts, unless a unit of time after it says it
                    // measures a span ("two weeks' work").
                    Kind::Money | Kind::Percent | Kind::Fraction | Kind::Count(_) => {
                        scan.words.iter().enumerate().any(|(i, w)| {
                            NUMBER_WORDS.contains(&w.as_str())
                                && duration_unit(&scan.words, i + 1).is_none()
                        })
                    }
                    Kind::Code | Kind::Version | Kind::Name => true,
                }
        })
    }
}

/// Per word of `scan`, whether it is part of a value that is no quantity: a clock time
/// ("4pm", "4:30 pm"), a date ("3 June", "June 3 2024"), a code ("07700 900431") or a
/// version. The reader puts each at the word it starts at; a date's day or year and a
/// code's further digit groups are the words after it that it read.
fn other_than_quantities(scan: &Scan<'_>) -> Vec<bool> {
    let mut typed = vec![false; scan.words.len()];
    let digits = |j: usize| {
        scan.words
            .get(j)
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
    };
    for v in &scan.values {
        let reads = match v.kind {
            Kind::Clock | Kind::Version => 1,
            // "3 June 2024", "June 3 2024": the number and the year after the month.
            Kind::Date => {
                let month = |j: usize| scan.words.get(j).is_some_and(|w| is_month(w));
                1 + (1..=2)
                    .take_while(|k| digits(v.word + k) || month(v.word + k))
                    .count()
            }
            Kind::Code => v.value.split(' ').count(),
            _ => 0,
        };
        for t in typed.iter_mut().skip(v.word).take(reads) {
            *t = true;
        }
    }
    typed
}

/// Whether the words of `scan` place something in time relative to when they were said:
/// a relative day ("yesterday", [`RELATIVE_DAYS`]), a placed period ("last week", "this
/// summer"), a span or periods ago ("two weeks ago", "two weekends ago"). A chat turn
/// answers "when" this way more often than with a calendar date. (A month after a placer,
/// "in June", was measured as well and cost questions: it names the month of a plan as
/// often as of an event; `docs/EXPERIMENTS.md`.)
pub fn says_when(scan: &Scan<'_>) -> bool {
    let w = &scan.words;
    w.iter().enumerate().any(|(i, t)| {
        let next = w.get(i + 1).map(String::as_str);
        let before = i.checked_sub(1).map(|j| w[j].as_str());
        RELATIVE_DAYS.contains(&t.as_str())
            || (PERIOD_PLACERS.contains(&t.as_str())
                && next.is_some_and(|n| CALENDAR_PERIODS.contains(&n)))
            || (t == "ago"
                && before.is_some_and(|b| {
                    let b = singular(b);
                    DURATION_UNITS.contains(&b.as_str()) || CALENDAR_PERIODS.contains(&b.as_str())
                }))
    })
}

/// The head of the noun phrase a question's "what" or "which" opens, singular: the last
/// word of the run of content words after it, past a copula and a determiner ("date" in
/// "What's the launch date for Harbor?", "day" in "Which days can we deploy?"). `None`
/// when the word is followed by no noun phrase ("What did she say?").
pub fn wh_head(question: &str) -> Option<String> {
    let split = split(question);
    let w: Vec<String> = split.iter().map(|(w, _)| w.to_lowercase()).collect();
    let opens = |i: usize| i == 0 || ends_phrase(split[i - 1].1);
    let start = w.iter().enumerate().find_map(|(i, t)| {
        let t = t.replace('’', "'");
        let (word, copula) = match t.strip_suffix("'s") {
            Some(stem) => (stem.to_owned(), true),
            None => (t, false),
        };
        (matches!(word.as_str(), "what" | "which") && opens(i)).then_some((i + 1, copula))
    })?;
    let (mut i, copula) = start;
    if !copula
        && w.get(i)
            .is_some_and(|t| matches!(t.as_str(), "is" | "are" | "was" | "were"))
    {
        i += 1;
    }
    if w.get(i).is_some_and(|t| DETERMINERS.contains(&t.as_str())) {
        i += 1;
    }
    let run: Vec<&String> = w[i.min(w.len())..]
        .iter()
        .take_while(|t| !crate::text::is_function_word(t) && t.chars().all(char::is_alphabetic))
        .collect();
    run.last().map(|h| singular(h))
}

/// The words of `question` that say what kind of answer it wants ("time" in "what time
/// is the stand-up", [`ASKING_WORDS`]), as lexical tokens: a question about a subject the
/// project holds is not about something unseen because the word "time" is.
pub fn asking_words(question: &str) -> Vec<String> {
    let mut out: Vec<String> = words(question)
        .windows(2)
        .filter(|p| {
            ASKING_WORDS
                .iter()
                .any(|(first, next)| p[0] == *first && next.contains(&p[1].as_str()))
        })
        .flat_map(|p| crate::text::tokens(&p[1]))
        .collect();
    // "what's the launch *date*": the head of the phrase "what" opens.
    if let Some(head) = wh_head(question)
        && ASKING_WORDS
            .iter()
            .any(|(first, next)| *first == "what" && next.contains(&head.as_str()))
        && !out.contains(&head)
    {
        out.push(head);
    }
    out
}

/// The codes and names of `scan` ([`Kind::Code`], [`Kind::Name`]) that are not read as
/// another value: what a slot holds when its value is not a quantity ("the new reference
/// is QX9T4M", "our contact is now Grace Adjei"). A name is a run of words capitalised
/// inside a sentence (after a word with no phrase break), months and weekdays left out.
pub fn identifiers(scan: &Scan<'_>) -> Vec<Value> {
    let valued = |i: usize| scan.values.iter().any(|v| v.word == i);
    let mut out = Vec::new();
    let mut i = 0;
    while i < scan.words.len() {
        let raw = scan.raw[i];
        let word = &scan.words[i];
        let letters = raw.chars().any(char::is_alphabetic);
        let digits = raw.chars().any(|c| c.is_ascii_digit());
        let joined = raw
            .char_indices()
            .any(|(j, c)| matches!(c, '.' | '_' | '/' | '@') && j > 0 && j + 1 < raw.len())
            || raw.starts_with('#');
        let version = is_version(raw);
        if !valued(i) && ((letters && (digits || joined)) || version) && !is_ordinal(word) {
            out.push(Value {
                kind: if version { Kind::Version } else { Kind::Code },
                value: word.clone(),
                word: i,
            });
            i += 1;
            continue;
        }
        // "100 Mbps": a capitalised word right after a number is its unit, not a name.
        let unit = i > 0 && scan.words[i - 1].starts_with(|c: char| c.is_ascii_digit());
        if i > 0 && !scan.breaks[i - 1] && !unit && capitalised(scan, i) {
            // "called The Late Trams": an article written with a capital opens the name
            // and is no part of it ("the Late Trams" names the same band).
            let article = crate::text::en::DETERMINERS.contains(&word.as_str())
                && !scan.breaks[i]
                && i + 1 < scan.words.len()
                && capitalised(scan, i + 1);
            i += usize::from(article);
            let name = name_from(scan, i, |j| capitalised(scan, j));
            i += name.value.split(' ').count() - 1;
            out.push(name);
        }
        i += 1;
    }
    out
}

/// The names a sentence opens with ("Rahul took over as release manager"): a capitalised
/// word starting a sentence, with small letters after its first, that is no function
/// word, month or weekday and runs on into its sentence (no phrase break after it), with
/// the capitalised words right after it. Capitals inside a sentence are read by
/// [`identifiers`]; a sentence's first word is capitalised whatever it is, so these are
/// only candidates, for a slot whose question asks for a name.
pub fn opening_names(scan: &Scan<'_>) -> Vec<Value> {
    let named = |j: usize| {
        let word = scan.words[j].as_str();
        capitalised(scan, j)
            && scan.raw[j].chars().skip(1).any(char::is_lowercase)
            && !crate::text::is_function_word(word)
            && !crate::text::en::FIRST_PERSON.contains(&word)
    };
    let mut out = Vec::new();
    for i in 0..scan.words.len() {
        let opens = i == 0 || scan.tails[i - 1].contains(['.', '!', '?']);
        // A phrase ending in a colon labels what follows ("Venue for the party: ..."),
        // it names no one.
        let labels = (i..scan.words.len())
            .find(|&j| scan.breaks[j])
            .is_some_and(|j| scan.tails[j].contains(':'));
        if !opens || !named(i) || scan.breaks[i] || i + 1 == scan.words.len() || labels {
            continue;
        }
        out.push(name_from(scan, i, named));
    }
    out
}

/// Whether word `j` of `scan` is written as a name: capitalised letters (not shouted:
/// "NOT" has no small letter but is read here; callers that mind ask for one), not a value,
/// a month or a weekday.
fn capitalised(scan: &Scan<'_>, j: usize) -> bool {
    let (raw, word) = (scan.raw[j], &scan.words[j]);
    raw.starts_with(char::is_uppercase)
        && raw.chars().all(char::is_alphabetic)
        && !scan.values.iter().any(|v| v.word == j)
        && !is_month(word)
        && !is_weekday(word)
}

/// The name that starts at word `start`: it and the words after it in its phrase that
/// `more` accepts ("Grace Adjei").
fn name_from(scan: &Scan<'_>, start: usize, more: impl Fn(usize) -> bool) -> Value {
    let mut end = start;
    while end + 1 < scan.words.len() && !scan.breaks[end] && more(end + 1) {
        end += 1;
    }
    Value {
        kind: Kind::Name,
        value: scan.words[start..=end].join(" "),
        word: start,
    }
}

/// The places `scan` puts something at: the phrase after "at", "in", "on" or "to" (its
/// determiners left out) up to a phrase break, a function word, a value, a weekday or a
/// month, joined with a phrase that places it in turn ("the café on Elm Street"): "church
/// hall" of "rehearsal is at the church hall on Wednesdays"; "to" before a determiner or a
/// name only ("to the café", not "to visit"). A place is a value a "where"
/// question asks for even when no capital marks it as a name.
pub fn places(scan: &Scan<'_>) -> Vec<Value> {
    let valued = |i: usize| scan.values.iter().any(|v| v.word == i);
    let locative = |w: &str| matches!(w, "at" | "in" | "on" | "to");
    let part = |j: usize| {
        let w = &scan.words[j];
        w.chars().next().is_some_and(char::is_alphabetic)
            && !crate::text::is_function_word(w)
            && !valued(j)
            && !is_month(w)
            && !is_weekday(w)
    };
    let n = scan.words.len();
    // The first word of the phrase after a preposition at `i`, past its determiners.
    let opening = |i: usize| {
        let mut j = i + 1;
        while j < n
            && !scan.breaks[j - 1]
            && crate::text::en::DETERMINERS.contains(&scan.words[j].as_str())
        {
            j += 1;
        }
        (j < n && !scan.breaks[j - 1] && part(j)).then_some(j)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        // "to" places only before a determiner or a name ("to the café", "to Lisbon"); before
        // a verb it marks an infinitive ("plan to visit").
        let directs = scan.words[i] != "to"
            || scan.words.get(i + 1).is_some_and(|w| {
                crate::text::en::DETERMINERS.contains(&w.as_str())
                    || scan.raw[i + 1].starts_with(char::is_uppercase)
            });
        let Some(start) = (locative(&scan.words[i]) && directs && !scan.breaks[i])
            .then(|| opening(i))
            .flatten()
        else {
            i += 1;
            continue;
        };
        let mut words = Vec::new();
        let mut j = start;
        loop {
            words.push(scan.words[j].clone());
            if scan.breaks[j] || j + 1 == n {
                break;
            }
            if part(j + 1) {
                j += 1;
            } else if locative(&scan.words[j + 1])
                && let Some(next) = opening(j + 1)
            {
                j = next;
            } else {
                break;
            }
        }
        out.push(Value {
            kind: Kind::Name,
            value: words.join(" "),
            word: start,
        });
        i = j + 1;
    }
    out
}

/// Whether `raw` is a version: three or more groups of digits joined by dots, after an
/// optional `v` ("4.2.1", "v16.0.3").
pub fn is_version(raw: &str) -> bool {
    let digits = raw
        .strip_prefix(['v', 'V'])
        .unwrap_or(raw)
        .trim_end_matches(|c: char| !c.is_alphanumeric());
    digits.split('.').count() >= 3
        && digits
            .split('.')
            .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()))
}

/// The day of the month an ordinal names ("14th" → 14), when it can name one (1 to 31).
fn ordinal_day(word: &str) -> Option<u32> {
    crate::text::en::ORDINAL_SUFFIXES
        .iter()
        .find_map(|s| word.strip_suffix(s))
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|d| (1..=31).contains(d))
}

/// "14th", "2nd": a day of the month, not a code.
fn is_ordinal(word: &str) -> bool {
    crate::text::en::ORDINAL_SUFFIXES.iter().any(|s| {
        word.strip_suffix(s)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Every value in `text`, in order.
pub fn values(text: &str) -> Vec<Value> {
    scan(text).values
}

/// The values in `w` (lowercased words; `breaks[i]`: a phrase ends after word `i`).
/// Whether `word` names a currency after an amount ("40 dollars", "twelve euros").
fn currency(word: Option<&str>) -> bool {
    word.is_some_and(|n| matches!(n, "dollars" | "usd" | "euros"))
}

fn read_values(w: &[String], breaks: &[bool]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let next = w.get(i + 1).map(String::as_str);
        let push = |out: &mut Vec<Value>, kind: Kind, value: String| {
            out.push(Value {
                kind,
                value,
                word: i,
            });
        };
        let word = w[i].as_str();
        // "version 6.0" names a release, not a quantity.
        if i > 0 && w[i - 1] == "version" {
            i += 1;
            continue;
        }
        // Month name then day ("March 22"), skipping a following year.
        if let Some(month) = month_of(word)
            && let Some(day) = next
                .map(|n| n.trim_end_matches("st").trim_end_matches("nd"))
                .map(|n| n.trim_end_matches("rd").trim_end_matches("th"))
                .and_then(number)
            && day.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
        {
            push(&mut out, Kind::Date, format!("{month} {day}"));
            i += 2;
            if w.get(i).is_some_and(|y| is_year(y)) {
                i += 1;
            }
            continue;
        }
        // ISO date.
        if word.len() == 10
            && let [y, m, d] = word.split('-').collect::<Vec<_>>()[..]
            && is_year(y)
            && let (Ok(m), Ok(d)) = (m.parse::<usize>(), d.parse::<u32>())
            && (1..=12).contains(&m)
        {
            push(
                &mut out,
                Kind::Date,
                format!("{} {d}", &crate::clock::MONTHS[m - 1][..3]),
            );
            i += 1;
            continue;
        }
        // A weekday ("on Thursday", "on Thursdays"): the day of a weekly thing, or of the
        // week in question.
        if is_weekday(word) {
            push(&mut out, Kind::Date, word[..3].to_owned());
            i += 1;
            continue;
        }
        // "on the 20th", "due the 5th", "20th March", "the 20th of March": an ordinal
        // standing free is a day of the month, of the month that follows it if one does;
        // one before another word counts something ("the 3rd attempt", "her 40th
        // birthday").
        if is_ordinal(word)
            && let Some(day) = ordinal_day(word)
        {
            let month = next.and_then(month_of).map(|m| (m, 2)).or_else(|| {
                (next == Some("of"))
                    .then(|| w.get(i + 2).and_then(|m| month_of(m)).map(|m| (m, 3)))
                    .flatten()
            });
            if let Some((month, read)) = month {
                push(&mut out, Kind::Date, format!("{month} {day}"));
                i += read;
                continue;
            }
            if breaks[i] || next.is_none_or(|n| !is_content_word(n) && month_of(n).is_none()) {
                push(&mut out, Kind::Date, format!("day {day}"));
                i += 1;
                continue;
            }
        }
        // Clock time: "4:30", "4:30pm", "3pm", "3 pm".
        if let Some((h, rest)) = word.split_once(':')
            && let Some(m) = rest.get(..2)
            && let Some(t) = clock(
                h,
                m,
                Some(&rest[2..])
                    .filter(|s| !s.is_empty())
                    .or(next.filter(|n| matches!(*n, "am" | "pm" | "a.m" | "p.m"))),
            )
        {
            push(&mut out, Kind::Clock, t);
            i += 1;
            continue;
        }
        let (sign, body) = match word.chars().next() {
            Some(c @ ('$' | '€' | '£')) => (Some(c), &word[c.len_utf8()..]),
            _ => (None, word),
        };
        let (body, percent) = match body.strip_suffix('%') {
            Some(b) => (b, true),
            None => (body, false),
        };
        let (body, meridiem) = ["am", "pm"]
            .iter()
            .find_map(|m| body.strip_suffix(m).map(|b| (b, Some(*m))))
            .unwrap_or((body, None));
        // "3k", "$2.5k": thousands.
        let (body, thousands) = match body.strip_suffix('k') {
            Some(b) if number(b).is_some() => (b, true),
            _ => (body, false),
        };
        // A number written with a leading zero is no quantity but an identifier, with the
        // digit groups after it ("07700 900431", a phone number; "0042"): one code.
        if body.len() >= 3 && body.starts_with('0') && body.bytes().all(|b| b.is_ascii_digit()) {
            let mut value = body.to_owned();
            let mut j = i;
            while !breaks[j]
                && let Some(group) = w.get(j + 1)
                && group.len() >= 3
                && group.bytes().all(|b| b.is_ascii_digit())
            {
                value.push(' ');
                value.push_str(group);
                j += 1;
            }
            push(&mut out, Kind::Code, value);
            i = j + 1;
            continue;
        }
        if let Some((n, unit)) = glued_duration(body).filter(|_| sign.is_none() && !percent)
            && let Some(n) = number(n)
        {
            push(&mut out, Kind::Duration, format!("{n} {unit}"));
            i += 1;
            continue;
        }
        // "26/02", "14/3", "03/15": a day and a month, where one part can only be a day
        // (13 to 31), the other only a month, and one is written with two digits or the
        // day comes first (a score "7/15" stays a fraction).
        if let Some((a, b)) = body.split_once('/')
            && let Some((month, day)) = day_and_month(a, b)
            && sign.is_none()
        {
            push(&mut out, Kind::Date, format!("{month} {day}"));
            i += 1;
            continue;
        }
        // "4/5", "8 out of 10".
        if let Some((a, b)) = body.split_once('/')
            && let (Some(a), Some(b)) = (number(a), number(b))
            && b != "0"
            && sign.is_none()
        {
            push(&mut out, Kind::Fraction, format!("{a}/{b}"));
            i += 1;
            continue;
        }
        if let Some(a) = number(body)
            && w.get(i + 1).is_some_and(|t| t == "out")
            && w.get(i + 2).is_some_and(|t| t == "of")
            && let Some(b) = w.get(i + 3).and_then(|t| number(t))
        {
            push(&mut out, Kind::Fraction, format!("{a}/{b}"));
            i += 4;
            continue;
        }
        let spelled = NUMBER_WORDS
            .iter()
            .position(|n| *n == body)
            .map(|p| (p + 1).to_string());
        // "a full day", "an hour": one of the unit.
        let spelled = spelled.or_else(|| {
            matches!(body, "a" | "an")
                .then(|| duration_unit(w, i + 1).map(|_| "1".to_owned()))
                .flatten()
        });
        if let Some(n) = &spelled {
            // A spelled number counts only what follows it: a span, or a currency.
            if let Some((unit, span)) = duration_unit(w, i + 1) {
                push(&mut out, Kind::Duration, format!("{n} {unit}"));
                i += 1 + span;
            } else if currency(next) {
                push(&mut out, Kind::Money, n.clone());
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        let Some(mut n) = number(body) else {
            i += 1;
            continue;
        };
        if thousands && let Ok(x) = n.parse::<f64>() {
            n = format!("{}", x * 1000.0);
        }
        if sign.is_some() || currency(next) {
            push(&mut out, Kind::Money, n);
        } else if percent || next == Some("percent") {
            push(&mut out, Kind::Percent, n);
        } else if let Some(m) =
            meridiem.or(next.filter(|n| matches!(*n, "am" | "pm" | "a.m" | "p.m")))
            && let Some(t) = clock(&n, "", Some(m))
        {
            push(&mut out, Kind::Clock, t);
        } else if let Some(month) = next.and_then(month_of)
            && n.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
        {
            push(&mut out, Kind::Date, format!("{month} {n}"));
            i += 1;
        } else if let Some((unit, span)) = duration_unit(w, i + 1).filter(|_| !breaks[i]) {
            push(&mut out, Kind::Duration, format!("{n} {unit}"));
            i += span;
        } else if !is_year(&n) {
            // The counted noun follows in the same phrase ("165, and" counts nothing); of
            // "requests/minute" it is the first part.
            let noun = next
                .filter(|_| !breaks[i])
                .and_then(|n| n.split('/').next())
                .filter(|n| {
                    !n.is_empty()
                        && n.chars().all(char::is_alphabetic)
                        && !crate::text::is_function_word(n)
                })
                .map(singular);
            push(&mut out, Kind::Count(noun), n);
        }
        i += 1;
    }
    // "from 12 to 5 hours": the bare first number measures what the second does.
    for j in 1..out.len() {
        let (a, b) = (&out[j - 1], &out[j]);
        if a.kind == Kind::Count(None)
            && a.word > 0
            && w[a.word - 1] == "from"
            && w.get(a.word + 1).is_some_and(|t| t == "to")
            && b.word == a.word + 2
        {
            let value = match &b.kind {
                Kind::Duration => b
                    .value
                    .split_once(' ')
                    .map(|(_, unit)| format!("{} {unit}", a.value)),
                Kind::Count(Some(_)) | Kind::Money | Kind::Percent => Some(a.value.clone()),
                _ => None,
            };
            if let Some(value) = value {
                out[j - 1] = Value {
                    kind: b.kind.clone(),
                    value,
                    word: a.word,
                };
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, String)> {
        values(text)
            .into_iter()
            .map(|v| (v.kind, v.value))
            .collect()
    }

    #[test]
    fn a_spelled_amount_of_a_currency_is_money() {
        use Kind::*;
        assert_eq!(
            kinds("the stall costs twelve euros, or 40 dollars for two days"),
            vec![
                (Money, "12".into()),
                (Money, "40".into()),
                (Duration, "2 day".into()),
            ]
        );
        // A spelled number of anything else is no value.
        assert_eq!(kinds("three of them came"), vec![]);
    }

    #[test]
    fn reads_glued_units_fractions_and_spelled_durations() {
        use Kind::*;
        assert_eq!(
            kinds("latency fell from 180ms to 95 ms after 2hrs of tuning"),
            vec![
                (Duration, "180 ms".into()),
                (Duration, "95 ms".into()),
                (Duration, "2 hr".into()),
            ]
        );
        assert_eq!(
            kinds("I scored 4/5 and then 9 out of 10"),
            vec![(Fraction, "4/5".into()), (Fraction, "9/10".into())]
        );
        // A date where the form says which part is the day: one part 13 to 31, the other
        // a month, the day first or both written with two digits; else a score.
        assert_eq!(
            kinds("moved to 19/11, or 03/17 at the latest; scored 7/15 and 15/20"),
            vec![
                (Date, "nov 19".into()),
                (Date, "mar 17".into()),
                (Fraction, "7/15".into()),
                (Fraction, "15/20".into()),
            ]
        );
        assert_eq!(
            kinds("I took two full days off, then a week, and one of them was fine"),
            vec![(Duration, "2 day".into()), (Duration, "1 week".into())]
        );
        assert_eq!(
            kinds("a limit of 100 requests/minute"),
            vec![(Count(Some("request".into())), "100".into())]
        );
        // A number word that counts nothing is not a value.
        assert_eq!(kinds("the one I liked"), vec![]);
        // Past a qualifier the unit agrees with its number: "10 last week" is a number
        // and a relative time, not ten weeks.
        let read = kinds("moved it to 10 last week, for 2 full days, then a full day");
        assert!(
            !read
                .iter()
                .any(|(k, v)| *k == Duration && v.starts_with("10"))
        );
        assert!(read.contains(&(Duration, "2 day".into())));
        assert!(read.contains(&(Duration, "1 day".into())));
    }

    #[test]
    fn reads_thousands_identifiers_with_a_leading_zero_and_versions() {
        use Kind::*;
        assert_eq!(
            kinds("raised the cap to 2.5k, then $4k"),
            vec![(Count(None), "2500".into()), (Money, "4000".into())]
        );
        // A leading zero: an identifier, with the digit groups that follow it.
        assert_eq!(
            kinds("call the depot on 01632 960 555 before 5pm"),
            vec![(Code, "01632 960 555".into()), (Clock, "17:00".into())]
        );
        assert_eq!(
            kinds("locker 0042, row 12"),
            vec![(Code, "0042".into()), (Count(None), "12".into())]
        );
        // Three or more dotted digit groups: a version, an identifier of its own kind.
        let scan =
            scan("we upgraded the runner to 3.11.2 today, v16.0.3 (fixes X9 and the 3DS bug)");
        assert!(scan.values.is_empty());
        assert_eq!(
            identifiers(&scan)
                .into_iter()
                .map(|v| (v.kind, v.value))
                .collect::<Vec<_>>(),
            vec![
                (Version, "3.11.2".into()),
                (Version, "v16.0.3".into()),
                (Code, "x9".into()),
                (Code, "3ds".into())
            ]
        );
    }

    #[test]
    fn reads_each_kind() {
        use Kind::*;
        assert_eq!(
            kinds("rescheduled to March 22, 2024 at 4:30 PM"),
            [(Date, "mar 22".into()), (Clock, "16:30".into())]
        );
        assert_eq!(
            kinds("on 22 March at 3pm"),
            [(Date, "mar 22".into()), (Clock, "15:00".into())]
        );
        assert_eq!(
            kinds("a budget of $1,200 (up 15%) for 5-7 months"),
            [
                (Money, "1200".into()),
                (Percent, "15".into()),
                (Duration, "5-7 month".into())
            ]
        );
        assert_eq!(
            kinds("$5k or 40 dollars"),
            [(Money, "5000".into()), (Money, "40".into())]
        );
        assert_eq!(
            kinds("150 commits and 12 branches, now 165."),
            [
                (Count(Some("commit".into())), "150".into()),
                (Count(Some("branch".into())), "12".into()),
                (Count(None), "165".into())
            ]
        );
        assert_eq!(kinds("due 2024-04-05"), [(Date, "apr 5".into())]);
        // An ordinal standing free is a day of the month; before a word it counts.
        assert_eq!(kinds("ready on the 20th"), [(Date, "day 20".into())]);
        assert_eq!(kinds("moved to the 3rd, sorry"), [(Date, "day 3".into())]);
        assert_eq!(kinds("the 20th of March"), [(Date, "mar 20".into())]);
        assert_eq!(kinds("on 20th March"), [(Date, "mar 20".into())]);
        assert!(kinds("my 3rd attempt at the 40th birthday cake").is_empty());
        assert!(kinds("the 45th").is_empty());
    }

    #[test]
    fn a_range_start_takes_the_kind_of_its_end() {
        use Kind::*;
        assert_eq!(
            kinds("from 12 to 5 hours, from 1,200 to 1,500 words"),
            [
                (Duration, "12 hour".into()),
                (Duration, "5 hour".into()),
                (Count(Some("word".into())), "1200".into()),
                (Count(Some("word".into())), "1500".into())
            ]
        );
    }

    #[test]
    fn months_and_asking_words() {
        let months = |t: &str| super::months(&scan(t));
        assert_eq!(months("the rent in January and in feb"), ["jan", "feb"]);
        assert_eq!(months("I may march in May or in March"), ["may", "mar"]);
        assert!(months("we decided on the mayor").is_empty());
        assert_eq!(asking_words("What time is the stand-up?"), ["time"]);
        assert_eq!(asking_words("how long and how many days"), ["long", "many"]);
        assert!(asking_words("the time we met").is_empty());
        // The head of the phrase "what" or "which" opens, past a copula and a determiner.
        assert_eq!(
            asking_words("What's the review date for the grant?"),
            ["date"]
        );
        assert_eq!(
            wh_head("Which days can we book the hall?").as_deref(),
            Some("day")
        );
        assert_eq!(
            wh_head("what is the boiler service cost").as_deref(),
            Some("cost")
        );
        assert_eq!(wh_head("What did she order?"), None);
        assert_eq!(
            wh_head("I know what you mean"),
            None,
            "not opening a clause"
        );
        assert_eq!(
            asked_kinds("What's the review date for the grant?"),
            [Kind::Date]
        );
        assert_eq!(
            asked_kinds("Which day is the recycling collected?"),
            [Kind::Date]
        );
        assert!(asked_kinds("What's the time complexity of the sort?").is_empty());
        // "How much" before a copula asks what something costs; before a noun, how much
        // of it.
        assert_eq!(
            asked_kinds("How much is the boiler service?"),
            [Kind::Money]
        );
        assert!(asked_kinds("How much flour goes in the loaf?").is_empty());
        let wanted = Wanted::of("How much is the boiler service?");
        assert!(!wanted.could_be_answered_by("The boiler service is on the 14th."));
        assert!(wanted.could_be_answered_by("The boiler service is £85."));
        // "budget" and "rate" ask for an amount where they head their phrase, not where
        // they qualify another noun.
        assert_eq!(asked_kinds("What's the garden budget?"), [Kind::Money]);
        assert_eq!(
            asked_kinds("What budget do we have for the trip?"),
            [Kind::Money]
        );
        assert_eq!(
            asked_kinds("What is the savings rate?"),
            [Kind::Money, Kind::Percent]
        );
        assert_eq!(
            asked_kinds("Who is the budget holder for the garden?"),
            [Kind::Name]
        );
        assert!(asked_kinds("Which rate limit applies to uploads?").is_empty());
    }

    #[test]
    fn a_channel_keeps_its_mark_and_is_a_code_an_issue_number_is_a_number() {
        let scan = scan("moved to #ship-it, see #42");
        let codes = identifiers(&scan);
        assert_eq!(codes.len(), 1);
        assert_eq!(
            (&codes[0].kind, codes[0].value.as_str()),
            (&Kind::Code, "#ship-it")
        );
        assert_eq!(kinds("see #42"), [(Kind::Count(None), "42".to_owned())]);
    }

    #[test]
    fn how_long_is_answered_by_a_length_as_well_as_a_span() {
        let wanted = Wanted::of("How long is the towpath walk?");
        assert!(wanted.could_be_answered_by("The towpath walk is 12 km each way."));
        assert!(wanted.could_be_answered_by("It takes about two hours."));
        assert!(!wanted.could_be_answered_by("The towpath walk starts at the lock."));
    }

    #[test]
    fn what_a_question_asks_for_and_what_answers_it() {
        use Kind::*;
        for (question, mut asked) in [
            ("When is the review?", vec![Date, Clock]),
            (
                "I moved house, when should I update my address?",
                vec![Date, Clock],
            ),
            // "when" joining two clauses asks no time.
            ("What happened when the build failed?", vec![]),
            ("How long does the course last?", vec![Duration]),
            ("How much did the flat cost in dollars?", vec![Money]),
            ("What percentage did I reach?", vec![Percent]),
            // "who" and "where" ask for a name.
            ("Who came to the party?", vec![Name]),
            ("Where is the party?", vec![Name]),
        ] {
            assert_eq!(asked_kinds(question), asked, "{question}");
            asked.retain(|k| *k != Name);
            assert_eq!(Wanted::of(question).kinds, asked, "{question}");
        }
        // A span between events is computed from their dates, said as dates.
        let span = Wanted::of("How many days passed between the workshop and the move?");
        assert_eq!(span.kinds, [Duration, Date]);
        assert!(span.answered_by("the workshop was on March 3"));
        assert!(!span.answered_by("I went to the workshop yesterday"));
        assert_eq!(
            asked_kinds("How long after the move did I start?"),
            [Duration]
        );
        assert_eq!(
            Wanted::of("How long after the move did I start?").kinds,
            [Duration, Date]
        );
        let when = Wanted::of("When did I paint the fence?");
        for answer in [
            "I painted the fence on March 3",
            "I painted the fence yesterday!",
            "We painted it last weekend",
            "painted it two weeks ago",
            "we painted it two weekends ago",
            "the fence was done on Saturday",
        ] {
            assert!(when.answered_by(answer), "{answer}");
        }
        for other in [
            "I painted the fence",
            "the fence took two weeks",
            "June painted it",
            // A month alone names a plan's month as often as an event's.
            "I will paint it in June",
            "I may paint it",
            "a while ago",
        ] {
            assert!(!when.answered_by(other), "{other}");
        }
        assert!(!Wanted::of("Who painted the fence?").answered_by("on March 3"));
    }

    #[test]
    fn singulars() {
        for (plural, one) in [
            ("stories", "story"),
            ("branches", "branch"),
            ("boxes", "box"),
            ("hours", "hour"),
            ("class", "class"),
            ("status", "status"),
            ("gas", "gas"),
            ("commit", "commit"),
        ] {
            assert_eq!(singular(plural), one);
        }
    }

    #[test]
    fn ignores_what_is_not_a_value() {
        assert!(kinds("in 2024 ->-> 2,27 v1.0.0 word").is_empty());
        assert!(kinds("no numbers here at all").is_empty());
    }

    #[test]
    fn equal_values_normalise_equally() {
        assert_eq!(kinds("$500.00"), kinds("$500"));
        assert_eq!(kinds("4:30 pm"), kinds("4:30pm"));
        assert_eq!(kinds("5 days"), kinds("5 day"));
    }

    proptest::proptest! {
        #[test]
        fn any_text_scans_without_panicking(text in "[ -~\\u{80}-\\u{2FF}\n]{0,80}") {
            let w = words(&text);
            for v in values(&text) {
                proptest::prop_assert!(v.word < w.len());
                proptest::prop_assert!(!v.value.is_empty());
            }
            let _ = asked_kinds(&text);
        }

        #[test]
        fn a_value_reads_the_same_anywhere(n in 1u32..100_000, pad in "[a-z]{1,8}") {
            let alone = values(&format!("${n}"));
            let inside = values(&format!("{pad} ${n} {pad}"));
            proptest::prop_assert_eq!(alone.len(), 1);
            proptest::prop_assert_eq!(&alone[0].value, &inside[0].value);
            proptest::prop_assert_eq!(&alone[0].value, &n.to_string());
        }
    }

    #[test]
    fn codes_and_names_are_identifiers_not_quantities() {
        use Kind::{Code, Name};
        let ids = |text: &str| -> Vec<(Kind, String)> {
            identifiers(&scan(text))
                .into_iter()
                .map(|v| (v.kind, v.value))
                .collect()
        };
        assert_eq!(
            ids("new reference is QX9T4M, host db-prod-07, docs at docs.internal"),
            [
                (Code, "qx9t4m".to_owned()),
                (Code, "db-prod-07".to_owned()),
                (Code, "docs.internal".to_owned())
            ]
        );
        assert_eq!(
            ids("our contact is now Grace Adjei from Monday"),
            [(Name, "grace adjei".to_owned())]
        );
        // A capital after a phrase break opens a sentence; days, months, ordinals, plain
        // numbers and hyphenated words are not identifiers.
        assert!(
            ids("Done. Thanks on Thursday in March, the 14th, 3,850 for spare-room").is_empty()
        );
    }

    #[test]
    fn a_question_for_a_value_is_answered_only_by_a_text_that_states_one() {
        let cost = Wanted::of("How much does the bike cost?");
        assert!(!cost.could_be_answered_by("The bike is in the shed."));
        for text in [
            "The bike was 240.",
            "It cost two hundred",
            "£1,200 with the rack",
        ] {
            assert!(cost.could_be_answered_by(text), "{text}");
        }
        // A value of another kind does not answer: a day is not an amount, nor are the
        // numbers of a time, a date or a phone number, nor a number word counting weeks.
        for text in [
            "paid in March",
            "The bike is booked for Thursday.",
            "Bike shop opens at 9am, fitting on 3 June 2025.",
            "Bike shop number is 01632 960 011.",
            "The frame takes two weeks to arrive.",
        ] {
            assert!(!cost.could_be_answered_by(text), "{text}");
        }
        assert!(cost.could_be_answered_by("Fitting on 3 June, 45 for the labour."));
        assert!(cost.could_be_answered_by("two fifty with lights"));
        let long = Wanted::of("How long is the ride to work?");
        assert!(!long.could_be_answered_by("The ride to work starts at 7:40."));
        assert!(long.could_be_answered_by("The ride to work is 14 km."));
        let time = Wanted::of("What time is the bike service?");
        assert!(time.could_be_answered_by("bike service at 7"));
        assert!(time.could_be_answered_by("bike service at dawn"));
        let when = Wanted::of("When is the bike service?");
        assert!(!when.could_be_answered_by("The bike service is booked with Sam."));
        assert!(when.could_be_answered_by("bike service on Thursday"));
        assert!(when.could_be_answered_by("bike service tomorrow"));
        // When something happened: the time it was said answers.
        assert!(
            Wanted::of("When did I service the bike?")
                .could_be_answered_by("Serviced the bike, new chain.")
        );
        // No kind asked: anything could.
        assert!(Wanted::of("Which bike do I ride?").could_be_answered_by("the red one"));
    }
}
