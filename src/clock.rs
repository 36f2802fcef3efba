//! Time sources, injected so tests control time (LTP decay, validity windows, due dates).

use std::sync::atomic::{AtomicU64, Ordering};

/// A source of time in seconds (injected so tests control it).
pub trait Clock: Send + Sync {
    /// Seconds since an arbitrary fixed origin.
    fn now(&self) -> f64;
}

/// Wall-clock time (seconds since the Unix epoch).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }
}

/// A clock that only moves when told to (tests, simulations).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock at `t` seconds.
    pub fn new(t: f64) -> Self {
        Self(AtomicU64::new(t.to_bits()))
    }

    /// Moves the clock to `t`.
    pub fn set(&self, t: f64) {
        self.0.store(t.to_bits(), Ordering::Release);
    }

    /// Moves the clock forward by `dt` seconds.
    pub fn advance(&self, dt: f64) {
        self.set(self.now() + dt);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Acquire))
    }
}

/// Milliseconds since the Unix epoch on `clock` (the ledger's timestamp unit).
pub fn now_ms(clock: &dyn Clock) -> i64 {
    (clock.now() * 1000.0).round() as i64
}

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `(year, month, day)` of a day number since 1970-01-01 (the inverse of
/// [`days_from_civil`]).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `ms` since the epoch as a UTC date and time (`2024-03-15 14:02`).
pub fn format_utc(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
    let minutes = ms.rem_euclid(DAY_MS) / 60_000;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        minutes / 60,
        minutes % 60
    )
}

/// English month names, January first.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// English weekday names, Monday first.
pub const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// The month (1–12) a lowercase word names: the full name or an abbreviation of at least
/// three letters (`sep`, `sept`).
pub fn month_number(word: &str) -> Option<i64> {
    (word.len() >= 3)
        .then(|| MONTHS.iter().position(|m| m.starts_with(word)))
        .flatten()
        .map(|i| i as i64 + 1)
}

/// A free-form date (and optional time of day) as ms since the epoch, UTC: what data sets
/// write in their `date` / `time` fields. Reads `2024-03-15`, `2024/03/15 (Fri) 10:20`,
/// `2024-03-15T10:20:00Z`, `March-15-2024`, `May 8, 2023`, `8 May 2023`,
/// `1:56 pm on 8 May, 2023`. `None` without a four-digit year and a month and day.
pub fn parse_when(text: &str) -> Option<i64> {
    let lower = text.to_lowercase();
    // Split on anything but letters, digits and ':'; a 'T' between date and time splits too.
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == ':'))
        .flat_map(|w| match w.split_once('t') {
            Some((a, b)) if a.bytes().all(|c| c.is_ascii_digit()) && b.contains(':') => {
                vec![a, b]
            }
            _ => vec![w],
        })
        .filter(|w| !w.is_empty())
        .collect();
    let number = |w: &str| w.parse::<i64>().ok().filter(|_| w.len() <= 4);
    let year_at = words
        .iter()
        .position(|w| w.len() == 4 && number(w).is_some_and(|y| (1000..=9999).contains(&y)))?;
    let year = number(words[year_at])?;
    let month_name = words.iter().find_map(|w| month_number(w));
    // One- and two-digit numbers: the day, and the month when it is not named.
    let small: Vec<i64> = words
        .iter()
        .filter(|w| w.len() <= 2)
        .filter_map(|w| number(w))
        .collect();
    let (month, day) = match month_name {
        Some(m) => (m, *small.iter().find(|n| (1..=31).contains(*n))?),
        // Numeric: month before day (2024-03-15, 2024/03/15, 03/15/2024).
        None => (*small.first()?, *small.get(1)?),
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // The time of day, if one reads cleanly ("14:30", "2:30 pm"); else midnight.
    let time = words.iter().enumerate().find_map(|(i, w)| {
        let (h, rest) = w.split_once(':')?;
        let (h, m) = (h.parse::<i64>().ok()?, rest.get(..2)?.parse::<i64>().ok()?);
        let h = match words.get(i + 1).copied() {
            Some("pm") if h < 12 => h + 12,
            Some("am") if h == 12 => 0,
            _ => h,
        };
        ((0..24).contains(&h) && (0..60).contains(&m)).then_some(h * 3_600_000 + m * 60_000)
    });
    Some(days_from_civil(year, month, day) * DAY_MS + time.unwrap_or(0))
}

/// Why a time argument was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a time: {reason} (give RFC 3339 such as 2025-02-01T09:30:00+01:00, a date such as 2025-02-01 or May 8, 2023 2:30 pm, or epoch milliseconds)"
)]
pub struct TimeError {
    /// The refused text.
    pub text: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Days in `month` of `year` (proleptic Gregorian).
fn days_in_month(year: i64, month: i64) -> i64 {
    days_from_civil(year + i64::from(month == 12), month % 12 + 1, 1)
        - days_from_civil(year, month, 1)
}

/// The one parser of every time argument (CLI flags, plan `at`, HTTP and MCP fields): epoch
/// milliseconds (`1738402200000`, negative allowed), RFC 3339 with or without seconds,
/// fractions and offset (`2025-02-01T09:30:00.250+01:00`, `2025-02-01 09:30`; no offset
/// means UTC), a bare date (`2025-02-01`, midnight UTC), or the free-form dates data sets
/// write (`May 8, 2023 2:30 pm`, [`parse_when`]). Nothing is dropped silently: a time of
/// day, seconds or offset that does not read cleanly is an error, not midnight.
///
/// # Errors
/// [`TimeError`] naming the text and what is wrong.
pub fn parse_instant(text: &str) -> Result<i64, TimeError> {
    let t = text.trim().trim_start_matches('\u{feff}');
    let err = |reason| TimeError {
        text: text.to_owned(),
        reason,
    };
    if t.is_empty() {
        return Err(err("it is empty"));
    }
    let digits = t.strip_prefix('-').unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<i64>()
            .map_err(|_| err("epoch milliseconds out of range"));
    }
    let b = t.as_bytes();
    let is_iso_date = b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit);
    if is_iso_date {
        return parse_rfc3339(t).map_err(err);
    }
    // Free-form: every `h:mm` token must be a valid time of day, or the text is refused
    // rather than read as midnight.
    let lower = t.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == ':'))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        if let Some((h, m)) = w.split_once(':') {
            let ok = match (h.parse::<i64>(), m.parse::<i64>()) {
                (Ok(h), Ok(m)) => {
                    let pm = matches!(words.get(i + 1).copied(), Some("am" | "pm"));
                    m < 60 && if pm { (1..=12).contains(&h) } else { h < 24 }
                }
                _ => false,
            };
            if !ok || m.len() != 2 {
                return Err(err("its time of day is not hh:mm"));
            }
        }
    }
    parse_when(t).ok_or_else(|| err("no four-digit year, month and day"))
}

/// `YYYY-MM-DD[(T| )HH:MM[:SS[.fff]][Z|±HH:MM|±HHMM]]` as ms since the epoch.
fn parse_rfc3339(t: &str) -> Result<i64, &'static str> {
    let num = |s: &str| -> Result<i64, &'static str> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err("it is not RFC 3339 (YYYY-MM-DDTHH:MM:SS±HH:MM)");
        }
        s.parse().map_err(|_| "a number is out of range")
    };
    let (year, month, day) = (num(&t[..4])?, num(&t[5..7])?, num(&t[8..10])?);
    if !(1..=12).contains(&month) {
        return Err("the month is not 01–12");
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err("the day does not exist in that month");
    }
    let date_ms = days_from_civil(year, month, day) * DAY_MS;
    let rest = &t[10..];
    if rest.is_empty() {
        return Ok(date_ms);
    }
    let rest = rest
        .strip_prefix(['T', 't', ' '])
        .ok_or("it is not RFC 3339 (YYYY-MM-DDTHH:MM:SS±HH:MM)")?;
    // Split the offset off the end.
    let (clock, offset_min) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(pos) = rest.rfind(['+', '-']) {
        let (c, off) = rest.split_at(pos);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let off = off[1..].replace(':', "");
        if off.len() != 4 {
            return Err("its offset is not ±HH:MM");
        }
        let (h, m) = (num(&off[..2])?, num(&off[2..])?);
        if h > 23 || m > 59 {
            return Err("its offset is not ±HH:MM");
        }
        (c, sign * (h * 60 + m))
    } else {
        (rest, 0)
    };
    let mut parts = clock.splitn(3, ':');
    let h = num(parts.next().unwrap_or(""))?;
    let m = num(parts.next().ok_or("its time of day is not HH:MM")?)?;
    let (s, frac_ms) = match parts.next() {
        None => (0, 0),
        Some(sec) => {
            let (whole, frac) = sec.split_once(['.', ',']).unwrap_or((sec, ""));
            let frac_ms = if frac.is_empty() {
                if sec.contains(['.', ',']) {
                    return Err("its fraction of a second is empty");
                }
                0
            } else {
                num(frac)?;
                // Milliseconds: the first three digits, padded (finer digits are below
                // the ledger's resolution).
                let ms: String = frac.chars().chain("000".chars()).take(3).collect();
                ms.parse::<i64>().map_err(|_| "a number is out of range")?
            };
            (num(whole)?, frac_ms)
        }
    };
    if h > 23 || m > 59 || s > 60 {
        return Err("its time of day is out of range");
    }
    Ok(date_ms + h * 3_600_000 + m * 60_000 + s.min(59) * 1000 + frac_ms - offset_min * 60_000)
}

#[cfg(test)]
mod calendar_tests {
    use super::*;

    #[test]
    fn civil_days_round_trip() {
        for days in [-800_000, -1, 0, 59, 11_016, 19_797, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(format_utc(0), "1970-01-01 00:00");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(format_utc(1_710_511_320_000), "2024-03-15 14:02");
        assert_eq!(format_utc(-60_000), "1969-12-31 23:59");
    }

    #[test]
    fn data_set_dates_parse() {
        let day = |y, m, d| days_from_civil(y, m, d) * DAY_MS;
        let hm = |h: i64, m: i64| h * 3_600_000 + m * 60_000;
        for (text, want) in [
            ("March-15-2024", day(2024, 3, 15)),
            ("2024-03-15", day(2024, 3, 15)),
            ("2024-03-15T10:20:00Z", day(2024, 3, 15) + hm(10, 20)),
            ("2023/05/20 (Sat) 02:21", day(2023, 5, 20) + hm(2, 21)),
            ("May 8, 2023", day(2023, 5, 8)),
            ("8 May 2023", day(2023, 5, 8)),
            ("1:56 pm on 8 May, 2023", day(2023, 5, 8) + hm(13, 56)),
            ("12:05 am on 1 Sept, 2023", day(2023, 9, 1) + hm(0, 5)),
            ("2024-03-15 at 25:99", day(2024, 3, 15)),
        ] {
            assert_eq!(parse_when(text), Some(want), "{text}");
        }
        for bad in [
            "",
            "yesterday",
            "March 15",
            "2024",
            "2024-13-01",
            "Mayday 2024",
        ] {
            assert_eq!(parse_when(bad), None, "{bad}");
        }
    }

    #[test]
    fn time_arguments_parse_exactly() {
        let day = |y, m, d| days_from_civil(y, m, d) * DAY_MS;
        let hms = |h: i64, m: i64, s: i64| h * 3_600_000 + m * 60_000 + s * 1000;
        for (text, want) in [
            ("1738402200000", 1_738_402_200_000),
            ("-5", -5),
            ("2025-02-01", day(2025, 2, 1)),
            ("2025-02-01T09:30:15Z", day(2025, 2, 1) + hms(9, 30, 15)),
            (
                "2025-02-01T09:30:15.250Z",
                day(2025, 2, 1) + hms(9, 30, 15) + 250,
            ),
            (
                "2025-02-01T09:30:15+01:00",
                day(2025, 2, 1) + hms(8, 30, 15),
            ),
            ("2025-02-01T00:30:00-0130", day(2025, 2, 1) + hms(2, 0, 0)),
            ("2025-02-01 09:30", day(2025, 2, 1) + hms(9, 30, 0)),
            ("\u{feff}2024-02-29", day(2024, 2, 29)),
            ("May 8, 2023 2:30 pm", day(2023, 5, 8) + hms(14, 30, 0)),
        ] {
            assert_eq!(parse_instant(text), Ok(want), "{text}");
        }
        for bad in [
            "",
            "soon",
            "2025-02-30",
            "2023-02-29",
            "2025-13-01",
            "2025-02-01T25:00",
            "2025-02-01T09:30:00+25:00",
            "2025-02-01X09:30",
            "2025-02-01T09",
            "2024-03-15 at 25:99",
            "May 8, 2023 14:30 pm",
            "99999999999999999999",
        ] {
            assert!(parse_instant(bad).is_err(), "{bad}");
        }
    }
}
