//! EmailAddress: what parses is normalized, visible and bounded, and its
//! normalized form parses to itself; serde and Debug agree with `parse`.
#![no_main]

use fuzz_support::assert_visible;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use user_service::domain::EmailAddress;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = EmailAddress::parse(raw);
    // A JSON body reaches the same parser: same verdict, same value.
    let via_serde = serde_json::from_value::<EmailAddress>(Value::String(raw.to_owned())).ok();
    assert_eq!(via_serde.as_ref(), parsed.as_ref().ok(), "serde and parse disagree");
    let Ok(address) = parsed else {
        return;
    };
    let normal = address.as_str();

    assert_eq!(
        EmailAddress::parse(normal).as_ref(),
        Ok(&address),
        "normal form is not a fixed point"
    );
    assert_visible("address", normal);
    assert!(!normal.chars().any(char::is_whitespace), "address kept whitespace");
    assert!(
        normal.is_ascii(),
        "stored form must be ASCII (A-label domain, ASCII local part)"
    );
    assert_eq!(normal, normal.to_ascii_lowercase(), "stored form must be lower case");
    assert!(normal.len() <= EmailAddress::MAX_LEN);
    let (local, domain) = normal.split_once('@').unwrap_or_default();
    assert!(!local.is_empty() && local.len() <= EmailAddress::MAX_LOCAL_LEN);
    assert!(!domain.is_empty() && !domain.contains('@'), "exactly one @");
    assert!(
        domain.split('.').count() >= 2 && domain.split('.').all(|l| !l.is_empty() && l.len() <= 63),
        "domain labels"
    );
    // Case never makes a second address: the upper-cased input is the same one.
    assert_eq!(
        EmailAddress::parse(&raw.to_ascii_uppercase()).as_ref(),
        Ok(&address),
        "case made a different address"
    );
    assert_eq!(
        serde_json::to_value(&address).ok(),
        Some(Value::String(normal.to_owned()))
    );
    assert_eq!(
        format!("{address:?}"),
        "EmailAddress(<redacted>)",
        "Debug shows the address"
    );
});
