//! PersonName: what parses is trimmed, NFC, 1 to 100 characters, without
//! control or format characters, line and paragraph separators (U+2028,
//! U+2029), unassigned or private-use code points, or more than 4 combining
//! marks in a row, and parses to itself; refusals are exactly the inputs that
//! break one of those rules.
#![no_main]

use fuzz_support::{assert_visible, is_format};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use unicode_normalization::{UnicodeNormalization, is_nfc};
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};
use user_service::domain::PersonName;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = PersonName::parse(raw);
    let via_serde = serde_json::from_value::<PersonName>(Value::String(raw.to_owned())).ok();
    assert_eq!(via_serde.as_ref(), parsed.as_ref().ok(), "serde and parse disagree");

    let expected: String = raw.trim().nfc().collect();
    let chars = expected.chars().count();
    let line_break = |c: char| matches!(c, '\u{2028}' | '\u{2029}');
    let odd = |c: char| matches!(c.general_category(), GeneralCategory::Unassigned | GeneralCategory::PrivateUse);
    // The longest run of marks, counted its own way: split at every non-mark.
    let marks = expected
        .split(|c: char| c.general_category_group() != GeneralCategoryGroup::Mark)
        .map(|run| run.chars().count())
        .max()
        .unwrap_or(0);
    let acceptable = (1..=PersonName::MAX_CHARS).contains(&chars)
        && !expected.chars().any(|c| c.is_control() || is_format(c) || line_break(c) || odd(c))
        && marks <= PersonName::MAX_COMBINING_MARKS;
    assert_eq!(parsed.is_ok(), acceptable, "verdict differs from the rules");
    let Ok(name) = parsed else {
        return;
    };
    let stored = name.as_str();
    assert_eq!(stored, expected);
    assert!(is_nfc(stored), "stored name is not NFC");
    assert_eq!(stored, stored.trim(), "stored name is not trimmed");
    assert_visible("name", stored);
    assert_eq!(
        PersonName::parse(stored).as_ref(),
        Ok(&name),
        "stored form is not a fixed point"
    );
    assert_eq!(format!("{name:?}"), "PersonName(<redacted>)", "Debug shows the name");
});
