//! The table's capacity: on demand, or provisioned with auto scaling per index.

use super::super::setting::{Range, Reaches, Setting, Value};

/// PAY_PER_REQUEST (on demand), or PROVISIONED with auto scaling of the table's, GSI1's and GSI2's reads and writes between the minimums and maximums below.
pub const TABLE_BILLING_MODE: Setting = Setting {
    variable: None,
    parameter: Some("TableBillingMode"),
    value: Value::Choice {
        default: "PAY_PER_REQUEST",
        allowed: &["PAY_PER_REQUEST", "PROVISIONED"],
    },
    about: "PAY_PER_REQUEST (on demand), or PROVISIONED with auto scaling of the table's, GSI1's and GSI2's reads and writes between the minimums and maximums below.",
    why: &[
        "Capacity, as the seed plans it: on demand until 2-4 weeks of production",
        "traffic show whether provisioned capacity with auto scaling costs less (the",
        "README's Operations section). GSI1 has its own capacity, sized on its own.",
    ],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_READ_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("TableReadCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's read capacity units, at least (and at deploy).",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_READ_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("TableReadCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's read capacity units, at most; not below TableReadCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_WRITE_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("TableWriteCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's write capacity units, at least (and at deploy).",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_WRITE_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("TableWriteCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. The table's write capacity units, at most; not below TableWriteCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_READ_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1ReadCapacityMin"),
    value: Value::Number(Range {
        default: 1,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's read capacity units, at least (and at deploy). Only admin look-ups read it.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_READ_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1ReadCapacityMax"),
    value: Value::Number(Range {
        default: 20,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's read capacity units, at most; not below Gsi1ReadCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_WRITE_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1WriteCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's write capacity units, at least (and at deploy). Every write of an email record writes GSI1.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_WRITE_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1WriteCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI1's write capacity units, at most; not below Gsi1WriteCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_READ_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2ReadCapacityMin"),
    value: Value::Number(Range {
        default: 1,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's read capacity units, at least (and at deploy). Only the admin list reads it.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_READ_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2ReadCapacityMax"),
    value: Value::Number(Range {
        default: 20,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's read capacity units, at most; not below Gsi2ReadCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_WRITE_CAPACITY_MIN: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2WriteCapacityMin"),
    value: Value::Number(Range {
        default: 5,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's write capacity units, at least (and at deploy). Every sign-up and status change writes GSI2 (a change, twice).",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_WRITE_CAPACITY_MAX: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2WriteCapacityMax"),
    value: Value::Number(Range {
        default: 100,
        min: 1,
        max: None,
    }),
    about: "PROVISIONED only. GSI2's write capacity units, at most; not below Gsi2WriteCapacityMin.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const TABLE_TARGET_UTILIZATION: Setting = Setting {
    variable: None,
    parameter: Some("TableTargetUtilization"),
    value: Value::Number(Range {
        default: 70,
        min: 20,
        max: Some(90),
    }),
    about: "PROVISIONED only. Auto scaling keeps the table's consumed capacity near this percentage of its provisioned capacity.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI1_TARGET_UTILIZATION: Setting = Setting {
    variable: None,
    parameter: Some("Gsi1TargetUtilization"),
    value: Value::Number(Range {
        default: 70,
        min: 20,
        max: Some(90),
    }),
    about: "PROVISIONED only. Auto scaling keeps GSI1's consumed capacity near this percentage of its provisioned capacity.",
    why: &[],
    reaches: Reaches::Stack,
};

/// PROVISIONED only.
pub const GSI2_TARGET_UTILIZATION: Setting = Setting {
    variable: None,
    parameter: Some("Gsi2TargetUtilization"),
    value: Value::Number(Range {
        default: 70,
        min: 20,
        max: Some(90),
    }),
    about: "PROVISIONED only. Auto scaling keeps GSI2's consumed capacity near this percentage of its provisioned capacity.",
    why: &[],
    reaches: Reaches::Stack,
};
