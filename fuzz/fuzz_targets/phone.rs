//! Phone: accepted exactly when the trimmed input is E.164 (`+`, a non-zero
//! digit, 1 to 14 more digits); the stored form parses to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use user_service::domain::Phone;

/// E.164 as the README states it, written independently of the parser.
fn is_e164(raw: &str) -> bool {
    let Some(digits) = raw.trim().strip_prefix('+') else {
        return false;
    };
    let bytes = digits.as_bytes();
    (2..=15).contains(&bytes.len()) && bytes.iter().all(u8::is_ascii_digit) && bytes[0] != b'0'
}

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = Phone::parse(raw);
    assert_eq!(parsed.is_ok(), is_e164(raw), "verdict differs from E.164");
    let via_serde = serde_json::from_value::<Phone>(Value::String(raw.to_owned())).ok();
    assert_eq!(via_serde.as_ref(), parsed.as_ref().ok(), "serde and parse disagree");
    let Ok(phone) = parsed else {
        return;
    };
    assert_eq!(phone.as_str(), raw.trim());
    assert_eq!(
        Phone::parse(phone.as_str()).as_ref(),
        Ok(&phone),
        "stored form is not a fixed point"
    );
    assert_eq!(format!("{phone:?}"), "Phone(<redacted>)", "Debug shows the number");
});
