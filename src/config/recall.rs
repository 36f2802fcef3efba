//! The `[recall]` settings, declared once: each row of [`recall_settings!`] is a field of
//! the settings (read from TOML as they are), its default, its doc, and, for a weight, the
//! name `--weight` and the score breakdown use, its aliases and whether it is a candidate
//! source. The macro generates the struct, its default, the validation of the weights,
//! `weight_mut`, `canonical` and `SOURCES`. Adding a stage's setting is one row here.

use serde::Deserialize;

pub use crate::index::lexical::TurnRegime;

/// Emits a weight's name into `SOURCES` when its row is marked `source`.
macro_rules! source_name {
    (source, $name:literal) => {
        $name
    };
}

/// Declares the recall settings from one table (see the module docs). A row:
/// `/// doc` `field: Type = default` and, for a weight, `=> "name" | "alias" …` and
/// `, source` for a candidate source.
macro_rules! recall_settings {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident : $ty:ty = $default:expr
            $(=> $name:literal $(| $alias:literal)* $(, $source:ident)?)? ;
    )*) => {
        /// Recall settings of a profile: the weight of each source in fusion and the
        /// switches of the stages (`recall/stages/`). Read from `[recall]` as it is (unknown
        /// keys refused, missing ones at their defaults), then checked
        /// (`invalid_weight`).
        #[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct RecallSettings {
            $($(#[doc = $doc])* pub $field: $ty,)*
        }

        impl Default for RecallSettings {
            fn default() -> Self {
                Self { $($field: $default,)* }
            }
        }

        impl RecallSettings {
            /// The first weight that is not a finite number >= 0, with its key.
            pub(crate) fn invalid_weight(&self) -> Option<(&'static str, f64)> {
                $($(
                    // (`$name` marks a weight; every weight is an `f64`.)
                    let _ = $name;
                    let value: f64 = self.$field;
                    if !(value.is_finite() && value >= 0.0) {
                        return Some((concat!("recall.", stringify!($field)), value));
                    }
                )?)*
                None
            }

            /// The weight of a source or prior by the name recall reports it under (or an
            /// alias, [`canonical`](Self::canonical)), for ablations (`hypermem eval
            /// --weight`).
            pub fn weight_mut(&mut self, name: &str) -> Option<&mut f64> {
                let name = Self::canonical(name)?;
                $($(
                    if name == $name {
                        return Some(&mut self.$field);
                    }
                )?)*
                None
            }

            /// The canonical name of a source or prior (an alias gives its weight's name),
            /// `None` for an unknown one.
            pub fn canonical(name: &str) -> Option<&'static str> {
                match name {
                    $($($name $(| $alias)* => Some($name),)?)*
                    _ => None,
                }
            }

            /// The names [`weight_mut`](Self::weight_mut) knows that are candidate sources.
            pub const SOURCES: &[&str] = &[$($($(source_name!($source, $name),)?)?)*];
        }
    };
}

recall_settings! {
    /// Weight of the HDC similarity ranking.
    vector_weight: f64 = 1.0 => "vector" , source;
    /// Weight of the bm25 full-text ranking.
    fts_weight: f64 = 1.0 => "bm25" | "lexical" | "fts" | "phrase" , source;
    /// Added to the fused score of user-role events among the top candidates (a role
    /// prior: fused scores are at most `Σ weights / 61`, so 0.02 ranks user statements first).
    user_bonus: f64 = 1.0 => "user" | "role";
    /// Recall-time supersession (see [`crate::recall::supersede`]): a newer event that sets a
    /// different value of the same kind for the same thing moves above the older one.
    supersede: bool = true;
    /// ... when its rank-fusion evidence is at least this share of the older one's.
    supersede_ratio: f64 = 0.0 => "supersede";
    /// Places of a recall's top k (at most a third of k) reserved for the standing
    /// directives most similar to the query ([`crate::index::lexical::directives`]) when rank
    /// fusion left them out; 0 disables.
    directive_slots: usize = 3;
    /// Weight of the episodic source: events of the sealed episodes (and of the episodes
    /// of the concept) nearest the query; 0 (the default) disables it.
    episode_weight: f64 = 0.0 => "episode" | "episodic" , source;
    /// Weight of the ripple source: memories linked by synapses to the top three fused
    /// candidates, by activation (one hop); 0 disables it.
    ripple_weight: f64 = 0.1 => "ripple" , source;
    /// Share of a turn's normalized score each source gives the turns just before and
    /// after it in its session (neighbour smoothing, [`crate::recall::fusion`]); 0 disables.
    neighbour_weight: f64 = 0.3 => "neighbour" | "neighbor";
    /// Share of the best direct score of a session added to each candidate of that session
    /// (session prior); 0 disables.
    session_weight: f64 = 0.3 => "session";
    /// Added to candidates that happened inside the window of a time hint in the query
    /// ("last week", "on March 24, 2025"); bounded like every prior.
    hint_weight: f64 = 1.0 => "hint" | "time";
    /// Added to candidates that state a value of the kind the question asks for (a date
    /// for "when", an amount for "how much ... cost", a span for "how long";
    /// [`crate::recall::values::Wanted`]): a direct component, below the order's
    /// dominance margin, so it reorders near ties and never overturns what every source
    /// agrees on.
    answer_weight: f64 = 0.25 => "answer";
    /// Added to every candidate that tells something, not to a turn that only asks ("How
    /// long have you been playing?", [`crate::text::statements::asks_only`]): the turn
    /// after such a question answers it. A direct component, below the dominance margin;
    /// 0 disables.
    tells_weight: f64 = 0.15 => "tells";
    /// Added to every turn said by a speaker the query names ("What does Calvin do to
    /// relax?": Calvin's own turns), when it names one. A direct component; 0 disables.
    speaker_weight: f64 = 0.3 => "speaker";
    /// Weight of the semantic source (embeddings: the caller's or the profile's static
    /// model); it runs only where the project has semantic vectors.
    semantic_weight: f64 = 1.0 => "semantic" , source;
    /// Weight of the word-pair BM25 source.
    bigram_weight: f64 = 0.5 => "bigram" , source;
    /// Index a short turn's words with those of the short turn before it in its session,
    /// said by someone else, at half weight (a reply is about what the turn before named).
    /// Applied when the lexical index is built: a saved index built the other way is
    /// rebuilt.
    reply_context: bool = true;
    /// A turn lends its neighbour share across a turn after it that only asks ("How did
    /// that go?", [`crate::text::statements::asks_only`]) to the reply as well: the answer
    /// to a question about what a turn said is about it too.
    question_bridge: bool = true;
    /// Whether recall learns from its own results: co-recalled memories strengthen their
    /// synapses, which the ripple source then follows. Off by default, so recall never
    /// changes later rankings as a side effect (the same query over the same data gives the
    /// same answer); access counts for tier placement and the query log for knowledge gaps
    /// are kept either way.
    learn: bool = false;
    /// How the project's turns are read where a rule depends on their length (BM25's
    /// `k1`, the query's n-gram weight, the share of other inflections and compounds):
    /// `auto` (by the average turn length), `short` or `long`
    /// ([`crate::index::lexical::TurnRegime`]). Reported with every recall and by `eval`.
    turn_regime: TurnRegime = TurnRegime::Auto;
}
