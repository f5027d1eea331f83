"""E9005: deletion protection on every table and user pool."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402

# The property that protects each kind of resource, and the value that means on.
PROTECTED = {
    "AWS::DynamoDB::Table": ("DeletionProtectionEnabled", "true"),
    "AWS::Cognito::UserPool": ("DeletionProtection", "ACTIVE"),
}


class DeletionProtection(CloudFormationLintRule):
    id = "E9005"
    shortdesc = "Deletion protection is on for every table and user pool"
    description = (
        "Every AWS::DynamoDB::Table has DeletionProtectionEnabled true and every "
        "AWS::Cognito::UserPool has DeletionProtection ACTIVE, under the parameter defaults "
        "and under samconfig.toml's prod overrides"
    )
    source_url = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithTables.Basics.html#WorkingWithTables.Basics.DeletionProtection"
    tags = ["policy", "dynamodb", "cognito"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check deletion protection: {checked}")]
        matches = []
        for resource_id, resource in checked.resources(*PROTECTED):
            key, on = PROTECTED[resource["Type"]]
            for parameters in checked.parameter_sets:
                if support.exists(resource, checked.template, parameters) is False:
                    continue
                value = support.evaluate(resource.get("Properties", {}).get(key), checked.template, parameters)
                if str(value).lower() != on.lower():
                    matches.append(
                        RuleMatch(
                            checked.source_path(resource_id, "Properties"),
                            f"{resource_id} has no deletion protection under {parameters.name} "
                            f"({key} is {value!r}); it must be {on}.",
                        )
                    )
        return matches
