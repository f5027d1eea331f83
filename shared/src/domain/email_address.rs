//! The email address: normalised once (trimmed, lower-cased, an
//! internationalised domain as its A-label), then the one form keys, claims
//! and mail use.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::characters::is_format_character;
use super::invalid::Invalid;

/// A normalized email address: trimmed and lowercased; an internationalised
/// domain is stored in its ASCII (A-label, punycode) form. The local part must be
/// ASCII, because SES cannot deliver to any other. Unicode format characters
/// (zero-width, bidi controls, BOM) are refused, so two addresses that look the
/// same cannot get separate claims.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailAddress(String);

impl EmailAddress {
    /// The longest normalised address accepted, in bytes (the SMTP path limit).
    pub const MAX_LEN: usize = 254;
    /// The longest local part (before the `@`) accepted, in bytes.
    pub const MAX_LOCAL_LEN: usize = 64;

    /// Normalises and checks a user-supplied address; claims and look-ups key on the result.
    ///
    /// ```
    /// use user_service::domain::EmailAddress;
    ///
    /// // Trimmed and lower-cased; an internationalised domain is stored as its A-label.
    /// let ada = EmailAddress::parse("  Ada@Bücher.Example ").unwrap();
    /// assert_eq!(ada.as_str(), "ada@xn--bcher-kva.example");
    /// assert!(EmailAddress::parse("ada@localhost").is_err());
    /// ```
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(Invalid("must not be empty"));
        }
        if trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Invalid("must not contain whitespace or control characters"));
        }
        if trimmed.chars().any(is_format_character) {
            return Err(Invalid("must not contain invisible formatting characters"));
        }
        let (local, domain) = match trimmed.split_once('@') {
            Some((l, d)) if !d.contains('@') => (l, d),
            _ => return Err(Invalid("must contain exactly one @")),
        };
        if !local.is_ascii() {
            return Err(Invalid("local part must be ASCII"));
        }
        let local = local.to_ascii_lowercase();
        if local.is_empty() || local.len() > Self::MAX_LOCAL_LEN {
            return Err(Invalid("local part must be 1 to 64 characters"));
        }
        if local.starts_with('.') || local.ends_with('.') || local.contains("..") {
            return Err(Invalid("local part has a misplaced dot"));
        }
        let domain = ascii_domain(domain).ok_or(Invalid("domain is not valid"))?;
        let normalized = format!("{local}@{domain}");
        if normalized.len() > Self::MAX_LEN {
            return Err(Invalid("must be at most 254 characters"));
        }
        Ok(Self(normalized))
    }

    /// The normalised address: the stored form, and the one mail is sent to.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The domain in lower-case ASCII: an internationalised one becomes its A-label
/// form (UTS 46), an ASCII one must be letters, digits and inner hyphens.
fn ascii_domain(domain: &str) -> Option<String> {
    let ascii = if domain.is_ascii() {
        domain.to_ascii_lowercase()
    } else {
        idna::domain_to_ascii_strict(domain).ok()?
    };
    is_valid_domain(&ascii).then_some(ascii)
}

fn is_valid_domain(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(label_ok)
        && labels
            .last()
            .is_some_and(|tld| !tld.chars().all(|c| c.is_ascii_digit()))
}

/// Addresses are PII: Debug never prints one, so a stray `{:?}` cannot leak it to the log.
impl fmt::Debug for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EmailAddress(<redacted>)")
    }
}

impl TryFrom<String> for EmailAddress {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<EmailAddress> for String {
    fn from(value: EmailAddress) -> Self {
        value.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_is_trimmed_and_lowercased_only() {
        let e = EmailAddress::parse("  John.Doe+News@Example.COM ").unwrap();
        assert_eq!(e.as_str(), "john.doe+news@example.com");
    }

    #[test]
    fn email_rejections() {
        let long_local = format!("{}@example.com", "a".repeat(65));
        let long_total = format!("a@{}.com", "b".repeat(250));
        let cases = [
            "",
            "   ",
            "no-at.example.com",
            "two@@example.com",
            "a@b@example.com",
            "with space@example.com",
            "tab\t@example.com",
            "ctl\u{7}@example.com",
            "a@localhost",
            "a@-bad.com",
            "a@bad-.com",
            "a@exa_mple.com",
            "a@example..com",
            "a@123.456",
            "@example.com",
            ".a@example.com",
            "a..b@example.com",
            long_local.as_str(),
            long_total.as_str(),
        ];
        for case in cases {
            assert!(EmailAddress::parse(case).is_err(), "accepted {case:?}");
        }
    }

    #[test]
    fn email_refuses_format_characters_and_non_ascii_local_parts() {
        for case in [
            "ad\u{200b}a@example.com",
            "ada@exa\u{200d}mple.com",
            "\u{feff}ada@example.com",
            "ada\u{202e}@example.com",
            "ada@example.com\u{2066}",
            "a\u{ad}da@example.com",
            "ädä@example.com",
            "аda@example.com",
        ] {
            assert!(EmailAddress::parse(case).is_err(), "accepted {case:?}");
        }
    }

    #[test]
    fn international_domains_are_stored_as_a_labels() {
        let e = EmailAddress::parse("Ada@Bücher.Example").unwrap();
        assert_eq!(e.as_str(), "ada@xn--bcher-kva.example");
        assert_eq!(EmailAddress::parse("ada@xn--bcher-kva.example").unwrap(), e);
        assert!(EmailAddress::parse("ada@xn--.example").is_err());
    }

    #[test]
    fn email_length_limits_are_inclusive() {
        let local = "a".repeat(64);
        assert!(EmailAddress::parse(&format!("{local}@example.com")).is_ok());
        // 254 exactly: 1 + 1 + 63 + 1 + 63 + 1 + 63 + 1 + 60
        let addr = format!(
            "a@{}.{}.{}.{}",
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(63),
            "e".repeat(60)
        );
        assert_eq!(addr.len(), 254);
        assert!(EmailAddress::parse(&addr).is_ok());
    }

    #[test]
    fn email_debug_is_redacted() {
        let e = EmailAddress::parse("secret@example.com").unwrap();
        assert!(!format!("{e:?}").contains("secret"));
    }
}
