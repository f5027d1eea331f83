//! The instant: UTC, to the millisecond, stored as text that sorts in time order.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;

use super::invalid::Invalid;

/// A UTC instant stored as RFC 3339 with milliseconds (`2026-11-21T10:00:00.000Z`).
/// That form sorts lexicographically in time order, which conditions such as
/// `expiresAt < :now` rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Timestamp(OffsetDateTime);

const TIMESTAMP_FORMAT: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

impl Timestamp {
    /// The current instant, cut to whole milliseconds so it equals its stored form.
    pub fn now() -> Self {
        Self::from_datetime(OffsetDateTime::now_utc())
    }

    fn from_datetime(dt: OffsetDateTime) -> Self {
        let dt = dt.to_offset(time::UtcOffset::UTC);
        // Stored precision is milliseconds: keep the value equal to what reads back.
        let millis = dt.millisecond();
        Self(dt.replace_millisecond(millis).unwrap_or(dt))
    }

    /// Reads an RFC 3339 instant at any offset, converted to UTC and cut to milliseconds.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339)
            .map(Self::from_datetime)
            .map_err(|_| Invalid("must be an RFC 3339 timestamp"))
    }

    /// The instant `seconds` later (earlier when negative), for expiries and resend windows.
    pub fn plus_seconds(self, seconds: i64) -> Self {
        Self(self.0 + time::Duration::seconds(seconds))
    }

    /// Whole seconds from `self` until `later`, rounded up; zero when `later` has passed.
    pub fn seconds_until(self, later: Timestamp) -> u64 {
        let millis = (later.0 - self.0).whole_milliseconds();
        u64::try_from((millis + 999) / 1000).unwrap_or(0)
    }

    /// Whole seconds since the Unix epoch, as TTL attributes and rate-limit windows count time.
    pub fn unix_seconds(self) -> i64 {
        self.0.unix_timestamp()
    }

    /// Milliseconds since the Unix epoch (saturating), the form a manual clock holds.
    pub fn unix_millis(self) -> i64 {
        i64::try_from(self.0.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
    }

    /// The instant `millis` milliseconds after the Unix epoch (clamped to the representable range).
    pub fn from_unix_millis(millis: i64) -> Self {
        let nanos = i128::from(millis) * 1_000_000;
        Self::from_datetime(OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(OffsetDateTime::UNIX_EPOCH))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.format(TIMESTAMP_FORMAT).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl TryFrom<String> for Timestamp {
    type Error = Invalid;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Timestamp> for String {
    fn from(value: Timestamp) -> Self {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_format_is_rfc3339_millis_utc() {
        let t = Timestamp::parse("2026-11-21T10:00:00.123456+01:00").unwrap();
        assert_eq!(t.to_string(), "2026-11-21T09:00:00.123Z");
        let later = t.plus_seconds(60);
        assert_eq!(later.to_string(), "2026-11-21T09:01:00.123Z");
        assert_eq!(t.seconds_until(later), 60);
        assert_eq!(later.seconds_until(t), 0);
        assert_eq!(Timestamp::from_unix_millis(t.unix_millis()), t);
    }
}
