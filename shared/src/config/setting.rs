//! A setting, declared once: the environment variable a function reads, the
//! stack parameter that sets it, its value's kind with its default and range,
//! and what reaches which function. From each declaration come the parser's
//! default and range (here), the docs' tables (`cargo xtask docs`), the
//! template's parameter with the same range and the function's environment
//! entry (`cargo xtask template`), and `make dev`'s pass-through.

/// One setting of the service or of its stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The environment variable a function reads; `None` for a parameter the
    /// template alone uses.
    pub variable: Option<&'static str>,
    /// The stack parameter (template.yaml's `Parameters`) that sets it;
    /// `None` when the template sets it otherwise, or nothing does.
    pub parameter: Option<&'static str>,
    /// Its kind of value, with its default and what is allowed.
    pub value: Value,
    /// What it is for: one line, the docs' and the template's description.
    pub about: &'static str,
    /// Why it is set as it is: the comment above the template's parameter.
    pub why: &'static [&'static str],
    /// Which functions read it, and how the template sets it.
    pub reaches: Reaches,
}

/// A setting's kind of value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// A whole number in a range.
    Number(Range),
    /// A number from a fixed list.
    NumberIn {
        /// When unset.
        default: u32,
        /// Every value allowed.
        allowed: &'static [u32],
    },
    /// One of a few words.
    Choice {
        /// When unset.
        default: &'static str,
        /// Every value allowed.
        allowed: &'static [&'static str],
    },
    /// Text, matching `pattern` if any; `default: None` is required.
    Text {
        /// When unset; `None`: it must be given.
        default: Option<&'static str>,
        /// What a value must match (a regular expression).
        pattern: Option<&'static str>,
        /// What the template says of a value that does not match.
        constraint: Option<&'static str>,
    },
    /// A comma-separated list, empty by default.
    List,
}

/// A whole number's default and range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// When unset.
    pub default: u32,
    /// The least allowed.
    pub min: u32,
    /// The most allowed; `None`: no bound (a stack parameter no function reads).
    pub max: Option<u32>,
}

/// Which functions read a setting, and how the template gives it them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaches {
    /// Every function: the template's `Globals`.
    Every(From),
    /// The functions whose catalog entry shows the need.
    Functions(Need, From),
    /// Lambda sets it (from the template's `LoggingConfig`).
    Platform,
    /// Local runs and the tests alone set it.
    Local,
    /// A parameter no function reads: the template uses it itself.
    Stack,
}

/// How the template sets a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// `!Ref` of the setting's parameter.
    Parameter,
    /// A template expression (`!Ref Table`).
    Template(&'static str),
    /// Nothing: the default holds unless an operator sets it.
    Default,
}

/// What in a function's catalog entry makes it read a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// It hashes codes or addresses (`reads_verification_key`).
    VerificationKey,
    /// It calls Cognito's admin API and is no trigger (a trigger reads its pool from each event).
    Pool,
    /// It sends mail (`sends_email`).
    Mail,
    /// It puts events on the bus (`publishes_events`).
    Bus,
    /// It runs the reconcile.
    Reconcile,
    /// Its change needs a recent sign-in (`needs_recent_sign_in`).
    RecentSignIn,
}

impl Need {
    /// Who has the need, as the docs say it.
    pub const fn about(self) -> &'static str {
        match self {
            Self::VerificationKey => "functions that hash codes or addresses",
            Self::Pool => "functions that call Cognito",
            Self::Mail => "functions that send mail",
            Self::Bus => "functions that publish events",
            Self::Reconcile => "the reconcile",
            Self::RecentSignIn => "the routes that hand over an account",
        }
    }
}

impl Setting {
    /// The environment variable; `""` for a parameter no function reads.
    pub const fn name(&self) -> &'static str {
        match self.variable {
            Some(name) => name,
            None => "",
        }
    }

    /// A whole number's range, for the parser; the defaults of a setting of
    /// another kind (a bug the settings' tests refuse).
    pub const fn range(&self) -> Range {
        match self.value {
            Value::Number(range) => range,
            _ => Range {
                default: 0,
                min: 0,
                max: Some(0),
            },
        }
    }

    /// A word's or a text's default; `""` for any other kind.
    pub const fn default_str(&self) -> &'static str {
        match self.value {
            Value::Choice { default, .. }
            | Value::Text {
                default: Some(default), ..
            } => default,
            _ => "",
        }
    }

    /// A whole number's default.
    pub const fn default_number(&self) -> u32 {
        self.range().default
    }

    /// A whole number's largest value.
    pub const fn max_number(&self) -> u32 {
        match self.range().max {
            Some(max) => max,
            None => u32::MAX,
        }
    }

    /// Its default as the docs write it: a number, a word, `(empty)`, or
    /// what sets it when nothing has a default.
    pub fn default_text(&self) -> String {
        match self.value {
            Value::Number(Range { default, .. }) | Value::NumberIn { default, .. } => default.to_string(),
            Value::Choice { default, .. }
            | Value::Text {
                default: Some(default), ..
            } if default.is_empty() => "(empty)".to_owned(),
            Value::Choice { default, .. }
            | Value::Text {
                default: Some(default), ..
            } => format!("`{default}`"),
            Value::Text { default: None, .. } => "(required)".to_owned(),
            Value::List => "(empty)".to_owned(),
        }
    }

    /// What it allows, as the docs write it.
    pub fn allowed_text(&self) -> String {
        match self.value {
            Value::Number(Range { min, max, .. }) => match max {
                Some(max) => format!("{min} to {max}"),
                None => format!("{min} or more"),
            },
            Value::NumberIn { allowed, .. } => allowed.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            Value::Choice { allowed, .. } => allowed
                .iter()
                .map(|a| {
                    if a.is_empty() {
                        "(empty)".to_owned()
                    } else {
                        format!("`{a}`")
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
            Value::Text { pattern: Some(_), .. } => "see the template's pattern".to_owned(),
            Value::Text { pattern: None, .. } => String::new(),
            Value::List => "a comma-separated list".to_owned(),
        }
    }
}
