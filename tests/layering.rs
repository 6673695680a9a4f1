//! The modules depend on each other one way, in step order (the table in the crate docs):
//! `math`, `schedule`, `validation`, `settings` → `body` → `collision` → `solver` → `sleeping`,
//! with `spatial_query` and `character` beside the solver, reading `body` and `collision` only,
//! and `parallel` (the loops on the compute pool, reading nothing; the step runner in
//! `schedule` tells it whether a step may share its stages out) and `prefetch` (cache hints,
//! reading nothing) below the stages that use them.
//! This test reads the sources and fails on any `crate::` path from a module to one that sits
//! above it, or to a crate-root re-export (which would hide where the item lives).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("math", &[]),
    ("schedule", &["math", "validation", "parallel"]),
    ("validation", &["math", "schedule"]),
    ("settings", &["math", "validation"]),
    ("parallel", &[]),
    ("prefetch", &[]),
    ("body", &["math", "schedule", "validation", "settings"]),
    (
        "collision",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "parallel",
            "prefetch",
        ],
    ),
    (
        "solver",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
            "parallel",
            "prefetch",
        ],
    ),
    (
        "sleeping",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
            "solver",
        ],
    ),
    (
        "spatial_query",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
        ],
    ),
    (
        "character",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
            "spatial_query",
        ],
    ),
    (
        "vehicle",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
            "solver",
            "sleeping",
            "spatial_query",
        ],
    ),
    (
        "snapshot",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
            "solver",
            "sleeping",
            "spatial_query",
            "character",
            "vehicle",
        ],
    ),
    (
        "debug_render",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
            "solver",
            "sleeping",
        ],
    ),
    (
        "interpolation",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
        ],
    ),
    ("diagnostics", &["math", "schedule", "body", "collision"]),
    (
        "picking",
        &["math", "schedule", "body", "collision", "spatial_query"],
    ),
    (
        "reflection",
        &[
            "math",
            "schedule",
            "validation",
            "settings",
            "body",
            "collision",
            "solver",
            "sleeping",
            "spatial_query",
            "character",
        ],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`None` for the crate root).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (name != "lib").then(|| name.to_string())
}

/// Every `crate::<segment>` in the code (comments and doc comments skipped) with its line.
fn crate_paths(source: &str) -> Vec<(usize, String)> {
    let mut paths = Vec::new();
    for (number, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            // A grouped import (`crate::{…}`) is reported as `{`.
            let segment: String = if rest.starts_with('{') {
                "{".to_string()
            } else {
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            };
            paths.push((number + 1, segment));
        }
    }
    paths
}

/// The violations in the tree at `src`: `file:line: module -> target`.
fn violations(src: &Path) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let Some(module) = module_of(src, &file) else {
            continue;
        };
        let uses = allowed
            .get(module.as_str())
            .unwrap_or_else(|| panic!("{module} is not in the layering table"));
        let source = std::fs::read_to_string(&file).unwrap();
        for (line, target) in crate_paths(&source) {
            let is_module = target.chars().next().is_some_and(|c| c.is_lowercase());
            if target == module || (is_module && uses.contains(&target.as_str())) {
                continue;
            }
            found.push(format!(
                "{}:{line}: {module} -> crate::{target}",
                file.display()
            ));
        }
    }
    found
}

#[test]
fn modules_depend_only_on_the_stages_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(
        found.is_empty(),
        "dependencies against the step order:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_use_against_the_order_is_found() {
    let dir = std::env::temp_dir().join(format!("impetus3d-layering-{}", std::process::id()));
    let body = dir.join("body");
    std::fs::create_dir_all(&body).unwrap();
    std::fs::write(
        body.join("mod.rs"),
        "// crate::solver in a comment is fine\nuse crate::math::Vector;\nuse crate::solver::SolverBodies;\nuse crate::{Gravity};\n",
    )
    .unwrap();
    let found = violations(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with("body -> crate::solver"));
    assert!(found[1].ends_with("body -> crate::{"));
}
