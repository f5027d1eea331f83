//! The `filter` of a list of Users (RFC 7644 section 3.4.2.2), in the subset
//! this service answers: `eq` comparisons joined by `and`, on the attributes a
//! directory matches users by. Each becomes a key a store can look up, so a
//! filtered GET never scans the organization. Anything else is 400
//! `invalidFilter`, as the RFC's table 9 asks for a filter "not supported".
//!
//! The `scim-filter` crate parses the whole grammar, but matches in memory
//! over serialized collections and brings chrono, rust_decimal and nom 7; what
//! is needed here is a key, so this parser refuses what it cannot turn into one.

use super::error::ScimError;
use super::path::{AttrPath, CompValue, Token, lex, shorten, value_filter};

/// The most comparisons a filter may join.
pub const MAX_COMPARISONS: usize = 8;

/// One comparison a filter makes, on an attribute a user can be found by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `id eq "…"`: the user's id (their `sub`).
    Id(String),
    /// `userName eq "…"`: compared without regard to case (RFC 7643: `caseExact` false).
    UserName(String),
    /// `externalId eq "…"`: compared exactly (RFC 7643: `caseExact` true).
    ExternalId(String),
    /// `emails.value eq "…"`, `emails[type eq "work"].value eq "…"` or
    /// `emails[value eq "…"]`: one of the user's addresses. `primary` when
    /// the filter asks for the primary address only.
    Email {
        /// The address as the client wrote it.
        value: String,
        /// Whether only the primary address matches.
        primary: bool,
    },
    /// `active eq true|false`.
    Active(bool),
    /// A comparison nothing here can satisfy: an address type other than
    /// `work`, which is the type of every address this service shows.
    Never,
}

/// A parsed filter: every condition must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter(pub Vec<Condition>);

impl Filter {
    /// Parses a `filter` query parameter.
    pub fn parse(text: &str) -> Result<Self, ScimError> {
        let tokens = lex(text).map_err(|why| ScimError::invalid_filter(format!("the filter {why}")))?;
        let mut parser = Parser {
            tokens,
            at: 0,
            depth: 0,
        };
        let mut conditions = Vec::new();
        parser.conjunction(&mut conditions)?;
        if parser.at != parser.tokens.len() {
            return Err(ScimError::invalid_filter(
                "the filter has words after its end, or an unmatched `)`",
            ));
        }
        if conditions.len() > MAX_COMPARISONS {
            return Err(ScimError::invalid_filter(format!(
                "a filter joins at most {MAX_COMPARISONS} comparisons"
            )));
        }
        Ok(Self(conditions))
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    /// `term ("and" term)*`; `or` and `not` are refused by name.
    fn conjunction(&mut self, into: &mut Vec<Condition>) -> Result<(), ScimError> {
        self.term(into)?;
        while let Some(Token::Word(word)) = self.peek() {
            if word.eq_ignore_ascii_case("and") {
                self.at += 1;
                self.term(into)?;
            } else if word.eq_ignore_ascii_case("or") {
                return Err(ScimError::invalid_filter(
                    "`or` is not supported: only `eq` comparisons joined by `and`",
                ));
            } else {
                return Err(ScimError::invalid_filter(format!(
                    "`{}` cannot follow a comparison",
                    shorten(word)
                )));
            }
        }
        Ok(())
    }

    fn term(&mut self, into: &mut Vec<Condition>) -> Result<(), ScimError> {
        match self.next() {
            Some(Token::LParen) => {
                self.depth += 1;
                if self.depth > 4 {
                    return Err(ScimError::invalid_filter(
                        "the filter nests parentheses more than 4 deep",
                    ));
                }
                self.conjunction(into)?;
                if self.next() != Some(Token::RParen) {
                    return Err(ScimError::invalid_filter("the filter has a `(` without its `)`"));
                }
                self.depth -= 1;
                Ok(())
            }
            Some(Token::Word(word)) if word.eq_ignore_ascii_case("not") => Err(ScimError::invalid_filter(
                "`not` is not supported: only `eq` comparisons joined by `and`",
            )),
            Some(Token::Word(word)) => {
                let mut path = AttrPath::from_word(&word).map_err(ScimError::invalid_filter)?;
                if self.peek() == Some(&Token::Open) {
                    self.at += 1;
                    let end = self.tokens[self.at..]
                        .iter()
                        .position(|t| matches!(t, Token::Close(_)))
                        .ok_or_else(|| ScimError::invalid_filter("the filter has a `[` without its `]`"))?;
                    let inside = &self.tokens[self.at..self.at + end];
                    path.filter = Some(value_filter(inside).map_err(ScimError::invalid_filter)?);
                    if let Some(Token::Close(sub)) = self.tokens.get(self.at + end) {
                        path.sub = sub.as_deref().map(super::path::canonical);
                    }
                    self.at += end + 1;
                    // `emails[value eq "…"]` is a whole comparison by itself.
                    if path.sub.is_none() {
                        into.push(condition(&path, None)?);
                        return Ok(());
                    }
                }
                let operator = match self.next() {
                    Some(Token::Word(op)) => op,
                    _ => {
                        return Err(ScimError::invalid_filter(
                            "a comparison needs an operator after its attribute",
                        ));
                    }
                };
                if !operator.eq_ignore_ascii_case("eq") {
                    return Err(ScimError::invalid_filter(format!(
                        "the operator `{}` is not supported: only `eq`",
                        shorten(&operator)
                    )));
                }
                let value = self.next().as_ref().and_then(CompValue::from_token).ok_or_else(|| {
                    ScimError::invalid_filter("`eq` compares with a JSON value: a string, true, false")
                })?;
                into.push(condition(&path, Some(value))?);
                Ok(())
            }
            _ => Err(ScimError::invalid_filter(
                "the filter must start each comparison with an attribute",
            )),
        }
    }
}

/// What one comparison asks of a user, or why it cannot be answered.
fn condition(path: &AttrPath, value: Option<CompValue>) -> Result<Condition, ScimError> {
    let unsupported = || {
        ScimError::invalid_filter(
            "users are found by id, userName, externalId, emails.value, emails[type eq \"work\"].value or active",
        )
    };
    if path.extension.is_some() {
        return Err(unsupported());
    }
    let string = |value: Option<CompValue>| match value {
        Some(CompValue::Str(s)) => Ok(s),
        _ => Err(ScimError::invalid_filter(format!(
            "`{}` is compared with a string",
            path.name
        ))),
    };
    match (path.name.as_str(), path.sub.as_deref(), &path.filter) {
        ("id", None, None) => Ok(Condition::Id(string(value)?)),
        ("userName", None, None) => Ok(Condition::UserName(string(value)?)),
        ("externalId", None, None) => Ok(Condition::ExternalId(string(value)?)),
        ("active", None, None) => match value {
            Some(CompValue::Bool(active)) => Ok(Condition::Active(active)),
            _ => Err(ScimError::invalid_filter("`active` is compared with true or false")),
        },
        ("emails", Some("value"), None) => Ok(Condition::Email {
            value: string(value)?,
            primary: false,
        }),
        ("emails", sub, Some(inner)) => email_condition(inner, sub, value),
        _ => Err(unsupported()),
    }
}

/// `emails[…]` with `.value eq "…"` after it, or `emails[value eq "…"]` alone.
fn email_condition(
    inner: &[(String, CompValue)],
    sub: Option<&str>,
    outer: Option<CompValue>,
) -> Result<Condition, ScimError> {
    let mut address = match (sub, outer) {
        (Some("value"), Some(CompValue::Str(value))) => Some(value),
        (Some("value"), _) => return Err(ScimError::invalid_filter("`emails.value` is compared with a string")),
        (None, None) => None,
        _ => return Err(ScimError::invalid_filter("within `emails`, users are found by `value`")),
    };
    let mut primary = false;
    let mut never = false;
    for (attribute, value) in inner {
        match (attribute.as_str(), value) {
            ("type", CompValue::Str(kind)) => never |= !kind.eq_ignore_ascii_case("work"),
            ("primary", CompValue::Bool(only)) => {
                primary |= *only;
                // Every user has a primary address, so `primary eq false` asks for another one.
                never |= !*only && address.is_none();
            }
            ("value", CompValue::Str(value)) if address.is_none() => address = Some(value.clone()),
            _ => {
                return Err(ScimError::invalid_filter(
                    "within `emails[…]`, a filter compares `type` or `value` with a string, or `primary` with a boolean",
                ));
            }
        }
    }
    let value = address.ok_or_else(|| ScimError::invalid_filter("a filter on `emails` must name an address"))?;
    Ok(if never {
        Condition::Never
    } else {
        Condition::Email { value, primary }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scim::error::ScimType;

    fn parse(text: &str) -> Vec<Condition> {
        Filter::parse(text).unwrap_or_else(|e| panic!("{text}: {e}")).0
    }

    fn email(value: &str, primary: bool) -> Condition {
        Condition::Email {
            value: value.to_owned(),
            primary,
        }
    }

    #[test]
    fn what_entra_id_and_okta_send() {
        // Entra ID's match on userName, and on the work address when so configured.
        assert_eq!(
            parse(r#"userName eq "Test_User_dfeef4c5-5681-4387-b016-bdf221e82081""#),
            [Condition::UserName(
                "Test_User_dfeef4c5-5681-4387-b016-bdf221e82081".to_owned()
            )]
        );
        assert_eq!(
            parse(r#"emails[type eq "work"].value eq "ada@acme.example""#),
            [email("ada@acme.example", false)]
        );
        assert_eq!(
            parse(r#"externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef""#).len(),
            1
        );
        // Okta's.
        assert_eq!(
            parse(r#"userName eq "ada@acme.example""#),
            [Condition::UserName("ada@acme.example".to_owned())]
        );
    }

    #[test]
    fn names_and_operators_ignore_case_and_urns_are_read() {
        assert_eq!(
            parse(r#"USERNAME EQ "x" AnD urn:ietf:params:scim:schemas:core:2.0:User:active Eq TRUE"#),
            [Condition::UserName("x".to_owned()), Condition::Active(true)]
        );
        assert_eq!(
            parse(r#"(emails.value eq "a@b.example") and (id eq "1")"#),
            [email("a@b.example", false), Condition::Id("1".to_owned())]
        );
    }

    #[test]
    fn value_filters_on_emails() {
        assert_eq!(
            parse(r#"emails[value eq "a@b.example"]"#),
            [email("a@b.example", false)]
        );
        assert_eq!(
            parse(r#"emails[type eq "work" and value eq "a@b.example"]"#),
            [email("a@b.example", false)]
        );
        assert_eq!(
            parse(r#"emails[primary eq true].value eq "a@b.example""#),
            [email("a@b.example", true)]
        );
        assert_eq!(
            parse(r#"emails[type eq "home"].value eq "a@b.example""#),
            [Condition::Never]
        );
    }

    #[test]
    fn strings_keep_their_escapes_and_quotes() {
        assert_eq!(
            parse(r#"userName eq "a \"quoted\" name""#),
            [Condition::UserName("a \"quoted\" name".to_owned())]
        );
        assert_eq!(
            parse(r#"userName eq "' or 1=1 --""#),
            [Condition::UserName("' or 1=1 --".to_owned())]
        );
    }

    #[test]
    fn everything_else_is_an_invalid_filter() {
        for text in [
            "",
            "userName",
            "userName eq",
            r#"userName co "a""#,
            r#"userName sw "a""#,
            "userName pr",
            r#"userName eq "a" or userName eq "b""#,
            r#"not (userName eq "a")"#,
            r#"(userName eq "a""#,
            r#"userName eq "a")"#,
            r#"userName eq "a"#,
            "userName eq a",
            "userName eq 12",
            r#"active eq "true""#,
            r#"title eq "x""#,
            r#"meta.lastModified gt "2011-05-13T04:42:34Z""#,
            r#"name.givenName eq "Ada""#,
            r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "1""#,
            r#"emails[type co "w"].value eq "a""#,
            r#"emails[type eq "work"].display eq "a""#,
            r#"emails[type eq "work"]"#,
            r#"userName eq "a" and"#,
            r#"userName eq "a"; DROP TABLE users"#,
            r#"userName eq "a" userName eq "b""#,
            "((((((userName eq \"a\"))))))",
            "userName\u{0}eq \"a\"",
        ] {
            let err = Filter::parse(text).expect_err(text);
            assert_eq!(
                (err.status, err.scim_type),
                (400, Some(ScimType::InvalidFilter)),
                "{text}: {err}"
            );
        }
        let many = [r#"userName eq "a""#; MAX_COMPARISONS + 1].join(" and ");
        assert!(Filter::parse(&many).is_err());
        assert!(Filter::parse(&format!("userName eq \"{}\"", "a".repeat(2000))).is_err());
    }
}
