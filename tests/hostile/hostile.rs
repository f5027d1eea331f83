//! Hostile input through every HTTP function: for each route of the catalog, a
//! valid request is taken apart in every way a client can, one fault at a
//! time. Each variant gets a 4xx application/problem+json with a documented
//! code, never a 5xx or a panic, and DynamoDB carries out no write for it (an
//! interceptor on the App's client sees every call); after the last variant a
//! scan finds the table exactly as before the first. The valid request itself,
//! sent last, succeeds and writes: the variants differ from a working request
//! by their fault alone, and the interceptor is not blind.

use std::collections::BTreeMap;
use std::time::Instant;

use futures::future::join_all;
use integration_tests::http::Event;
use integration_tests::logs::LogCapture;
use integration_tests::test_app::TestApp;
use proptest::arbitrary::any;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};
use user_service::catalog::{Access, Function};
use user_service::http::request::MAX_BODY_BYTES;

use crate::support::*;

/// Random inputs per field, parameter and body: `HOSTILE_RANDOM_CASES`, 8 by default.
fn random_cases() -> usize {
    std::env::var("HOSTILE_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

/// What a variant must get.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Exactly this status and code.
    Exactly(u16, &'static str),
    /// Exactly this status and code, answered before any table request.
    BeforeTheTable(u16, &'static str),
    /// Any 4xx problem with a documented code.
    Refused,
}

struct Variant {
    category: &'static str,
    label: String,
    event: Event,
    expect: Expect,
}

fn claims(event: &mut Event) -> &mut Map<String, Value> {
    event.0["requestContext"]["authorizer"]["jwt"]["claims"]
        .as_object_mut()
        .expect("the route's event has claims")
}

/// `s` with `insert` in its middle (at a character boundary): trimming at
/// the edges must not be what saves the service.
fn infix(s: &str, insert: &str) -> String {
    let mut at = s.len() / 2;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}{insert}{}", &s[..at], &s[at..])
}

/// `s` with its first Latin letter that has a Cyrillic twin replaced by the twin.
fn cyrillic_twin(s: &str) -> Option<String> {
    const TWINS: [(char, char); 6] = [('a', 'а'), ('e', 'е'), ('o', 'о'), ('c', 'с'), ('i', 'і'), ('p', 'р')];
    let (at, latin) = s.char_indices().find(|(_, c)| TWINS.iter().any(|(l, _)| l == c))?;
    let twin = TWINS.iter().find(|(l, _)| *l == latin)?.1;
    Some(format!("{}{twin}{}", &s[..at], &s[at + latin.len_utf8()..]))
}

/// `s` in fullwidth forms (U+FF01..): ｖｉｃｔｉｍ＠ｅｘａｍｐｌｅ．ｃｏｍ.
fn fullwidth(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c),
            _ => c,
        })
        .collect()
}

/// Control and format characters: each refused inside any value.
const INVISIBLE: &[(&str, &str)] = &[
    ("NUL", "\u{0}"),
    ("BEL", "\u{7}"),
    ("ESC sequence", "\u{1b}[31m"),
    ("newline", "\n"),
    ("CRLF", "\r\n"),
    ("DEL", "\u{7f}"),
    ("zero-width space", "\u{200b}"),
    ("zero-width joiner", "\u{200d}"),
    ("word joiner", "\u{2060}"),
    ("right-to-left override", "\u{202e}"),
    ("left-to-right isolate", "\u{2066}"),
    ("byte order mark", "\u{feff}"),
    ("soft hyphen", "\u{ad}"),
];

/// The hostile strings a value may be replaced by, from its valid value `v`.
/// `names` are people's names: any script is a real name there, so look-alike
/// letters are no fault in them.
fn hostile_strings(v: &str, is_name: bool) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    for (label, ch) in INVISIBLE {
        out.push(("unicode", format!("{label} inside"), infix(v, ch)));
    }
    if !is_name {
        if let Some(twin) = cyrillic_twin(v) {
            out.push(("unicode", "Cyrillic look-alike letter".to_owned(), twin));
        }
        out.push(("unicode", "fullwidth forms".to_owned(), fullwidth(v)));
        // First, with nothing to combine with (inside a domain it would be a
        // real internationalised name, which the service takes).
        out.push(("unicode", "a leading combining mark".to_owned(), format!("\u{301}{v}")));
    }
    out.push(("size", "10 000 characters".to_owned(), "a".repeat(10_000)));
    out.push(("size", "empty".to_owned(), String::new()));
    out.push(("size", "blank".to_owned(), "   ".to_owned()));
    out
}

/// A person's name (`firstName`, `lastName`) or an organization's (`name`):
/// any string of any script can be one.
fn is_name_key(key: &str) -> bool {
    key.ends_with("Name") || key == "name"
}

/// Ids in paths that look like keys, traversal, injection or encodings.
fn hostile_ids(v: &str, victim: &Account) -> Vec<(String, String)> {
    let encoded: String = v.bytes().map(|b| format!("%{b:02X}")).collect();
    [
        ("empty", String::new()),
        ("blank", " ".to_owned()),
        ("a lone #", "#".to_owned()),
        ("a profile key", format!("USER#{}", victim.sub)),
        ("an email key", format!("EMAIL#{}", victim.primary)),
        ("an email sort key", format!("EMAIL#{v}")),
        ("the id and a sort key", format!("{v}#PROFILE")),
        ("PROFILE", "PROFILE".to_owned()),
        ("UNIQUE", "UNIQUE".to_owned()),
        ("traversal", format!("../{v}")),
        ("encoded traversal", format!("..%2F..%2F{v}")),
        ("encoded dots", "%2e%2e%2f".to_owned()),
        ("percent-encoded id", encoded),
        ("encoded NUL after the id", format!("{v}%00")),
        ("NUL after the id", format!("{v}\u{0}")),
        ("a sub-path", format!("{v}/verify")),
        ("a wildcard", "*".to_owned()),
        ("SQL", "' OR '1'='1".to_owned()),
        ("a lookup string", "${jndi:ldap://x/a}".to_owned()),
        ("the route template", "{emailId}".to_owned()),
        ("4 KiB", "a".repeat(4096)),
        ("the id fifty times", v.repeat(50)),
        ("another user's sub", victim.sub.clone()),
    ]
    .into_iter()
    // The admin route's valid id is a sub: not hostile there.
    .filter(|(_, s)| s != v)
    .map(|(l, s)| (l.to_owned(), s))
    .collect()
}

/// Addresses in a query that are no address, or look like keys.
fn hostile_queries(v: &str) -> Vec<(String, String)> {
    [
        ("a lone #", "#".to_owned()),
        ("an email key", format!("EMAIL#{}", v.split('@').next().unwrap_or(v))),
        ("UNIQUE", "UNIQUE".to_owned()),
        ("a key suffix in the domain", format!("{v}#UNIQUE")),
        ("two addresses (a repeated parameter)", format!("{v},{v}")),
        ("two @", format!("a@{v}")),
        ("percent-encoded @ left encoded", v.replace('@', "%40")),
        ("no local part", format!("@{}", v.split('@').nth(1).unwrap_or(v))),
        ("no domain", format!("{}@", v.split('@').next().unwrap_or(v))),
        (
            "a 10 000-character local part",
            format!("{}@example.com", "a".repeat(10_000)),
        ),
        ("SQL", "' OR 1=1 --@example.com".to_owned()),
    ]
    .into_iter()
    // A value with no @ to encode is the valid value: not hostile.
    .filter(|(_, s)| s != v)
    .map(|(l, s)| (l.to_owned(), s))
    .collect()
}

/// Every hostile variant of `base`, a valid request to `route`.
fn variants(route: &Function, base: &Event, victim: &Account, version: u64) -> Vec<Variant> {
    let mut out = Vec::new();
    let mut add = |category: &'static str, label: String, event: Event, expect: Expect| {
        out.push(Variant {
            category,
            label,
            event,
            expect,
        });
    };
    let unauthenticated = Expect::Exactly(401, "UNAUTHENTICATED");

    // ---- Claims: every route that reads a caller; a route anyone may call
    // reads none, and its own proof is the recovery suite's.
    if route.access() != Access::Anyone {
        add(
            "claims",
            "no authorizer".into(),
            base.clone().anonymous(),
            unauthenticated,
        );
        let mut e = base.clone();
        e.0["requestContext"]["authorizer"] = json!({});
        add("claims", "an authorizer without a JWT".into(), e, unauthenticated);
        let mut e = base.clone();
        e.0["requestContext"]["authorizer"]["jwt"] = json!({ "scopes": ["aws.cognito.signin.user.admin"] });
        add("claims", "a JWT without claims".into(), e, unauthenticated);
        let mut e = base.clone();
        claims(&mut e).remove("sub");
        add("claims", "no sub".into(), e, unauthenticated);
        for (label, sub) in [
            ("empty sub", String::new()),
            ("blank sub", " ".to_owned()),
            ("a key as sub", format!("USER#{}", victim.sub)),
            ("a lone # as sub", "#".to_owned()),
            ("sub with a sort key", format!("{}#PROFILE", victim.sub)),
            ("traversal in sub", format!("../{}", victim.sub)),
            ("NUL in sub", format!("{}\u{0}", victim.sub)),
            ("space in sub", format!("{} x", victim.sub)),
            ("wildcard sub", "*".to_owned()),
            ("129-character sub", "a".repeat(129)),
            ("percent-encoded sub", format!("{}%23", victim.sub)),
        ] {
            add("claims", label.into(), base.clone().caller(&sub), unauthenticated);
        }
        for (label, token_use) in [
            ("an ID token", Some("id")),
            ("no token_use", None),
            ("token_use ACCESS", Some("ACCESS")),
            ("token_use with a space", Some("access ")),
        ] {
            let mut e = base.clone();
            match token_use {
                Some(t) => {
                    claims(&mut e).insert("token_use".into(), json!(t));
                }
                None => {
                    claims(&mut e).remove("token_use");
                }
            }
            add("claims", label.into(), e, unauthenticated);
        }
        // Cognito's subs are lower-case UUIDs: anything else never came from the
        // pool, so it is refused before the table is asked (a sub of `admin` once
        // reached it and got 404).
        for (label, sub) in [
            ("a sub that is not a UUID", "not-a-uuid".to_owned()),
            ("admin as sub", "admin".to_owned()),
            ("the victim's sub in capitals", victim.sub.to_uppercase()),
            ("the victim's sub without hyphens", victim.sub.replace('-', "")),
            ("the victim's sub in braces", format!("{{{}}}", victim.sub)),
            ("PROFILE as sub", "PROFILE".to_owned()),
        ] {
            add(
                "claims",
                label.into(),
                base.clone().caller(&sub),
                Expect::BeforeTheTable(401, "UNAUTHENTICATED"),
            );
        }
        // A UUID nobody has: what GET /me answers a deleted or unknown caller, on
        // every route (an admin route admits no such admin).
        let stranger = if route.access() == Access::Admin {
            Expect::Exactly(403, "FORBIDDEN")
        } else {
            Expect::Exactly(404, "NOT_FOUND")
        };
        add(
            "claims",
            "a UUID nobody has".into(),
            base.clone().caller(&uuid::Uuid::new_v4().to_string()),
            stranger,
        );
    }

    // ---- A body marked base64 that does not decode: every route. It once
    // panicked inside lambda_http (API Gateway answered 500).
    for (label, body) in [
        ("not base64 at all", "{not base64}"),
        ("base64 without its padding", "eyJhIjoxfQ"),
        ("a character outside the alphabet", "eyJhIjox!Q=="),
        ("URL-safe base64", "-_-_"),
    ] {
        let mut e = base.clone();
        e.0["body"] = json!(body);
        e.0["isBase64Encoded"] = json!(true);
        add(
            "encoding",
            format!("base64: {label}"),
            e,
            Expect::Exactly(400, "VALIDATION_FAILED"),
        );
    }

    // ---- Groups: the admin routes, as an active admin whose groups claim
    // names admin in no form the service accepts.
    if route.access() == Access::Admin {
        for groups in [
            "",
            "[]",
            "ADMIN",
            "Admin",
            "administrators",
            "ops,admin",
            "[ops,admin]",
            r#"["ops,admin"]"#,
            r#"[""]"#,
            "[[admin]]",
            r#"{"admin":true}"#,
            r#"["admin""#,
            "admin\u{0}",
            "adm\u{456}n",
            "\u{200b}admin",
            "ad min",
        ] {
            add(
                "groups",
                format!("groups {groups:?}"),
                base.clone().groups(groups),
                Expect::Exactly(403, "FORBIDDEN"),
            );
        }
    }

    // ---- Bodies: the routes that take one.
    let body_text = base.0["body"].as_str().unwrap_or_default().to_owned();
    if !body_text.is_empty() {
        let body: Map<String, Value> = serde_json::from_str(&body_text).expect("a JSON object body");
        let invalid = Expect::Exactly(400, "VALIDATION_FAILED");
        let too_large = Expect::Exactly(413, "PAYLOAD_TOO_LARGE");
        let raw = |text: &str| base.clone().raw_body(text);
        let first = body.keys().next().cloned().unwrap_or_default();
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let malformed: Vec<(&str, String)> = vec![
            ("an opening brace", "{".into()),
            ("a closing brace", "}".into()),
            ("a cut string", "{\"".into()),
            ("a cut object", body_text[..body_text.len() - 1].to_owned()),
            ("an array", "[]".into()),
            ("an array of the body", format!("[{body_text}]")),
            ("a string", "\"text\"".into()),
            ("a number", "42".into()),
            ("null", "null".into()),
            ("true", "true".into()),
            ("an empty object", "{}".into()),
            ("nothing", String::new()),
            ("whitespace", "  \n\t ".into()),
            ("trailing garbage", format!("{body_text}x")),
            ("two objects", format!("{body_text}{body_text}")),
            ("a byte order mark first", format!("\u{feff}{body_text}")),
            ("a comment", format!("/*c*/{body_text}")),
            ("single quotes", body_text.replace('"', "'")),
            ("NaN", format!("{{\"{first}\":NaN}}")),
            ("a lone surrogate", format!("{{\"{first}\":\"\\ud800\"}}")),
            ("5000 nested arrays", deep.clone()),
            ("5000 nested arrays as the value", format!("{{\"{first}\":{deep}}}")),
            ("a number out of range", format!("{{\"{first}\":1e400}}")),
        ];
        for (label, text) in malformed {
            add("malformed JSON", label.into(), raw(&text), invalid);
        }
        for key in body.keys() {
            let with = |value: Value| {
                let mut b = body.clone();
                b.insert(key.clone(), value);
                base.clone().body(Value::Object(b))
            };
            for (label, value) in [
                ("a number", json!(1)),
                ("a negative number", json!(-1)),
                ("a float", json!(1.5)),
                ("a boolean", json!(true)),
                ("null", Value::Null),
                ("an array", json!([])),
                ("an array of the value", json!([body[key]])),
                ("an object", json!({})),
                ("an operator object", json!({ "$ne": null })),
            ] {
                add("wrong types", format!("{key} as {label}"), with(value), invalid);
            }
            let v = body[key].as_str().unwrap_or_default();
            let is_name = is_name_key(key);
            for (category, label, s) in hostile_strings(v, is_name) {
                add(category, format!("{key}: {label}"), with(json!(s)), Expect::Refused);
            }
            add(
                "size",
                format!("{key} over 16 KiB"),
                with(json!("a".repeat(MAX_BODY_BYTES + 1))),
                too_large,
            );
            // Repeated keys: serde refuses the second, whichever is meant.
            let value = body[key].to_string();
            add(
                "duplicate keys",
                format!("{key} twice"),
                raw(&format!("{{\"{key}\":{value},\"{key}\":{value}}}")),
                invalid,
            );
            add(
                "duplicate keys",
                format!("{key} and its capitalised twin"),
                raw(&format!("{{\"{key}\":{value},\"{}\":{value}}}", key.to_uppercase())),
                invalid,
            );
        }
        for (label, extra) in [
            ("userId", json!(victim.sub)),
            ("isAdmin", json!(true)),
            ("__proto__", json!({ "admin": true })),
            ("PK", json!(format!("USER#{}", victim.sub))),
            ("status", json!("active")),
        ] {
            if body.contains_key(label) {
                continue;
            }
            let mut b = body.clone();
            b.insert(label.into(), extra);
            add(
                "unknown fields",
                format!("an extra {label}"),
                base.clone().body(Value::Object(b)),
                invalid,
            );
        }
        let padded = |size: usize| {
            let mut text = body_text.clone();
            text.push_str(&" ".repeat(size - text.len()));
            raw(&text)
        };
        add(
            "size",
            "16 KiB + 1 byte of valid JSON".into(),
            padded(MAX_BODY_BYTES + 1),
            too_large,
        );
        add("size", "1 MiB of valid JSON".into(), padded(1 << 20), too_large);
        for content_type in [
            Some("text/plain"),
            None,
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            Some("application/jsonx"),
            Some("application/xml"),
            Some("json"),
        ] {
            let e = match content_type {
                Some(ct) => base.clone().header("content-type", ct),
                None => base.clone().without_header("content-type"),
            };
            add(
                "content type",
                format!("content-type {content_type:?}"),
                e,
                Expect::Exactly(415, "UNSUPPORTED_MEDIA_TYPE"),
            );
        }
        // API Gateway base64-encodes bodies it takes for binary: the bytes
        // then reach the function as they were sent.
        let base64 = |bytes: &[u8]| {
            let mut e = base.clone();
            e.0["body"] = json!(aws_smithy_types::base64::encode(bytes));
            e.0["isBase64Encoded"] = json!(true);
            e
        };
        let invalid_utf8 = |bad: &[u8]| {
            let mut bytes = format!("{{\"{first}\":\"").into_bytes();
            bytes.extend_from_slice(bad);
            bytes.extend_from_slice(b"\"}");
            bytes
        };
        add(
            "encoding",
            "base64: invalid UTF-8".into(),
            base64(&invalid_utf8(&[0xff, 0xfe])),
            invalid,
        );
        add(
            "encoding",
            "base64: an overlong UTF-8 slash".into(),
            base64(&invalid_utf8(&[0xc0, 0xaf])),
            invalid,
        );
        add(
            "encoding",
            "base64: a UTF-8 surrogate".into(),
            base64(&invalid_utf8(&[0xed, 0xa0, 0x80])),
            invalid,
        );
        let utf16: Vec<u8> = body_text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        add("encoding", "base64: UTF-16".into(), base64(&utf16), invalid);
        add("encoding", "base64: a cut object".into(), base64(b"{"), invalid);
        add(
            "encoding",
            "base64: 16 KiB + 1 byte".into(),
            base64(&vec![b' '; MAX_BODY_BYTES + 1]),
            too_large,
        );
        add(
            "encoding",
            "base64: gzip magic".into(),
            base64(&[0x1f, 0x8b, 0x08, 0x00]),
            invalid,
        );
    }

    // ---- Path parameters.
    if let Some(params) = base.0["pathParameters"].as_object() {
        for (name, value) in params {
            let v = value.as_str().unwrap_or_default();
            for (label, id) in hostile_ids(v, victim) {
                // A member's own sub there is not hostile: it is leaving.
                if name == "userId" && names_an_organization(route) && id == victim.sub {
                    continue;
                }
                add(
                    "path",
                    format!("{name}: {label}"),
                    base.clone().path_param(name, &id),
                    Expect::Refused,
                );
            }
            let mut e = base.clone();
            e.0["pathParameters"].as_object_mut().unwrap().remove(name);
            add("path", format!("{name} missing"), e, Expect::Refused);
        }
    }

    // ---- Query parameters.
    if let Some(params) = base.0["queryStringParameters"].as_object() {
        for (name, value) in params {
            let v = value.as_str().unwrap_or_default();
            for (label, q) in hostile_queries(v) {
                add(
                    "query",
                    format!("{name}: {label}"),
                    base.clone().query(name, &q),
                    Expect::Refused,
                );
            }
            for (category, label, q) in hostile_strings(v, false) {
                let category = if category == "unicode" { category } else { "query" };
                add(
                    category,
                    format!("{name}: {label}"),
                    base.clone().query(name, &q),
                    Expect::Refused,
                );
            }
            // A route whose parameters all have defaults answers without them.
            if !query_is_optional(route) {
                add(
                    "query",
                    format!("{name} missing"),
                    base.clone().no_query(),
                    Expect::Refused,
                );
            }
        }
    }

    // ---- Random input, from a fixed seed: bytes as the body, strings as
    // every field (names aside: any string can be someone's name), path
    // parameter and query value. `HOSTILE_RANDOM_CASES` sets how many of each.
    let mut runner = TestRunner::deterministic();
    let mut text = |avoid_at: bool| loop {
        let s = any::<String>().new_tree(&mut runner).unwrap().current();
        // With an @ a random string may be a real address, which is no fault.
        if !(avoid_at && s.contains('@')) {
            break s;
        }
    };
    let cases = random_cases();
    let body_text = base.0["body"].as_str().unwrap_or_default().to_owned();
    if !body_text.is_empty() {
        let body: Map<String, Value> = serde_json::from_str(&body_text).unwrap();
        let mut bytes_runner = TestRunner::deterministic();
        let bytes = proptest::collection::vec(any::<u8>(), 0..2048);
        for case in 0..cases {
            let raw = bytes.new_tree(&mut bytes_runner).unwrap().current();
            let mut e = base.clone();
            e.0["body"] = json!(aws_smithy_types::base64::encode(&raw));
            e.0["isBase64Encoded"] = json!(true);
            add("random", format!("body: random bytes #{case}"), e, Expect::Refused);
            for key in body.keys().filter(|k| !is_name_key(k)) {
                let mut b = body.clone();
                b.insert(key.clone(), json!(text(true)));
                let e = base.clone().body(Value::Object(b));
                add("random", format!("{key}: random string #{case}"), e, Expect::Refused);
            }
        }
    }
    for (place, avoid_at) in [("pathParameters", false), ("queryStringParameters", true)] {
        let names: Vec<String> = base.0[place]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        for name in names {
            for case in 0..cases {
                let value = text(avoid_at);
                let e = if avoid_at {
                    base.clone().query(&name, &value)
                } else {
                    base.clone().path_param(&name, &value)
                };
                add("random", format!("{name}: random string #{case}"), e, Expect::Refused);
            }
        }
    }

    // ---- If-Match.
    if base.0["headers"]["if-match"].is_string() {
        let malformed = Expect::Exactly(400, "VALIDATION_FAILED");
        let mismatch = Expect::Exactly(412, "VERSION_MISMATCH");
        add(
            "if-match",
            "missing".into(),
            base.clone().without_header("if-match"),
            Expect::Exactly(428, "PRECONDITION_REQUIRED"),
        );
        for (label, value, expect) in [
            (
                "weak",
                format!("W/\"{version}\""),
                Expect::Exactly(412, "VERSION_MISMATCH"),
            ),
            (
                "stale",
                format!("\"{}\"", version + 1),
                Expect::Exactly(412, "VERSION_MISMATCH"),
            ),
            // RFC 9110: well-formed tags that name no version match nothing
            // (412, nothing written); only what is no entity tag is 400. `*`
            // and a list holding the current tag apply: tests/integration/preconditions.rs.
            ("unquoted", version.to_string(), malformed),
            ("garbage", "garbage".to_owned(), malformed),
            ("a weak wildcard", "W/*".to_owned(), malformed),
            ("a wildcard and a tag", format!("*, \"{version}\""), malformed),
            (
                "two tags without a comma",
                format!("\"{version}\" \"{version}\""),
                malformed,
            ),
            ("a space in the tag", format!("\"{version} \""), malformed),
            ("zero", "\"0\"".to_owned(), mismatch),
            ("negative", "\"-1\"".to_owned(), mismatch),
            (
                "two stale tags",
                format!("\"{}\", \"{}\"", version + 1, version + 2),
                mismatch,
            ),
            ("past u64", "\"18446744073709551616\"".to_owned(), mismatch),
            ("empty tag", "\"\"".to_owned(), mismatch),
            ("an exponent", "\"1e3\"".to_owned(), mismatch),
            ("hexadecimal", "\"0x1\"".to_owned(), mismatch),
            ("a leading zero", format!("\"0{version}\""), mismatch),
            (
                "fullwidth digit",
                format!("\"{}\"", fullwidth(&version.to_string())),
                malformed,
            ),
        ] {
            add(
                "if-match",
                label.into(),
                base.clone().header("if-match", &value),
                expect,
            );
        }
    }
    out
}

/// What one route's variants found.
#[derive(Default)]
struct Tally {
    sending: f64,
    /// Variants refused before any DynamoDB call.
    before_dynamodb: usize,
    tried: BTreeMap<&'static str, usize>,
    codes: BTreeMap<String, usize>,
    failures: Vec<String>,
}

/// The accounts the variants name: built once, copied into each route's table.
#[derive(Clone)]
struct Cast {
    victim: Account,
    /// A victim whose primary was just switched, with the recovery link's token.
    recovered: Account,
    admin: Account,
}

async fn cast(app: TestApp) -> Cast {
    let (victim, recovered) = tokio::join!(account(&app, "victim"), account(&app, "recovered"));
    let recovered = with_recovery(&app, recovered).await;
    let admin = profile_only(&app, "admin").await;
    // Past the minute between codes: the valid send-verification is allowed.
    app.clock.advance(61);
    Cast {
        victim,
        recovered,
        admin,
    }
}

/// The valid request `route` is attacked through: as the victim (the admin,
/// on admin routes), on the victim's own addresses, so that the fault is the
/// only thing wrong with each variant.
async fn attack(route: &'static Function, fixture: &Fixture<Cast>) -> Tally {
    let (app, calls, cast) = fixture.copy().await;
    // A route anyone may call (the recovery link) acts on the account whose
    // primary was switched, with the link that undoes it.
    let victim = if route.access() == Access::Anyone {
        cast.recovered
    } else {
        cast.victim
    };
    let admin = cast.admin;
    let is_admin_route = route.access() == Access::Admin;
    let caller = if is_admin_route { &admin } else { &victim };
    let target = Target {
        caller,
        owner: &victim,
        admin_groups: is_admin_route,
        if_match: if_match_for(&app, route, caller).await,
    };
    let version: u64 = target.if_match.trim_matches('"').parse().unwrap();
    let (base, success) = valid_request(route, &target);

    let mut tally = Tally::default();
    let before = snapshot(&app).await;
    calls.take();
    for variant in variants(route, &base, &victim, version) {
        *tally.tried.entry(variant.category).or_default() += 1;
        let case = format!("{} [{}] {}", route.name, variant.category, variant.label);
        let clock = Instant::now();
        let sent = send(&app, route, variant.event).await;
        tally.sending += clock.elapsed().as_secs_f64();
        let reply = match sent {
            Ok(reply) => reply,
            Err(panic) => {
                tally.failures.push(format!("{case}: {panic}"));
                continue;
            }
        };
        let mut wrong = Vec::new();
        match variant.expect {
            Expect::Exactly(status, code) | Expect::BeforeTheTable(status, code) => {
                if (reply.status, reply.body["code"].as_str()) != (status, Some(code)) {
                    wrong.push(format!("expected {status} {code}"));
                }
                if let Err(e) = check_problem(&reply) {
                    wrong.push(e);
                }
            }
            Expect::Refused => {
                if let Err(e) = check_problem(&reply) {
                    wrong.push(e);
                }
            }
        }
        let code = reply.body["code"].as_str().unwrap_or("(none)");
        *tally.codes.entry(format!("{} {code}", reply.status)).or_default() += 1;
        let (made, written) = calls.take();
        if matches!(variant.expect, Expect::BeforeTheTable(..)) && made > 0 {
            wrong.push(format!("{made} table requests before the refusal"));
        }
        if made == 0 {
            tally.before_dynamodb += 1;
        }
        if !written.is_empty() {
            wrong.push(format!("DynamoDB carried out {written:?}"));
        }
        if !wrong.is_empty() {
            tally.failures.push(format!(
                "{case}: got {} {}: {}",
                reply.status,
                reply.body,
                wrong.join("; ")
            ));
        }
    }
    // Belt and braces: the whole table is as it was before the first variant.
    let changed = diff(&before, &snapshot(&app).await);
    if !changed.is_empty() {
        tally
            .failures
            .push(format!("{}: the variants changed the table: {changed:?}", route.name));
    }
    // The request the variants were made from works.
    let reply = send(&app, route, base).await;
    let (_, written) = calls.take();
    match reply {
        // Every route writes when it succeeds but a GET that counts nothing
        // (check-email counts the check against its daily limit): the
        // recorder that saw no write for any variant does see this one.
        Ok(reply) if reply.status == success && reads_only(route) == written.is_empty() => {}
        Ok(reply) if reply.status == success => tally.failures.push(format!(
            "{}: the valid request succeeded with the writes {written:?}",
            route.name
        )),
        Ok(reply) => tally.failures.push(format!(
            "{}: the valid request answered {} {}",
            route.name, reply.status, reply.body
        )),
        Err(panic) => tally
            .failures
            .push(format!("{}: the valid request {panic}", route.name)),
    }
    app.assert_invariants().await;
    tally
}

// One thread: the log capture below is the thread's subscriber, and the
// routes' requests interleave on it while waiting for DynamoDB Local.
#[tokio::test(flavor = "current_thread")]
async fn hostile_input_through_every_route_is_refused_and_writes_nothing() {
    let started = Instant::now();
    let logs = LogCapture::default();
    let _guard = logs.install();
    let routes = routes();
    let fixture = Box::pin(Fixture::build(cast)).await;
    let tallies = join_all(routes.iter().map(|route| attack(route, &fixture))).await;

    let mut tried = BTreeMap::<&str, usize>::new();
    let mut per_route = BTreeMap::<&str, usize>::new();
    let mut codes = BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    let (mut sending, mut before_dynamodb) = (0.0, 0);
    for (route, tally) in routes.iter().zip(tallies) {
        sending += tally.sending;
        before_dynamodb += tally.before_dynamodb;
        per_route.insert(route.name, tally.tried.values().sum());
        for (k, v) in tally.tried {
            *tried.entry(k).or_default() += v;
        }
        for (k, v) in tally.codes {
            *codes.entry(k).or_default() += v;
        }
        failures.extend(tally.failures);
    }
    // Refusals are logged by code alone: no address, name or hostile value.
    let log = logs.text();
    let refusals_logged = log.lines().filter(|l| l.contains("request refused")).count();
    if refusals_logged == 0 {
        failures.push("no refusal was logged: the log capture saw nothing".to_owned());
    }
    for line in log.lines() {
        for pii in ["example.com", "Lovelace", "\"Vic\"", "' OR", "jndi"] {
            if line.contains(pii) {
                failures.push(format!("the log shows {pii:?}: {line}"));
            }
        }
    }
    let total: usize = tried.values().sum();
    let seconds = started.elapsed().as_secs_f64();
    write_figures(
        "hostile_input",
        json!({
            "routes_covered": routes.len(),
            "inputs_tried": total,
            "inputs_by_category": tried,
            "inputs_by_route": per_route,
            "refused_before_any_dynamodb_call": before_dynamodb,
            "handler_seconds_summed_over_routes": sending,
            "log_lines_checked_for_pii": log.lines().count(),
            "answers": codes,
            "failures": failures.len(),
            "failure_list": failures,
            "wall_seconds": seconds,
        }),
    );
    eprintln!(
        "hostile: {total} hostile inputs through {} routes, {} failures, {seconds:.1} s",
        routes.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} hostile inputs were not refused cleanly:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

/// A GET whose catalog entry writes nothing (not even a counter).
fn reads_only(route: &Function) -> bool {
    method_of(route) == "GET"
        && !route
            .dynamodb_actions
            .iter()
            .any(|a| ["PutItem", "UpdateItem", "DeleteItem"].contains(a))
}
