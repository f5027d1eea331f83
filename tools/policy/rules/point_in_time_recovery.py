"""E9004: point-in-time recovery on every table."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402


class PointInTimeRecovery(CloudFormationLintRule):
    id = "E9004"
    shortdesc = "Point-in-time recovery is on for every table"
    description = (
        "Every AWS::DynamoDB::Table has PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled "
        "true under the parameter defaults and under samconfig.toml's prod overrides"
    )
    source_url = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/PointInTimeRecovery.html"
    tags = ["policy", "dynamodb"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check point-in-time recovery: {checked}")]
        matches = []
        for table_id, table in checked.resources("AWS::DynamoDB::Table"):
            for parameters in checked.parameter_sets:
                if support.exists(table, checked.template, parameters) is False:
                    continue
                enabled = support.evaluate(
                    table.get("Properties", {})
                    .get("PointInTimeRecoverySpecification", {})
                    .get("PointInTimeRecoveryEnabled"),
                    checked.template,
                    parameters,
                )
                if not support.truthy(enabled):
                    matches.append(
                        RuleMatch(
                            checked.source_path(table_id, "Properties"),
                            f"{table_id} has no point-in-time recovery under {parameters.name} "
                            f"(PointInTimeRecoveryEnabled is {enabled!r}); set it to true.",
                        )
                    )
        return matches
