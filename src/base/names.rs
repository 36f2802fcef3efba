//! Closed sets of names the engine's results carry (signals, pack slots, pulse phases,
//! suppression reasons, …), each declared once by [`names!`].

/// Declares an enum whose variants are named once: `Variant = "snake_name",`. The enum
/// (de)serializes as those names and gets `ALL`, `name()`, `Display` and comparison with a
/// `&str`, so a name in JSON, on the command line and in code is the same text. Attributes
/// before the enum (docs, `#[derive(Default)]`) and before each variant (docs,
/// `#[default]`) are kept.
macro_rules! names {
    (
        $(#[$meta:meta])*
        $vis:vis enum $enum:ident {
            $($(#[$vmeta:meta])* $variant:ident = $name:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize,
            serde::Deserialize, schemars::JsonSchema,
        )]
        $vis enum $enum {
            $($(#[$vmeta])* #[serde(rename = $name)] $variant,)+
        }

        impl $enum {
            /// Every value, in declaration order.
            pub const ALL: &[$enum] = &[$($enum::$variant,)+];

            /// Its name in results, reports and on the command line.
            pub const fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl PartialEq<&str> for $enum {
            fn eq(&self, other: &&str) -> bool {
                self.name() == *other
            }
        }
    };
}

pub(crate) use names;

#[cfg(test)]
mod tests {
    names! {
        /// Two names.
        enum Pair {
            /// The first.
            First = "first_one",
            /// The second.
            Second = "second",
        }
    }

    #[test]
    fn a_name_is_the_same_text_in_json_display_and_comparison() {
        for &p in Pair::ALL {
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
            assert_eq!(p.to_string(), p.name());
            assert!(p == p.name());
            let back: Pair = serde_json::from_value(serde_json::json!(p.name())).unwrap();
            assert_eq!(back, p);
        }
        assert_eq!(Pair::First.name(), "first_one");
        assert!(serde_json::from_value::<Pair>(serde_json::json!("third")).is_err());
    }
}
