//! A list request's query (RFC 7644 section 3.4.2): `filter`, `startIndex`
//! and `count`. Sorting is not supported and `sortBy` is ignored, as the
//! RFC lets a service provider that declares `sort.supported` false do.

use super::discovery::MAX_RESULTS;
use super::error::ScimError;
use super::filter::Filter;

/// A parsed list request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// The filter, if any.
    pub filter: Option<Filter>,
    /// The 1-based index of the first result; below 1 is read as 1 (RFC 7644 3.4.2.4).
    pub start_index: u64,
    /// The most results wanted: a negative count is read as 0, and more than
    /// [`MAX_RESULTS`] as [`MAX_RESULTS`].
    pub count: u32,
}

impl ListQuery {
    /// Reads the query's parameters; names are matched without regard to case.
    pub fn parse<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, ScimError> {
        let mut query = Self {
            filter: None,
            start_index: 1,
            count: MAX_RESULTS,
        };
        for (name, value) in params {
            if name.eq_ignore_ascii_case("filter") {
                query.filter = Some(Filter::parse(value)?);
            } else if name.eq_ignore_ascii_case("startIndex") {
                let index: i64 = value
                    .trim()
                    .parse()
                    .map_err(|_| ScimError::invalid_value("startIndex", "must be an integer"))?;
                query.start_index = u64::try_from(index.max(1)).unwrap_or(1);
            } else if name.eq_ignore_ascii_case("count") {
                let count: i64 = value
                    .trim()
                    .parse()
                    .map_err(|_| ScimError::invalid_value("count", "must be an integer"))?;
                query.count = u32::try_from(count.clamp(0, i64::from(MAX_RESULTS))).unwrap_or(MAX_RESULTS);
            }
        }
        Ok(query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn okta_pages_and_out_of_range_values_are_read_as_the_rfc_says() {
        let q = ListQuery::parse([("startIndex", "1"), ("count", "100")]).unwrap();
        assert_eq!((q.start_index, q.count, q.filter), (1, 100, None));
        let q = ListQuery::parse([("STARTINDEX", "-4"), ("Count", "-1")]).unwrap();
        assert_eq!((q.start_index, q.count), (1, 0));
        let q = ListQuery::parse([("count", "100000"), ("sortBy", "userName")]).unwrap();
        assert_eq!(q.count, MAX_RESULTS);
        assert!(
            ListQuery::parse([("filter", r#"userName eq "a""#)])
                .unwrap()
                .filter
                .is_some()
        );
        for bad in [("startIndex", "one"), ("count", "1.5"), ("filter", "userName co \"a\"")] {
            assert_eq!(ListQuery::parse([bad]).unwrap_err().status, 400, "{bad:?}");
        }
    }
}
