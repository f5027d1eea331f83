//! The address policy: canonical forms, subaddresses, disposable and allowed domains.

use super::super::setting::{From, Reaches, Setting, Value};

/// Which spellings of an address are one address for uniqueness and look-up: none (as typed), gmail (dots and +tags ignored on gmail.com and googlemail.com), subaddress (+tags ignored everywhere), or both.
pub const EMAIL_CANONICALIZATION: Setting = Setting {
    variable: Some("EMAIL_CANONICALIZATION"),
    parameter: Some("EmailCanonicalization"),
    value: Value::Choice {
        default: "none",
        allowed: &["none", "gmail", "subaddress", "gmail,subaddress"],
    },
    about: "Which spellings of an address are one address for uniqueness and look-up: none (as typed), gmail (dots and +tags ignored on gmail.com and googlemail.com), subaddress (+tags ignored everywhere), or both. Changing it on a live table is a migration (docs/address-policy.md).",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Only while cargo xtask canonicalize moves a live table: the previous EmailCanonicalization, so claims not yet moved still count.
pub const EMAIL_CANONICALIZATION_FROM: Setting = Setting {
    variable: Some("EMAIL_CANONICALIZATION_FROM"),
    parameter: Some("EmailCanonicalizationFrom"),
    value: Value::Choice {
        default: "",
        allowed: &["", "none", "gmail", "subaddress", "gmail,subaddress"],
    },
    about: "Only while cargo xtask canonicalize moves a live table: the previous EmailCanonicalization, so claims not yet moved still count. Empty otherwise.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// true refuses new addresses with a +tag (422 ADDRESS_NOT_ALLOWED) when an address is added, and at sign-up.
pub const BLOCK_SUBADDRESSES: Setting = Setting {
    variable: Some("BLOCK_SUBADDRESSES"),
    parameter: Some("BlockSubaddresses"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true refuses new addresses with a +tag (422 ADDRESS_NOT_ALLOWED) when an address is added, and at sign-up.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// true refuses new addresses at disposable domains (the shipped list, and DisposableEmailDomainsExtra).
pub const BLOCK_DISPOSABLE_DOMAINS: Setting = Setting {
    variable: Some("BLOCK_DISPOSABLE_DOMAINS"),
    parameter: Some("BlockDisposableDomains"),
    value: Value::Choice {
        default: "false",
        allowed: &["true", "false"],
    },
    about: "true refuses new addresses at disposable domains (the shipped list, and DisposableEmailDomainsExtra).",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// More disposable domains, comma-separated, refused with BlockDisposableDomains=true.
pub const DISPOSABLE_EMAIL_DOMAINS_EXTRA: Setting = Setting {
    variable: Some("DISPOSABLE_EMAIL_DOMAINS_EXTRA"),
    parameter: Some("DisposableEmailDomainsExtra"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^[A-Za-z0-9.,* -]*$"),
        constraint: None,
    },
    about: "More disposable domains, comma-separated, refused with BlockDisposableDomains=true.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};

/// Comma-separated domains new addresses must be at (*.example.com for its subdomains); empty admits any.
pub const ALLOWED_EMAIL_DOMAINS: Setting = Setting {
    variable: Some("ALLOWED_EMAIL_DOMAINS"),
    parameter: Some("AllowedEmailDomains"),
    value: Value::Text {
        default: Some(""),
        pattern: Some("^[A-Za-z0-9.,* -]*$"),
        constraint: None,
    },
    about: "Comma-separated domains new addresses must be at (*.example.com for its subdomains); empty admits any. Closes sign-up to other domains.",
    why: &[],
    reaches: Reaches::Every(From::Parameter),
};
