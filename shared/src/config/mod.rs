//! Configuration from the environment, read once at cold start. Every setting
//! is declared once, in [`settings`]: what reads it here takes its name, default
//! and range from the declaration, as do the docs, the template and `make dev`.

mod reconcile;
pub mod setting;
pub mod settings;
mod store;
mod timeouts;

pub use reconcile::ReconcileConfig;
pub use setting::Setting;
pub use settings::*;
pub use store::StoreConfig;
pub use timeouts::ClientTimeouts;

/// Why a function cannot start with its environment: it stops at init with
/// this message, which names the variable.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A required variable is unset or blank.
    #[error("{name} is not set; set it to {what} (see docs/configuration.md)")]
    Missing {
        /// The variable.
        name: &'static str,
        /// What it should hold.
        what: &'static str,
    },
    /// A variable holds a value outside what it allows.
    #[error("{name} is invalid: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// What it allows, and the value given.
        reason: String,
    },
    /// What the variable names could not be read (a secret, say).
    #[error("{name} could not be read: {reason}")]
    Unavailable {
        /// The variable.
        name: &'static str,
        /// Why, without the value.
        reason: String,
    },
}

/// A setting that must be given something other than blanks; trimmed.
pub fn required(
    lookup: impl Fn(&str) -> Option<String>,
    setting: Setting,
    what: &'static str,
) -> Result<String, ConfigError> {
    optional(lookup, setting).ok_or(ConfigError::Missing {
        name: setting.name(),
        what,
    })
}

/// A setting's value, trimmed; `None` when it is unset or blank.
pub fn optional(lookup: impl Fn(&str) -> Option<String>, setting: Setting) -> Option<String> {
    lookup(setting.name())
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// A yes-or-no setting: `true` is yes, and anything else, unset included, no.
pub fn flag(lookup: impl Fn(&str) -> Option<String>, setting: Setting) -> bool {
    optional(lookup, setting).is_some_and(|v| v == "true")
}

/// Sets `target` from a whole-number setting when it is given.
fn override_number<T: From<u32>>(
    lookup: &impl Fn(&str) -> Option<String>,
    target: &mut T,
    setting: Setting,
) -> Result<(), ConfigError> {
    if let Some(value) = number(lookup, setting)? {
        *target = T::from(value);
    }
    Ok(())
}

/// A whole number in the setting's range, or `None` when unset. The error
/// names the variable, the allowed range and the value given.
fn number(lookup: &impl Fn(&str) -> Option<String>, setting: Setting) -> Result<Option<u32>, ConfigError> {
    let Some(raw) = lookup(setting.name()) else {
        return Ok(None);
    };
    let (min, max) = (setting.range().min, setting.max_number());
    let invalid = || ConfigError::Invalid {
        name: setting.name(),
        reason: format!("must be a whole number from {min} to {max}; got {raw:?}"),
    };
    let value: u32 = raw.trim().parse().map_err(|_| invalid())?;
    if value < min || value > max {
        return Err(invalid());
    }
    Ok(Some(value))
}

/// A setting of whole seconds, given or its default, in its range.
pub fn seconds(lookup: impl Fn(&str) -> Option<String>, setting: Setting) -> Result<std::time::Duration, ConfigError> {
    number_or_default(&lookup, setting).map(|secs| std::time::Duration::from_secs(u64::from(secs)))
}

/// A whole-number setting's value: given, or its default.
fn number_or_default(lookup: &impl Fn(&str) -> Option<String>, setting: Setting) -> Result<u32, ConfigError> {
    Ok(number(lookup, setting)?.unwrap_or(setting.default_number()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::setting::{Reaches, Value};
    use super::*;
    use std::collections::HashMap;

    pub(crate) fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn every_number_a_function_reads_parses_its_range_and_refuses_past_it() {
        let numbers = SETTINGS
            .iter()
            .filter(|s| s.variable.is_some() && matches!(s.value, Value::Number(_)));
        let mut seen = 0;
        for s in numbers {
            seen += 1;
            let range = s.range();
            let max = range
                .max
                .unwrap_or_else(|| panic!("{} is read, so it has a most", s.name()));
            assert!(range.min <= range.default && range.default <= max, "{}", s.name());
            let parses = |value: u32| number(&lookup(&[(s.name(), &value.to_string())]), *s);
            assert_eq!(parses(range.min), Ok(Some(range.min)), "{}", s.name());
            assert_eq!(parses(max), Ok(Some(max)), "{}", s.name());
            assert!(parses(max + 1).is_err(), "{}", s.name());
            if range.min > 0 {
                assert!(parses(range.min - 1).is_err(), "{}", s.name());
            }
            assert_eq!(number_or_default(&lookup(&[]), *s), Ok(range.default));
        }
        assert!(seen >= 20, "{seen} number settings");
    }

    #[test]
    fn settings_are_declared_once_and_whole() {
        let mut variables = std::collections::BTreeSet::new();
        let mut parameters = std::collections::BTreeSet::new();
        for s in SETTINGS {
            assert!(s.variable.is_some() || s.parameter.is_some(), "{s:?} sets nothing");
            if let Some(v) = s.variable {
                assert!(variables.insert(v), "{v} is declared twice");
                assert!(
                    v.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
                    "{v}"
                );
            }
            if let Some(p) = s.parameter {
                assert!(parameters.insert(p), "{p} is declared twice");
            }
            assert!(!s.about.trim().is_empty(), "{} says what it is for", s.name());
            match s.reaches {
                Reaches::Stack => assert!(s.variable.is_none(), "{} is read, so it reaches someone", s.name()),
                Reaches::Every(from) | Reaches::Functions(_, from) => {
                    assert!(
                        s.variable.is_some(),
                        "{:?} reaches functions, so it has a variable",
                        s.parameter
                    );
                    if from == setting::From::Parameter {
                        assert!(s.parameter.is_some(), "{} is set from a parameter it lacks", s.name());
                    }
                }
                Reaches::Platform | Reaches::Local => {
                    assert!(s.variable.is_some(), "{:?}", s.parameter);
                }
            }
        }
    }

    #[test]
    fn a_required_setting_names_itself() {
        assert_eq!(
            required(lookup(&[("TABLE_NAME", "  ")]), TABLE_NAME, "the DynamoDB table name"),
            Err(ConfigError::Missing {
                name: "TABLE_NAME",
                what: "the DynamoDB table name"
            })
        );
        assert!(flag(
            lookup(&[("DYNAMODB_CONNECT_AT_INIT", " true ")]),
            DYNAMODB_CONNECT_AT_INIT
        ));
        assert!(!flag(
            lookup(&[("DYNAMODB_CONNECT_AT_INIT", "yes")]),
            DYNAMODB_CONNECT_AT_INIT
        ));
    }
}
