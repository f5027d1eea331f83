"""E9001: every function has its alarms, on in the default and the prod configuration."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402

# A failing, a throttled and a slow function each page someone.
REQUIRED_METRICS = ("Errors", "Throttles", "Duration")


class FunctionAlarms(CloudFormationLintRule):
    id = "E9001"
    shortdesc = "Every function has alarms on Errors, Throttles and Duration"
    description = (
        "Every AWS::Lambda::Function (after SAM's transform) has an AWS::CloudWatch::Alarm on "
        "each of the AWS/Lambda metrics Errors, Throttles and Duration with its FunctionName, "
        "created under the parameter defaults and under samconfig.toml's prod overrides"
    )
    source_url = "https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics.html"
    tags = ["policy", "alarms"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check alarms: {checked}")]
        template = checked.template
        alarms = list(checked.resources("AWS::CloudWatch::Alarm"))
        matches = []
        for function_id, function in checked.resources("AWS::Lambda::Function"):
            names = _names_of(function_id, function)
            for parameters in checked.parameter_sets:
                if support.exists(function, template, parameters) is False:
                    continue
                for metric in REQUIRED_METRICS:
                    on_metric = [
                        (alarm_id, alarm) for alarm_id, alarm in alarms if _watches(alarm, metric, names)
                    ]
                    active = [a for a in on_metric if support.exists(a[1], template, parameters) is True]
                    if active:
                        continue
                    if on_metric:
                        off = ", ".join(f"{i} (condition {a.get('Condition')})" for i, a in on_metric)
                        message = (
                            f"{function_id}'s alarm on {metric} is not created under {parameters.name}: "
                            f"{off} does not hold. Alarms must be on by default and in prod."
                        )
                    else:
                        message = (
                            f"{function_id} has no alarm on AWS/Lambda {metric} under {parameters.name}: "
                            f"add an AWS::CloudWatch::Alarm with the dimension FunctionName: !Ref {function_id}."
                        )
                    matches.append(RuleMatch(checked.source_path(function_id), message))
        return matches


def _names_of(function_id: str, function: dict[str, Any]) -> list[Any]:
    """The values a FunctionName dimension may name the function by."""
    names: list[Any] = [{"Ref": function_id}]
    explicit = function.get("Properties", {}).get("FunctionName")
    if explicit is not None:
        names.append(explicit)
    return names


def _watches(alarm: dict[str, Any], metric: str, names: list[Any]) -> bool:
    properties = alarm.get("Properties", {})
    # A plain alarm, or one metric of a metric-math alarm.
    candidates = [properties] + [
        m.get("MetricStat", {}).get("Metric", {})
        for m in properties.get("Metrics", []) or []
        if isinstance(m, dict)
    ]
    return any(
        c.get("Namespace") == "AWS/Lambda"
        and c.get("MetricName") == metric
        and any(
            isinstance(d, dict) and d.get("Name") == "FunctionName" and d.get("Value") in names
            for d in c.get("Dimensions", []) or []
        )
        for c in candidates
        if isinstance(c, dict)
    )
