//! The new-campaign form: its fields, the presets that fill them, and the spec it stands for.
//! The same mapping runs in `static/new.js` for browsers with JavaScript.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::spec::TestKind;

/// Presets offered above the form: id and label.
pub const PRESETS: [(&str, &str); 4] = [
    ("bottleneck", "Bottleneck determination"),
    ("tuning", "Buffer × block tuning"),
    ("direct", "Direct I/O check"),
    ("network", "Network backup, 6–8 clients"),
];

/// The form's values as text, plus the errors to show next to them.
#[derive(Debug, Clone, Default)]
pub struct CampaignForm {
    pub preset: String,
    pub name: String,
    pub repeat: String,
    pub source_kind: String,
    pub source_paths: String,
    pub generated_size: String,
    pub target_kind: String,
    pub target_path: String,
    pub tape_model: String,
    pub tape_drives: String,
    pub tests: Vec<String>,
    pub buffers: String,
    pub block_size: String,
    pub streams: String,
    pub size: String,
    pub duration_s: String,
    pub compress_ratio: String,
    pub direct: bool,
    pub cold_cache: bool,
    pub fsync: bool,
    /// Run the whole duration, reading a small source again.
    pub time_based: bool,
    pub matrix_buffers: String,
    pub matrix_block_size: String,
    pub matrix_streams: String,
    /// Network backup: agent names (comma-separated; empty = the lab's loopback clients).
    pub agents: String,
    pub clients: String,
    pub link_mb_s: String,
    pub matrix_clients: String,
    /// Errors by form field name.
    pub errors: BTreeMap<String, String>,
}

impl CampaignForm {
    /// The form filled by a preset (an unknown preset gives the bottleneck one).
    pub fn preset(id: &str) -> Self {
        let mut form = Self {
            preset: "bottleneck".into(),
            name: "Bottleneck determination".into(),
            // Three repeats give every figure a spread, so a comparison can tell change from
            // noise.
            repeat: "3".into(),
            source_kind: "paths".into(),
            source_paths: "demo".into(),
            generated_size: "1G".into(),
            target_kind: "tape".into(),
            target_path: String::new(),
            tape_model: "lto-4".into(),
            tape_drives: "1".into(),
            tests: TestKind::BOTTLENECK
                .iter()
                .map(|t| t.id().to_string())
                .collect(),
            buffers: "32".into(),
            block_size: "256K".into(),
            streams: "4".into(),
            size: String::new(),
            // Long enough for a steady state; a small source is read again until it ends.
            duration_s: "10".into(),
            compress_ratio: String::new(),
            direct: false,
            cold_cache: true,
            fsync: true,
            time_based: true,
            ..Self::default()
        };
        match id {
            "tuning" => {
                form.preset = "tuning".into();
                form.name = "Buffer × block tuning".into();
                form.tests = vec!["full_backup".into()];
                form.duration_s = "5".into();
                form.matrix_buffers = "8, 16, 32".into();
                form.matrix_block_size = "64K, 128K, 256K".into();
                form.matrix_streams = "1, 2, 4".into();
            }
            "direct" => {
                form.preset = "direct".into();
                // Direct I/O is about a real disk: the data dir.
                form.target_kind = "dir".into();
                form.target_path = ".".into();
                form.name = "Direct I/O check".into();
                form.tests = vec!["tape_write".into(), "read_single".into()];
                form.direct = true;
                form.buffers = "16".into();
                form.block_size = "1M".into();
            }
            "network" => {
                // Seed 000: six to eight clients, two streams each, into two LTO-4 drives.
                form.preset = "network".into();
                form.name = "Network backup, 6–8 clients".into();
                form.source_kind = "generated".into();
                form.source_paths = String::new();
                form.generated_size = "2G".into();
                form.tape_drives = "2".into();
                form.tests = vec!["network_backup".into()];
                form.streams = "2".into();
                form.matrix_clients = "6, 7, 8".into();
                form.matrix_buffers = "16, 32".into();
                form.matrix_block_size = "128K, 256K".into();
            }
            _ => {}
        }
        form
    }

    /// The form as posted (`application/x-www-form-urlencoded`, repeated `tests` keys).
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let mut form = Self::default();
        for (key, value) in pairs {
            let value = value.clone();
            match key.as_str() {
                "preset" => form.preset = value,
                "name" => form.name = value,
                "repeat" => form.repeat = value,
                "source_kind" => form.source_kind = value,
                "source_paths" => form.source_paths = value,
                "generated_size" => form.generated_size = value,
                "target_kind" => form.target_kind = value,
                "target_path" => form.target_path = value,
                "tape_model" => form.tape_model = value,
                "tape_drives" => form.tape_drives = value,
                "tests" => form.tests.push(value),
                "buffers" => form.buffers = value,
                "block_size" => form.block_size = value,
                "streams" => form.streams = value,
                "size" => form.size = value,
                "duration_s" => form.duration_s = value,
                "compress_ratio" => form.compress_ratio = value,
                "direct" => form.direct = true,
                "cold_cache" => form.cold_cache = true,
                "time_based" => form.time_based = true,
                "fsync" => form.fsync = true,
                "matrix_buffers" => form.matrix_buffers = value,
                "matrix_block_size" => form.matrix_block_size = value,
                "matrix_streams" => form.matrix_streams = value,
                "agents" => form.agents = value,
                "clients" => form.clients = value,
                "link_mb_s" => form.link_mb_s = value,
                "matrix_clients" => form.matrix_clients = value,
                _ => {}
            }
        }
        form
    }

    /// The campaign spec the form stands for, as JSON: numbers where the text is a number, the
    /// text itself otherwise, so the spec's own validation names what is wrong.
    pub fn to_spec(&self) -> Value {
        let mut spec = Map::new();
        spec.insert("name".into(), json!(self.name.trim()));
        let source = if self.source_kind == "generated" {
            json!({"generated": {"size": size(&self.generated_size)}})
        } else {
            let paths: Vec<&str> = self
                .source_paths
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect();
            json!({ "paths": paths })
        };
        let mut source = source;
        let agents: Vec<&str> = split_list(&self.agents).collect();
        if !agents.is_empty()
            && let Some(object) = source.as_object_mut()
        {
            object.insert("agents".into(), json!(agents));
            // Agents alone send generated data; paths are read on the agents' hosts.
            if self.source_kind == "generated" {
                object.remove("generated");
            }
        }
        spec.insert("source".into(), source);
        let mut target = Map::new();
        target.insert("kind".into(), json!(self.target_kind));
        if self.target_kind == "tape" {
            target.insert("model".into(), json!(self.tape_model.trim()));
            if !self.tape_drives.trim().is_empty() {
                target.insert("drives".into(), number(&self.tape_drives));
            }
        } else if self.target_kind != "null" && !self.target_path.trim().is_empty() {
            target.insert("path".into(), json!(self.target_path.trim()));
        }
        spec.insert("target".into(), Value::Object(target));
        spec.insert("tests".into(), json!(self.tests));
        let mut params = Map::new();
        params.insert("buffers".into(), number(&self.buffers));
        params.insert("block_size".into(), size(&self.block_size));
        params.insert("direct".into(), json!(self.direct));
        params.insert("cold_cache".into(), json!(self.cold_cache));
        if self.time_based {
            params.insert("time_based".into(), json!(true));
        }
        params.insert("fsync".into(), json!(self.fsync));
        // Left empty, the target test matches the source's compressibility.
        if !self.compress_ratio.trim().is_empty() {
            params.insert("compress_ratio".into(), number(&self.compress_ratio));
        }
        for (key, text, as_size) in [
            ("streams", &self.streams, false),
            ("size", &self.size, true),
            ("duration_s", &self.duration_s, false),
            ("clients", &self.clients, false),
            ("link_mb_s", &self.link_mb_s, false),
        ] {
            if !text.trim().is_empty() {
                let value = if as_size { size(text) } else { number(text) };
                params.insert(key.into(), value);
            }
        }
        spec.insert("params".into(), Value::Object(params));
        let mut matrix = Map::new();
        for (key, text, as_size) in [
            ("buffers", &self.matrix_buffers, false),
            ("block_size", &self.matrix_block_size, true),
            ("streams", &self.matrix_streams, false),
            ("clients", &self.matrix_clients, false),
        ] {
            let values: Vec<Value> = split_list(text)
                .map(|item| if as_size { size(item) } else { number(item) })
                .collect();
            if !values.is_empty() {
                matrix.insert(key.into(), Value::Array(values));
            }
        }
        if !matrix.is_empty() {
            spec.insert("matrix".into(), Value::Object(matrix));
        }
        spec.insert(
            "repeat".into(),
            if self.repeat.trim().is_empty() {
                json!(1)
            } else {
                number(&self.repeat)
            },
        );
        Value::Object(spec)
    }

    /// Puts each spec-path error next to the form field it belongs to.
    pub fn set_errors(&mut self, fields: &BTreeMap<String, String>) {
        for (path, message) in fields {
            let field = form_field(path);
            self.errors
                .entry(field.to_string())
                .and_modify(|existing| {
                    existing.push_str("; ");
                    existing.push_str(message);
                })
                .or_insert_with(|| message.clone());
        }
    }

    /// The error shown next to a field, or nothing.
    pub fn error(&self, field: &str) -> &str {
        self.errors.get(field).map_or("", String::as_str)
    }

    /// Whether a test's box is ticked.
    pub fn has_test(&self, test: &str) -> bool {
        self.tests.iter().any(|t| t == test)
    }
}

/// The form field a spec path belongs to.
fn form_field(path: &str) -> &'static str {
    let head = |prefix: &str| {
        path == prefix
            || path.starts_with(&format!("{prefix}."))
            || path.starts_with(&format!("{prefix}["))
    };
    if head("source.paths") {
        "source_paths"
    } else if head("source.generated") {
        "generated_size"
    } else if head("source.agents") {
        "agents"
    } else if head("source") {
        "source_paths"
    } else if head("target.path") {
        "target_path"
    } else if head("target.model") {
        "tape_model"
    } else if head("target.drives") {
        "tape_drives"
    } else if head("target") {
        "target_kind"
    } else if head("tests") {
        "tests"
    } else if head("name") {
        "name"
    } else if head("repeat") {
        "repeat"
    } else if head("matrix.buffers") {
        "matrix_buffers"
    } else if head("matrix.block_size") {
        "matrix_block_size"
    } else if head("matrix.streams") {
        "matrix_streams"
    } else if head("matrix.clients") {
        "matrix_clients"
    } else if head("matrix") {
        "matrix"
    } else {
        for (prefix, field) in [
            ("params.buffers", "buffers"),
            ("params.block_size", "block_size"),
            ("params.streams", "streams"),
            ("params.size", "size"),
            ("params.duration_s", "duration_s"),
            ("params.compress_ratio", "compress_ratio"),
            ("params.clients", "clients"),
            ("params.link_mb_s", "link_mb_s"),
        ] {
            if head(prefix) {
                return field;
            }
        }
        "params"
    }
}

fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split([',', ' ', '\n', '\t'])
        .map(str::trim)
        .filter(|item| !item.is_empty())
}

fn number(text: &str) -> Value {
    let text = text.trim();
    if let Ok(integer) = text.parse::<u64>() {
        json!(integer)
    } else if let Ok(float) = text.parse::<f64>() {
        json!(float)
    } else {
        json!(text)
    }
}

fn size(text: &str) -> Value {
    let text = text.trim();
    match text.parse::<u64>() {
        Ok(bytes) => json!(bytes),
        Err(_) => json!(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_a_valid_spec() {
        for (id, _) in PRESETS {
            let spec = CampaignForm::preset(id).to_spec();
            let parsed = crate::spec::parse_json(&spec.to_string()).expect("parses");
            parsed.plan().expect("valid");
        }
        let tuning = CampaignForm::preset("tuning").to_spec();
        assert_eq!(
            tuning["matrix"]["block_size"],
            json!(["64K", "128K", "256K"])
        );
    }

    #[test]
    fn posted_pairs_round_trip_and_errors_find_their_fields() {
        let pairs: Vec<(String, String)> = [
            ("name", "x"),
            ("source_kind", "paths"),
            ("source_paths", "a\n b \n"),
            ("target_kind", "null"),
            ("tests", "null_sink"),
            ("tests", "read_single"),
            ("buffers", "eight"),
            ("block_size", "64K"),
            ("fsync", "true"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut form = CampaignForm::from_pairs(&pairs);
        let spec = form.to_spec();
        assert_eq!(spec["source"]["paths"], json!(["a", "b"]));
        assert_eq!(spec["tests"], json!(["null_sink", "read_single"]));
        assert_eq!(spec["params"]["buffers"], json!("eight"));
        assert!(spec["target"].get("path").is_none());
        let mut fields = BTreeMap::new();
        fields.insert("params.buffers".to_string(), "bad".to_string());
        fields.insert("matrix.block_size[1]".to_string(), "odd".to_string());
        fields.insert("source.paths[0]".to_string(), "outside".to_string());
        form.set_errors(&fields);
        assert_eq!(form.error("buffers"), "bad");
        assert_eq!(form.error("matrix_block_size"), "odd");
        assert_eq!(form.error("source_paths"), "outside");
        assert_eq!(form.error("name"), "");
    }
}
