//! What follows from the settings' declarations (`user_service::config::SETTINGS`):
//! template.yaml's `Parameters`, the variables of its `Globals` and of each
//! function, docs/configuration.md's two tables, and `make dev`'s pass-through.

use std::fmt::Write as _;

use user_service::catalog::Function;
use user_service::config::SETTINGS;
use user_service::config::setting::{From, Range, Reaches, Setting, Value};

/// How the template gives a function the variable: `!Ref` of the parameter,
/// or the declared expression; `None` when the default stands.
fn expression(setting: &Setting, from: From) -> Option<String> {
    match from {
        From::Parameter => setting.parameter.map(|p| format!("!Ref {p}")),
        From::Template(expression) => Some(expression.to_owned()),
        From::Default => None,
    }
}

/// The variables every function gets, as `Globals` lines at eight spaces.
pub(crate) fn globals() -> String {
    let mut out = String::new();
    for s in SETTINGS {
        let Reaches::Every(from) = s.reaches else { continue };
        let Some(value) = expression(s, from) else { continue };
        for why in s.why {
            let _ = writeln!(out, "        # {why}");
        }
        let _ = writeln!(out, "        {}: {value}", s.name());
    }
    out
}

/// The variables `function` gets beside the globals, in the settings' order.
pub(crate) fn environment(function: &Function) -> Vec<(&'static str, String)> {
    SETTINGS
        .iter()
        .filter_map(|s| match s.reaches {
            Reaches::Functions(need, from) if function.needs(need) => Some((s.name(), expression(s, from)?)),
            _ => None,
        })
        .collect()
}

/// A YAML double-quoted scalar: JSON's string syntax is YAML's.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// `text` as a folded block at six spaces, lines under 90 columns.
fn folded(text: &str) -> String {
    let mut out = String::from(">-\n");
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && 6 + line.len() + 1 + word.len() > 88 {
            let _ = writeln!(out, "      {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = write!(out, "      {line}");
    out
}

/// The template's `Parameters`: one per setting a parameter sets, in the
/// settings' order, each with its declared range and why.
pub(crate) fn parameters() -> String {
    let mut out = String::new();
    for s in SETTINGS {
        let Some(name) = s.parameter else { continue };
        for why in s.why {
            let _ = writeln!(out, "  # {why}");
        }
        let _ = writeln!(out, "  {name}:");
        let mut key = |key: &str, value: &str| {
            let _ = writeln!(out, "    {key}: {value}");
        };
        match s.value {
            Value::Number(Range { default, min, max }) => {
                key("Type", "Number");
                key("Default", &default.to_string());
                key("MinValue", &min.to_string());
                if let Some(max) = max {
                    key("MaxValue", &max.to_string());
                }
            }
            Value::NumberIn { default, allowed } => {
                key("Type", "Number");
                key("Default", &default.to_string());
                key("AllowedValues", "");
                for value in allowed {
                    let _ = writeln!(out, "      - {value}");
                }
            }
            Value::Choice { default, allowed } => {
                key("Type", "String");
                key("Default", &quoted(default));
                key("AllowedValues", "");
                for value in allowed {
                    let _ = writeln!(out, "      - {}", quoted(value));
                }
            }
            Value::Text {
                default,
                pattern,
                constraint,
            } => {
                key("Type", "String");
                if let Some(default) = default {
                    key("Default", &quoted(default));
                }
                if let Some(pattern) = pattern {
                    key("AllowedPattern", &quoted(pattern));
                }
                if let Some(constraint) = constraint {
                    key("ConstraintDescription", &quoted(constraint));
                }
            }
            Value::List => {
                key("Type", "CommaDelimitedList");
                key("Default", "\"\"");
            }
        }
        let _ = writeln!(out, "    Description: {}", folded(s.about));
    }
    // `AllowedValues:` with nothing after the colon reads as a key whose list follows.
    out.replace("AllowedValues: \n", "AllowedValues:\n")
}

/// One Markdown table cell: no line breaks, no bare `|`.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// What sets a variable, as docs/configuration.md says it.
fn set_by(s: &Setting) -> String {
    let from = match s.reaches {
        Reaches::Every(from) | Reaches::Functions(_, from) => from,
        Reaches::Platform => return "Lambda".to_owned(),
        Reaches::Local => return "local runs".to_owned(),
        Reaches::Stack => return String::new(),
    };
    let whom = match s.reaches {
        Reaches::Functions(need, _) => format!(" ({})", need.about()),
        _ => String::new(),
    };
    match from {
        From::Parameter => format!("`{}`{whom}", s.parameter.unwrap_or_default()),
        From::Template(_) => format!("the template{whom}"),
        From::Default => format!("its default{whom}"),
    }
}

/// docs/configuration.md's variables: what each function may read.
pub(crate) fn variables_table() -> String {
    let mut out = String::from("| variable | default | range | set by | what it is for |\n|---|---|---|---|---|\n");
    for s in SETTINGS.iter().filter(|s| s.variable.is_some()) {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            s.name(),
            cell(&s.default_text()),
            cell(&s.allowed_text()),
            set_by(s),
            cell(s.about)
        );
    }
    out
}

/// docs/configuration.md's stack parameters.
pub(crate) fn parameters_table() -> String {
    let mut out = String::from("| parameter | default | allowed | what it is for |\n|---|---|---|---|\n");
    for s in SETTINGS {
        let Some(name) = s.parameter else { continue };
        let _ = writeln!(
            out,
            "| `{name}` | {} | {} | {} |",
            cell(&s.default_text()),
            cell(&s.allowed_text()),
            cell(s.about)
        );
    }
    out
}

/// scripts/dev's pass-through: every variable a function reads that Lambda
/// does not set, handed on when the shell running `make dev` sets it.
pub(crate) fn dev_pass_through() -> String {
    let names: Vec<&str> = SETTINGS
        .iter()
        .filter(|s| s.variable.is_some() && s.reaches != Reaches::Platform)
        .map(Setting::name)
        .collect();
    let mut out = String::from("settings=(\n");
    for name in names {
        let _ = writeln!(out, "  {name}");
    }
    out.push_str(")\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use user_service::catalog::{FUNCTIONS, by_name};

    #[test]
    fn a_function_gets_what_its_entry_needs() {
        let names = |f: &str| -> Vec<&str> { environment(by_name(f).unwrap()).into_iter().map(|(n, _)| n).collect() };
        assert!(names("add-email").contains(&"VERIFICATION_KEY_SECRET_ID"));
        assert!(names("add-email").contains(&"SENDER_ADDRESS"));
        assert!(!names("get-profile").contains(&"SENDER_ADDRESS"));
        assert!(names("reconcile-users").contains(&"RECONCILE_INTERVAL_HOURS"));
        // A default that no parameter sets is not written.
        assert!(!names("reconcile-users").contains(&"COGNITO_USER_LIST_RPS"));
        // A trigger learns its pool from each event.
        assert!(!names("post-confirmation").contains(&"USER_POOL_ID"));
        for f in FUNCTIONS {
            for (name, value) in environment(f) {
                assert!(value.starts_with('!'), "{}: {name} = {value}", f.name);
            }
        }
    }

    #[test]
    fn every_parameter_reads_back_as_declared() {
        let text = format!("Parameters:\n{}", parameters());
        let parsed: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        let parameters = parsed["Parameters"].as_mapping().unwrap();
        let declared: Vec<&Setting> = SETTINGS.iter().filter(|s| s.parameter.is_some()).collect();
        assert_eq!(parameters.len(), declared.len());
        for s in declared {
            let p = &parameters[s.parameter.unwrap()];
            let description = p["Description"].as_str().unwrap();
            assert_eq!(cell(description), cell(s.about), "{:?}", s.parameter);
            match s.value {
                Value::Number(range) => {
                    assert_eq!(p["Default"].as_u64(), Some(u64::from(range.default)));
                    assert_eq!(p["MinValue"].as_u64(), Some(u64::from(range.min)));
                    assert_eq!(p["MaxValue"].as_u64(), range.max.map(u64::from));
                }
                Value::Choice { default, allowed } => {
                    assert_eq!(p["Default"].as_str(), Some(default));
                    let values: Vec<&str> = p["AllowedValues"]
                        .as_sequence()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect();
                    assert_eq!(values, allowed);
                }
                Value::Text { pattern, .. } => {
                    assert_eq!(p["AllowedPattern"].as_str(), pattern, "{:?}", s.parameter);
                }
                Value::NumberIn { .. } | Value::List => {}
            }
        }
    }

    #[test]
    fn a_long_description_folds_under_ninety_columns() {
        let text = folded(&"word ".repeat(60));
        assert!(text.lines().skip(1).all(|l| l.len() < 90 && l.starts_with("      ")));
        assert_eq!(
            text.lines()
                .skip(1)
                .collect::<Vec<_>>()
                .join(" ")
                .split_whitespace()
                .count(),
            60
        );
    }
}
