//! The crate's layering, checked over `src/`: every top-level module belongs to one layer of
//! [`LAYERS`], imports (`crate::<module>`) only from its own layer or those below it, and no
//! modules import each other in a loop; and the few modules the design keeps apart although
//! the layers would allow it ([`APART`]: the views and the store) import nothing of each other. ARCHITECTURE.md draws the same layers (the highest
//! first): change both together. The check reads the source text only, so it runs in
//! milliseconds and builds nothing of the crate.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, the lowest first, each with its top-level modules (`src/<module>.rs` or
/// `src/<module>/`). A module may import from its own layer and from any layer listed before
/// it; never from one after it. A module may be listed before it exists.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundations",
        &[
            "size",
            "duration",
            "field_errors",
            "plain_words",
            "clock",
            "ids",
            "schedule",
            "change_points",
            "forecast",
            "secrets",
        ],
    ),
    ("measurement", &["engine"]),
    ("campaign", &["spec", "policy"]),
    ("storage", &["store"]),
    ("network", &["net"]),
    ("judgement", &["noise", "analysis"]),
    ("watch, search", &["reference", "series", "tuner"]),
    ("views", &["views", "matrix", "reduction_report", "lmdd"]),
    ("service", &["lab"]),
    ("HTTP", &["http"]),
    ("process", &["serve"]),
    ("entry", &["cli"]),
];

/// Imports the layers allow but the design does not, each with why: no module of the first
/// list imports (`crate::<module>`) the second.
const APART: &[(&[&str], &str, &str)] = &[(
    &["views", "matrix", "reduction_report", "lmdd"],
    "store",
    "what people read is drawn from the results model (points, verdict) and a per-run view \
     (`views::RunView`), never from a storage record",
)];

/// Files of `src/` that are no module of the library's.
const NOT_MODULES: &[&str] = &["lib", "main"];

/// One `crate::<module>` reference: who makes it, and where.
#[derive(Debug, Clone)]
struct Import {
    from: String,
    to: String,
    file: PathBuf,
    line: usize,
}

#[test]
fn every_module_imports_only_from_its_own_layer_or_below_and_none_in_a_loop() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = top_level_modules(&src);
    let mut problems = Vec::new();

    let mut layer_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, (layer, members)) in LAYERS.iter().enumerate() {
        for &module in *members {
            if let Some(before) = layer_of.insert(module, index) {
                problems.push(format!(
                    "`{module}` is listed in two layers, {} and {layer}",
                    LAYERS[before].0
                ));
            }
        }
    }
    for module in &modules {
        if !layer_of.contains_key(module.as_str()) {
            problems.push(format!(
                "`{module}` (src/{module}) is in no layer: add it to LAYERS in tests/layers.rs \
                 and to the table in ARCHITECTURE.md"
            ));
        }
    }

    let imports = imports_in(&src, &modules);
    for import in &imports {
        let (Some(&from), Some(&to)) = (
            layer_of.get(import.from.as_str()),
            layer_of.get(import.to.as_str()),
        ) else {
            continue;
        };
        if to > from {
            problems.push(format!(
                "{}:{}: `{}` ({}) imports crate::{} from a higher layer ({})",
                import.file.display(),
                import.line,
                import.from,
                LAYERS[from].0,
                import.to,
                LAYERS[to].0
            ));
        }
    }
    for cycle in cycles(&imports) {
        problems.push(format!("an import loop: {}", hops(&cycle, &imports)));
    }

    assert!(
        problems.is_empty(),
        "the layering of src/ is broken:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn modules_kept_apart_import_nothing_of_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = top_level_modules(&src);
    let imports = imports_in(&src, &modules);
    let mut problems = Vec::new();
    for (importers, imported, why) in APART {
        assert!(
            modules.contains(*imported),
            "`{imported}` in APART is no module of src/"
        );
        for import in &imports {
            if importers.contains(&import.from.as_str()) && import.to == *imported {
                problems.push(format!(
                    "{}:{}: `{}` imports crate::{imported}: {why}",
                    import.file.display(),
                    import.line,
                    import.from
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "modules kept apart import each other:\n  {}",
        problems.join("\n  ")
    );
}

/// Where a target kind may be named (`TargetKind::of(&tape::Tape)`, `plan.of_type::<S3Target>()`,
/// a variant such as `TargetKind::Dir`, a kind's figures such as `SinkFigures::Tape`): the
/// kinds' own folder. Everywhere else asks a
/// kind or a target what it is (`KindFacts`, the `Kind` and `Target` traits, `TargetPlan`'s
/// questions), so a new kind is answered for wherever it is asked.
const TARGET_KINDS_HOME: &str = "engine/target";

#[test]
fn no_file_outside_the_target_folder_names_a_target_kind() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("a file under src/");
        let is_test = relative.file_name().is_some_and(|name| name == "tests.rs")
            || relative
                .components()
                .any(|part| part.as_os_str() == "tests");
        if relative.starts_with(TARGET_KINDS_HOME) || is_test {
            continue;
        }
        let text = fs::read_to_string(&file).expect("a source file can be read");
        for (line, named) in kind_variants(&code_only(&text)) {
            problems.push(format!("src/{}:{line}: {named}", relative.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "target kinds named outside src/{TARGET_KINDS_HOME} (ask the target instead):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_kind_variant_is_found_and_a_type_or_constant_is_not() {
    let code = "let a = TargetKind::Dir;\nlet b = TargetKind::ALL;\n\
                if let TargetPlan::S3(config) = plan {}\nTargetKind::name();\n\
                let t = TargetKind::of(&tape::Tape);\nplan.of_type::<S3Target>();\n\
                if let SinkFigures::Tape(drive) = figures {}";
    assert_eq!(
        kind_variants(code),
        vec![
            (1, "TargetKind::Dir".to_string()),
            (3, "TargetPlan::S3".to_string()),
            (5, "TargetKind::of(".to_string()),
            (6, "of_type::<".to_string()),
            (7, "SinkFigures::Tape".to_string()),
        ]
    );
}

/// Each `TargetKind::Variant`, `TargetPlan::Variant` or `SinkFigures::Variant` (a kind's
/// figures) in `code`, with its line (a name
/// after the `::` that starts with a capital followed by a small letter or a digit, not a
/// constant such as `ALL`, nor a function), and each kind taken by its own type.
fn kind_variants(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for owner in ["TargetKind::", "TargetPlan::", "SinkFigures::"] {
        let mut at = 0;
        while let Some(offset) = code[at..].find(owner) {
            let start = at + offset;
            at = start + owner.len();
            let name = leading_name(&code[at..]);
            let mut chars = name.chars();
            let (Some(first), Some(second)) = (chars.next(), chars.next()) else {
                continue;
            };
            if first.is_ascii_uppercase()
                && (second.is_ascii_lowercase() || second.is_ascii_digit())
            {
                let line = code[..start].matches('\n').count() + 1;
                found.push((line, format!("{owner}{name}")));
            }
        }
    }
    for call in ["TargetKind::of(", "of_type::<", "of_type_mut::<"] {
        for (start, _) in code.match_indices(call) {
            let line = code[..start].matches('\n').count() + 1;
            found.push((line, call.to_string()));
        }
    }
    found.sort();
    found
}

/// No two files of `src/` import each other, directly or round a loop: the files of a module
/// read from one another one way. A file naming its own parent or an ancestor (a kind's file
/// implementing its folder's trait) is the module tree, not an import, and is not counted; nor
/// are tests (`tests.rs`, a `tests/` folder, and what follows `#[cfg(test)]` in a file).
#[test]
fn no_files_of_src_import_each_other_in_a_loop() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files
        .iter()
        .map(|file| (module_of(&src, file), file.clone()))
        .collect();
    let mut imports = Vec::new();
    for (module, file) in &modules {
        let relative = file.strip_prefix(&src).expect("a file under src/");
        let is_test = relative.file_name().is_some_and(|name| name == "tests.rs")
            || relative
                .components()
                .any(|part| part.as_os_str() == "tests");
        if is_test {
            continue;
        }
        let text = fs::read_to_string(file).expect("a source file can be read");
        let code = code_only(&text);
        let code = &code[..inline_tests_at(&code)];
        let children: Vec<&str> = modules
            .keys()
            .filter_map(|other| {
                let name = if module.is_empty() {
                    other.as_str()
                } else {
                    other.strip_prefix(module.as_str())?.strip_prefix("::")?
                };
                (!name.is_empty() && !name.contains("::")).then_some(name)
            })
            .collect();
        for (path, line) in module_paths(code, module, &children) {
            let Some(target) = longest_module(&path, &modules) else {
                continue;
            };
            let is_ancestor = target.is_empty()
                || module == &target
                || module.starts_with(&format!("{target}::"));
            if !is_ancestor {
                imports.push(Import {
                    from: module.clone(),
                    to: target,
                    file: Path::new("src").join(relative),
                    line,
                });
            }
        }
    }
    let loops: Vec<String> = cycles(&imports)
        .iter()
        .map(|cycle| hops(cycle, &imports))
        .collect();
    assert!(
        loops.is_empty(),
        "files of src/ import each other in a loop:\n  {}",
        loops.join("\n  ")
    );
}

#[test]
fn paths_are_read_from_plain_grouped_and_relative_references() {
    let code = "use super::{plan::RunPlan, target::{dedup::Store, Sink}};\n\
                use crate::engine::measure::Sample;\nlet x = self::inner::f();\n\
                let y = inner::g(); let z = a::inner::h();";
    let found: Vec<(String, usize)> = module_paths(code, "engine::pipeline", &["inner"])
        .into_iter()
        .map(|(path, line)| (path.join("::"), line))
        .collect();
    assert_eq!(
        found,
        vec![
            ("engine::plan::RunPlan".to_string(), 1),
            ("engine::target::dedup::Store".to_string(), 1),
            ("engine::target::Sink".to_string(), 1),
            ("engine::measure::Sample".to_string(), 2),
            ("engine::pipeline::inner::f".to_string(), 3),
            ("engine::pipeline::inner::g".to_string(), 4),
        ]
    );
}

/// Where a file's inline test module (`#[cfg(test)] mod tests { … }`) begins, or its end; a
/// test module in a file of its own (`#[cfg(test)] mod tests;`) is no part of the file.
fn inline_tests_at(code: &str) -> usize {
    let mut at = 0;
    while let Some(offset) = code[at..].find("#[cfg(test)]") {
        let start = at + offset;
        at = start + "#[cfg(test)]".len();
        let rest = code[at..].trim_start();
        let opens = rest.find('{');
        let ends = rest.find(';');
        if rest.starts_with("mod ") && opens.is_some_and(|open| ends.is_none_or(|end| open < end)) {
            return start;
        }
    }
    code.len()
}

/// The module a file of `src/` is: `src/engine/target/mod.rs` is `engine::target`,
/// `src/lib.rs` the crate itself (``).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("a file under src/");
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .filter_map(|part| part.as_os_str().to_str().map(String::from))
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts.join("::")
}

/// Every path `code` (of the file that is `module`) names through `crate::`, `super::`,
/// `self::` or one of its `children` (`dir::plan`), as segments from the crate's root, with
/// its line; a `{…}` group is expanded.
fn module_paths(code: &str, module: &str, children: &[&str]) -> Vec<(Vec<String>, usize)> {
    let own: Vec<String> = module
        .split("::")
        .filter(|part| !part.is_empty())
        .map(String::from)
        .collect();
    let mut found = Vec::new();
    let child_prefixes: Vec<(String, Vec<String>)> = children
        .iter()
        .map(|child| {
            let mut base = own.clone();
            base.push((*child).to_string());
            (format!("{child}::"), base)
        })
        .collect();
    let prefixes = [
        ("crate::".to_string(), Vec::new()),
        (
            "super::".to_string(),
            own[..own.len().saturating_sub(1)].to_vec(),
        ),
        ("self::".to_string(), own.clone()),
    ]
    .into_iter()
    .chain(child_prefixes);
    for (prefix, base) in prefixes {
        let prefix = prefix.as_str();
        let mut at = 0;
        while let Some(offset) = code[at..].find(prefix) {
            let start = at + offset;
            at = start + prefix.len();
            if code[..start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            {
                continue;
            }
            let line = code[..start].matches('\n').count() + 1;
            let mut base = base.clone();
            let mut rest = &code[at..];
            // `super::super::x`
            while let Some(after) = rest.strip_prefix("super::") {
                base.pop();
                rest = after;
            }
            for path in use_tree(rest, &base) {
                found.push((path, line));
            }
        }
    }
    found.sort_by_key(|(_, line)| *line);
    found
}

/// The paths of a use tree (`a::b`, `a::{b, c::d}`) after `base`.
fn use_tree(text: &str, base: &[String]) -> Vec<Vec<String>> {
    let mut path = base.to_vec();
    let mut rest = text;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut paths = Vec::new();
            let mut depth = 0usize;
            let mut item = 0;
            for (index, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        paths.extend(use_tree(group[item..index].trim(), &path));
                        return paths;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        paths.extend(use_tree(group[item..index].trim(), &path));
                        item = index + 1;
                    }
                    _ => {}
                }
            }
            return paths;
        }
        let name = leading_name(rest);
        if name.is_empty() {
            return if path.len() > base.len() || !text.is_empty() {
                vec![path]
            } else {
                Vec::new()
            };
        }
        if name != "self" {
            path.push(name.to_string());
        }
        rest = &rest[name.len()..];
        match rest.strip_prefix("::") {
            Some(after) => rest = after,
            None => return vec![path],
        }
    }
}

/// The longest prefix of `path` that is a module of `modules`.
fn longest_module(path: &[String], modules: &BTreeMap<String, PathBuf>) -> Option<String> {
    (0..=path.len())
        .rev()
        .map(|len| path[..len].join("::"))
        .find(|candidate| modules.contains_key(candidate))
}

#[test]
fn the_reader_finds_plain_and_grouped_imports_and_skips_comments_and_strings() {
    let modules: BTreeSet<String> = ["spec", "store", "analysis", "series", "size"]
        .into_iter()
        .map(String::from)
        .collect();
    let text = r##"
//! Mentions crate::series in a comment.
use crate::spec::{self, CampaignSpec};
use crate::{size::format_bytes, store::{Store, model::RunState}};
/* crate::analysis in a block comment */
fn f() -> String {
    let quoted = "crate::analysis in a string";
    let raw = r#"crate::analysis in a raw string"#;
    let quote = '"';
    let _ = crate::series::key_of;
    format!("{quoted}{raw}{quote}")
}
"##;
    let found: Vec<(String, usize)> = references(text, &modules)
        .into_iter()
        .map(|(module, line)| (module.to_string(), line))
        .collect();
    assert_eq!(
        found,
        vec![
            ("spec".to_string(), 3),
            ("size".to_string(), 4),
            ("store".to_string(), 4),
            ("series".to_string(), 10),
        ]
    );
}

#[test]
fn a_loop_is_found_and_a_chain_is_not() {
    let import = |from: &str, to: &str| Import {
        from: from.to_string(),
        to: to.to_string(),
        file: PathBuf::from("src/x.rs"),
        line: 1,
    };
    let chain = [import("a", "b"), import("b", "c")];
    assert!(cycles(&chain).is_empty());
    let looped = [import("a", "b"), import("b", "c"), import("c", "a")];
    assert_eq!(
        cycles(&looped),
        vec![vec![
            "a".to_string(),
            "b".to_string(),
            "c".to_string(),
            "a".to_string()
        ]]
    );
}

/// A loop's hops, each with the file and line of its import: `a -> b (src/a.rs:3), …`.
fn hops(cycle: &[String], imports: &[Import]) -> String {
    cycle
        .windows(2)
        .map(|pair| {
            let at = imports
                .iter()
                .find(|import| import.from == pair[0] && import.to == pair[1])
                .map(|import| format!("{}:{}", import.file.display(), import.line))
                .unwrap_or_default();
            format!("{} -> {} ({at})", pair[0], pair[1])
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The library's top-level modules: `src/<name>.rs` and `src/<name>/`.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    fs::read_dir(src)
        .expect("src/ can be read")
        .map(|entry| entry.expect("an entry of src/").path())
        .filter_map(|path| {
            if path.is_dir() {
                path.file_name()?.to_str().map(String::from)
            } else if path.extension()? == "rs" {
                path.file_stem()?.to_str().map(String::from)
            } else {
                None
            }
        })
        .filter(|name| !NOT_MODULES.contains(&name.as_str()))
        .collect()
}

/// Every `crate::<module>` reference from one top-level module to another, in every file.
fn imports_in(src: &Path, modules: &BTreeSet<String>) -> Vec<Import> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut imports = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("a file under src/");
        let first = relative
            .components()
            .next()
            .and_then(|part| part.as_os_str().to_str())
            .expect("a path under src/");
        let from = first.strip_suffix(".rs").unwrap_or(first).to_string();
        if !modules.contains(&from) {
            continue;
        }
        let text = fs::read_to_string(&file).expect("a source file can be read");
        for (to, line) in references(&text, modules) {
            if to != from {
                imports.push(Import {
                    from: from.clone(),
                    to: to.to_string(),
                    file: Path::new("src").join(relative),
                    line,
                });
            }
        }
    }
    imports
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .expect("a directory of src/ can be read")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// The modules of `modules` that `text` names as `crate::<module>` or inside `crate::{…}`,
/// with the line of each; comments, strings and character literals are skipped.
fn references<'m>(text: &str, modules: &'m BTreeSet<String>) -> Vec<(&'m str, usize)> {
    let code = code_only(text);
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = code[at..].find("crate::") {
        let start = at + offset;
        at = start + "crate::".len();
        // `crate::` preceded by a letter, digit, `_` or `$` is part of another name.
        if code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            continue;
        }
        let line = code[..start].matches('\n').count() + 1;
        let rest = &code[at..];
        let names = if let Some(group) = rest.strip_prefix('{') {
            group_heads(group)
        } else {
            vec![leading_name(rest)]
        };
        for name in names {
            if let Some(module) = modules.get(name) {
                found.push((module.as_str(), line));
            }
        }
    }
    found
}

/// The first path segment of each item of a `{…}` group (its text after the `{`).
fn group_heads(group: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item_start = Some(0);
    for (index, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = Some(index + 1),
            _ => {}
        }
        if let Some(start) = item_start
            && depth == 0
            && !group[start..=index].trim().is_empty()
        {
            heads.push(leading_name(group[start..].trim_start()));
            item_start = None;
        }
    }
    heads
}

fn leading_name(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// `text` with comments, string literals and character literals blanked out (newlines kept,
/// so line numbers stay true).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars[..i]
                .last()
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…", r#"…"#, …
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let closing: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut k = j + 1;
            while k < chars.len() && !chars[k..].starts_with(&closing) {
                k += 1;
            }
            let end = (k + closing.len()).min(chars.len());
            for &skipped in &chars[i..end] {
                out.push(blank(skipped));
            }
            i = end;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let literal_end = if next == Some('\\') {
                chars
                    .get(i + 3..)
                    .and_then(|rest| rest.iter().position(|&c| c == '\''))
                    .map(|p| i + 3 + p + 1)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match literal_end {
                Some(end) => {
                    for _ in i..end {
                        out.push(' ');
                    }
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The import loops among the modules: for every import that lies on one, the shortest loop
/// through it, as the modules along it with the first repeated at the end (each loop once).
fn cycles(imports: &[Import]) -> Vec<Vec<String>> {
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for import in imports {
        edges
            .entry(import.from.as_str())
            .or_default()
            .insert(import.to.as_str());
    }
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (&from, tos) in &edges {
        for &to in tos {
            let Some(back) = shortest_path(&edges, to, from) else {
                continue;
            };
            // The loop from, to, …, from, turned to begin at its least module so that the
            // same loop found from each of its imports is kept once.
            let mut ring: Vec<&str> = std::iter::once(from).chain(back).collect();
            ring.pop();
            let least = (0..ring.len()).min_by_key(|&i| ring[i]).unwrap_or(0);
            ring.rotate_left(least);
            let mut cycle: Vec<String> = ring.iter().map(|m| m.to_string()).collect();
            cycle.push(cycle[0].clone());
            found.insert(cycle);
        }
    }
    found.into_iter().collect()
}

/// The modules on the shortest way from `start` to `goal`, both included.
fn shortest_path<'a>(
    edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    start: &'a str,
    goal: &'a str,
) -> Option<Vec<&'a str>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut frontier = vec![start];
    while !frontier.is_empty() && !came_from.contains_key(goal) && start != goal {
        let mut next = Vec::new();
        for node in frontier {
            for &to in edges.get(node).into_iter().flatten() {
                if to != start && !came_from.contains_key(to) {
                    came_from.insert(to, node);
                    next.push(to);
                }
            }
        }
        frontier = next;
    }
    if start != goal && !came_from.contains_key(goal) {
        return None;
    }
    let mut path = vec![goal];
    let mut node = goal;
    while node != start {
        node = came_from[node];
        path.push(node);
    }
    path.reverse();
    Some(path)
}
