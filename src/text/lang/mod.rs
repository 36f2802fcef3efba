//! Language data: every word list the engine reads meaning from, in one place, one module
//! per language ([`en`]). The mechanisms that read them (sentence mood, typed values,
//! revision, function words) are language-neutral code in the modules above; a new
//! language is a new module with the same tables. What stays outside: the date parser's
//! month and weekday names (`clock`, a leaf below `text`, reads its own).
pub mod en;
