"""E9003: no write action on Resource "*"."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402

# An action is a read when its verb starts with one of these; anything else may
# change something, so it must name its resources.
READ_VERBS = ("Get", "List", "Describe", "BatchGet", "Query", "Scan", "Lookup", "Search")
# Writes whose service has no resource-level permission at all: "*" is the only
# Resource IAM accepts for them.
RESOURCELESS_WRITES = frozenset(
    {
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "cloudwatch:PutMetricData",
    }
)


class NoWriteOnEveryResource(CloudFormationLintRule):
    id = "E9003"
    shortdesc = "No write action on Resource '*'"
    description = (
        "An Allow statement whose Resource is '*' (or that uses NotResource) grants only reads "
        f"(verbs {', '.join(READ_VERBS)}) and the writes no service lets name a resource "
        f"({', '.join(sorted(RESOURCELESS_WRITES))})"
    )
    source_url = "https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html"
    tags = ["policy", "iam"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check IAM resources: {checked}")]
        matches = []
        for logical_id, resource in checked.template.get("Resources", {}).items():
            properties = resource.get("Properties", {}) if isinstance(resource, dict) else {}
            for statement, path in support.policy_statements(properties, []):
                if statement.get("Effect") != "Allow" or not _on_every_resource(statement):
                    continue
                writes = sorted(
                    a
                    for a in support.alternatives(statement.get("Action"))
                    if isinstance(a, str) and is_write(a)
                )
                if "NotAction" in statement:
                    writes.append("every action but NotAction's")
                if writes:
                    matches.append(
                        RuleMatch(
                            checked.source_path(logical_id),
                            f"{logical_id}: {support.describe_statement(statement, path)} allows "
                            f"{', '.join(writes)} on every resource; name the resources.",
                        )
                    )
        return matches


def _on_every_resource(statement: dict[str, Any]) -> bool:
    if "NotResource" in statement:
        return True
    return any(r == "*" for r in support.alternatives(statement.get("Resource")))


def is_write(action: str) -> bool:
    if action in RESOURCELESS_WRITES:
        return False
    verb = action.split(":", 1)[-1]
    return not verb.startswith(READ_VERBS)
