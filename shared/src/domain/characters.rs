//! The characters that never belong in a name or an address: invisible
//! ones, ones with no agreed meaning, and towers of combining marks.

/// Unicode general category Cf: zero-width joiners and spaces, bidi overrides and
/// isolates, the BOM, soft hyphens. Invisible, so never part of a name or address.
/// Also the line and paragraph separators (Zl, Zp: U+2028, U+2029): not control
/// characters to Rust, but they break a line in logs, CSV exports and
/// JavaScript string literals, as a newline would.
pub(super) fn is_format_character(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    matches!(
        c.general_category(),
        GeneralCategory::Format | GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator
    )
}

/// Unassigned code points (Cn: a later Unicode may give them any meaning, and
/// nothing renders them today) and private-use ones (Co: a meaning only some
/// font agrees on).
pub(super) fn is_unassigned_or_private(c: char) -> bool {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    matches!(
        c.general_category(),
        GeneralCategory::Unassigned | GeneralCategory::PrivateUse
    )
}

/// The longest run of combining marks (Mn, Mc, Me) in `text`.
pub(super) fn most_marks_in_a_row(text: &str) -> usize {
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c.general_category_group() == GeneralCategoryGroup::Mark {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}
