//! The admin list's request (`GET /admin/user-list`): its status filter, page
//! size and cursor, parsed strictly. Pure, so the fuzz targets run it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use lambda_http::{Request, RequestExt};

use crate::domain::{Invalid, ListPosition, Timestamp, UserId, UserStatus};
use crate::http::Problem;

/// Users on a page when the request names no `limit`.
pub const DEFAULT_LIMIT: usize = 50;
/// Most users on one page.
pub const MAX_LIMIT: usize = 100;

/// The list's parameters, as the request gives them (each at most once).
pub fn list_query(req: &Request) -> Result<ListQuery, Problem> {
    ListQuery::parse(|name| optional_param(req, name))
}

/// A query parameter given at most once; `None` when absent.
pub(crate) fn optional_param<'a>(req: &'a Request, name: &str) -> Result<Option<&'a str>, Problem> {
    let Some(params) = req.query_string_parameters_ref() else {
        return Ok(None);
    };
    match params.all(name).as_deref() {
        None | Some([]) => Ok(None),
        Some([one]) => Ok(Some(one)),
        Some(_) => Err(Problem::validation(name, "is given more than once")),
    }
}

/// Which statuses a listing shows: one, or (by default) every user not deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    /// Active and suspended users: no `status` parameter.
    NotDeleted,
    /// Users of this status alone.
    Only(UserStatus),
}

impl StatusFilter {
    /// The statuses whose GSI2 shards the listing merges.
    pub fn statuses(&self) -> &'static [UserStatus] {
        match self {
            Self::NotDeleted => &[UserStatus::Active, UserStatus::Suspended],
            Self::Only(UserStatus::Active) => &[UserStatus::Active],
            Self::Only(UserStatus::Suspended) => &[UserStatus::Suspended],
            Self::Only(UserStatus::Deleted) => &[UserStatus::Deleted],
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::NotDeleted => "notDeleted",
            Self::Only(status) => status.as_str(),
        }
    }
}

/// A request's parameters, parsed: the filter, the page size and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// The statuses listed.
    pub filter: StatusFilter,
    /// Users on the page, 1 to [`MAX_LIMIT`].
    pub limit: usize,
    /// The position the page starts after: the previous page's last user.
    pub after: Option<ListPosition>,
}

impl ListQuery {
    /// The parameters `param` gives (each at most once); a 400 names the bad one.
    pub fn parse<'a>(param: impl Fn(&str) -> Result<Option<&'a str>, Problem>) -> Result<Self, Problem> {
        let filter = match param("status")? {
            None => StatusFilter::NotDeleted,
            Some(raw) => StatusFilter::Only(raw.parse().map_err(|e| Problem::validation("status", e))?),
        };
        let limit = match param("limit")? {
            None => DEFAULT_LIMIT,
            Some(raw) => parse_limit(raw).map_err(|e| Problem::validation("limit", e))?,
        };
        let after = match param("cursor")? {
            None => None,
            Some(raw) => {
                let cursor = Cursor::parse(raw).map_err(|e| Problem::validation("cursor", e))?;
                // A cursor carries its listing's filter: another filter's place
                // means nothing here, and a client mixing them has a bug.
                if cursor.filter != filter {
                    return Err(Problem::validation("cursor", "belongs to a listing of another status"));
                }
                Some(cursor.after)
            }
        };
        Ok(Self { filter, limit, after })
    }
}

/// 1 to 100, in plain decimal digits.
pub(crate) fn parse_limit(raw: &str) -> Result<usize, Invalid> {
    const OUT: Invalid = Invalid("must be a whole number from 1 to 100");
    if raw.is_empty() || raw.len() > 3 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(OUT);
    }
    raw.parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_LIMIT).contains(n))
        .ok_or(OUT)
}

/// Where the next page starts, as the client holds it: opaque (base64url of
/// `1|<filter>|<createdAt>|<sub>`), and checked, not signed. A cursor read
/// back must be exactly one this code writes, for the same filter; its
/// position becomes `GSI2SK > :after` of typed values, never a key the client
/// chose. A crafted cursor can only start the listing at a time the admin
/// could page to anyway, so a signature would protect nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The listing's filter.
    pub filter: StatusFilter,
    /// The last user of the previous page.
    pub after: ListPosition,
}

const CURSOR_VERSION: &str = "1";

impl Cursor {
    /// The text the client passes back as `cursor`.
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.plain())
    }

    fn plain(&self) -> String {
        format!(
            "{CURSOR_VERSION}|{}|{}|{}",
            self.filter.label(),
            self.after.created_at,
            self.after.user_id
        )
    }

    /// A cursor this code wrote; anything else (another encoding, version,
    /// spelling of the time, a sub that is no sub) is invalid.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        const BAD: Invalid = Invalid("is not a cursor this listing returned");
        if raw.len() > 256 {
            return Err(BAD);
        }
        let bytes = URL_SAFE_NO_PAD.decode(raw).map_err(|_| BAD)?;
        let text = String::from_utf8(bytes).map_err(|_| BAD)?;
        let mut parts = text.split('|');
        let (Some(CURSOR_VERSION), Some(filter), Some(created_at), Some(user), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(BAD);
        };
        let filter = match filter {
            "notDeleted" => StatusFilter::NotDeleted,
            other => StatusFilter::Only(other.parse().map_err(|_| BAD)?),
        };
        let cursor = Self {
            filter,
            after: ListPosition {
                created_at: Timestamp::parse(created_at).map_err(|_| BAD)?,
                user_id: UserId::parse_listed(user).map_err(|_| BAD)?,
            },
        };
        // One spelling per cursor: the same text must come back out.
        if cursor.encode() != raw {
            return Err(BAD);
        }
        Ok(cursor)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn sub(n: u32) -> UserId {
        UserId::parse_sub(&format!("{n:08x}-2b7d-4b0e-9a57-0e0f0b1c2d3e")).unwrap()
    }

    fn cursor(filter: StatusFilter) -> Cursor {
        Cursor {
            filter,
            after: ListPosition {
                created_at: Timestamp::parse("2026-11-21T10:00:00.123Z").unwrap(),
                user_id: sub(7),
            },
        }
    }

    fn query(params: &[(&str, &str)]) -> Result<ListQuery, Problem> {
        ListQuery::parse(|name| Ok(params.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)))
    }

    fn refused_field(params: &[(&str, &str)]) -> Option<String> {
        let problem = query(params).err()?;
        assert_eq!((problem.status.as_u16(), problem.code), (400, "VALIDATION_FAILED"));
        problem.field
    }

    #[test]
    fn a_cursor_reads_back_and_is_opaque() {
        for filter in [
            StatusFilter::NotDeleted,
            StatusFilter::Only(UserStatus::Active),
            StatusFilter::Only(UserStatus::Deleted),
        ] {
            let c = cursor(filter);
            let text = c.encode();
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            );
            assert_eq!(Cursor::parse(&text), Ok(c));
        }
        // A page may end at a pending user (an import's, not migrated yet).
        let mut at_pending = cursor(StatusFilter::NotDeleted);
        at_pending.after.user_id = UserId::new_pending();
        assert_eq!(Cursor::parse(&at_pending.encode()), Ok(at_pending));
    }

    #[test]
    fn forged_cursors_are_refused() {
        let good = cursor(StatusFilter::NotDeleted).plain();
        let forged = [
            String::new(),
            "not base64!".to_owned(),
            // Padded, or standard base64: another spelling of the same bytes.
            format!("{}=", URL_SAFE_NO_PAD.encode(&good)),
            base64::engine::general_purpose::STANDARD.encode("1|notDeleted|2026-11-21T10:00:00.123Z|??"),
            URL_SAFE_NO_PAD.encode(good.replace("1|", "2|")),
            URL_SAFE_NO_PAD.encode(good.replace(".123Z", "Z")),
            URL_SAFE_NO_PAD.encode(good.replace("10:00:00.123Z", "11:00:00.123+01:00")),
            URL_SAFE_NO_PAD.encode(good.replace("notDeleted", "everyone")),
            URL_SAFE_NO_PAD.encode(format!("{good}|x")),
            URL_SAFE_NO_PAD.encode("1|active|2026-11-21T10:00:00.123Z|PROFILE"),
            URL_SAFE_NO_PAD.encode("1|active|2026-11-21T10:00:00.123Z|USER#x"),
            // A raw DynamoDB key, as a client might try to pass one.
            URL_SAFE_NO_PAD.encode(r#"{"PK":{"S":"USER#x"},"SK":{"S":"PROFILE"}}"#),
            "A".repeat(300),
        ];
        for text in forged {
            assert_eq!(
                Cursor::parse(&text),
                Err(Invalid("is not a cursor this listing returned")),
                "{text}"
            );
        }
    }

    #[test]
    fn parameters_parse_with_defaults_and_bounds() {
        let q = query(&[]).unwrap();
        assert_eq!((q.filter, q.limit, q.after), (StatusFilter::NotDeleted, 50, None));
        let c = cursor(StatusFilter::Only(UserStatus::Suspended));
        let text = c.encode();
        let q = query(&[("status", "suspended"), ("limit", "100"), ("cursor", &text)]).unwrap();
        assert_eq!(
            (q.filter, q.limit, q.after),
            (StatusFilter::Only(UserStatus::Suspended), 100, Some(c.after))
        );
        assert_eq!(query(&[("limit", "1")]).unwrap().limit, 1);
        for bad in ["0", "101", "-1", "+5", "1.0", "", "1e2", "9999999999999999999999"] {
            assert_eq!(refused_field(&[("limit", bad)]).as_deref(), Some("limit"), "{bad}");
        }
        for bad in ["Active", "all", "", "deleted,active"] {
            assert_eq!(refused_field(&[("status", bad)]).as_deref(), Some("status"), "{bad}");
        }
        // A cursor of another filter's listing.
        assert_eq!(refused_field(&[("cursor", &text)]).as_deref(), Some("cursor"));
        assert_eq!(
            refused_field(&[("status", "active"), ("cursor", &text)]).as_deref(),
            Some("cursor")
        );
    }

    proptest! {
        #[test]
        fn every_cursor_reads_back(n in any::<u32>(), millis in 0i64..4_000_000_000_000, f in 0usize..4) {
            let filter = [
                StatusFilter::NotDeleted,
                StatusFilter::Only(UserStatus::Active),
                StatusFilter::Only(UserStatus::Suspended),
                StatusFilter::Only(UserStatus::Deleted),
            ][f];
            let at = Timestamp::from_unix_millis(millis);
            let c = Cursor { filter, after: ListPosition { created_at: at, user_id: sub(n) } };
            prop_assert_eq!(Cursor::parse(&c.encode()), Ok(c));
        }

        #[test]
        fn garbage_is_never_a_cursor(raw in "[A-Za-z0-9_-]{0,120}") {
            // Any text that parses is one this code writes: it encodes back to itself.
            if let Ok(c) = Cursor::parse(&raw) {
                prop_assert_eq!(c.encode(), raw);
            }
        }
    }
}
