//! The lab's HTTP application in this process, for tests of answers that need no worker and no
//! real connection: a real SQLite file in a temp directory, the real router with every guard,
//! requests sent to it directly. Campaigns it accepts stay queued: nothing runs them.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use backlab::engine::EngineSettings;
use backlab::http::origin::{SiteFlags, SitePolicy};
use backlab::http::{self, AppState};
use backlab::lab::{HostSettings, Lab};
use backlab::net::listener::DataLink;
use backlab::policy::Policy;
use backlab::store::{Location, Store};
use http_body_util::BodyExt;
use tokio::sync::watch;
use tower::ServiceExt;

use super::fixtures::scratch;

/// The address the application believes it listens on: requests name it in `Host`.
const BOUND: &str = "127.0.0.1:8080";

/// An application and the directory its database and data live in.
pub struct App {
    router: Router,
    _shutdown: watch::Sender<bool>,
    _root: tempfile::TempDir,
}

/// An answer: status, content type and body.
pub struct Answer {
    pub status: StatusCode,
    pub content_type: String,
    pub body: String,
}

impl Answer {
    /// The body as JSON; a failure shows it.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.body))
    }
}

impl App {
    /// A lab with a fresh database, its data dir the only allowed root, no token.
    pub async fn new() -> App {
        let root = scratch();
        let data = root.path().join("data");
        std::fs::create_dir_all(&data).expect("data dir");
        let data = data.canonicalize().expect("data dir");
        let store = Store::open(&Location::File(root.path().join("lab.db")))
            .await
            .expect("the store opens");
        let policy = Policy {
            source_roots: vec![data.clone()],
            target_roots: vec![data.clone()],
            devices: Vec::new(),
            base_dir: data.clone(),
            max_size: 1 << 30,
            max_duration_s: 600.0,
        };
        let datalink = DataLink::start("127.0.0.1:0".parse().expect("address"), None)
            .expect("the data listener starts");
        let lab = Arc::new(Lab::new(
            store,
            policy,
            EngineSettings {
                allow_devices: Vec::new(),
                network: None,
                restore_dir: data,
                object_stores: Default::default(),
                upload_journal: None,
                object_owner: "in-process".to_string(),
                tools: Default::default(),
                max_run: None,
            },
            HostSettings {
                name: "in-process".to_string(),
                lease: std::time::Duration::from_secs(15),
                url: None,
                webhook: None,
            },
            datalink,
        ));
        let (shutdown_tx, shutdown) = watch::channel(false);
        let (api, openapi) = http::api().expect("the API document");
        let state = AppState::new(lab, openapi, None, shutdown);
        let bound: SocketAddr = BOUND.parse().expect("address");
        let flags = SiteFlags::parse(None, &[]).expect("no site flags");
        let router = http::app(api, state, Arc::new(SitePolicy::new(bound, &flags)));
        App {
            router,
            _shutdown: shutdown_tx,
            _root: root,
        }
    }

    /// Sends one request and reads the whole answer.
    pub async fn send(&self, method: &str, path: &str, json: Option<&str>) -> Answer {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, BOUND);
        if json.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Body::from(json.unwrap_or_default().to_string()))
            .expect("request");
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("the router answers");
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("the body")
            .to_bytes();
        Answer {
            status,
            content_type,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
}
