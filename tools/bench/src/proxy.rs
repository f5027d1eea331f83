//! DynamoDB Local behind a loopback proxy that counts requests by operation
//! (`X-Amz-Target`), over plain HTTP or over TLS with a CA of its own, as the
//! real endpoint is reached over TLS.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// Requests seen, by DynamoDB operation name.
pub(crate) type Counts = BTreeMap<String, u64>;

pub(crate) struct Proxy {
    pub(crate) url: String,
    counts: Arc<Mutex<Counts>>,
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
        });
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
            server,
        })
    }

    /// Requests so far, by operation.
    pub(crate) fn counts(&self) -> Counts {
        self.counts.lock().unwrap().clone()
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
}

impl Forward {
    async fn forward(&self, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
        let (parts, body) = req.into_parts();
        let body = body.collect().await?.to_bytes();
        let operation = parts
            .headers
            .get("x-amz-target")
            .and_then(|t| t.to_str().ok())
            .map(|t| t.rsplit('.').next().unwrap_or(t).to_owned())
            .unwrap_or_else(|| "(no target)".to_owned());
        *self.counts.lock().unwrap().entry(operation).or_default() += 1;
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
        Ok(response.body(Full::new(bytes)).unwrap())
    }
}
