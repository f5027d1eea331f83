"""E9007: the prod config lets no local or plain-HTTP origin call the API."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cfnlint.rules import CloudFormationLintRule, RuleMatch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _policy_support as support  # noqa: E402

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


class ProdCorsOrigins(CloudFormationLintRule):
    id = "E9007"
    shortdesc = "No localhost, plain-HTTP or wildcard CORS origin in prod"
    description = (
        "Under samconfig.toml's prod overrides, every HTTP API's CORS origins are https:// "
        "origins of a named host: no localhost, loopback address, http:// or '*'"
    )
    source_url = "https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-cors.html"
    tags = ["policy", "cors", "prod"]

    def match(self, cfn: Any) -> list[RuleMatch]:
        checked = support.checked(cfn)
        if isinstance(checked, str):
            return [RuleMatch([], f"Cannot check the prod CORS origins: {checked}")]
        prod = checked.prod()
        if prod is None:
            return [RuleMatch([], f"Cannot check the prod CORS origins: {checked.prod_error}")]
        matches = []
        for api_id, resource in checked.source.get("Resources", {}).items():
            origins = _origins(resource, checked.source, prod)
            if origins is support.UNKNOWN:
                matches.append(
                    RuleMatch(
                        checked.source_path(api_id, "Properties"),
                        f"{api_id}'s CORS origins cannot be resolved under {prod.name}.",
                    )
                )
                continue
            for origin in origins:
                problem = origin_problem(origin)
                if problem:
                    matches.append(
                        RuleMatch(
                            checked.source_path(api_id, "Properties"),
                            f"{api_id} allows the CORS origin {origin!r} under {prod.name}: {problem}.",
                        )
                    )
        return matches


def _origins(resource: Any, template: dict[str, Any], parameters: support.ParameterSet) -> Any:
    """The CORS origins an API of the template as written allows under
    `parameters` (a list; empty for no CORS or no API), or UNKNOWN."""
    if not isinstance(resource, dict):
        return []
    kind, properties = resource.get("Type"), resource.get("Properties", {})
    if kind in ("AWS::Serverless::HttpApi", "AWS::ApiGatewayV2::Api"):
        # SAM also takes the whole configuration in an Fn::If (no origins, no CORS).
        cors = support.evaluate(properties.get("CorsConfiguration"), template, parameters)
        origins = ["*"] if cors is True else cors.get("AllowOrigins", []) if isinstance(cors, dict) else cors
    elif kind == "AWS::Serverless::Api":
        cors = support.evaluate(properties.get("Cors"), template, parameters)
        origins = cors.get("AllowOrigin") if isinstance(cors, dict) else cors
        # REST API origins are quoted header values: "'https://example.com'".
        origins = origins.strip("'") if isinstance(origins, str) else origins
    else:
        return []
    if origins is None:
        return []
    if origins is support.UNKNOWN or (isinstance(origins, list) and support.UNKNOWN in origins):
        return support.UNKNOWN
    return origins if isinstance(origins, list) else [origins]


def origin_problem(origin: Any) -> str | None:
    """Why an origin must not be allowed in prod, or None."""
    if not isinstance(origin, str):
        return "it cannot be resolved before deploy"
    if origin == "":
        return None  # An empty list: no CORS at all.
    if "*" in origin:
        return "a wildcard lets any site's scripts call the API"
    parts = urlsplit(origin)
    if parts.scheme != "https":
        return "only https:// origins (a page served over plain HTTP can be rewritten in transit)"
    host = (parts.hostname or "").lower()
    if host in LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost"):
        return "a local origin belongs in the dev config, not prod"
    return None
