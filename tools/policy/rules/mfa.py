"""E9006: MFA is not off in any user pool."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402


class MfaNotOff(CloudFormationLintRule):
    id = "E9006"
    shortdesc = "MFA is not off"
    description = (
        "Every AWS::Cognito::UserPool has MfaConfiguration OPTIONAL or ON with at least one "
        "factor in EnabledMfas, under the parameter defaults and under samconfig.toml's prod overrides"
    )
    source_url = "https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-settings-mfa.html"
    tags = ["policy", "cognito"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check MFA: {checked}")]
        matches = []
        for pool_id, pool in checked.resources("AWS::Cognito::UserPool"):
            properties = pool.get("Properties", {})
            for parameters in checked.parameter_sets:
                if support.exists(pool, checked.template, parameters) is False:
                    continue
                # Cognito's default, when the property is missing, is OFF.
                mode = support.evaluate(properties.get("MfaConfiguration", "OFF"), checked.template, parameters)
                factors = support.evaluate(properties.get("EnabledMfas", []), checked.template, parameters)
                if mode not in ("OPTIONAL", "ON"):
                    message = f"{pool_id} has MFA {mode!r} under {parameters.name}; set MfaConfiguration to OPTIONAL or ON."
                elif not factors:
                    message = f"{pool_id} has MFA {mode} but no factor in EnabledMfas under {parameters.name}; add SOFTWARE_TOKEN_MFA."
                else:
                    continue
                matches.append(RuleMatch(checked.source_path(pool_id, "Properties"), message))
        return matches
