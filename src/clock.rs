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
}
