//! Matching requests to the routes template.yaml declares.

use std::collections::BTreeMap;

use crate::template;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub function: String,
    pub method: String,
    /// As declared, e.g. `/me/emails/{emailId}`.
    pub path: String,
}

impl Route {
    /// The route key API Gateway puts in events: `POST /me/emails/{emailId}/verify`.
    pub fn key(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Routes(Vec<Route>);

impl Routes {
    pub fn from_template(template: &serde_norway::Value) -> Self {
        Self(
            template::http_routes(template)
                .into_iter()
                .map(|(function, method, path)| Route { function, method, path })
                .collect(),
        )
    }

    pub fn all(&self) -> &[Route] {
        &self.0
    }

    /// The route for a request and its path parameters. Literal segments win
    /// over parameters, as in API Gateway.
    pub fn find(&self, method: &str, path: &str) -> Option<(&Route, BTreeMap<String, String>)> {
        let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        let mut best: Option<(usize, &Route, BTreeMap<String, String>)> = None;
        for route in self.0.iter().filter(|r| r.method.eq_ignore_ascii_case(method)) {
            let pattern: Vec<&str> = route.path.split('/').collect();
            if pattern.len() != segments.len() {
                continue;
            }
            let mut params = BTreeMap::new();
            let mut literals = 0;
            let matched = pattern.iter().zip(&segments).all(|(p, s)| {
                match p.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                    Some(name) if !s.is_empty() => {
                        params.insert(name.to_owned(), percent_decode(s));
                        true
                    }
                    Some(_) => false,
                    None => {
                        literals += 1;
                        p == s
                    }
                }
            });
            if matched && best.as_ref().is_none_or(|(n, _, _)| literals > *n) {
                best = Some((literals, route, params));
            }
        }
        best.map(|(_, route, params)| (route, params))
    }
}

/// Decodes `%XX` escapes (path parameters arrive decoded in API Gateway events).
pub fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes() -> Routes {
        let r = |f: &str, m: &str, p: &str| Route {
            function: f.into(),
            method: m.into(),
            path: p.into(),
        };
        Routes(vec![
            r("list-emails", "GET", "/me/emails"),
            r("remove-email", "DELETE", "/me/emails/{emailId}"),
            r("verify-email", "POST", "/me/emails/{emailId}/verify"),
            r("get-profile", "GET", "/me"),
        ])
    }

    #[test]
    fn matches_literals_and_parameters() {
        let routes = routes();
        let (route, params) = routes.find("DELETE", "/me/emails/abc%2Dd").unwrap();
        assert_eq!(route.function, "remove-email");
        assert_eq!(params["emailId"], "abc-d");
        assert_eq!(routes.find("GET", "/me/").unwrap().0.function, "get-profile");
        assert!(routes.find("GET", "/me/emails/x/verify").is_none());
        assert!(routes.find("PUT", "/me").is_none());
        assert_eq!(
            routes.find("POST", "/me/emails/x/verify").unwrap().0.key(),
            "POST /me/emails/{emailId}/verify"
        );
    }
}
