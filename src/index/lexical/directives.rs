//! Standing directives: what a user asked to hold from now on ("Always include version
//! numbers when I ask about dependencies", "I prefer minimal dependencies").
//!
//! Such a statement governs future answers on its topic, yet a later request rarely repeats
//! its words ("Which libraries does this project use?"), so neither similarity source ranks
//! it high. Recall keeps the project's directives apart and ranks them against every query
//! as a source of their own (see `Memory::recall_with`). Detection is lexical and English:
//! a sentence that opens with an imperative of permanence (`always`, `never`, `from now on`,
//! optionally after `please`; not "never mind", nor an opening followed by a subject of its
//! own, "from now on the stand-up is at 10:30", which states a change), or a first-person
//! preference (`I prefer`, `I'd rather`, `my preference`): the same tables ([`crate::text::en`]) and matching
//! ([`crate::text::statements`]) the curator's candidate beliefs are read with, which
//! also recognise decisions, boundaries and corrections.
//!
//! A directive is what the agent's own user asks of the agent. A turn of a *named speaker*
//! (a participant of a multi-party conversation, the event's `speaker` field) is said to the
//! other participants: "Always look on the bright side" there is conversation, not an
//! instruction to the agent, and is not a directive. This matters beyond precision: directives
//! take reserved places of a recall's top k, so every false one costs a real result.

use crate::ledger::Role;
use crate::text::en::{DIRECTIVE_OPENINGS, PREFERENCE_PHRASES};
use crate::text::statements::{contains, instructs};

/// Whether an event states a standing directive: a sentence of the agent's user (role
/// user, no named speaker) opening with an imperative of permanence, or a first-person
/// preference.
pub fn is_directive(role: Role, speaker: Option<&str>, text: &str) -> bool {
    if role != Role::User || speaker.is_some() {
        return false;
    }
    text.split(['.', '!', '?', '\n', ';'])
        .map(crate::text::tokens)
        .any(|words| {
            instructs(&words, DIRECTIVE_OPENINGS)
                || PREFERENCE_PHRASES.iter().any(|p| contains(&words, p))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_and_preferences_are_directives() {
        for text in [
            "Always include version numbers when I ask about libraries.",
            "Thanks! Please never use emojis in replies.",
            "From now on, answer in French",
            "I'm trying to keep it small, so I prefer simple, minimal dependencies, how?",
            "For trips I'd rather take the train",
        ] {
            assert!(is_directive(Role::User, None, text), "{text}");
        }
    }

    #[test]
    fn other_statements_and_other_speakers_are_not() {
        for text in [
            "It always crashes when I click save",
            "Can you help me deploy this?",
            "What do you prefer?",
            "Sofia moved the stand-up; from now on it is at 10:30.",
            "Never mind, the build passes now.",
        ] {
            assert!(!is_directive(Role::User, None, text), "{text}");
        }
        assert!(!is_directive(
            Role::Assistant,
            None,
            "Always include version numbers."
        ));
    }

    #[test]
    fn a_named_speaker_talks_to_the_other_participants_not_to_the_agent() {
        for text in [
            "Always look on the bright side!",
            "I'd rather stay home tonight, honestly.",
        ] {
            assert!(is_directive(Role::User, None, text), "{text}");
            assert!(!is_directive(Role::User, Some("Robin"), text), "{text}");
        }
    }
}
