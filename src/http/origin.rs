//! Requests a browser makes on behalf of another site. Two rules keep them out:
//!
//! - every request must name the lab in `Host` (an allow-list derived from `--bind`,
//!   `--public-url` and `--allow-host`), so a page on a domain that DNS rebinding pointed at the
//!   lab cannot read or change anything;
//! - a request that changes something is refused when the browser says it comes from another site
//!   (`Sec-Fetch-Site: cross-site` or `same-site`) or from an origin that is not the lab's own.
//!   Clients that send neither header (curl, scripts, agents) are not browsers and pass.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::uri::{Authority, Scheme};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// The request header in which browsers say where a request comes from.
const SEC_FETCH_SITE: &str = "sec-fetch-site";

/// A `--public-url` or `--allow-host` value that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SiteFlagError {
    #[error(
        "--public-url {0}: give the URL people use to reach the lab, e.g. https://lab.example.com"
    )]
    PublicUrl(String),
    #[error(
        "--allow-host {0}: give a host name or address, optionally with a port, e.g. lab.example.com:8080"
    )]
    AllowHost(String),
}

/// A host the lab answers to: a lower-case name or address (IPv6 in brackets), and the port, when
/// only one is meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    name: String,
    /// `None`: any port.
    port: Option<u16>,
}

impl HostPattern {
    /// Parses `name`, `name:port`, `[v6]` or `[v6]:port`; no user info, no path.
    pub fn parse(text: &str) -> Option<Self> {
        if text.contains(['@', '/', '?', '#']) || text.is_empty() {
            return None;
        }
        let authority: Authority = text.parse().ok()?;
        let name = authority.host().trim_end_matches('.').to_ascii_lowercase();
        if name.is_empty() {
            return None;
        }
        Some(Self {
            name,
            port: authority.port_u16(),
        })
    }

    fn address(ip: IpAddr, port: u16) -> Self {
        let name = match ip {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        Self {
            name,
            port: Some(port),
        }
    }

    fn named(name: &str, port: u16) -> Self {
        Self {
            name: name.to_string(),
            port: Some(port),
        }
    }

    /// Whether a request's `Host` (without a port: 80) is this host.
    fn admits(&self, host: &HostPattern) -> bool {
        self.name == host.name && self.port.is_none_or(|port| port == host.port.unwrap_or(80))
    }

    /// The origins of pages served under this host.
    fn origins(&self) -> Vec<String> {
        match self.port {
            Some(80) => vec![format!("http://{}", self.name)],
            Some(port) => vec![format!("http://{}:{port}", self.name)],
            None => vec![
                format!("http://{}", self.name),
                format!("https://{}", self.name),
            ],
        }
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.port {
            Some(port) => write!(f, "{}:{port}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// What the operator said about the names the lab is reached by: `--public-url` and
/// `--allow-host`, checked before anything starts.
#[derive(Debug, Clone, Default)]
pub struct SiteFlags {
    /// The origin of `--public-url`, e.g. `https://lab.example.com`.
    public_origin: Option<String>,
    hosts: Vec<HostPattern>,
}

impl SiteFlags {
    /// Checks `--public-url` and every `--allow-host`.
    pub fn parse(public_url: Option<&str>, allow_hosts: &[String]) -> Result<Self, SiteFlagError> {
        let mut flags = Self::default();
        if let Some(url) = public_url.map(str::trim).filter(|url| !url.is_empty()) {
            let (origin, host) =
                public_origin(url).ok_or_else(|| SiteFlagError::PublicUrl(url.to_string()))?;
            flags.public_origin = Some(origin);
            flags.hosts.push(host);
        }
        for text in allow_hosts
            .iter()
            .map(|host| host.trim())
            .filter(|host| !host.is_empty())
        {
            let host = HostPattern::parse(text)
                .ok_or_else(|| SiteFlagError::AllowHost(text.to_string()))?;
            flags.hosts.push(host);
        }
        Ok(flags)
    }

    /// Whether the operator named any host.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}

/// `scheme://host[:port]` of a URL (default ports left out, as browsers send `Origin`), and the
/// host it names; `None` for anything but an absolute http(s) URL without user info.
fn public_origin(url: &str) -> Option<(String, HostPattern)> {
    let uri: Uri = url.parse().ok()?;
    let scheme = uri.scheme()?;
    let default_port = if *scheme == Scheme::HTTP {
        80
    } else if *scheme == Scheme::HTTPS {
        443
    } else {
        return None;
    };
    let mut host = HostPattern::parse(uri.authority()?.as_str())?;
    if host.port == Some(default_port) {
        host.port = None;
    }
    let origin = format!("{}://{host}", scheme.as_str().to_ascii_lowercase());
    Some((origin, host))
}

/// Which `Host` and `Origin` values belong to this lab.
#[derive(Debug, Clone)]
pub struct SitePolicy {
    /// `None`: any host (a non-loopback bind whose names the operator did not give).
    hosts: Option<Vec<HostPattern>>,
    /// The lab's own origins, e.g. `http://127.0.0.1:8080`.
    origins: Vec<String>,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `Host` is not a name of this lab.
    UnknownHost { host: String, known: Vec<String> },
    /// The browser says the request comes from another site.
    CrossSite { site: String },
    /// `Origin` is not one of the lab's own.
    ForeignOrigin { origin: String },
    /// A lab that knows its names got a request that names none.
    NoHost { known: Vec<String> },
    /// A header the checks read was given more than once: which copy counts is ambiguous.
    Repeated { header: &'static str },
}

impl Refusal {
    /// The status code of the answer.
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::UnknownHost { .. } => StatusCode::MISDIRECTED_REQUEST,
            Refusal::CrossSite { .. } | Refusal::ForeignOrigin { .. } => StatusCode::FORBIDDEN,
            Refusal::NoHost { .. } | Refusal::Repeated { .. } => StatusCode::BAD_REQUEST,
        }
    }

    /// The refusal in one sentence, naming the flag that changes it.
    pub fn message(&self) -> String {
        match self {
            Refusal::UnknownHost { host, known } => format!(
                "this lab does not answer to the host {host:?} (it answers to {}); if that is \
                 a name of this lab, start it with --allow-host {host} or --public-url \
                 http://{host}",
                known.join(", ")
            ),
            Refusal::CrossSite { site } => format!(
                "refused: the browser says this request comes from another site \
                 (Sec-Fetch-Site: {site}); changes are accepted from the lab's own pages only"
            ),
            Refusal::ForeignOrigin { origin } => format!(
                "refused: this request comes from a page at {origin:?}, which is not this lab; \
                 changes are accepted from the lab's own pages only (behind a proxy, start the \
                 lab with --public-url set to the URL people use)"
            ),
            Refusal::NoHost { known } => format!(
                "the request names no host (no Host header); this lab answers to {}",
                known.join(", ")
            ),
            Refusal::Repeated { header } => {
                format!("the {header} header is given more than once; give it once")
            }
        }
    }
}

impl SitePolicy {
    /// The policy of a lab listening on `bound` (the actual address, port included).
    ///
    /// A loopback bind answers to its loopback names; an unspecified bind (`0.0.0.0`, `::`) to
    /// those and to the names given; a specific address to itself and the names given. A
    /// non-loopback bind with no names given answers to any host: its names cannot be known.
    pub fn new(bound: SocketAddr, flags: &SiteFlags) -> Self {
        let ip = bound.ip();
        let port = bound.port();
        if !ip.is_loopback() && flags.is_empty() {
            return Self {
                hosts: None,
                origins: Vec::new(),
            };
        }
        let mut candidates = Vec::new();
        if ip.is_loopback() || ip.is_unspecified() {
            candidates.push(HostPattern::address(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
            candidates.push(HostPattern::named("localhost", port));
            candidates.push(HostPattern::address(IpAddr::V6(Ipv6Addr::LOCALHOST), port));
        }
        if !ip.is_unspecified() {
            candidates.push(HostPattern::address(ip, port));
        }
        candidates.extend(flags.hosts.iter().cloned());
        let mut hosts: Vec<HostPattern> = Vec::with_capacity(candidates.len());
        for host in candidates {
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
        let mut origins: Vec<String> = hosts.iter().flat_map(HostPattern::origins).collect();
        origins.extend(flags.public_origin.iter().cloned());
        origins.sort();
        origins.dedup();
        Self {
            hosts: Some(hosts),
            origins,
        }
    }

    /// Whether any `Host` is accepted (no protection against DNS rebinding).
    pub fn accepts_any_host(&self) -> bool {
        self.hosts.is_none()
    }

    /// The hosts the lab answers to, for the start-up log.
    pub fn hosts(&self) -> Vec<String> {
        self.hosts
            .iter()
            .flatten()
            .map(HostPattern::to_string)
            .collect()
    }

    /// Checks one request's `Host`, and for a changing request its `Sec-Fetch-Site` and
    /// `Origin`.
    pub fn check(&self, method: &Method, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        for (name, shown) in [
            (header::HOST.as_str(), "Host"),
            (header::ORIGIN.as_str(), "Origin"),
            (SEC_FETCH_SITE, "Sec-Fetch-Site"),
        ] {
            if headers.get_all(name).iter().nth(1).is_some() {
                return Err(Refusal::Repeated { header: shown });
            }
        }
        let header_host = headers
            .get(header::HOST)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let authority = uri
            .authority()
            .map(|authority| authority.as_str().to_string());
        // A request in absolute form names its host twice: both names must be the lab's.
        let named: Vec<&String> = authority.iter().chain(header_host.iter()).collect();
        if let Some(allowed) = &self.hosts {
            if named.is_empty() {
                return Err(Refusal::NoHost {
                    known: self.hosts(),
                });
            }
            for host in &named {
                let admitted = HostPattern::parse(host)
                    .is_some_and(|host| allowed.iter().any(|pattern| pattern.admits(&host)));
                if !admitted {
                    return Err(Refusal::UnknownHost {
                        host: (*host).clone(),
                        known: self.hosts(),
                    });
                }
            }
        }
        let host = authority.or(header_host);
        if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return Ok(());
        }
        if let Some(site) = headers.get(SEC_FETCH_SITE) {
            let site = String::from_utf8_lossy(site.as_bytes()).to_ascii_lowercase();
            if !matches!(site.as_str(), "same-origin" | "none") {
                return Err(Refusal::CrossSite { site });
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = String::from_utf8_lossy(origin.as_bytes()).to_ascii_lowercase();
            if !self.is_own_origin(&origin, host.as_deref()) {
                return Err(Refusal::ForeignOrigin { origin });
            }
        }
        Ok(())
    }

    /// An origin is the lab's own when it is one of its origins, or when it names the very host
    /// the request was sent to (which passed the `Host` check).
    fn is_own_origin(&self, origin: &str, host: Option<&str>) -> bool {
        if self.origins.iter().any(|own| own == origin) {
            return true;
        }
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        matches!((authority, host), (Some(authority), Some(host)) if authority.eq_ignore_ascii_case(host))
    }
}

/// Middleware that applies the [`SitePolicy`]: JSON errors under `/api/`, plain text elsewhere.
pub async fn check_site(
    State(policy): State<Arc<SitePolicy>>,
    request: Request,
    next: Next,
) -> Response {
    match policy.check(request.method(), request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            tracing::debug!(
                method = %request.method(),
                path = request.uri().path(),
                reason = refusal.message(),
                "request refused"
            );
            if request.uri().path().starts_with("/api/") {
                ApiError::new(refusal.status(), refusal.message()).into_response()
            } else {
                (refusal.status(), refusal.message()).into_response()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn loopback() -> SitePolicy {
        SitePolicy::new(
            "127.0.0.1:8080".parse().expect("addr"),
            &SiteFlags::default(),
        )
    }

    fn check(
        policy: &SitePolicy,
        method: Method,
        headers: &[(&'static str, &'static str)],
    ) -> Result<(), Refusal> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, HeaderValue::from_static(value));
        }
        policy.check(&method, &Uri::from_static("/api/campaigns"), &map)
    }

    #[test]
    fn a_loopback_lab_answers_to_its_loopback_names_only() {
        let policy = loopback();
        assert_eq!(
            policy.hosts(),
            ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"]
        );
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
        ] {
            assert_eq!(
                check(&policy, Method::GET, &[("host", host)]),
                Ok(()),
                "{host}"
            );
        }
        for host in [
            "evil.example:8080",
            "127.0.0.1:9090",
            "localhost",
            "127.0.0.1",
        ] {
            let refused = check(&policy, Method::GET, &[("host", host)]);
            assert!(
                matches!(refused, Err(Refusal::UnknownHost { .. })),
                "{host}: {refused:?}"
            );
        }
        // No Host at all: who the lab is asked as cannot be told.
        assert!(matches!(
            check(&policy, Method::GET, &[]),
            Err(Refusal::NoHost { .. })
        ));
    }

    #[test]
    fn changes_from_other_sites_are_refused_and_plain_clients_pass() {
        let policy = loopback();
        let host = ("host", "127.0.0.1:8080");
        assert_eq!(check(&policy, Method::POST, &[host]), Ok(()));
        assert_eq!(
            check(
                &policy,
                Method::POST,
                &[
                    host,
                    ("origin", "http://127.0.0.1:8080"),
                    ("sec-fetch-site", "same-origin")
                ]
            ),
            Ok(())
        );
        assert_eq!(
            check(
                &policy,
                Method::POST,
                &[host, ("origin", "http://localhost:8080")]
            ),
            Ok(())
        );
        for origin in ["http://evil.example", "null", "http://127.0.0.1:9999"] {
            let refused = check(&policy, Method::DELETE, &[host, ("origin", origin)]);
            assert!(
                matches!(refused, Err(Refusal::ForeignOrigin { .. })),
                "{origin}: {refused:?}"
            );
        }
        for site in ["cross-site", "same-site"] {
            let refused = check(&policy, Method::POST, &[host, ("sec-fetch-site", site)]);
            assert!(matches!(refused, Err(Refusal::CrossSite { .. })), "{site}");
        }
        // Reads are not refused for their origin.
        assert_eq!(
            check(
                &policy,
                Method::GET,
                &[
                    host,
                    ("origin", "http://evil.example"),
                    ("sec-fetch-site", "cross-site")
                ]
            ),
            Ok(())
        );
    }

    #[test]
    fn named_hosts_and_the_public_url_are_the_labs_own() {
        let flags = SiteFlags::parse(
            Some("https://Lab.Example.com/"),
            &["10.0.0.5:8080".to_string(), "lab".to_string()],
        )
        .expect("valid flags");
        let policy = SitePolicy::new("0.0.0.0:8080".parse().expect("addr"), &flags);
        for host in [
            "lab.example.com",
            "10.0.0.5:8080",
            "lab:9000",
            "localhost:8080",
        ] {
            assert_eq!(
                check(&policy, Method::GET, &[("host", host)]),
                Ok(()),
                "{host}"
            );
        }
        assert!(check(&policy, Method::GET, &[("host", "10.0.0.6:8080")]).is_err());
        let proxied = [
            ("host", "lab.example.com"),
            ("origin", "https://lab.example.com"),
        ];
        assert_eq!(check(&policy, Method::POST, &proxied), Ok(()));
        // A proxy that rewrites Host: the public origin still counts as the lab's own.
        let rewritten = [
            ("host", "localhost:8080"),
            ("origin", "https://lab.example.com"),
        ];
        assert_eq!(check(&policy, Method::POST, &rewritten), Ok(()));
    }

    #[test]
    fn an_open_bind_without_names_accepts_any_host_but_not_foreign_origins() {
        let policy = SitePolicy::new("0.0.0.0:8080".parse().expect("addr"), &SiteFlags::default());
        assert!(policy.accepts_any_host());
        let same = [
            ("host", "anything:8080"),
            ("origin", "http://anything:8080"),
        ];
        assert_eq!(check(&policy, Method::POST, &same), Ok(()));
        let foreign = [("host", "anything:8080"), ("origin", "http://evil.example")];
        assert!(check(&policy, Method::POST, &foreign).is_err());
    }

    #[test]
    fn bad_flags_are_named() {
        assert!(matches!(
            SiteFlags::parse(Some("lab.example.com"), &[]),
            Err(SiteFlagError::PublicUrl(_))
        ));
        assert!(matches!(
            SiteFlags::parse(Some("ftp://lab.example.com"), &[]),
            Err(SiteFlagError::PublicUrl(_))
        ));
        assert!(matches!(
            SiteFlags::parse(None, &["user@lab".to_string()]),
            Err(SiteFlagError::AllowHost(_))
        ));
        assert!(matches!(
            SiteFlags::parse(None, &["lab/x".to_string()]),
            Err(SiteFlagError::AllowHost(_))
        ));
    }
}
