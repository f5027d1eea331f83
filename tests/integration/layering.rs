//! The house's floors (docs/architecture.md, "The core crate's floors"),
//! beside the test that adding a function needs only its own files. In every
//! crate with more than a handful of files (the core crate, tools/bench,
//! tools/local-api, tools/xtask) each module imports only modules on lower
//! floors; only the core crate's `store/` sees the stored format (key
//! strings, attribute names, items); and no files anywhere in the workspace
//! import each other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use integration_tests::workspace_root;

/// A crate's modules and their floors: a module may import only modules on
/// lower floors. A module is its file or folder (`store` is `store/` whole);
/// a deeper entry (`store::keys`, say) gives part of a folder a floor of its own.
struct Floors {
    /// The crate's source folder, from the workspace root.
    src: &'static str,
    /// Each module and its floor, the ground first.
    modules: &'static [(&'static str, u8)],
}

const CORE: Floors = Floors {
    src: "shared/src",
    modules: &[
        // The ground: no import from the crate.
        ("domain", 1),
        ("config", 1),
        ("deadline", 1),
        ("error", 1),
        // Values and clients that know the ground.
        ("catalog", 2),
        ("clock", 2),
        ("verification", 2),
        ("metrics", 2),
        ("identity", 2),
        ("address_policy", 2),
        ("events", 2),
        ("reconcile", 3),
        ("import", 3),
        ("audit", 3),
        ("mail", 3),
        ("bus", 3),
        ("verification_key", 3),
        ("recovery", 3),
        ("invitation", 3),
        ("scim_token", 3),
        ("scim", 3),
        ("org_policy", 3),
        ("secrets", 4),
        ("legacy_password", 4),
        ("store", 4),
        // What a function initialises once; the engines that run on the store.
        ("app", 5),
        ("reconciler", 5),
        ("provisioning", 5),
        // The HTTP edge, then the handlers on top.
        ("http", 6),
        ("api", 7),
    ],
};

const XTASK: Floors = Floors {
    src: "tools/xtask/src",
    modules: &[
        ("backfill", 1),
        ("canonicalize", 1),
        ("crates", 1),
        ("docs", 1),
        ("regions", 1),
        ("replay", 1),
        ("settings", 1),
        ("template", 2),
        ("alarms", 3),
        ("dashboard", 4),
    ],
};

const BENCH: Floors = Floors {
    src: "tools/bench/src",
    modules: &[
        ("capacity", 1),
        ("charts", 1),
        ("cpu", 1),
        ("machine", 1),
        ("stats", 1),
        ("user", 1),
        ("tuning::choice", 1),
        ("runtime", 2),
        ("programs", 2),
        ("proxy", 2),
        ("plan", 3),
        ("tuning", 5),
        ("callgrind", 4),
        ("event_delay", 4),
        ("requests", 4),
        ("scale", 4),
        ("sizes", 4),
        ("reconcile_sim", 4),
        ("emf", 5),
        ("hashes", 5),
        ("cost", 6),
        ("tuning::render", 7),
        ("report", 7),
    ],
};

const LOCAL_API: Floors = Floors {
    src: "tools/local-api/src",
    modules: &[
        ("auth", 1),
        ("events", 1),
        ("filter", 1),
        ("gateway", 1),
        ("invoke", 1),
        ("page", 1),
        ("pool", 1),
        ("stream", 1),
        ("template", 1),
        ("mapping", 2),
        ("mirror", 2),
        ("openapi", 2),
        ("outbox", 2),
        ("routes", 2),
        ("event", 3),
        ("state", 3),
        ("cognito", 4),
        ("server", 5),
    ],
};

/// Every crate whose modules have floors.
const LAYERED: &[Floors] = &[CORE, BENCH, LOCAL_API, XTASK];

/// Paths into the store that name its stored format; only `store/` uses them.
const STORED_FORMAT: &[&str] = &["store::keys", "store::items", "store::limits"];

/// The core crate's lib.rs re-exports, by the module they come from.
const REEXPORTS: &[(&str, &str)] = &[
    ("App", "app"),
    ("Clients", "app"),
    ("Store", "store"),
    ("StoreError", "store"),
];

/// A source file and the module it is: `store/keys.rs` is `store::keys`,
/// `store/mod.rs` is `store`, a crate's root is `""`.
struct Source {
    path: PathBuf,
    module: String,
    text: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder is readable") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(relative: &Path) -> String {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts.join("::")
}

/// The files of the crate (or crates: a lib and its bin) rooted at `src`.
fn sources(src: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests close a file; they may reach anything.
            let code = text
                .find("#[cfg(test)]")
                .map_or(text.clone(), |at| text[..at].to_owned());
            Source {
                module: module_of(path.strip_prefix(src).unwrap()),
                path,
                text: code,
            }
        })
        .collect()
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`: the paths a `use` group names.
fn expand(path: &str, rest: &str, out: &mut Vec<String>) {
    let Some(group) = rest.strip_prefix('{') else {
        out.push(path.trim_end_matches("::").to_owned());
        return;
    };
    let (mut depth, mut start) = (0, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                item(path, &group[start..at], out);
                return;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                item(path, &group[start..at], out);
                start = at + 1;
            }
            _ => {}
        }
    }
}

fn item(base: &str, text: &str, out: &mut Vec<String>) {
    let text = text.trim();
    let name: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    if name.is_empty() && !text.starts_with('{') {
        return;
    }
    expand(&format!("{base}{name}"), &text[name.len()..], out);
}

/// The module paths a file names, from the crate's root: `crate::x::y`,
/// `super::x` and `self::x` (and `$crate::`), groups expanded; with `also`,
/// paths through the crate's own name (a bin naming its lib: `xtask::docs`).
fn named_paths(source: &Source, also: Option<&str>) -> Vec<String> {
    let text = &source.text;
    let own: Vec<&str> = source.module.split("::").filter(|s| !s.is_empty()).collect();
    // `self::` names the module, `super::` its parent, whatever its file.
    let this = own.clone();
    let parent = own[..own.len().saturating_sub(1)].to_vec();
    let mut out = Vec::new();
    let mut prefixes: Vec<(String, Vec<&str>)> = vec![
        ("crate::".to_owned(), Vec::new()),
        ("super::".to_owned(), parent),
        ("self::".to_owned(), this),
    ];
    if let Some(name) = also {
        prefixes.push((format!("{name}::"), Vec::new()));
    }
    let inline = inline_modules(text);
    for (prefix, base) in &prefixes {
        for (at, _) in text.match_indices(prefix.as_str()) {
            // Inside an inline `mod x { … }`, `self::` and `super::` start from x.
            let enclosing: Vec<&str> = inline
                .iter()
                .filter(|(start, end, _)| (*start..*end).contains(&at))
                .map(|(_, _, name)| *name)
                .collect();
            let mut base = base.clone();
            if prefix == "self::" {
                base.extend(&enclosing);
            } else if prefix == "super::" && !enclosing.is_empty() {
                base.clone_from(&own);
                base.extend(&enclosing[..enclosing.len() - 1]);
            }
            // A path's start, not the tail of another (`foo_crate::`, `super::super::`).
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || (c == ':' && prefix != "super::")) {
                continue;
            }
            let rest = &text[at + prefix.len()..];
            let mut found = Vec::new();
            item("", rest, &mut found);
            for path in found {
                let mut full: Vec<&str> = base.clone();
                let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
                // `super::super::x`
                while segments.peek() == Some(&"super") {
                    segments.next();
                    full.pop();
                }
                full.extend(segments);
                out.push(full.join("::"));
            }
        }
    }
    out
}

/// Each inline module of `text` (`mod x { … }`): where its block starts and
/// ends, and its name, outermost first.
fn inline_modules(text: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("mod ") {
        if text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &text[at + 4..];
        let name_len = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .count();
        if name_len == 0 || !rest[name_len..].trim_start().starts_with('{') {
            continue;
        }
        let open = at + 4 + name_len + rest[name_len..].find('{').unwrap_or(0);
        let mut depth = 0;
        let mut end = text.len();
        for (i, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((open, end, &rest[..name_len]));
    }
    out
}

/// The longest of `modules` that `path` starts with, segment by segment.
fn longest<'a>(path: &str, modules: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    modules
        .into_iter()
        .filter(|m| m.is_empty() || path == *m || path.starts_with(&format!("{m}::")))
        .max_by_key(|m| m.len())
}

/// Whether `module` is `ancestor` or inside it.
fn within(module: &str, ancestor: &str) -> bool {
    ancestor.is_empty() || module == ancestor || module.starts_with(&format!("{ancestor}::"))
}

/// The files `source` imports: each path it names, as the file of the
/// longest module it starts with. A file's own folder's face (its `mod.rs`,
/// the crate's root) is not counted: a folder hands its files' names on, and
/// its files use those names.
fn imported_files<'a>(source: &Source, all: &'a [Source], also: Option<&str>) -> BTreeSet<&'a str> {
    let modules = all.iter().map(|s| s.module.as_str());
    named_paths(source, also)
        .iter()
        .filter_map(|path| longest(path, modules.clone()))
        .filter(|m| *m != source.module && !within(&source.module, m))
        .collect()
}

/// Every circle among `files`' imports, each as its files' modules.
fn circles(all: &[Source], also: Option<&str>) -> Vec<Vec<String>> {
    let edges: BTreeMap<&str, BTreeSet<&str>> = all
        .iter()
        .map(|s| (s.module.as_str(), imported_files(s, all, also)))
        .collect();
    // Tarjan's strongly connected components, over a small graph.
    struct Walk<'a> {
        edges: &'a BTreeMap<&'a str, BTreeSet<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let at = self.index.len();
            self.index.insert(node, at);
            self.low.insert(node, at);
            self.stack.push(node);
            self.on_stack.insert(node);
            for &next in self.edges.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.to_owned());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for &node in edges.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.found
}

/// Every crate root folder of the workspace: where a `lib.rs` or `main.rs` stands.
fn crate_roots() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut BTreeSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && !["target", "node_modules"].contains(&name.as_str()) {
                    walk(&path, out);
                }
            } else if name == "lib.rs" || name == "main.rs" {
                out.insert(dir.to_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&workspace_root(), &mut out);
    out.into_iter().collect()
}

/// The crate's own name, as its bin names its lib (`tools/xtask/src` → `xtask`).
fn crate_name(src: &Path) -> Option<String> {
    let manifest = std::fs::read_to_string(src.parent()?.join("Cargo.toml")).ok()?;
    let name = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("name = \""))?
        .trim_end_matches('"');
    Some(name.replace('-', "_"))
}

#[test]
fn no_files_anywhere_in_the_workspace_import_each_other_in_a_circle() {
    let root = workspace_root();
    let mut found = Vec::new();
    let roots = crate_roots();
    assert!(roots.len() > 30, "{} crate roots found", roots.len());
    for src in &roots {
        let all = sources(src);
        let name = crate_name(src);
        for circle in circles(&all, name.as_deref()) {
            found.push(format!(
                "{}: {}",
                src.strip_prefix(&root).unwrap().display(),
                circle.join(" ⇄ ")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other in a circle:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_module_imports_only_from_lower_floors_and_only_the_store_sees_the_stored_format() {
    let mut wrong = Vec::new();
    for crate_floors in LAYERED {
        let src = workspace_root().join(crate_floors.src);
        let floors: BTreeMap<&str, u8> = crate_floors.modules.iter().copied().collect();
        let all = sources(&src);
        let name = crate_name(&src);
        let mut seen = BTreeSet::new();
        for source in all.iter().filter(|s| !s.module.is_empty()) {
            let relative = format!(
                "{}/{}",
                crate_floors.src,
                source.path.strip_prefix(&src).unwrap().display()
            );
            let Some(own) = longest(&source.module, floors.keys().copied()) else {
                wrong.push(format!("{relative}: module `{}` has no floor", source.module));
                continue;
            };
            seen.insert(own);
            let floor = floors[own];
            for path in named_paths(source, name.as_deref()) {
                let first = path.split("::").next().unwrap_or_default();
                let path = REEXPORTS
                    .iter()
                    .find(|(item, _)| crate_floors.src == CORE.src && first == *item)
                    .map_or(path.clone(), |(_, module)| (*module).to_owned());
                match longest(&path, floors.keys().copied()) {
                    Some(other) if other == own => {}
                    Some(other) if floors[other] < floor => {}
                    Some(other) => wrong.push(format!(
                        "{relative} (floor {floor}) imports `{path}` ({other}, floor {})",
                        floors[other]
                    )),
                    // The crate's root stands above every module.
                    None => wrong.push(format!("{relative} imports `{path}` from the crate's root")),
                }
                if crate_floors.src == CORE.src
                    && !within(&source.module, "store")
                    && STORED_FORMAT.iter().any(|f| within(&path, f))
                {
                    wrong.push(format!("{relative} names the stored format: crate::{path}"));
                }
            }
        }
        let listed: BTreeSet<&str> = floors.keys().copied().collect();
        assert_eq!(
            seen, listed,
            "{}: the floors list exactly the crate's modules",
            crate_floors.src
        );
    }
    assert!(wrong.is_empty(), "the floors are broken:\n{}", wrong.join("\n"));
}

#[test]
fn the_architecture_page_shows_the_core_crates_floors() {
    let page = std::fs::read_to_string(workspace_root().join("docs/architecture.md")).unwrap();
    let section = page
        .split("## The core crate's floors")
        .nth(1)
        .expect("the page has the floors' section");
    let mut shown: BTreeMap<u8, BTreeSet<String>> = BTreeMap::new();
    for row in section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| "))
    {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Ok(floor) = cells[1].parse::<u8>() else { continue };
        let modules = cells[2].split(',').map(|m| m.trim().trim_matches('`').to_owned());
        shown.entry(floor).or_default().extend(modules);
    }
    let mut floors: BTreeMap<u8, BTreeSet<String>> = BTreeMap::new();
    for (module, floor) in CORE.modules {
        floors.entry(*floor).or_default().insert((*module).to_owned());
    }
    assert_eq!(
        shown, floors,
        "docs/architecture.md's floor table and the floors here agree"
    );
}

#[test]
fn the_layering_check_catches_an_arrow_back_up_and_a_circle() {
    let source = |module: &str, text: &str| Source {
        path: PathBuf::from(format!("{}.rs", module.replace("::", "/"))),
        module: module.to_owned(),
        text: text.to_owned(),
    };
    // The reader itself: groups, `super::`, and a macro's `$crate::`.
    let reader = source(
        "api::routes",
        "use crate::store::{Store, keys::{PK, SK}};\nuse super::events::x;\n$crate::App",
    );
    let paths = named_paths(&reader, None);
    for expected in [
        "store::Store",
        "store::keys::PK",
        "store::keys::SK",
        "api::events::x",
        "App",
    ] {
        assert!(paths.contains(&expected.to_owned()), "{expected} in {paths:?}");
    }
    // Two files that name each other are a circle; a folder's face is not.
    let all = [
        source("a", "use crate::b::X;"),
        source("b", "use crate::a::Y;"),
        source("c", "use crate::c::d::Z;"),
        source("c::d", "use super::W;"),
    ];
    assert_eq!(circles(&all, None), [vec!["a".to_owned(), "b".to_owned()]]);
}
