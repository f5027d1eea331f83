"""E9009: no app client signs in by sending the password."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402

# The flows that send the password itself to Cognito (SRP proves it without sending it).
PASSWORD_FLOWS = ("ALLOW_USER_PASSWORD_AUTH", "USER_PASSWORD_AUTH")


class SrpOnly(CloudFormationLintRule):
    id = "E9009"
    shortdesc = "App clients sign in with SRP, not USER_PASSWORD_AUTH"
    description = (
        "No AWS::Cognito::UserPoolClient allows USER_PASSWORD_AUTH in ExplicitAuthFlows, "
        "under the parameter defaults and under samconfig.toml's prod overrides"
    )
    source_url = "https://docs.aws.amazon.com/cognito/latest/developerguide/amazon-cognito-user-pools-authentication-flow-methods.html"
    tags = ["policy", "cognito"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check the app clients: {checked}")]
        matches = []
        for client_id, client in checked.resources("AWS::Cognito::UserPoolClient"):
            for parameters in checked.parameter_sets:
                if support.exists(client, checked.template, parameters) is False:
                    continue
                flows = support.evaluate(
                    client.get("Properties", {}).get("ExplicitAuthFlows", []), checked.template, parameters
                )
                found = [f for f in flows if f in PASSWORD_FLOWS] if isinstance(flows, list) else []
                if found:
                    matches.append(
                        RuleMatch(
                            checked.source_path(client_id, "Properties"),
                            f"{client_id} allows {', '.join(found)} under {parameters.name}: the password "
                            "would leave the client; sign in with ALLOW_USER_SRP_AUTH.",
                        )
                    )
        return matches
