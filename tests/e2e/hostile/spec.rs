//! A spec's shape read strictly: what JSON allows and a spec must not mean silently (a list for
//! a section, a key twice, an empty path), what JSON means and a spec must take (`42.0` is
//! 42), and the limits of reads and of the queue, each with a clear answer.

use serde_json::{Value, json};

use crate::support::in_process::App;

fn generated() -> Value {
    json!({"generated": {"size": "4M"}})
}

/// A campaign of 1 000 runs (40 × 5 points, 5 repeats), as JSON text.
fn wide_campaign() -> String {
    let buffers: Vec<u32> = (1..=40).collect();
    json!({"source": generated(), "target": {"kind": "null"},
           "tests": ["null_sink"], "params": {"duration_s": 1},
           "matrix": {"buffers": buffers, "streams": [1, 2, 3, 4, 5]},
           "repeat": 5})
    .to_string()
}

#[tokio::test]
async fn a_list_for_a_section_and_a_key_given_twice_are_refused_by_name() {
    let app = App::new().await;
    let list = r#"{"source": {"generated": {"size": "4M"}}, "target": {"kind": "null"},
                   "tests": ["null_sink"], "params": [1]}"#;
    let answer = app.send("POST", "/api/campaigns", Some(list)).await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert!(
        answer.json()["fields"]["params"]
            .as_str()
            .is_some_and(|message| message.contains("object")),
        "{}",
        answer.body
    );

    let twice = r#"{"source": {"generated": {"size": "4M"}}, "target": {"kind": "null"},
                    "tests": ["null_sink"],
                    "params": {"buffers": 8, "duration_s": 5, "buffers": 1024}}"#;
    let answer = app.send("POST", "/api/campaigns", Some(twice)).await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert!(
        answer.json()["fields"]["params.buffers"]
            .as_str()
            .is_some_and(|message| message.contains("more than once")),
        "{}",
        answer.body
    );
    // Settings of a target kind are an open map: a key twice there is refused as well.
    let twice = r#"{"source": {"generated": {"size": "4M"}},
                    "target": {"kind": "tape", "model": "lto-4", "drives": 1, "drives": 16},
                    "tests": ["tape_write"], "params": {"duration_s": 5}}"#;
    let answer = app.send("POST", "/api/campaigns", Some(twice)).await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert!(answer.json()["fields"]["target.drives"].is_string());
}

#[tokio::test]
async fn whole_numbers_with_a_fraction_are_read_as_integers() {
    let app = App::new().await;
    let spec = json!({"source": generated(), "target": {"kind": "null"},
                      "tests": ["null_sink"], "params": {"buffers": 8.0, "duration_s": 5},
                      "repeat": 42.0});
    let answer = app
        .send("POST", "/api/campaigns", Some(&spec.to_string()))
        .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    assert_eq!(answer.json()["runs"], 42);
    // A fraction that is one is still refused for a count.
    let spec = json!({"source": generated(), "target": {"kind": "null"},
                      "tests": ["null_sink"], "params": {"duration_s": 5}, "repeat": 2.5});
    let answer = app
        .send("POST", "/api/campaigns", Some(&spec.to_string()))
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert!(answer.json()["fields"]["repeat"].is_string());
}

#[tokio::test]
async fn an_empty_path_is_refused_not_read_as_the_data_dir() {
    let app = App::new().await;
    let spec = json!({"source": {"paths": [""]}, "target": {"kind": "null"},
                      "tests": ["read_single"], "params": {"duration_s": 5}});
    let answer = app
        .send("POST", "/api/campaigns", Some(&spec.to_string()))
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert!(
        answer.json()["fields"]["source.paths[0]"]
            .as_str()
            .is_some_and(|message| message.contains("empty")),
        "{}",
        answer.body
    );
    let spec = json!({"source": generated(), "target": {"kind": "dir", "path": ""},
                      "tests": ["tape_write"], "params": {"duration_s": 5}});
    let answer = app
        .send("POST", "/api/campaigns", Some(&spec.to_string()))
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    assert!(answer.json()["fields"]["target.path"].is_string());
}

#[tokio::test]
async fn a_bad_page_cursor_is_a_bad_query_not_a_bad_campaign() {
    let app = App::new().await;
    let answer = app
        .send("GET", "/api/campaigns?before=nonsense", None)
        .await;
    assert_eq!(answer.status, 422, "{}", answer.body);
    let body = answer.json();
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|error| error.contains("query") && !error.contains("campaign is")),
        "{body}"
    );
    assert!(body["fields"]["before"].is_string(), "{body}");
}

#[tokio::test]
async fn the_queue_takes_at_most_ten_thousand_waiting_runs() {
    let app = App::new().await;
    let wide = wide_campaign();
    for _ in 0..10 {
        let answer = app.send("POST", "/api/campaigns", Some(&wide)).await;
        assert_eq!(answer.status, 201, "{}", answer.body);
        assert_eq!(answer.json()["runs"], 1000);
    }
    let answer = app.send("POST", "/api/campaigns", Some(&wide)).await;
    assert_eq!(answer.status, 429, "{}", answer.body);
    assert!(
        answer.json()["error"]
            .as_str()
            .is_some_and(|error| error.contains("10000 may wait")),
        "{}",
        answer.body
    );
    let listed = app.send("GET", "/api/campaigns", None).await.json();
    assert_eq!(listed["campaigns"].as_array().map(Vec::len), Some(10));
}

#[tokio::test]
async fn submissions_at_the_same_moment_cannot_pass_the_queue_limit_together() {
    let app = App::new().await;
    let wide = wide_campaign();
    let answers = futures_util::future::join_all(
        (0..30).map(|_| app.send("POST", "/api/campaigns", Some(&wide))),
    )
    .await;
    let accepted = answers.iter().filter(|answer| answer.status == 201).count();
    let refused = answers.iter().filter(|answer| answer.status == 429).count();
    assert_eq!(accepted + refused, 30, "every answer a 201 or a 429");
    assert_eq!(
        accepted, 10,
        "10 campaigns of 1 000 runs fill the queue of 10 000"
    );
    let listed = app.send("GET", "/api/campaigns", None).await.json();
    assert_eq!(listed["campaigns"].as_array().map(Vec::len), Some(10));
}
