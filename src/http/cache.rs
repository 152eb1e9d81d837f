//! Finished campaigns never change, so their report page, download and charts are rendered once
//! and served from memory (within a bound), each with an ETag a browser can revalidate.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Most bytes of rendered answers kept; the oldest go first.
pub const MAX_BYTES: usize = 64 << 20;

/// One rendered answer: its body, its type, and a validator derived from its bytes.
pub struct CachedPage {
    body: Bytes,
    content_type: &'static str,
    disposition: Option<HeaderValue>,
    etag: HeaderValue,
}

impl CachedPage {
    /// An answer with `body` of `content_type`, offered for download when `disposition` is set.
    pub fn new(
        body: impl Into<Bytes>,
        content_type: &'static str,
        disposition: Option<HeaderValue>,
    ) -> Self {
        let body = body.into();
        let mut hasher = DefaultHasher::new();
        body.hash(&mut hasher);
        let etag = HeaderValue::from_str(&format!("\"{:016x}\"", hasher.finish()))
            .unwrap_or_else(|_| HeaderValue::from_static("\"0\""));
        Self {
            body,
            content_type,
            disposition,
            etag,
        }
    }

    /// The answer to `request`: 304 Not Modified when it names this version in
    /// `If-None-Match`, the whole body otherwise.
    pub fn respond(&self, request: &HeaderMap) -> Response {
        let etag = self.etag.to_str().unwrap_or_default();
        let fresh = request
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|tag| {
                let tag = tag.trim();
                tag == "*" || tag.trim_start_matches("W/") == etag
            });
        let mut response = if fresh {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            self.body.clone().into_response()
        };
        let headers = response.headers_mut();
        headers.insert(header::ETAG, self.etag.clone());
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if !fresh {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(self.content_type),
            );
            if let Some(disposition) = &self.disposition {
                headers.insert(header::CONTENT_DISPOSITION, disposition.clone());
            }
        }
        response
    }

    fn size(&self) -> usize {
        self.body.len()
    }
}

/// Rendered answers of finished campaigns, by campaign and page.
#[derive(Default)]
pub struct PageCache {
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    pages: HashMap<String, Arc<CachedPage>>,
    /// Keys, oldest first.
    order: VecDeque<String>,
    bytes: usize,
}

fn key(campaign: &str, page: &str) -> String {
    format!("{campaign}/{page}")
}

impl PageCache {
    /// The answer kept for `page` of `campaign`, if any.
    pub fn get(&self, campaign: &str, page: &str) -> Option<Arc<CachedPage>> {
        let entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        entries.pages.get(&key(campaign, page)).cloned()
    }

    /// Keeps an answer of a finished campaign, dropping the oldest beyond [`MAX_BYTES`].
    pub fn put(&self, campaign: &str, page: &str, cached: CachedPage) -> Arc<CachedPage> {
        let cached = Arc::new(cached);
        if cached.size() > MAX_BYTES / 4 {
            return cached;
        }
        let mut entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let key = key(campaign, page);
        if let Some(old) = entries.pages.insert(key.clone(), Arc::clone(&cached)) {
            entries.bytes -= old.size();
            entries.order.retain(|k| *k != key);
        }
        entries.bytes += cached.size();
        entries.order.push_back(key);
        while entries.bytes > MAX_BYTES {
            let Some(oldest) = entries.order.pop_front() else {
                break;
            };
            if let Some(old) = entries.pages.remove(&oldest) {
                entries.bytes -= old.size();
            }
        }
        cached
    }

    /// Drops every answer kept.
    pub fn clear(&self) {
        let mut entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        *entries = Entries::default();
    }

    /// Drops every answer of a campaign (a rerun of it was queued).
    pub fn forget(&self, campaign: &str) {
        let prefix = key(campaign, "");
        let mut entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Entries {
            pages,
            order,
            bytes,
        } = &mut *entries;
        order.retain(|k| {
            if !k.starts_with(&prefix) {
                return true;
            }
            if let Some(old) = pages.remove(k) {
                *bytes -= old.size();
            }
            false
        });
    }
}

/// A campaign judged just now may be shown, or compared with, in any kept answer (a later
/// campaign's report compares itself with the previous one of its spec): all are dropped.
/// Finished campaigns end seldom; their answers are rendered again when next asked for.
impl crate::lab::KeptAnswers for PageCache {
    fn judged(&self, _id: &str) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matching_if_none_match_gets_304_and_others_the_body() {
        let page = CachedPage::new("<svg/>", "image/svg+xml", None);
        let etag = page.etag.clone();
        let mut request = HeaderMap::new();
        assert_eq!(page.respond(&request).status(), StatusCode::OK);
        request.insert(header::IF_NONE_MATCH, etag.clone());
        let response = page.respond(&request);
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(response.headers().get(header::ETAG), Some(&etag));
        request.insert(header::IF_NONE_MATCH, HeaderValue::from_static("\"other\""));
        assert_eq!(page.respond(&request).status(), StatusCode::OK);
    }

    #[test]
    fn the_cache_stays_within_its_bound_and_forgets_a_deleted_campaign() {
        let cache = PageCache::default();
        let big = vec![b'x'; MAX_BYTES / 8];
        for n in 0..12 {
            cache.put(
                &format!("c{n}"),
                "page",
                CachedPage::new(big.clone(), "text/html", None),
            );
        }
        let entries = cache.inner.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(entries.bytes <= MAX_BYTES);
        assert!(
            !entries.pages.contains_key("c0/page"),
            "the oldest went first"
        );
        drop(entries);
        assert!(cache.get("c11", "page").is_some());
        cache.put(
            "c11",
            "tests.svg",
            CachedPage::new("<svg/>", "image/svg+xml", None),
        );
        cache.forget("c11");
        assert!(cache.get("c11", "page").is_none() && cache.get("c11", "tests.svg").is_none());
        assert!(cache.get("c10", "page").is_some());
    }

    #[test]
    fn a_judgement_kept_drops_the_answers_that_may_show_or_compare_with_it() {
        use crate::lab::KeptAnswers;
        let cache = PageCache::default();
        for campaign in ["judged", "later"] {
            cache.put(campaign, "page", CachedPage::new("<p/>", "text/html", None));
        }
        cache.judged("judged");
        assert!(cache.get("judged", "page").is_none());
        assert!(
            cache.get("later", "page").is_none(),
            "a later campaign's page compares itself with the one judged"
        );
    }
}
