"""E9008: alarms are on in prod and notify an address."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402

# The template's switch for its alarms (absent: alarms are not switchable).
SWITCH = "EnableAlarms"


class ProdAlarms(CloudFormationLintRule):
    id = "E9008"
    shortdesc = "Alarms are on in prod and notify an address"
    description = (
        f"Under samconfig.toml's prod overrides, {SWITCH} is true, every alarm created has "
        "AlarmActions, and an email AWS::SNS::Subscription with an address is created"
    )
    source_url = "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html"
    tags = ["policy", "alarms", "prod"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check the prod alarms: {checked}")]
        prod = checked.prod()
        if prod is None:
            return [RuleMatch([], f"Cannot check the prod alarms: {checked.prod_error}")]
        template = checked.template
        matches = []
        if SWITCH in template.get("Parameters", {}) and prod.values.get(SWITCH) != "true":
            matches.append(
                RuleMatch(
                    ["Parameters", SWITCH],
                    f"{SWITCH} is {prod.values.get(SWITCH)!r} under {prod.name}; production keeps its alarms on.",
                )
            )
        for alarm_id, alarm in checked.resources("AWS::CloudWatch::Alarm"):
            if support.exists(alarm, template, prod) is not True:
                continue
            actions = support.evaluate(alarm.get("Properties", {}).get("AlarmActions"), template, prod)
            if not actions:
                matches.append(
                    RuleMatch(
                        checked.source_path(alarm_id),
                        f"{alarm_id} notifies no one under {prod.name} (no AlarmActions).",
                    )
                )
        addresses = [
            support.evaluate(subscription.get("Properties", {}).get("Endpoint"), template, prod)
            for _, subscription in checked.resources("AWS::SNS::Subscription")
            if support.exists(subscription, template, prod) is True
            and subscription.get("Properties", {}).get("Protocol") == "email"
        ]
        if not any(a for a in addresses if a is not support.UNKNOWN):
            matches.append(
                RuleMatch(
                    ["Resources"],
                    f"No email subscription to the alarms under {prod.name}: set AlarmEmail in "
                    "[prod.deploy.parameters] parameter_overrides.",
                )
            )
        return matches
