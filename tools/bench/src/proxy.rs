//! DynamoDB Local behind a loopback proxy that counts requests by operation
//! (`X-Amz-Target`), over plain HTTP or over TLS with a CA of its own, as the
//! real endpoint is reached over TLS.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::capacity::{self, Units};

/// Requests seen, by DynamoDB operation name.
pub(crate) type Counts = BTreeMap<String, u64>;

pub(crate) struct Proxy {
    pub(crate) url: String,
    counts: Arc<Mutex<Counts>>,
    state: Arc<Forward>,
    server: tokio::task::JoinHandle<()>,
}

/// A certificate authority of the bench's own and a certificate for 127.0.0.1
/// signed by it; the CA's PEM is written to `ca_file`, for `SSL_CERT_FILE`
/// (Rust) and `AWS_CA_BUNDLE` (boto3).
pub(crate) struct Tls {
    pub(crate) ca_file: PathBuf,
    acceptor: TlsAcceptor,
}

impl Tls {
    pub(crate) fn new(dir: &Path) -> Result<Self, Box<dyn std::error::Error>> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "user-service bench CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate()?;
        let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])?
            .signed_by(&leaf_key, &issuer)?;
        let ca_file = dir.join("bench-ca.pem");
        std::fs::write(&ca_file, ca_cert.pem())?;
        let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der())?;
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], key)?;
        Ok(Self {
            ca_file,
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}

impl Proxy {
    /// A proxy on 127.0.0.1 in front of `upstream` (DynamoDB Local's URL).
    pub(crate) async fn start(upstream: String, tls: Option<&Tls>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let counts = Arc::new(Mutex::new(Counts::new()));
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .map_err(std::io::Error::other)?;
        let acceptor = tls.map(|t| t.acceptor.clone());
        let state = Arc::new(Forward {
            upstream,
            client,
            counts: counts.clone(),
            metering: AtomicBool::new(false),
            units: Mutex::new(Units::default()),
            key_attributes: [user_service::store::keys::PK, user_service::store::keys::SK],
        });
        let shared = state.clone();
        let server = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let state = state.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let state = state.clone();
                        async move { state.forward(req).await }
                    });
                    match acceptor {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                let _ = http1::Builder::new()
                                    .serve_connection(TokioIo::new(stream), service)
                                    .await;
                            }
                        }
                        None => {
                            let _ = http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        }
                    }
                });
            }
        });
        Ok(Self {
            url: format!("{scheme}://127.0.0.1:{port}"),
            counts,
            state: shared,
            server,
        })
    }

    /// Requests so far, by operation.
    pub(crate) fn counts(&self) -> Counts {
        self.counts.lock().unwrap().clone()
    }

    /// Capacity units by the documented formula, from now on. Metering reads
    /// each written item before and after (straight from DynamoDB Local, not
    /// counted), so it is off while latency is measured.
    pub(crate) fn meter(&self, on: bool) {
        self.state.metering.store(on, Ordering::Relaxed);
    }

    /// Capacity units metered so far.
    pub(crate) fn units(&self) -> Units {
        *self.state.units.lock().unwrap()
    }

    /// The requests made between two snapshots.
    pub(crate) fn since(&self, before: &Counts) -> Counts {
        let mut after = self.counts();
        for (op, n) in before {
            if let Some(count) = after.get_mut(op) {
                *count -= n;
            }
        }
        after.retain(|_, n| *n > 0);
        after
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

struct Forward {
    upstream: String,
    client: reqwest::Client,
    counts: Arc<Mutex<Counts>>,
    metering: AtomicBool,
    units: Mutex<Units>,
    key_attributes: [&'static str; 2],
}

impl Forward {
    /// The (table, key) of every item a write names, in order.
    fn written(&self, operation: &str, body: &Value) -> Vec<(Value, Value)> {
        let key_of = |item: &Value| {
            let key: serde_json::Map<String, Value> = self
                .key_attributes
                .iter()
                .filter_map(|a| item.get(*a).map(|v| ((*a).to_owned(), v.clone())))
                .collect();
            Value::Object(key)
        };
        match operation {
            "PutItem" => vec![(body["TableName"].clone(), key_of(&body["Item"]))],
            "UpdateItem" | "DeleteItem" => vec![(body["TableName"].clone(), body["Key"].clone())],
            "TransactWriteItems" => body["TransactItems"]
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| {
                            let (kind, action) = item.as_object()?.iter().next()?;
                            let key = if kind == "Put" {
                                key_of(&action["Item"])
                            } else {
                                action["Key"].clone()
                            };
                            Some((action["TableName"].clone(), key))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The stored size of each item, read straight from DynamoDB Local.
    async fn sizes(&self, items: &[(Value, Value)], auth: Option<&hyper::header::HeaderValue>) -> Vec<u64> {
        let mut sizes = Vec::with_capacity(items.len());
        for (table, key) in items {
            let mut request = self
                .client
                .post(&self.upstream)
                .header("x-amz-target", "DynamoDB_20120810.GetItem")
                .header("content-type", "application/x-amz-json-1.0")
                .body(json!({ "TableName": table, "Key": key, "ConsistentRead": true }).to_string());
            if let Some(auth) = auth {
                request = request.header("authorization", auth);
            }
            let item = match request.send().await {
                Ok(answer) => answer.json::<Value>().await.unwrap_or(Value::Null)["Item"].clone(),
                Err(_) => Value::Null,
            };
            sizes.push(capacity::item_size(&item));
        }
        sizes
    }

    async fn forward(&self, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
        let (parts, body) = req.into_parts();
        let body = body.collect().await?.to_bytes();
        let operation = parts
            .headers
            .get("x-amz-target")
            .and_then(|t| t.to_str().ok())
            .map(|t| t.rsplit('.').next().unwrap_or(t).to_owned())
            .unwrap_or_else(|| "(no target)".to_owned());
        *self.counts.lock().unwrap().entry(operation.clone()).or_default() += 1;
        let metering = self.metering.load(Ordering::Relaxed);
        let request: Value = if metering {
            serde_json::from_slice(&body).unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        let auth = parts.headers.get("authorization").cloned();
        let written = if metering {
            self.written(&operation, &request)
        } else {
            Vec::new()
        };
        let before = self.sizes(&written, auth.as_ref()).await;
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let mut upstream = self
            .client
            .request(parts.method.clone(), format!("{}{path}", self.upstream))
            .body(body);
        for (name, value) in &parts.headers {
            if name != "host" && name != "content-length" {
                upstream = upstream.header(name, value);
            }
        }
        let answer = match upstream.send().await {
            Ok(answer) => answer,
            Err(e) => {
                return Ok(Response::builder()
                    .status(502)
                    .body(Full::new(Bytes::from(e.to_string())))
                    .unwrap());
            }
        };
        let mut response = Response::builder().status(answer.status());
        for (name, value) in answer.headers() {
            if name != "content-length" && name != "transfer-encoding" && name != "connection" {
                response = response.header(name, value);
            }
        }
        let bytes = answer.bytes().await.unwrap_or_default();
        if metering {
            let after = self.sizes(&written, auth.as_ref()).await;
            let sizes: Vec<(u64, u64)> = before.into_iter().zip(after).collect();
            let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let units = capacity::units(&operation, &request, &answer, &sizes);
            let mut total = self.units.lock().unwrap();
            *total = *total + units;
        }
        Ok(response.body(Full::new(bytes)).unwrap())
    }
}
