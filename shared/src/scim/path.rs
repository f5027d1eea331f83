//! The words of SCIM's filter and path grammar (RFC 7644 section 3.4.2.2,
//! figure 1, and section 3.5.2's `PATH`): a lexer, and the attribute path
//! both a filter and a PATCH operation name. Attribute names and operators are
//! case-insensitive; so a path is kept in its canonical spelling.

use super::error::ScimError;

/// The core User schema's URN; an attribute may be written after it and a colon.
pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";

/// The enterprise extension's URN (RFC 7643 section 4.3): Entra ID and Okta
/// send its attributes by default. This service keeps none of them.
pub const ENTERPRISE_SCHEMA: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/// The longest filter or path accepted: Entra ID's and Okta's are under 200.
pub const MAX_LEN: usize = 1024;

/// One word of a filter or a path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token {
    /// An attribute path, an operator, `and`, `true`, a number: anything unquoted.
    Word(String),
    /// A JSON string, unescaped.
    Str(String),
    /// `[`
    Open,
    /// `]`, with the sub-attribute written after it (`].value`), if any.
    Close(Option<String>),
    /// `(`
    LParen,
    /// `)`
    RParen,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '$' | '+')
}

/// Splits `text` into tokens. Strings are JSON strings (RFC 7644: "compValue
/// ... string" is a JSON string), so their escapes are JSON's.
pub(crate) fn lex(text: &str) -> Result<Vec<Token>, &'static str> {
    if text.len() > MAX_LEN {
        return Err("is longer than 1024 characters");
    }
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        match c {
            ' ' | '\t' => {
                chars.next();
            }
            '[' => {
                chars.next();
                tokens.push(Token::Open);
            }
            ']' => {
                chars.next();
                let mut sub = None;
                if chars.peek().is_some_and(|&(_, c)| c == '.') {
                    chars.next();
                    let mut name = String::new();
                    while let Some(&(_, c)) = chars.peek().filter(|&&(_, c)| is_word_char(c)) {
                        name.push(c);
                        chars.next();
                    }
                    if name.is_empty() {
                        return Err("has a `.` after `]` without a sub-attribute");
                    }
                    sub = Some(name);
                }
                tokens.push(Token::Close(sub));
            }
            '(' => {
                chars.next();
                tokens.push(Token::LParen);
            }
            ')' => {
                chars.next();
                tokens.push(Token::RParen);
            }
            '"' => {
                // The string runs to the first quote not escaped; serde_json reads it.
                chars.next();
                let mut escaped = false;
                let mut end = None;
                for (i, c) in chars.by_ref() {
                    match (escaped, c) {
                        (false, '\\') => escaped = true,
                        (false, '"') => {
                            end = Some(i);
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                let end = end.ok_or("has a string without its closing quote")?;
                let value: String =
                    serde_json::from_str(&text[start..=end]).map_err(|_| "has a string that is not a JSON string")?;
                tokens.push(Token::Str(value));
            }
            c if is_word_char(c) => {
                let mut word = String::new();
                while let Some(&(_, c)) = chars.peek().filter(|&&(_, c)| is_word_char(c)) {
                    word.push(c);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
            _ => return Err("has a character outside SCIM's filter grammar"),
        }
    }
    Ok(tokens)
}

/// The attributes of the User schema (RFC 7643 section 4.1) and their
/// sub-attributes, in their canonical spelling: names are matched without
/// regard to case, and written back as the schema spells them.
const NAMES: &[&str] = &[
    "schemas",
    "id",
    "externalId",
    "userName",
    "name",
    "givenName",
    "familyName",
    "middleName",
    "formatted",
    "honorificPrefix",
    "honorificSuffix",
    "displayName",
    "nickName",
    "profileUrl",
    "title",
    "userType",
    "preferredLanguage",
    "locale",
    "timezone",
    "active",
    "password",
    "emails",
    "phoneNumbers",
    "ims",
    "photos",
    "addresses",
    "groups",
    "entitlements",
    "roles",
    "x509Certificates",
    "value",
    "display",
    "type",
    "primary",
    "meta",
    "resourceType",
    "created",
    "lastModified",
    "location",
    "version",
];

/// `name` as the schema spells it, or as given when the schema lacks it.
pub fn canonical(name: &str) -> String {
    NAMES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_owned(), |known| (*known).to_owned())
}

/// A value a filter compares with: RFC 7644's `compValue`.
#[derive(Debug, Clone, PartialEq)]
pub enum CompValue {
    /// A JSON string.
    Str(String),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// A number, as written.
    Number(String),
}

impl CompValue {
    pub(crate) fn from_token(token: &Token) -> Option<Self> {
        match token {
            Token::Str(s) => Some(Self::Str(s.clone())),
            Token::Word(w) if w.eq_ignore_ascii_case("true") => Some(Self::Bool(true)),
            Token::Word(w) if w.eq_ignore_ascii_case("false") => Some(Self::Bool(false)),
            Token::Word(w) if w.eq_ignore_ascii_case("null") => Some(Self::Null),
            Token::Word(w) if w.parse::<f64>().is_ok_and(f64::is_finite) => Some(Self::Number(w.clone())),
            _ => None,
        }
    }
}

/// An attribute path: `name`, `name.sub`, or a multi-valued attribute with a
/// value filter (`emails[type eq "work"]`) and maybe a sub-attribute after it
/// (`emails[type eq "work"].value`). An extension's attributes keep their URN.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrPath {
    /// The schema's URN when it is not the core User schema's.
    pub extension: Option<String>,
    /// The attribute, canonically spelled.
    pub name: String,
    /// The value filter's comparisons, all `eq`, joined by `and`.
    pub filter: Option<Vec<(String, CompValue)>>,
    /// The sub-attribute, canonically spelled.
    pub sub: Option<String>,
}

impl AttrPath {
    /// Parses a dotted name with an optional URN (`name.givenName`,
    /// `urn:ietf:params:scim:schemas:core:2.0:User:userName`).
    pub fn from_word(word: &str) -> Result<Self, String> {
        let (extension, rest) = split_urn(word);
        let mut parts = rest.split('.');
        let name = parts.next().filter(|n| is_attr_name(n));
        let sub = parts.next();
        let (Some(name), None) = (name, parts.next()) else {
            return Err(format!("`{}` is not an attribute path", shorten(word)));
        };
        if sub.is_some_and(|s| !is_attr_name(s)) {
            return Err(format!("`{}` is not an attribute path", shorten(word)));
        }
        Ok(Self {
            extension,
            name: canonical(name),
            filter: None,
            sub: sub.map(canonical),
        })
    }

    /// Whether this is the core schema's `name`, with no sub-attribute or `sub`.
    pub fn is(&self, name: &str, sub: Option<&str>) -> bool {
        self.extension.is_none() && self.name == name && self.sub.as_deref() == sub
    }

    /// Parses a PATCH operation's `path` (RFC 7644 section 3.5.2).
    pub fn parse(path: &str) -> Result<Self, ScimError> {
        let tokens = lex(path).map_err(|why| ScimError::invalid_path(format!("the path {why}")))?;
        let mut tokens = tokens.into_iter();
        let invalid = || ScimError::invalid_path("the path is not an attribute path (RFC 7644 section 3.5.2)");
        let Some(Token::Word(word)) = tokens.next() else {
            return Err(invalid());
        };
        let mut path = Self::from_word(&word).map_err(ScimError::invalid_path)?;
        match tokens.next() {
            None => return Ok(path),
            Some(Token::Open) if path.sub.is_none() => {}
            Some(_) => return Err(invalid()),
        }
        let mut rest: Vec<Token> = tokens.collect();
        let Some(Token::Close(sub)) = rest.pop() else {
            return Err(invalid());
        };
        path.filter = Some(value_filter(&rest).map_err(ScimError::invalid_path)?);
        path.sub = sub.map(|s| canonical(&s));
        Ok(path)
    }
}

/// A value filter's inside: `sub eq value` joined by `and`.
pub(crate) fn value_filter(tokens: &[Token]) -> Result<Vec<(String, CompValue)>, String> {
    let mut comparisons = Vec::new();
    for (i, chunk) in tokens
        .split(|t| matches!(t, Token::Word(w) if w.eq_ignore_ascii_case("and")))
        .enumerate()
    {
        let [Token::Word(sub), Token::Word(op), value] = chunk else {
            return Err(if i == 0 && chunk.is_empty() {
                "the value filter is empty".to_owned()
            } else {
                "a value filter compares a sub-attribute with `eq` and a value, joined by `and`".to_owned()
            });
        };
        if !op.eq_ignore_ascii_case("eq") {
            return Err(format!(
                "the operator `{}` is not supported in a value filter; only `eq` is",
                shorten(op)
            ));
        }
        if !is_attr_name(sub) {
            return Err(format!("`{}` is not a sub-attribute", shorten(sub)));
        }
        let value = CompValue::from_token(value).ok_or("a value filter compares with a JSON value")?;
        comparisons.push((canonical(sub), value));
    }
    Ok(comparisons)
}

fn split_urn(word: &str) -> (Option<String>, &str) {
    if !word.to_ascii_lowercase().starts_with("urn:") {
        return (None, word);
    }
    match word.rsplit_once(':') {
        Some((urn, rest)) if urn.eq_ignore_ascii_case(USER_SCHEMA) => (None, rest),
        Some((urn, rest)) => (Some(urn.to_owned()), rest),
        None => (None, word),
    }
}

fn is_attr_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$'))
}

/// At most 40 characters of what the client sent, for a detail: enough to find it.
pub(crate) fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_canonical_whatever_their_case_or_urn() {
        let path = AttrPath::parse("NAME.GIVENNAME").unwrap();
        assert!(path.is("name", Some("givenName")));
        let path = AttrPath::parse("urn:ietf:params:scim:schemas:core:2.0:User:userName").unwrap();
        assert!(path.is("userName", None));
        let path = AttrPath::parse(&format!("{ENTERPRISE_SCHEMA}:department")).unwrap();
        assert_eq!(path.extension.as_deref(), Some(ENTERPRISE_SCHEMA));
        assert_eq!(path.name, "department");
    }

    #[test]
    fn a_filtered_path_keeps_its_filter_and_sub_attribute() {
        let path = AttrPath::parse(r#"emails[type eq "work"].value"#).unwrap();
        assert_eq!(path.name, "emails");
        assert_eq!(
            path.filter,
            Some(vec![("type".to_owned(), CompValue::Str("work".to_owned()))])
        );
        assert_eq!(path.sub.as_deref(), Some("value"));
        let path = AttrPath::parse(r#"emails[Value EQ "a\"b@example.com" and primary eq true]"#).unwrap();
        assert_eq!(
            path.filter,
            Some(vec![
                ("value".to_owned(), CompValue::Str("a\"b@example.com".to_owned())),
                ("primary".to_owned(), CompValue::Bool(true)),
            ])
        );
        assert_eq!(path.sub, None);
    }

    #[test]
    fn malformed_paths_are_invalid_paths() {
        for path in [
            "",
            "emails[",
            "emails[type eq \"work\"",
            "emails[type co \"w\"]",
            "emails[]",
            "name.givenName.x",
            "emails[type eq \"work\"] extra",
            "1abc",
            "emails[type eq work]",
            "name;drop",
            "emails[type eq \"work].value",
        ] {
            let err = AttrPath::parse(path).unwrap_err();
            assert_eq!(
                err.scim_type,
                Some(super::super::error::ScimType::InvalidPath),
                "{path}"
            );
        }
        assert!(AttrPath::parse(&"a".repeat(MAX_LEN + 1)).is_err());
    }
}
