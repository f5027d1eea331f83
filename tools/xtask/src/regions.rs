//! A generated region of a hand-written file: the lines between a begin and an
//! end marker, both comments, so the file stays valid and its own tools read it.

#[derive(Debug, thiserror::Error)]
pub(crate) enum RegionError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: expected exactly one `{marker}` line, found {found}")]
    Marker { file: String, marker: String, found: usize },
}

#[derive(Debug, Clone)]
pub(crate) struct Region {
    pub name: &'static str,
    begin: String,
    end: String,
}

impl Region {
    /// A region of template.yaml's `Resources`, at one level of indentation,
    /// written from `sources` (which end in what to edit instead).
    pub(crate) fn yaml(name: &'static str, sources: &str) -> Self {
        Self::yaml_at(name, sources, 2)
    }

    /// A region of template.yaml at `indent` spaces.
    pub(crate) fn yaml_at(name: &'static str, sources: &str, indent: usize) -> Self {
        let pad = " ".repeat(indent);
        Self {
            name,
            begin: format!(
                "{pad}# >>> generated: {name}. Written by `cargo xtask template` from {sources}, not this block."
            ),
            end: format!("{pad}# <<< generated: {name}"),
        }
    }

    /// A region of a shell script, at the top level.
    pub(crate) fn shell(name: &'static str, sources: &str) -> Self {
        Self::yaml_at(name, sources, 0)
    }

    /// A region of a Rust source file, at the top level.
    pub(crate) fn rust(name: &'static str) -> Self {
        Self {
            name,
            begin: format!(
                "// >>> generated: {name}. Written by `cargo xtask template` from shared/src/catalog.rs; edit the catalog, not this block."
            ),
            end: format!("// <<< generated: {name}"),
        }
    }

    /// A region inside a TOML array, at four spaces.
    pub(crate) fn toml(name: &'static str) -> Self {
        Self {
            name,
            begin: format!(
                "    # >>> generated: {name}. Written by `cargo xtask template` from shared/src/catalog.rs."
            ),
            end: format!("    # <<< generated: {name}"),
        }
    }

    /// A region of a Markdown page, between HTML comments.
    pub(crate) fn markdown(name: &'static str, sources: &str) -> Self {
        Self {
            name,
            begin: format!("<!-- >>> generated: {name}. Written by `cargo xtask docs` from {sources}. -->"),
            end: format!("<!-- <<< generated: {name} -->"),
        }
    }

    /// `text` with the region's lines replaced by `content` (whole lines, each
    /// ending in a newline).
    pub(crate) fn replace(&self, file: &str, text: &str, content: &str) -> Result<String, RegionError> {
        let begin = self.find(file, text, &self.begin)?;
        let end = self.find(file, text, &self.end)?;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if end < begin {
            return Err(RegionError::Marker {
                file: file.to_owned(),
                marker: self.end.trim().to_owned(),
                found: 0,
            });
        }
        let mut out = String::with_capacity(text.len());
        lines[..=begin].iter().for_each(|l| out.push_str(l));
        out.push_str(content);
        lines[end..].iter().for_each(|l| out.push_str(l));
        Ok(out)
    }

    fn find(&self, file: &str, text: &str, marker: &str) -> Result<usize, RegionError> {
        let found: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, line)| line.trim_end() == marker)
            .map(|(i, _)| i)
            .collect();
        match found.as_slice() {
            [one] => Ok(*one),
            _ => Err(RegionError::Marker {
                file: file.to_owned(),
                marker: marker.trim().to_owned(),
                found: found.len(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_between_the_markers() {
        let region = Region::yaml("x", "here; edit that");
        let text = format!("a\n{}\nold\n{}\nb\n", region.begin, region.end);
        let out = region.replace("f", &text, "new\n").unwrap();
        assert_eq!(out, format!("a\n{}\nnew\n{}\nb\n", region.begin, region.end));
        // Idempotent: replacing again with the same content changes nothing.
        assert_eq!(region.replace("f", &out, "new\n").unwrap(), out);
    }

    #[test]
    fn a_missing_or_doubled_marker_is_an_error() {
        let region = Region::yaml("x", "here; edit that");
        assert!(matches!(
            region.replace("f", "a\n", "new\n"),
            Err(RegionError::Marker { found: 0, .. })
        ));
        let doubled = format!("{0}\n{0}\n{1}\n", region.begin, region.end);
        assert!(matches!(
            region.replace("f", &doubled, "new\n"),
            Err(RegionError::Marker { found: 2, .. })
        ));
    }
}
