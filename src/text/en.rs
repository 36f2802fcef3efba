//! English: the language tables the engine's text rules read. Another language is another
//! module with the same tables; nothing outside `text` spells an English word.

/// Inflectional endings a light stem cuts, first match wins ([`super::stem`]).
pub const INFLECTIONS: &[&str] = &["ing", "ed", "es", "s", "e"];

/// Inflectional and derivational endings, longest first ([`super::word_forms`]).
pub const ENDINGS: &[&str] = &[
    "ations", "ation", "ities", "ings", "ions", "ists", "ity", "ies", "ing", "ion", "ist", "ics",
    "ers", "ed", "es", "er", "ic", "al", "ly", "s", "y", "e",
];

/// Words that open a noun phrase: what stands between one of them and a noun qualifies
/// the noun ("the *garage* code", "my *first* draft").
pub const DETERMINERS: &[&str] = &[
    "a", "an", "her", "his", "its", "my", "our", "that", "the", "their", "these", "this", "those",
    "your",
];

/// Words that ask about an amount of money ("how much ... rent").
pub const MONEY_WORDS: &[&str] = &[
    "budget", "cost", "costs", "fee", "fees", "money", "paid", "pay", "price", "rent", "salary",
    "spend", "spent",
];

/// English function words (articles, pronouns, auxiliaries, prepositions, conjunctions,
/// question words): left out of a query's lexical terms, where they only add noise to
/// BM25 (documents keep them: phrases and the HDC encoder read the whole text).
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
    "during", "each", "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers",
    "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "nor",
    "not", "of", "on", "or", "our", "ours", "she", "should", "so", "some", "such", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "us",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "would", "yes", "you", "your", "yours",
];

/// Words that announce a changed value in the words after them.
pub const REVISION_CUES: &[&str] = &[
    "adjusted",
    "bumped",
    "change",
    "changed",
    "currently",
    "decreased",
    "down",
    "dropped",
    "extended",
    "grew",
    "improved",
    "increased",
    "instead",
    "lengthened",
    "lowered",
    "moved",
    "now",
    "postponed",
    "pushed",
    "raised",
    "reached",
    "recently",
    "reduced",
    "rescheduled",
    "revised",
    "shortened",
    "switched",
    "update",
    "updated",
    "updating",
];

/// Adjectives that announce a changed value only shortly before it, and not as part of a
/// name ("the new sprint deadline of April 5", not "New Balance 990v5 costs $250").
pub const VALUE_ADJECTIVES: &[&str] = &["latest", "new"];

/// Words before a number that relate it to another number, not to what it counts.
pub const NOT_PREDICATES: &[&str] = &["and", "by", "from", "or", "than", "to"];

/// Sentence openings that make a standing instruction.
pub const DIRECTIVE_OPENINGS: &[&[&str]] = &[
    &["always"],
    &["never"],
    &["from", "now", "on"],
    &["please", "always"],
    &["please", "never"],
    &["make", "sure", "to", "always"],
    &["do", "not", "ever"],
];

/// First-person preference phrases (anywhere in a sentence).
pub const PREFERENCE_PHRASES: &[&[&str]] = &[
    &["i", "prefer"],
    &["i", "d", "prefer"],
    &["i", "would", "prefer"],
    &["i", "d", "rather"],
    &["i", "would", "rather"],
    &["my", "preference"],
    &["i", "always", "prefer"],
];

/// Units a duration is counted in, singular.
pub const DURATION_UNITS: &[&str] = &[
    "millisecond",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "year",
    "ms",
    "sec",
    "min",
    "hr",
];

/// Number words, read as numbers where they count something that follows ("two full
/// days", "three interviews"); alone they are too often pronouns ("the one I liked").
pub const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

/// Words that say nothing about what a number measures: they never name a counted noun
/// ("165, and ...") nor tie a value to a query ("what was ...").
pub const FUNCTION_WORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "but",
    "by",
    "can",
    "could",
    "currently",
    "did",
    "do",
    "does",
    "each",
    "ever",
    "for",
    "from",
    "had",
    "has",
    "have",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "many",
    "me",
    "more",
    "most",
    "much",
    "my",
    "now",
    "of",
    "on",
    "or",
    "our",
    "over",
    "per",
    "should",
    "since",
    "so",
    "some",
    "than",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "this",
    "those",
    "to",
    "under",
    "until",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "will",
    "with",
    "would",
    "you",
    "your",
];
