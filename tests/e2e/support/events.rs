//! A campaign's live event stream (`/api/campaigns/ID/events`), read one server-sent event at
//! a time.

use serde_json::Value;

/// An open event stream.
pub struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    /// Takes over an answer to `GET /api/campaigns/ID/events`, checking it is an event stream.
    pub fn new(response: reqwest::Response) -> Events {
        assert_eq!(response.status(), 200, "the event stream opens");
        assert!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream")),
            "{:?}",
            response.headers()
        );
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event's name and JSON data, skipping keep-alive comments; `Ok(None)` when the
    /// lab ends the stream, an error when the connection breaks.
    pub async fn next(&mut self) -> reqwest::Result<Option<(String, Value)>> {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(event) = parse(&block) {
                    return Ok(Some(event));
                }
            }
            match self.response.chunk().await? {
                Some(chunk) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                None => return Ok(None),
            }
        }
    }
}

/// One event block: its name and JSON data, or `None` for a keep-alive comment.
fn parse(block: &str) -> Option<(String, Value)> {
    let mut name = String::new();
    let mut data = String::new();
    for line in block.lines() {
        if let Some(value) = line.strip_prefix("event:") {
            name = value.trim().to_string();
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.trim());
        }
    }
    if name.is_empty() {
        return None;
    }
    let value = serde_json::from_str(&data)
        .unwrap_or_else(|error| panic!("event {name}: data is not JSON ({error}): {data}"));
    Some((name, value))
}
