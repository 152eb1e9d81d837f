//! The lab's watch over its series: the changes a finished campaign brings to light, posted
//! once to the webhook the operator configured.

use std::time::Duration;

use serde::Serialize;

use super::Lab;
use crate::series::history::{Change, FoundChanges};
use crate::series::requests::RequestChange;

/// How long a post to the webhook may take before it is given up (and logged).
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// What the webhook receives when a campaign brings changes to light.
#[derive(Debug, Serialize)]
pub struct ChangeAlert {
    pub series: String,
    /// The series' page, when the lab knows its public URL.
    pub series_url: Option<String>,
    /// The campaign whose figures made the changes stand out.
    pub campaign: String,
    pub changes: Vec<AlertedChange>,
    /// Changes in a tool's requests to its bucket per GiB backed up: its bill's.
    pub request_changes: Vec<AlertedRequestChange>,
}

/// A change in a tool's requests as the webhook gets it: its figures, and in words.
#[derive(Debug, Serialize)]
pub struct AlertedRequestChange {
    #[serde(flatten)]
    pub change: RequestChange,
    pub words: String,
}

/// A change as the webhook gets it: its figures, and in words.
#[derive(Debug, Serialize)]
pub struct AlertedChange {
    #[serde(flatten)]
    pub change: Change,
    pub words: String,
}

impl Lab {
    /// The changes finished campaign `id` brought to light in its series, posted to the
    /// webhook when there are any and one is configured. Failures are logged, never raised:
    /// the campaign is finished whatever becomes of its alert.
    pub(super) async fn watch(&self, id: &str) -> FoundChanges {
        let found = match self.series().found_by(id).await {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(campaign = %id, %error, "cannot test the campaign against its series");
                return FoundChanges::default();
            }
        };
        if let (Some((key, changes)), Some(webhook)) = (&found, &self.host.webhook)
            && !changes.is_empty()
        {
            let alert = ChangeAlert {
                series: key.clone(),
                series_url: self
                    .host
                    .url
                    .as_ref()
                    .map(|url| format!("{}/series/{key}", url.trim_end_matches('/'))),
                campaign: id.to_string(),
                changes: changes
                    .changes
                    .iter()
                    .map(|change| AlertedChange {
                        words: change.words(),
                        change: change.clone(),
                    })
                    .collect(),
                request_changes: changes
                    .request_changes
                    .iter()
                    .map(|change| AlertedRequestChange {
                        words: change.words(),
                        change: change.clone(),
                    })
                    .collect(),
            };
            post_alert(webhook.clone(), alert).await;
        }
        found.map(|(_, changes)| changes).unwrap_or_default()
    }
}

/// Posts `alert` to `webhook` as JSON, giving up after [`WEBHOOK_TIMEOUT`].
async fn post_alert(webhook: url::Url, alert: ChangeAlert) {
    let campaign = alert.campaign.clone();
    let posted =
        tokio::task::spawn_blocking(move || deliver(&webhook, &alert, WEBHOOK_TIMEOUT)).await;
    match posted {
        Ok(Ok(())) => {
            tracing::info!(campaign = %campaign, "posted the series' changes to the webhook")
        }
        Ok(Err(error)) => {
            tracing::warn!(campaign = %campaign, %error, "the webhook did not take the changes")
        }
        Err(error) => tracing::warn!(campaign = %campaign, %error, "cannot post to the webhook"),
    }
}

/// The webhook as a log may name it: its host and port, never its path or query, which may
/// hold a secret.
fn shown_host(webhook: &url::Url) -> String {
    let host = webhook.host_str().unwrap_or("the webhook");
    match webhook.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// Posts `body` to `webhook` as JSON. Delivered only when the receiver answers 2xx: a
/// redirect is not followed (the operator gave this address) and counts as not delivered.
/// The error names the webhook by its host alone.
fn deliver(webhook: &url::Url, body: &impl Serialize, timeout: Duration) -> Result<(), String> {
    let host = shown_host(webhook);
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .max_redirects_will_error(false)
        .http_status_as_error(false)
        .build()
        .new_agent();
    let response = agent
        .post(webhook.as_str())
        .send_json(body)
        .map_err(|error| {
            // ureq's messages may repeat the URL; only the host is logged.
            let said = error.to_string().replace(webhook.as_str(), &host);
            format!("{host}: {said}")
        })?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!(
            "{host} answered {status}: the changes were not delivered"
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A receiver on loopback that answers each request with `status_line`, then closes.
    fn receiver(status_line: &'static str) -> (url::Url, std::thread::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("a request");
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .expect("timeout");
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers and the small JSON body arrive together or in a few reads.
            while let Ok(read) = stream.read(&mut buf) {
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..read]);
                if request.windows(4).any(|w| w == b"\r\n\r\n") && request.ends_with(b"}") {
                    break;
                }
            }
            let answer = format!(
                "HTTP/1.1 {status_line}\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(answer.as_bytes());
            request.len()
        });
        let url =
            url::Url::parse(&format!("http://127.0.0.1:{port}/hook?secret=s3cr3t")).expect("url");
        (url, handle)
    }

    #[test]
    fn a_redirect_is_not_a_delivery_and_the_secret_is_never_said() {
        let (url, receiver) = receiver("307 Temporary Redirect");
        let said = deliver(&url, &serde_json::json!({"a": 1}), Duration::from_secs(5))
            .expect_err("a 307 delivered nothing");
        assert!(receiver.join().expect("received") > 0);
        assert!(said.contains("307"), "{said}");
        assert!(
            !said.contains("s3cr3t") && !said.contains("/hook"),
            "{said}"
        );
    }

    #[test]
    fn a_2xx_is_a_delivery_and_a_refused_connection_names_only_the_host() {
        let (url, receiver) = receiver("204 No Content");
        deliver(&url, &serde_json::json!({"a": 1}), Duration::from_secs(5)).expect("delivered");
        receiver.join().expect("received");
        let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = closed.local_addr().expect("addr").port();
        drop(closed);
        let url =
            url::Url::parse(&format!("http://127.0.0.1:{port}/hook?secret=s3cr3t")).expect("url");
        let said = deliver(&url, &serde_json::json!({"a": 1}), Duration::from_secs(5))
            .expect_err("nothing listens");
        assert!(said.starts_with(&format!("127.0.0.1:{port}")), "{said}");
        assert!(
            !said.contains("s3cr3t") && !said.contains("/hook"),
            "{said}"
        );
    }
}
