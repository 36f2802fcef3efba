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
    "a", "an", "each", "every", "her", "his", "its", "my", "our", "that", "the", "their", "these",
    "this", "those", "your",
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

/// Question words and the words after them that say what kind of answer is wanted ("what
/// *time*", "how *long*"): how a question asks, not what it is about.
pub const ASKING_WORDS: &[(&str, &[&str])] = &[
    ("what", &["time", "date", "day", "year"]),
    ("which", &["time", "date", "day", "year"]),
    (
        "how",
        &["long", "much", "many", "often", "far", "old", "soon"],
    ),
];

/// Determiners that set what they qualify apart from one named before ("the *other*
/// team", "*another* branch"): a value said of it is not the one asked about.
pub const ALTERITY: &[&str] = &["other", "another", "else"];

/// Possessives of people other than the speaker ("*her* seat" after "my seat"): what they
/// qualify belongs to someone else.
pub const OTHERS_POSSESSIVES: &[&str] = &["his", "her", "their"];

/// Coordinating conjunctions that join values into one ("Mondays *and* Wednesdays").
pub const COORDINATORS: &[&str] = &["and", "or"];

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

/// The adverb that puts what its clause says in place of something else, and the
/// preposition after it that names that something ("doing X instead of Y", "going with X
/// instead").
pub const INSTEAD: [&str; 2] = ["instead", "of"];

/// Adjectives that announce a changed value only shortly before it, and not as part of a
/// name ("the new sprint deadline of April 5", not "New Balance 990v5 costs $250").
pub const VALUE_ADJECTIVES: &[&str] = &["latest", "new"];

/// Month names that are also everyday words ("I may", "march on"): read as a month only
/// when written with a capital.
pub const MONTH_HOMOGRAPHS: &[&str] = &["may", "march"];

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

/// Openings that only look like a [`DIRECTIVE_OPENINGS`] one: set phrases that instruct
/// nothing ("Never mind, I found it").
pub const NOT_DIRECTIVE_OPENINGS: &[&[&str]] = &[&["never", "mind"]];

/// Words that, right after an opening of permanence ("from now on", "going forward"),
/// give the sentence a subject of its own: it then states how things will be ("From now
/// on the stand-up is at 10:30"), not what the agent is asked to do ("From now on, answer
/// in French"). The second person and the first person singular are left out: "from now
/// on you ..." and "from now on I want ..." address the agent.
pub const STATEMENT_SUBJECTS: &[&str] = &[
    "a", "an", "he", "her", "his", "it", "its", "our", "she", "that", "the", "their", "there",
    "these", "they", "this", "those", "we",
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

/// The speaker's own words for themselves, as lexical tokens ("I'm" is `i`, `m`).
pub const FIRST_PERSON: &[&str] = &[
    "i",
    "me",
    "my",
    "mine",
    "myself",
    "we",
    "us",
    "our",
    "ours",
    "ourselves",
];

/// Words that name a day relative to when they were said.
pub const RELATIVE_DAYS: &[&str] = &["yesterday", "today", "tonight", "tomorrow"];

/// Words that place a calendar period relative to when they were said ("*last* week",
/// "*next* summer", "*this* morning").
pub const PERIOD_PLACERS: &[&str] = &["last", "next", "this", "past"];

/// Calendar periods a [`PERIOD_PLACERS`] word places.
pub const CALENDAR_PERIODS: &[&str] = &[
    "week",
    "weekend",
    "month",
    "year",
    "night",
    "morning",
    "afternoon",
    "evening",
    "spring",
    "summer",
    "fall",
    "autumn",
    "winter",
];

/// Times and spans named by a word of their own, without a number ("fires at *dawn*",
/// "playing for a long *while*"), beside the periods of [`CALENDAR_PERIODS`] ("morning",
/// "night") and the units of [`DURATION_UNITS`] ("for years").
pub const TIME_WORDS: &[&str] = &[
    "dawn", "dusk", "noon", "midday", "midnight", "sunrise", "sunset", "while", "ages",
];

/// Auxiliaries of the past tense: "when *did* it start" asks when something happened,
/// which the time a turn was said answers; "when *is* it" asks for a time to be stated.
pub const PAST_AUXILIARIES: &[&str] = &["did", "was", "were", "had"];

/// Parts of a year and seasons, each with the months it spans, first and past-the-last
/// (13 is the next January): "late 2023" is September to December 2023. Seasons are the
/// northern meteorological ones; a winter is the one that begins in December of its year.
pub const YEAR_PARTS: &[(&str, i64, i64)] = &[
    ("early", 1, 5),
    ("mid", 5, 9),
    ("late", 9, 13),
    ("spring", 3, 6),
    ("summer", 6, 9),
    ("autumn", 9, 12),
    ("fall", 9, 12),
    ("winter", 12, 15),
];

/// Words that, right before a month alone, place something in that month ("in June",
/// "last April").
pub const MONTH_PLACERS: &[&str] = &[
    "in",
    "during",
    "of",
    "last",
    "this",
    "early",
    "late",
    "mid",
    "around",
    "through",
    "throughout",
];

/// Words that relate a span asked for to events ("how many days *between* ...", "how
/// long *after* ..."): the span is computed from when the events happened
/// ([`crate::recall::values::Wanted`]).
pub const SPAN_RELATIONS: &[&str] = &["between", "since", "before", "after", "until", "from"];

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

/// Words that, beside the stop words ([`STOP_WORDS`]), say nothing about what a number
/// measures: words of quantity, comparison and time ("165 *more*", "*since* 2020"). A
/// function word ([`super::is_function_word`]) is one of either: it never names a counted
/// noun ("165, and ...") nor ties a value to a query ("what was ...").
pub const QUANTITY_FUNCTION_WORDS: &[&str] = &[
    "currently",
    "ever",
    "many",
    "more",
    "most",
    "much",
    "now",
    "over",
    "per",
    "since",
    "under",
    "until",
];

/// Sentence openings that make a standing instruction beside [`DIRECTIVE_OPENINGS`]: a
/// marker of permanence, or a modal addressed to the agent.
pub const INSTRUCTION_OPENINGS: &[&[&str]] = &[
    &["going", "forward"],
    &["moving", "forward"],
    &["in", "future"],
    &["in", "the", "future"],
    &["by", "default"],
    &["from", "here", "on"],
    &["whenever"],
    &["when", "you"],
    &["before", "you"],
    &["any", "time"],
    &["every", "time"],
    &["remember", "to"],
    &["you", "should", "always"],
    &["you", "must", "always"],
];

/// Verbs whose bare form opening a sentence is an imperative addressed to the agent; with
/// a marker of permanence ([`STANDING_MARKERS`]) later in the sentence it is a standing
/// instruction ("Use British spelling in everything you write"), without one a request.
pub const IMPERATIVE_VERBS: &[&str] = &[
    "add",
    "answer",
    "cc",
    "convert",
    "format",
    "include",
    "keep",
    "label",
    "mention",
    "name",
    "put",
    "reply",
    "respond",
    "send",
    "show",
    "sign",
    "summarise",
    "summarize",
    "use",
    "write",
];

/// Words that make an imperative hold beyond the request at hand.
pub const STANDING_MARKERS: &[&[&str]] = &[
    &["always"],
    &["all"],
    &["any"],
    &["every"],
    &["everything"],
    &["anything"],
    &["whenever"],
    &["from", "now", "on"],
    &["from", "here", "on"],
    &["going", "forward"],
    &["by", "default"],
];

/// Sentence openings that set a limit: negated imperatives and prohibitions.
pub const BOUNDARY_OPENINGS: &[&[&str]] = &[
    &["never"],
    &["don", "t"],
    &["do", "not"],
    &["stop"],
    &["no", "more"],
    &["avoid"],
    &["under", "no", "circumstances"],
    &["i", "don", "t", "want", "you", "to"],
    &["i", "do", "not", "want", "you", "to"],
    &["you", "must", "never"],
    &["you", "should", "never"],
];

/// Sentence openings that correct something said before.
pub const CORRECTION_OPENINGS: &[&[&str]] = &[
    &["actually"],
    &["correction"],
    &["small", "correction"],
    &["that", "s", "wrong"],
    &["that", "is", "wrong"],
    &["that", "s", "not", "right"],
    &["that", "is", "not", "right"],
    &["i", "meant"],
    &["to", "clarify"],
    &["sorry", "i", "misspoke"],
    &["you", "got", "it", "wrong"],
];

/// Verbs after "let's" that think aloud rather than decide ("let's see", "let's say").
pub const LET_US_NOT_DECISIONS: &[&str] = &[
    "see", "say", "think", "wait", "check", "look", "hope", "find", "just", "discuss", "talk",
];

/// Sentence openings of a hypothetical or a thought, not a statement of fact or intent.
pub const HYPOTHETICAL_OPENINGS: &[&[&str]] = &[
    &["if"],
    &["suppose"],
    &["supposing"],
    &["imagine"],
    &["hypothetically"],
    &["what", "if"],
    &["in", "case"],
    &["let", "s", "say"],
    &["i", "wonder"],
    &["according", "to"],
];

/// Words and phrases, anywhere, that take the force out of a sentence: hedges, past
/// habits, jokes.
pub const HEDGES: &[&[&str]] = &[
    &["maybe"],
    &["might"],
    &["someday"],
    &["who", "knows"],
    &["not", "sure"],
    &["don", "t", "think"],
    &["used", "to"],
    &["lol"],
    &["haha"],
    &["just", "kidding"],
    &["jk"],
    &["never", "say", "never"],
    &["never", "mind"],
];

/// Verbs that report what someone else holds: a sentence with one ("my boss said we
/// should ship") states another person's view, unless the user or their team reports
/// themselves ("I said", "we said").
pub const REPORTING_VERBS: &[&str] = &[
    "said",
    "says",
    "told",
    "tells",
    "thinks",
    "believes",
    "claims",
    "suggested",
    "suggests",
    "reckons",
    "telling",
    "swore",
    "swears",
    "apparently",
    "according",
];

/// Negations, as lexical tokens ("don't" ends in `t`).
pub const NEGATIONS: &[&str] = &["not", "never", "no", "nothing", "t"];

/// Evaluative interjections: a turn that opens with one reacts to the moment ("Oh great,
/// another ..."), it does not state a lasting item.
pub const REACTIONS: &[&[&str]] = &[
    &["oh"],
    &["wow"],
    &["yeah"],
    &["sure"],
    &["great"],
    &["brilliant"],
    &["perfect"],
    &["ugh"],
    &["of", "course"],
];

/// Markers of the unreal mood ("I'd hire", "we would go"), except before the comparatives
/// of a choice ([`CHOICE_COMPARATIVES`]: "I'd rather", "I would prefer").
pub const UNREAL_MARKERS: &[&str] = &["would", "d"];

/// Words that make an unreal marker a choice between options.
pub const CHOICE_COMPARATIVES: &[&str] = &["rather", "prefer"];

/// Auxiliaries that, before a subject pronoun, open a question without its mark ("can
/// you remind me ...").
pub const AUXILIARIES: &[&str] = &[
    "can", "could", "do", "does", "did", "is", "are", "was", "were", "should", "would", "will",
    "have", "has",
];

/// Verbs written with a contracted pronoun ("let's": let us): the "'s" is no possessive.
pub const CONTRACTED_VERBS: &[&str] = &["let"];

/// Particles and participles that follow a contracted "is" or "has", never a possessed
/// noun ("the invite's *out*", "the milk's *gone*"): the word before the "'s" owns nothing.
pub const PARTICLES: &[&str] = &[
    "out", "up", "off", "down", "over", "back", "away", "gone", "done",
];

/// Copulas: a word of content, one of these, then a value states what the value is of
/// ("Locker is 7B"; [`crate::recall::supersede`]).
pub const COPULAS: &[&str] = &["is", "are", "was", "were"];

/// Subject pronouns (with an auxiliary before one, a question).
pub const SUBJECT_PRONOUNS: &[&str] = &["i", "you", "we", "he", "she", "it", "they", "there"];

/// Pronouns that refer back to something said before ("make *that* 5 kg", "increased
/// *it* to 100 mg", "calling *him* Pepper"): a statement whose value stands in a sentence
/// with one of them says what it is the value of by reference ([`crate::recall::supersede`]).
/// "this" and "that" count only where no content word follows them (a pronoun, not a
/// determiner: "this week").
pub const REFERRING_PRONOUNS: &[&str] = &["it", "that", "this", "he", "she", "they", "him", "them"];

/// Verbs of saying and meaning: negated by the speaker ("I never said ...", "I didn't
/// mean ..."), they withdraw what was said.
pub const SAYING_VERBS: &[&str] = &["said", "say", "mean", "meant", "mention", "mentioned"];

/// Openings that withdraw something said ("forget I mentioned it", "never mind, ...").
pub const WITHDRAWALS: &[&[&str]] = &[&["forget"], &["ignore"], &["never", "mind"]];

/// Nouns that name a kept item: negated with a demonstrative ("that's not a rule"), the
/// turn withdraws one.
pub const KEPT_ITEMS: &[&str] = &["rule", "decision", "preference"];

/// Verbs of settling a choice (base forms; their inflections count, with the irregular
/// past listed): "we've booked", "decided:", "team voted".
pub const DECISION_VERBS: &[&str] = &[
    "decide", "agree", "choose", "chose", "settle", "vote", "book", "sign", "accept", "pick",
    "final",
];

/// Verbs and nouns of liking (base forms; inflections count).
pub const LIKING_VERBS: &[&str] = &[
    "like",
    "love",
    "prefer",
    "hate",
    "enjoy",
    "favourite",
    "favorite",
    "fan",
    "rather",
];

/// Modals of necessity and prohibition: a limit ("has to be under 10 slides", "can't
/// travel after sunset"). Not "need": "the kiln needs a new part" is a task of the
/// moment as often as a limit.
pub const NECESSITY: &[&[&str]] = &[
    &["must"],
    &["has", "to"],
    &["have", "to"],
    &["can", "t"],
    &["cannot"],
    &["not", "allowed"],
    &["max"],
    &["limit"],
];

/// Words that place a statement at one moment, not as lasting: "right now", "again",
/// "once", "years ago" (beside [`RELATIVE_DAYS`] and a placed [`CALENDAR_PERIODS`] one).
pub const MOMENT_MARKERS: &[&[&str]] = &[
    &["right", "now"],
    &["later"],
    &["currently"],
    &["at", "the", "moment"],
    &["again"],
    &["once"],
    &["ago"],
];

/// Words of a choice still open, anywhere (beside [`HEDGES`]): a candidate belief is
/// settled ("thinking about learning Italian", "probably the Toyota", "we'll see").
pub const DELIBERATIONS: &[&[&str]] = &[
    &["could"],
    &["probably"],
    &["possibly"],
    &["perhaps"],
    &["thinking"],
    &["considering"],
    &["leaning"],
    &["toying"],
    &["we", "ll", "see"],
];

/// Words and phrases that confirm a pending item ("yes", "go ahead"): with none of
/// [`CONFIRMATION_HOLDS`], a reply affirms.
pub const AFFIRMATIONS: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "ok",
    "okay",
    "confirm",
    "confirmed",
    "agreed",
    "absolutely",
    "definitely",
    "correct",
    "please do",
    "go ahead",
    "do it",
    "sounds good",
    "let's do it",
    "that works",
    "approved",
];
/// Words that hold a confirmation back: a negation or a hedge ("no", "don't",
/// "wait", "later").
pub const CONFIRMATION_HOLDS: &[&str] = &[
    "no", "not", "don't", "dont", "never", "nope", "nah", "cancel", "stop", "without", "neither",
    "nor", "later", "wait", "hold",
];

/// Suffixes of ordinal numbers ("14th", "2nd"): a day of the month, not a code.
pub const ORDINAL_SUFFIXES: &[&str] = &["st", "nd", "rd", "th"];

/// Words that are part of a value's own spelling ("3 pm", "15 percent", "40 dollars"),
/// not what it is the value of.
pub const VALUE_SPELLINGS: &[&str] = &["am", "pm", "percent", "dollars", "usd", "euros"];
