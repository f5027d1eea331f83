"""E9002: no wildcard in any IAM action."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402


class NoWildcardActions(CloudFormationLintRule):
    id = "E9002"
    shortdesc = "No wildcard in IAM actions"
    description = (
        "No policy statement (role inline policies, AWS::IAM::Policy, AWS::IAM::ManagedPolicy, "
        "resource and trust policies, SAM Policies after the transform) has a '*' in an "
        "Action or NotAction, in any branch of an Fn::If"
    )
    source_url = "https://docs.aws.amazon.com/IAM/latest/UserGuide/best-practices.html#grant-least-privilege"
    tags = ["policy", "iam"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check IAM actions: {checked}")]
        matches = []
        for logical_id, resource in checked.template.get("Resources", {}).items():
            properties = resource.get("Properties", {}) if isinstance(resource, dict) else {}
            for statement, path in support.policy_statements(properties, []):
                for key in ("Action", "NotAction"):
                    for action in support.alternatives(statement.get(key)):
                        if isinstance(action, str) and "*" in action:
                            matches.append(
                                RuleMatch(
                                    checked.source_path(logical_id),
                                    f"{logical_id}: {support.describe_statement(statement, path)} has the "
                                    f"wildcard {key} {action!r}; name each action it needs.",
                                )
                            )
        return matches
