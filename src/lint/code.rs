//! The lint rules' codes as one enum: a code is a value the compiler knows, not a string typed again at each use.

/// Declares [`RuleCode`] from `Variant "TEXT"` pairs, in code order.
macro_rules! rule_codes {
    ($($variant:ident $text:literal),* $(,)?) => {
        /// A lint rule's stable code: what `allow "GPxxx"` names and every finding of the rule carries. Declared in
        /// code order, so the derived order is the order of the codes' text.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RuleCode {
            $($variant),*
        }

        impl RuleCode {
            /// Every code, in order.
            pub const ALL: &[RuleCode] = &[$(RuleCode::$variant),*];

            /// The code as users write and read it: `GP001`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(RuleCode::$variant => $text),*
                }
            }
        }
    };
}

rule_codes! {
    Gp000 "GP000",
    Gp001 "GP001",
    Gp002 "GP002",
    Gp003 "GP003",
    Gp004 "GP004",
    Gp005 "GP005",
    Gp006 "GP006",
    Gp007 "GP007",
    Gp008 "GP008",
    Gp009 "GP009",
    Gp010 "GP010",
    Gp011 "GP011",
    Gp012 "GP012",
    Gp013 "GP013",
    Gp014 "GP014",
    Gp015 "GP015",
    Gp016 "GP016",
    Gp017 "GP017",
    Gp018 "GP018",
    Gp019 "GP019",
    Gp020 "GP020",
    Gp021 "GP021",
    Gp024 "GP024",
    Gp025 "GP025",
    Gp026 "GP026",
    Gp028 "GP028",
    Gp032 "GP032",
    Gp033 "GP033",
    Gp034 "GP034",
    Gp035 "GP035",
    Gp036 "GP036",
    Gp038 "GP038",
    Gp039 "GP039",
    Gp042 "GP042",
    Gp050 "GP050",
    Gp051 "GP051",
    Gp052 "GP052",
}

impl RuleCode {
    /// The code `text` names, if any (`allow "GP999"` names none).
    pub fn parse(text: &str) -> Option<RuleCode> {
        RuleCode::ALL.iter().copied().find(|code| code.as_str() == text)
    }
}

impl std::fmt::Display for RuleCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::RuleCode;

    #[test]
    fn codes_are_unique_and_in_text_order() {
        for pair in RuleCode::ALL.windows(2) {
            assert!(pair[0].as_str() < pair[1].as_str(), "{} before {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn a_code_parses_back_from_its_text() {
        for code in RuleCode::ALL {
            assert_eq!(RuleCode::parse(code.as_str()), Some(*code));
        }
        assert_eq!(RuleCode::parse("GP999"), None);
    }
}
