//! Query compilation: the text of a recall becomes free text plus explicit filters.
//!
//! Syntax (anything else is free text):
//! - `"a quoted phrase"`: results must contain the phrase (case and spacing
//!   insensitive); its words stay in the free text, and events holding the phrase are a
//!   candidate source of their own (a quote without its closing partner is plain text);
//! - `key:value` or `key:"value with spaces"` filters, for the keys `agent`, `thread`,
//!   `session`, `role` (`user`, `assistant`, `tool`, `system`), `kind` (`message`,
//!   `observation`, ...), `since` and `until` (`YYYY-MM-DD` or epoch milliseconds),
//!   `source` (alias `collection`: the document or collection an event was recorded
//!   from), and `project` (must name the project recalled: recall never crosses projects);
//! - time hints ([`time_hint`]): `today`, `yesterday`, `this week`, `last week`,
//!   `last month`, `this month`, `this year`, `last year`, `last N days`, `N weeks ago`
//!   (days, months, years), an ISO date, a date in words, a month ("in January", "March
//!   2025", "on May 4th"; without a year, the latest one begun), a year ("in 2024"); they set the window unless `since` /
//!   `until` are given, and their words stay in the free text. A hint is soft: recall
//!   ignores its window when no candidate falls inside it (and says so).

use crate::clock::{DAY_MS as DAY, days_from_civil};
use crate::ledger::{EventKind, LedgerError, Role};

/// A compiled recall query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompiledQuery {
    /// Free text (filters removed, phrase words kept).
    pub text: String,
    /// Phrases the results must contain, normalized ([`normalize`]).
    pub phrases: Vec<String>,
    /// `agent:` filter.
    pub agent: Option<String>,
    /// `thread:` filter.
    pub thread: Option<String>,
    /// `session:` filter.
    pub session: Option<String>,
    /// `role:` filter.
    pub role: Option<Role>,
    /// `kind:` filter.
    pub kind: Option<EventKind>,
    /// Window start (ms, inclusive): `since:` or a time hint.
    pub since: Option<i64>,
    /// Window end (ms, exclusive): `until:` or a time hint.
    pub until: Option<i64>,
    /// `project:` named in the query.
    pub project: Option<String>,
    /// `source:` (or `collection:`) filter: the source document or collection the event
    /// was recorded from (its `source` field).
    pub source: Option<String>,
    /// Whether the window comes from a time hint in the free text (not from `since:` /
    /// `until:`): recall then applies it only if some candidate falls inside it.
    pub hinted: bool,
}

const KEYS: &[&str] = &[
    "agent",
    "thread",
    "session",
    "role",
    "kind",
    "since",
    "until",
    "project",
    "source",
    "collection",
];

fn invalid(reason: String) -> LedgerError {
    LedgerError::Invalid {
        what: "query",
        reason,
    }
}

/// Lowercase, NFKC-normalized words of `text` joined by single spaces: the form phrases
/// are matched in.
pub fn normalize(text: &str) -> String {
    crate::text::tokens(text).join(" ")
}

/// A `since`/`until` value: `YYYY-MM-DD` (midnight UTC) or epoch milliseconds.
fn instant(key: &str, value: &str) -> Result<i64, LedgerError> {
    crate::clock::parse_instant(value)
        .map_err(|e| invalid(format!("`{key}:{value}`: {}", e.reason)))
}

/// Compiles `text` (see the module documentation) relative to `now_ms`.
///
/// # Errors
/// An unknown role or kind, a malformed date, a filter without a value, an unterminated
/// quoted filter value.
pub fn compile(text: &str, now_ms: i64) -> Result<CompiledQuery, LedgerError> {
    let mut q = CompiledQuery::default();
    let mut free: Vec<String> = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        // One item: a quoted phrase, or a whitespace-delimited word (a filter when it is
        // `key:value` with a known key; the value may be quoted).
        if let Some(body) = rest.strip_prefix('"')
            && let Some(end) = body.find('"')
        {
            let phrase = normalize(&body[..end]);
            if !phrase.is_empty() {
                free.push(phrase.clone());
                q.phrases.push(phrase);
            }
            rest = body[end + 1..].trim_start();
            continue;
        }
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..word_end];
        let filter = word
            .split_once(':')
            .filter(|(k, _)| KEYS.contains(&k.to_ascii_lowercase().as_str()));
        let Some((key, value)) = filter else {
            free.push(word.to_owned());
            rest = rest[word_end..].trim_start();
            continue;
        };
        let key = key.to_ascii_lowercase();
        let after_colon = &rest[key.len() + 1..];
        let (value, consumed) = if let Some(body) = after_colon.strip_prefix('"') {
            let end = body
                .find('"')
                .ok_or_else(|| invalid(format!("unterminated quote after `{key}:`")))?;
            (body[..end].to_owned(), key.len() + 1 + end + 2)
        } else {
            (value.to_owned(), word_end)
        };
        rest = rest[consumed..].trim_start();
        if value.is_empty() {
            return Err(invalid(format!("`{key}:` has no value")));
        }
        match key.as_str() {
            "agent" => q.agent = Some(value),
            "thread" => q.thread = Some(value),
            "session" => q.session = Some(value),
            "project" => q.project = Some(value),
            "source" | "collection" => q.source = Some(value),
            "role" => q.role = Some(Role::parse(&value.to_ascii_lowercase())?),
            "kind" => q.kind = Some(EventKind::parse(&value.to_ascii_lowercase())?),
            "since" => q.since = Some(instant(&key, &value)?),
            "until" => q.until = Some(instant(&key, &value)?),
            _ => unreachable!("only known keys are filters"),
        }
    }
    q.text = free.join(" ");
    if q.since.is_none()
        && q.until.is_none()
        && let Some((since, until)) = time_hint(&q.text, now_ms)
    {
        q.since = Some(since);
        q.until = Some(until);
        q.hinted = true;
    }
    Ok(q)
}

/// Time hints of a query, relative to `now_ms`: `today`, `yesterday`, `this week`,
/// `last week`, `last month`, `this month`, `this year`, `last year`, `last N days`,
/// `N days / weeks / months / years ago`, an ISO date `YYYY-MM-DD`, a date in words
/// (`March 24, 2025`), a month without a full date ([`month_hint`]), or a year after "in"
/// or "during" ([`year_hint`]). Returns the
/// window `(since, until)` in ms, if any.
pub fn time_hint(text: &str, now_ms: i64) -> Option<(i64, i64)> {
    let lower = text.to_lowercase();
    let today = now_ms - now_ms.rem_euclid(DAY);
    let words = hint_words(&lower);
    if let Some(window) = past_window(&lower, &words, now_ms) {
        return Some(window);
    }
    if lower.contains("today") {
        return Some((today, today + DAY));
    }
    if lower.contains("this week") {
        return Some((today - 6 * DAY, now_ms + 1));
    }
    let (year, month, _) = crate::clock::civil_from_days(today.div_euclid(DAY));
    if lower.contains("this month") {
        return Some((days_from_civil(year, month, 1) * DAY, now_ms + 1));
    }
    if lower.contains("this year") {
        return Some((days_from_civil(year, 1, 1) * DAY, now_ms + 1));
    }
    if let Some(start) = words.iter().find_map(|w| iso_day(w)) {
        return Some((start, start + DAY));
    }
    // A date in any form `clock::parse_when` reads ("March 24, 2025", "24 March 2025",
    // "2025/03/24"): the shortest run of up to four words around a four-digit year.
    let raw: Vec<&str> = text.split_whitespace().collect();
    let is_year = |w: &str| {
        let digits: String = w.chars().filter(char::is_ascii_digit).collect();
        digits.len() == 4 && w.chars().filter(char::is_ascii_alphabetic).count() == 0
    };
    for (i, _) in raw.iter().enumerate().filter(|(_, w)| is_year(w)) {
        for len in 2..=4 {
            for start in i.saturating_sub(len - 1)..=i {
                let Some(run) = raw.get(start..start + len) else {
                    continue;
                };
                if let Some(at) = crate::clock::parse_when(&run.join(" ")) {
                    let day = at - at.rem_euclid(DAY);
                    return Some((day, day + DAY));
                }
            }
        }
    }
    month_hint(text, now_ms).or_else(|| year_hint(&words, now_ms))
}

/// The stretch of the past a text points back to from `now_ms`: `yesterday`, `last week`,
/// `last month`, `last year`, `last N days`, `N days / weeks / months / years ago` (N in
/// digits or a number word up to twelve). For a
/// query that is its time hint; for a stored turn, what it said happened before it was
/// said ("Yesterday I met some artists in Boston", said on October 4, is about October 3).
/// `lower` is the text lowercased, `words` its words.
fn past_window(lower: &str, words: &[&str], now_ms: i64) -> Option<(i64, i64)> {
    let today = now_ms - now_ms.rem_euclid(DAY);
    for w in words.windows(3) {
        if w[0] == "last"
            && w[2].starts_with("day")
            && let Ok(n) = w[1].parse::<i64>()
        {
            // Saturating: "last 200000000000 days" means "since the beginning".
            return Some((
                today.saturating_sub(n.saturating_mul(DAY)),
                now_ms.saturating_add(1),
            ));
        }
    }
    if lower.contains("yesterday") {
        return Some((today - DAY, today));
    }
    if lower.contains("last week") {
        return Some((today - 7 * DAY, now_ms + 1));
    }
    if lower.contains("last month") {
        return Some((today - 30 * DAY, now_ms + 1));
    }
    if lower.contains("last year") {
        let (year, _, _) = crate::clock::civil_from_days(today.div_euclid(DAY));
        return Some((
            days_from_civil(year - 1, 1, 1) * DAY,
            days_from_civil(year, 1, 1) * DAY,
        ));
    }
    // "3 weeks ago", "a month ago": the unit-long stretch that ended N - 1 units ago.
    for w in words.windows(3) {
        let n = match w[0] {
            "a" | "an" | "one" => Some(1),
            // "two weeks ago" as "2 weeks ago".
            n => n.parse::<i64>().ok().filter(|&n| n > 0).or_else(|| {
                crate::text::en::NUMBER_WORDS
                    .iter()
                    .position(|x| *x == n)
                    .map(|i| i as i64 + 1)
            }),
        };
        let unit = match w[1].trim_end_matches('s') {
            "day" => Some(DAY),
            "week" => Some(7 * DAY),
            "month" => Some(30 * DAY),
            "year" => Some(365 * DAY),
            _ => None,
        };
        if w[2] == "ago"
            && let (Some(n), Some(unit)) = (n, unit)
        {
            let end = today.saturating_sub((n - 1).saturating_mul(unit));
            return Some((end.saturating_sub(unit), end + DAY));
        }
    }
    None
}

/// The stretch of the past `text`, said at `said_ms`, tells of ([`past_window`]), if it
/// points back at all.
pub fn told_past(text: &str, said_ms: i64) -> Option<(i64, i64)> {
    let lower = text.to_lowercase();
    past_window(&lower, &hint_words(&lower), said_ms)
}

/// The words time hints are read from: `lower` split at everything but letters, digits
/// and `-` (an ISO date stays one word).
fn hint_words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .collect()
}

/// "in 2023", "during 2024": that calendar year, when it has begun by `now_ms` (a four-digit
/// number after "in" that lies ahead is a model number or a quantity, not a year). A part
/// of a year or a season before the year ("late 2023", "mid-2024", "spring 2024";
/// [`YEAR_PARTS`](crate::text::en::YEAR_PARTS)) narrows it to those months.
fn year_hint(words: &[&str], now_ms: i64) -> Option<(i64, i64)> {
    use crate::text::en::YEAR_PARTS;
    let (this_year, _, _) = crate::clock::civil_from_days(now_ms.div_euclid(DAY));
    let year_of = |w: &str| {
        (w.len() == 4)
            .then(|| w.parse::<i64>().ok())
            .flatten()
            .filter(|y| (1900..=this_year).contains(y))
    };
    // Month `m` of `year`, counting on past December (13 is the next January).
    let month_start =
        |year: i64, m: i64| days_from_civil(year + (m - 1) / 12, (m - 1) % 12 + 1, 1) * DAY;
    let part = |name: &str, year: i64| {
        YEAR_PARTS
            .iter()
            .find(|(p, _, _)| *p == name)
            .map(|&(_, from, to)| (month_start(year, from), month_start(year, to)))
    };
    let pieces: Vec<&str> = words.iter().flat_map(|w| w.split('-')).collect();
    if let Some(window) = pieces.windows(2).find_map(|w| part(w[0], year_of(w[1])?)) {
        return Some(window);
    }
    words.windows(2).find_map(|w| {
        let year = year_of(w[1]).filter(|_| matches!(w[0], "in" | "during"))?;
        Some((
            days_from_civil(year, 1, 1) * DAY,
            days_from_civil(year + 1, 1, 1) * DAY,
        ))
    })
}

/// A month the query names without a full date: "in January", "January 2025", "on March
/// 3rd". With a year, that month (or day) of that year; without one, the latest such
/// month (or day) that has begun by `now_ms`, since memories are of the past ("what was the
/// rent in January?" asked in December means this year's January). A month with neither a
/// day nor a year counts only after a word that places something in it ("in June", "last
/// April"; not "what did June say"). A month name that is
/// also an everyday word ([`MONTH_HOMOGRAPHS`](crate::text::en::MONTH_HOMOGRAPHS): "may",
/// "march") counts only when capitalized and, at the opening of the query, only beside a
/// day or a year ("May I ask ..." names no month).
fn month_hint(text: &str, now_ms: i64) -> Option<(i64, i64)> {
    use crate::clock::{civil_from_days, month_number};
    use crate::text::en::MONTH_PLACERS;
    let raw: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let day_of = |w: &str| {
        let digits = w.trim_end_matches(char::is_alphabetic);
        let suffix = &w[digits.len()..];
        (matches!(suffix, "" | "st" | "nd" | "rd" | "th")
            && (1..=2).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse::<i64>().ok())
        .flatten()
        .filter(|d| (1..=31).contains(d))
    };
    let year_of = |w: &str| {
        (w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))
            .then(|| w.parse::<i64>().ok())
            .flatten()
    };
    for (i, word) in raw.iter().enumerate() {
        let lower = word.to_lowercase();
        // Full month names only: "mar", "jun" and "dec" are words of their own.
        let Some(month) = month_number(&lower).filter(|&m| {
            crate::clock::MONTHS[m as usize - 1] == lower || (lower == "sept" && m == 9)
        }) else {
            continue;
        };
        let after = |n: usize| raw.get(i + n).copied();
        let day = after(1)
            .and_then(day_of)
            .or_else(|| i.checked_sub(1).and_then(|j| day_of(raw[j])));
        let year = after(1)
            .and_then(year_of)
            .or_else(|| after(2).and_then(year_of).filter(|_| day.is_some()));
        if crate::text::en::MONTH_HOMOGRAPHS.contains(&lower.as_str()) {
            let capitalized = word.starts_with(char::is_uppercase);
            if !capitalized || (i == 0 && day.is_none() && year.is_none()) {
                continue;
            }
        }
        // A month alone is a time only after a word that places something in it ("in
        // June", "last April"): "what did June say" asks about a person.
        if day.is_none()
            && year.is_none()
            && !i
                .checked_sub(1)
                .is_some_and(|j| MONTH_PLACERS.contains(&raw[j].to_lowercase().as_str()))
        {
            continue;
        }
        let (this_year, this_month, this_day) = civil_from_days(now_ms.div_euclid(DAY));
        let year = year.unwrap_or_else(|| {
            let begun = (month, day.unwrap_or(1)) <= (this_month, this_day);
            if begun { this_year } else { this_year - 1 }
        });
        return Some(match day {
            Some(d) => {
                let start = days_from_civil(year, month, d) * DAY;
                (start, start + DAY)
            }
            None => {
                let (next_year, next_month) = if month == 12 {
                    (year + 1, 1)
                } else {
                    (year, month + 1)
                };
                (
                    days_from_civil(year, month, 1) * DAY,
                    days_from_civil(next_year, next_month, 1) * DAY,
                )
            }
        });
    }
    None
}

/// Midnight UTC (ms) of an ISO date `YYYY-MM-DD`, if `text` is one.
fn iso_day(text: &str) -> Option<i64> {
    let parts: Vec<&str> = text.split('-').collect();
    if let [y, m, d] = parts[..]
        && y.len() == 4
        && let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i64>(), m.parse::<i64>(), d.parse::<i64>())
        && (1..=12).contains(&m)
        && (1..=31).contains(&d)
    {
        return Some(days_from_civil(y, m, d) * DAY);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_phrases_and_free_text_are_separated() {
        let q = compile(
            r#"what did "Release Train" agent:bob thread:"ops room" role:User say since:2024-03-01"#,
            0,
        )
        .unwrap();
        assert_eq!(q.text, "what did release train say");
        assert_eq!(q.phrases, ["release train"]);
        assert_eq!(q.agent.as_deref(), Some("bob"));
        assert_eq!(q.thread.as_deref(), Some("ops room"));
        assert_eq!(q.role, Some(Role::User));
        assert_eq!(q.since, Some(days_from_civil(2024, 3, 1) * DAY));
        assert_eq!(q.until, None, "an explicit bound replaces the time hints");
    }

    #[test]
    fn unknown_keys_and_urls_stay_text_and_hints_set_the_window() {
        let q = compile("see http://x.io note:this yesterday", 10 * DAY + 5).unwrap();
        assert_eq!(q.text, "see http://x.io note:this yesterday");
        assert_eq!((q.since, q.until), (Some(9 * DAY), Some(10 * DAY)));
        let q = compile(r#"a 12" pizza"#, 0).unwrap();
        assert_eq!((q.text.as_str(), q.phrases.len()), (r#"a 12" pizza"#, 0));
    }

    #[test]
    fn a_month_without_a_full_date_is_its_latest_begun_occurrence() {
        let now = days_from_civil(2026, 12, 5) * DAY + 3_600_000;
        let month = |y, m, y2, m2| {
            Some((
                days_from_civil(y, m, 1) * DAY,
                days_from_civil(y2, m2, 1) * DAY,
            ))
        };
        let day = |y, m, d| {
            let start = days_from_civil(y, m, d) * DAY;
            Some((start, start + DAY))
        };
        for (query, want) in [
            ("what was the rent in January?", month(2026, 1, 2026, 2)),
            ("what happened in December", month(2026, 12, 2027, 1)),
            // A day not yet come this year is last year's.
            ("what happened on December 24th", day(2025, 12, 24)),
            ("the deploy of 3 February", day(2026, 2, 3)),
            ("budget for January 2025", month(2025, 1, 2025, 2)),
            ("the offsite in sept", month(2026, 9, 2026, 10)),
            ("what did we decide in May", month(2026, 5, 2026, 6)),
            ("May 4 deploy", day(2026, 5, 4)),
            ("what did we plan last June", month(2026, 6, 2026, 7)),
        ] {
            assert_eq!(time_hint(query, now), want, "{query}");
        }
        for none in [
            "May I ask what the rent is?",
            "we may move the stand-up",
            "march the build through CI",
            "the jun and dec folders",
            "what did June say about the budget",
        ] {
            assert_eq!(time_hint(none, now), None, "{none}");
        }
    }

    #[test]
    fn years_and_stretches_ago_are_hints() {
        let now = days_from_civil(2026, 12, 5) * DAY + 3_600_000;
        let today = days_from_civil(2026, 12, 5) * DAY;
        let year = |y| {
            Some((
                days_from_civil(y, 1, 1) * DAY,
                days_from_civil(y + 1, 1, 1) * DAY,
            ))
        };
        assert_eq!(time_hint("what did I ship in 2024", now), year(2024));
        assert_eq!(time_hint("trips during 2026", now), year(2026));
        assert_eq!(time_hint("benchmarks of the RTX 2060", now), None);
        assert_eq!(time_hint("what will run in 2060", now), None, "ahead");
        assert_eq!(time_hint("what happened last year", now), year(2025));
        // Parts of a year and seasons narrow it.
        for (text, (y, from), (y2, to)) in [
            ("which vet in late 2023", (2023, 9), (2024, 1)),
            ("the provider in mid-2024", (2024, 5), (2024, 9)),
            ("school in spring 2024?", (2024, 3), (2024, 6)),
            ("the flat in winter 2024", (2024, 12), (2025, 3)),
        ] {
            let window = (
                days_from_civil(y, from, 1) * DAY,
                days_from_civil(y2, to, 1) * DAY,
            );
            assert_eq!(time_hint(text, now), Some(window), "{text}");
        }
        assert_eq!(time_hint("early 2060 plans", now), None, "ahead");
        assert_eq!(
            time_hint("what did we decide this year", now),
            Some((days_from_civil(2026, 1, 1) * DAY, now + 1))
        );
        assert_eq!(
            time_hint("notes from this month", now),
            Some((days_from_civil(2026, 12, 1) * DAY, now + 1))
        );
        assert_eq!(
            time_hint("what did Sam say 2 weeks ago", now),
            Some((today - 14 * DAY, today - 7 * DAY + DAY))
        );
        assert_eq!(
            time_hint("the call a day ago", now),
            Some((today - DAY, today + DAY))
        );
    }

    #[test]
    fn bad_filters_are_errors_that_name_them() {
        for (text, needle) in [
            ("role:robot", "robot"),
            ("since:yesterday", "since:yesterday"),
            ("since:2025-02-01T25:00", "since:2025-02-01T25:00"),
            ("until:2024-13-01", "until:2024-13-01"),
            (r#"thread:"ops"#, "unterminated"),
            ("agent:", "agent:"),
        ] {
            let err = compile(text, 0).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn huge_relative_windows_saturate_instead_of_overflowing() {
        let now = 1_738_368_000_000;
        let (since, until) = time_hint("what happened in the last 200000000000 days", now).unwrap();
        assert!(since < 0 && until == now + 1, "{since} {until}");
        let q = compile("since:2025-02-01T10:00:00+01:00 deploys", now).unwrap();
        assert_eq!(q.since, Some(now + 9 * 3_600_000));
    }

    #[test]
    fn a_turn_tells_of_the_past_it_points_back_to() {
        let said = crate::clock::parse_when("2023-10-04T15:00:00Z").unwrap();
        let day = |d: &str| crate::clock::parse_when(d).unwrap();
        assert_eq!(
            told_past("Yesterday I met some artists in Boston.", said),
            Some((day("2023-10-03"), day("2023-10-04")))
        );
        let (from, to) = told_past("We moved here 2 years ago", said).unwrap();
        assert!(
            from < day("2022-01-01") && to > day("2022-01-01"),
            "{from} {to}"
        );
        // A number in words is that number.
        assert_eq!(
            told_past("I read it two weeks ago", said),
            told_past("I read it 2 weeks ago", said)
        );
        assert!(told_past("I read it two weeks ago", said).is_some());
        let (from, to) = told_past("Last year we went to Iceland.", said).unwrap();
        assert_eq!((from, to), (day("2022-01-01"), day("2023-01-01")));
        // Only the past it points back to: a date it names, or "today", is not that.
        assert_eq!(told_past("The review is on March 24, 2025.", said), None);
        assert_eq!(told_past("Today was long.", said), None);
    }
}
