//! What the profile says of the person: a name (given or family) and a
//! phone number. Personal data: Debug never prints either.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::characters::{is_format_character, is_unassigned_or_private, most_marks_in_a_row};
use super::invalid::Invalid;

/// An E.164 phone number: `+`, a non-zero digit, then 1 to 14 more digits.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

impl Phone {
    /// Checks a user-supplied number; only surrounding whitespace is removed, nothing is reformatted.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let raw = raw.trim();
        let digits = raw
            .strip_prefix('+')
            .ok_or(Invalid("must be E.164, like +14155550100"))?;
        let well_formed =
            (2..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit()) && !digits.starts_with('0');
        if !well_formed {
            return Err(Invalid("must be E.164, like +14155550100"));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The number as stored and shown in the profile.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Phone(<redacted>)")
    }
}

impl TryFrom<String> for Phone {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Phone> for String {
    fn from(value: Phone) -> Self {
        value.0
    }
}

/// A first or last name: trimmed and NFC-normalised (one stored form for what
/// looks the same), 1 to 100 characters, no control or format characters.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PersonName(String);

impl PersonName {
    /// The most characters (after NFC) a name may have.
    pub const MAX_CHARS: usize = 100;
    /// The most combining marks (after NFC) on one character: enough for
    /// every script's real names (Vietnamese, Hebrew with points, Indic
    /// scripts take two or three), not for a tower of marks drawn over the
    /// lines around it.
    pub const MAX_COMBINING_MARKS: usize = 4;

    /// Trims, NFC-normalises and checks a user-supplied name; the result is what is stored.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        use unicode_normalization::UnicodeNormalization;
        let normalized: String = raw.trim().nfc().collect();
        let chars = normalized.chars().count();
        if chars == 0 || chars > Self::MAX_CHARS {
            return Err(Invalid("must be 1 to 100 characters"));
        }
        if normalized.chars().any(char::is_control) {
            return Err(Invalid("must not contain control characters"));
        }
        if normalized.chars().any(is_format_character) {
            return Err(Invalid("must not contain invisible formatting characters"));
        }
        if normalized.chars().any(is_unassigned_or_private) {
            return Err(Invalid("must not contain unassigned or private-use characters"));
        }
        if most_marks_in_a_row(&normalized) > Self::MAX_COMBINING_MARKS {
            return Err(Invalid("must not stack more than 4 combining marks on one character"));
        }
        Ok(Self(normalized))
    }

    /// The normalised name, as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PersonName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PersonName(<redacted>)")
    }
}

impl TryFrom<String> for PersonName {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<PersonName> for String {
    fn from(value: PersonName) -> Self {
        value.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_refuse_line_and_paragraph_separators() {
        for bad in ["Ada\u{2028}Lovelace", "Ada\u{2029}Byron", "\u{2028}"] {
            assert!(PersonName::parse(bad).is_err(), "{bad:?}");
        }
        // At either end they are whitespace: trimmed, never stored.
        assert_eq!(PersonName::parse("\u{2029}Ada\u{2028}").unwrap().as_str(), "Ada");
        assert!(PersonName::parse("Mary Ann").is_ok());
    }

    #[test]
    fn phone_is_e164() {
        assert_eq!(Phone::parse("+14155550100").unwrap().as_str(), "+14155550100");
        assert!(Phone::parse("+12").is_ok());
        assert!(Phone::parse("+123456789012345").is_ok());
        for bad in ["14155550100", "+0123", "+1", "+1234567890123456", "+1 415", "+1a", ""] {
            assert!(Phone::parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn names_are_trimmed_and_bounded() {
        assert_eq!(PersonName::parse("  Ada ").unwrap().as_str(), "Ada");
        assert!(PersonName::parse(&"é".repeat(100)).is_ok());
        assert!(PersonName::parse(&"é".repeat(101)).is_err());
        assert!(PersonName::parse("   ").is_err());
        assert!(PersonName::parse("A\u{0}da").is_err());
    }

    #[test]
    fn names_are_nfc_and_refuse_format_characters() {
        let decomposed = PersonName::parse("Zoe\u{0308}").unwrap();
        assert_eq!(decomposed.as_str(), "Zo\u{eb}");
        assert_eq!(decomposed, PersonName::parse("Zo\u{eb}").unwrap());
        for bad in ["A\u{200b}da", "\u{202e}adA", "Ada\u{feff}", "A\u{2066}da"] {
            assert!(PersonName::parse(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn names_refuse_unassigned_private_use_and_towers_of_marks() {
        for bad in [
            "Ada\u{ffff}",
            "\u{e000}Ada",
            "A\u{f8ff}da",
            "Ada\u{10fffd}",
            "\u{50000}",
        ] {
            assert!(PersonName::parse(bad).is_err(), "accepted {bad:?}");
        }
        let tower = format!("Z{}", "\u{0301}".repeat(90));
        assert!(PersonName::parse(&tower).is_err());
        // Real names keep their marks: Vietnamese, Hebrew with points, Devanagari.
        for good in [
            "Nguy\u{1ec5}n",
            "Tr\u{1ea7}n",
            "\u{05e9}\u{05c1}\u{05b8}\u{05dc}\u{05d5}\u{05b9}\u{05dd}",
            "\u{0926}\u{0947}\u{0935}\u{093f}",
        ] {
            assert!(PersonName::parse(good).is_ok(), "refused {good:?}");
        }
        // Four marks on one character pass, five do not (after NFC, which composes what it can).
        assert!(PersonName::parse(&format!("x{}", "\u{0301}\u{0302}\u{0303}\u{0304}")).is_ok());
        assert!(PersonName::parse(&format!("x{}", "\u{0301}\u{0302}\u{0303}\u{0304}\u{0305}")).is_err());
    }
}
