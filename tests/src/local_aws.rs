//! The local AWS environment from scripts/local-aws.env, where alone it is spelled.

use aws_credential_types::Credentials;

const FILE: &str = include_str!("../../scripts/local-aws.env");

/// Every `KEY=value` of the file, in order.
pub fn vars() -> Vec<(&'static str, &'static str)> {
    FILE.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once('='))
        .collect()
}

fn var(name: &str) -> &'static str {
    vars()
        .into_iter()
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
        .unwrap_or_else(|| panic!("scripts/local-aws.env sets {name}"))
}

pub fn region() -> &'static str {
    var("AWS_REGION")
}

pub fn credentials() -> Credentials {
    Credentials::new(
        var("AWS_ACCESS_KEY_ID"),
        var("AWS_SECRET_ACCESS_KEY"),
        None,
        None,
        "scripts/local-aws.env",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_sets_a_region_dummy_credentials_and_no_metadata_probing() {
        assert_eq!(var("AWS_EC2_METADATA_DISABLED"), "true");
        assert!(!region().is_empty());
        assert_eq!(vars().len(), 4);
    }
}
