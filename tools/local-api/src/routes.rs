//! The routes template.yaml declares, served by an axum router.

use std::collections::HashMap;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request};
use axum::http::{Method, Response, StatusCode};
use axum::routing::{MethodFilter, on};

use crate::gateway::gateway_message;
use crate::template;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub function: String,
    pub method: String,
    /// As declared, e.g. `/me/emails/{emailId}` (axum's syntax too).
    pub path: String,
    /// Declared with `Auth: Authorizer: NONE`: no token is asked for or passed on.
    pub public: bool,
}

impl Route {
    /// The route key API Gateway puts in events: `POST /me/emails/{emailId}/verify`.
    pub fn key(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Routes(Vec<Route>);

/// API Gateway's answer when no route matches, whatever the method.
pub fn not_found() -> Response<Body> {
    gateway_message(StatusCode::NOT_FOUND, "Not Found")
}

/// API Gateway's method of a route that takes every method.
const ANY: &str = "ANY";

/// A path ending in API Gateway's greedy parameter (`/scim/v2/{proxy+}`) in
/// axum's syntax (`/scim/v2/{*proxy}`); `None` for any other path.
fn greedy(path: &str) -> Option<String> {
    let (head, last) = path.rsplit_once('/')?;
    let name = last.strip_prefix('{')?.strip_suffix("+}")?;
    Some(format!("{head}/{{*{name}}}"))
}

impl Routes {
    pub fn from_template(template: &serde_norway::Value) -> Self {
        let public = template::public_routes(template);
        Self(
            template::http_routes(template)
                .into_iter()
                .map(|(function, method, path)| Route {
                    public: public.contains(&(method.clone(), path.clone())),
                    function,
                    method,
                    path,
                })
                .collect(),
        )
    }

    pub fn all(&self) -> &[Route] {
        &self.0
    }

    /// A router that hands each matched request to `handler` with its route and
    /// its path parameters, percent-decoded as API Gateway passes them. Literal
    /// segments win over parameters, as in API Gateway. Anything else is 404.
    pub fn router<S, H, F>(&self, handler: H) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
        H: Fn(Route, HashMap<String, String>, Request) -> F + Clone + Send + Sync + 'static,
        F: Future<Output = Response<Body>> + Send + 'static,
    {
        let mut router = Router::new();
        for route in &self.0 {
            // `ANY` matches every method, as API Gateway's does.
            let filter = if route.method == ANY {
                MethodFilter::DELETE
                    .or(MethodFilter::GET)
                    .or(MethodFilter::PATCH)
                    .or(MethodFilter::POST)
                    .or(MethodFilter::PUT)
            } else if let Some(filter) = Method::from_bytes(route.method.as_bytes())
                .ok()
                .and_then(|m| MethodFilter::try_from(m).ok())
            {
                filter
            } else {
                tracing::warn!(route = %route.key(), "method not served locally");
                continue;
            };
            let (matched, handler) = (route.clone(), handler.clone());
            let endpoint = move |Path(params): Path<HashMap<String, String>>, request: Request| {
                let (route, handler) = (matched.clone(), handler.clone());
                async move {
                    // axum runs GET routes for HEAD too; API Gateway does not.
                    if route.method != ANY && request.method().as_str() != route.method {
                        return not_found();
                    }
                    handler(route, params, request).await
                }
            };
            match greedy(&route.path) {
                // A greedy parameter (`{proxy+}`) is axum's catch-all, which
                // ends a path: no trailing-slash twin.
                Some(path) => router = router.route(&path, on(filter, endpoint)),
                None => {
                    // A trailing slash reaches the same route, as it did before axum.
                    for path in [route.path.clone(), format!("{}/", route.path)] {
                        router = router.route(&path, on(filter, endpoint.clone()));
                    }
                }
            }
        }
        // Set before the caller adds its own routes, so only these answer a wrong
        // method with API Gateway's 404 rather than axum's 405.
        router
            .method_not_allowed_fallback(|| async { not_found() })
            .fallback(|| async { not_found() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes() -> Routes {
        let r = |f: &str, m: &str, p: &str| Route {
            function: f.into(),
            method: m.into(),
            path: p.into(),
            public: false,
        };
        Routes(vec![
            r("list-emails", "GET", "/me/emails"),
            r("remove-email", "DELETE", "/me/emails/{emailId}"),
            r("verify-email", "POST", "/me/emails/{emailId}/verify"),
            r("get-profile", "GET", "/me"),
            r("update-profile", "PATCH", "/me"),
        ])
    }

    /// Serves `routes` on a free port; the answer names the route and its parameters.
    async fn serve(routes: &Routes) -> String {
        let router: Router = routes.router(|route, params, _| async move {
            let params: std::collections::BTreeMap<_, _> = params.into_iter().collect();
            Response::new(Body::from(format!("{} {params:?}", route.key())))
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        base
    }

    async fn call(base: &str, method: &str, path: &str) -> (u16, String) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let response = reqwest::Client::new()
            .request(method, format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    #[tokio::test]
    async fn matches_literals_and_parameters() {
        let base = serve(&routes()).await;
        let not_found = (404, r#"{"message":"Not Found"}"#.to_owned());
        assert_eq!(
            call(&base, "DELETE", "/me/emails/abc%2Dd").await,
            (200, r#"DELETE /me/emails/{emailId} {"emailId": "abc-d"}"#.into())
        );
        assert_eq!(
            call(&base, "POST", "/me/emails/a%40b%20c%2Fd/verify").await,
            (200, r#"POST /me/emails/{emailId}/verify {"emailId": "a@b c/d"}"#.into())
        );
        assert_eq!(call(&base, "GET", "/me/").await, (200, "GET /me {}".into()));
        assert_eq!(
            call(&base, "GET", "/me/emails").await,
            (200, "GET /me/emails {}".into())
        );
        // Unknown paths, and known paths with another method, are API Gateway's 404.
        assert_eq!(call(&base, "GET", "/me/emails/x/verify").await, not_found);
        assert_eq!(call(&base, "GET", "/nowhere").await, not_found);
        assert_eq!(call(&base, "PUT", "/me").await, not_found);
        assert_eq!(call(&base, "HEAD", "/me").await.0, 404);
        // Two methods on one path: each reaches its own route.
        assert_eq!(call(&base, "PATCH", "/me").await, (200, "PATCH /me {}".into()));
    }

    #[tokio::test]
    async fn a_greedy_route_takes_every_method_below_its_prefix_and_literals_win() {
        let routes = Routes(vec![
            Route {
                function: "scim-discovery".into(),
                method: "ANY".into(),
                path: "/scim/v2/{proxy+}".into(),
                public: true,
            },
            Route {
                function: "scim-list-users".into(),
                method: "GET".into(),
                path: "/scim/v2/Users".into(),
                public: true,
            },
        ]);
        let base = serve(&routes).await;
        assert_eq!(
            call(&base, "GET", "/scim/v2/Users").await,
            (200, "GET /scim/v2/Users {}".into())
        );
        assert_eq!(
            call(&base, "POST", "/scim/v2/Schemas/urn:x").await,
            (200, r#"ANY /scim/v2/{proxy+} {"proxy": "Schemas/urn:x"}"#.into())
        );
        assert_eq!(
            call(&base, "DELETE", "/scim/v2/ServiceProviderConfig").await.1,
            r#"ANY /scim/v2/{proxy+} {"proxy": "ServiceProviderConfig"}"#
        );
        assert_eq!(greedy("/me"), None);
    }

    #[tokio::test]
    async fn every_route_of_the_template_is_served() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../template.yaml");
        let routes = Routes::from_template(&template::load(&root).unwrap());
        assert!(!routes.all().is_empty());
        let base = serve(&routes).await;
        // `{emailId}` goes out as `%7BemailId%7D`: a value like any other.
        for route in routes.all() {
            let method = if route.method == ANY { "GET" } else { &route.method };
            assert_eq!(call(&base, method, &route.path).await.0, 200, "{}", route.key());
        }
    }
}
