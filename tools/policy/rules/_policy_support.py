"""What the policy rules share: the template after SAM's transform, the parameter
sets to judge it under (the template's defaults and samconfig.toml's prod), and a
small evaluator of conditions and property values under one set.

cfn-lint loads every `[A-Za-z1-9]*.py` beside this file as rules; the leading
underscore keeps this one a plain module, which the rule files import.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

# cfn-lint 1.x checks SAM templates without transforming them; the rules judge
# what CloudFormation deploys (roles, policies and functions as SAM writes them),
# so they run the transform themselves, with the translator SAM CLI pins.
import boto3
from cfnlint.decode import decode
from samcli.cli.types import CfnParameterOverridesType
from samcli.lib.config.samconfig import SamConfig
from samtranslator.metrics.metrics import DummyMetricsPublisher, Metrics
from samtranslator.model.exceptions import InvalidDocumentException
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator

SAMCONFIG = "samconfig.toml"
PROD_ENV = "prod"


class Unknown:
    """A value the rules cannot know before deploy (a resource's id, the region)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = Unknown()
_NO_VALUE = object()


class PolicyConfigError(Exception):
    """samconfig.toml is missing, unreadable, or has no prod deploy parameters."""


@dataclass
class ParameterSet:
    """The values of the template's parameters in one configuration."""

    name: str
    values: dict[str, str]
    is_prod: bool = False
    _conditions: dict[str, Any] = field(default_factory=dict)


@dataclass
class Checked:
    """The transformed template and the parameter sets to judge it under."""

    template: dict[str, Any]
    source: dict[str, Any]
    parameter_sets: list[ParameterSet]
    # Why the prod set is missing, when it is.
    prod_error: str | None = None

    def resources(self, *types: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for logical_id, resource in self.template.get("Resources", {}).items():
            if isinstance(resource, dict) and resource.get("Type") in types:
                yield logical_id, resource

    def source_path(self, logical_id: str, *rest: str) -> list[str]:
        """The path of a resource in the template as written: SAM's generated
        resources (a function's role) point at the resource they come from."""
        resources = self.source.get("Resources", {})
        if logical_id in resources:
            return ["Resources", logical_id, *rest]
        owners = [r for r in resources if logical_id.startswith(r)]
        if owners:
            return ["Resources", max(owners, key=len)]
        return ["Resources"]

    def prod(self) -> ParameterSet | None:
        return next((s for s in self.parameter_sets if s.is_prod), None)


_CACHE = "_user_service_policy_checked"


def checked(cfn: Any) -> Checked | str:
    """The template of `cfn` transformed and its parameter sets, or why not.
    Kept on `cfn`, so every rule of one run shares one transform."""
    if not hasattr(cfn, _CACHE):
        setattr(cfn, _CACHE, _check(cfn))
    return getattr(cfn, _CACHE)


def _check(cfn: Any) -> Checked | str:
    source = _source_template(cfn)
    defaults = ParameterSet("the parameter defaults", _defaults(source))
    sets = [defaults]
    prod_error = None
    try:
        overrides = prod_overrides(cfn.filename)
        sets.append(
            ParameterSet(
                f"the prod config ({SAMCONFIG} [{PROD_ENV}.deploy.parameters])",
                {**defaults.values, **overrides},
                is_prod=True,
            )
        )
    except PolicyConfigError as e:
        prod_error = str(e)
    region = (cfn.regions or ["us-east-1"])[0]
    try:
        template = _transform(source, defaults.values, region)
    except InvalidDocumentException as e:
        return "SAM's transform failed: " + "; ".join(str(c) for c in e.causes)
    return Checked(template, source, sets, prod_error)


def _source_template(cfn: Any) -> dict[str, Any]:
    # cfn.template has SAM's Globals merged in by cfn-lint; SAM would merge them
    # again. Read the file as written when there is one.
    if cfn.filename and Path(cfn.filename).is_file():
        template, matches = decode(cfn.filename)
        if not matches and isinstance(template, dict):
            return _plain(template)
    template = _plain(cfn.template)
    template.pop("Globals", None)
    return template


def _plain(value: Any) -> Any:
    # cfn-lint's nodes carry line numbers; the translator wants plain data.
    return json.loads(json.dumps(value, default=str))


def _defaults(template: dict[str, Any]) -> dict[str, str]:
    return {
        name: _as_parameter_value(spec["Default"])
        for name, spec in template.get("Parameters", {}).items()
        if isinstance(spec, dict) and "Default" in spec
    }


def _as_parameter_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def prod_overrides(template_file: str | None) -> dict[str, str]:
    """`parameter_overrides` of samconfig.toml's prod deploy section, beside the
    template, read and parsed by SAM CLI's own code (as `sam deploy
    --config-env prod` reads them)."""
    if not template_file:
        raise PolicyConfigError(f"the template has no file, so no {SAMCONFIG} beside it")
    directory = Path(template_file).resolve().parent
    if not (directory / SAMCONFIG).is_file():
        raise PolicyConfigError(f"no {SAMCONFIG} beside the template ({directory})")
    try:
        config = SamConfig(str(directory), SAMCONFIG)
        section = config.get_all(["deploy"], "parameters", env=PROD_ENV)
    except Exception as e:  # SAM CLI raises several kinds for a broken file.
        raise PolicyConfigError(f"{SAMCONFIG} cannot be read: {e}") from e
    if "parameter_overrides" not in section:
        raise PolicyConfigError(f"{SAMCONFIG} has no parameter_overrides in [{PROD_ENV}.deploy.parameters]")
    try:
        return CfnParameterOverridesType().convert(section["parameter_overrides"], None, None)
    except Exception as e:  # click's BadParameter
        raise PolicyConfigError(f"{SAMCONFIG} [{PROD_ENV}.deploy.parameters] parameter_overrides: {e}") from e


def _transform(source: dict[str, Any], parameters: dict[str, str], region: str) -> dict[str, Any]:
    template = copy.deepcopy(source)
    # As `sam validate` does: the translator wants code in S3, not a local path.
    for resource in template.get("Resources", {}).values():
        if not isinstance(resource, dict):
            continue
        properties = resource.get("Properties") or {}
        for kind, key in (
            ("AWS::Serverless::Function", "CodeUri"),
            ("AWS::Serverless::LayerVersion", "ContentUri"),
        ):
            if resource.get("Type") == kind and not str(properties.get(key, "s3://")).startswith("s3://"):
                properties[key] = "s3://bucket/value"
    functions = template.get("Globals", {}).get("Function", {})
    if "CodeUri" in functions:
        functions["CodeUri"] = "s3://bucket/value"
    # The translator records usage metrics; these go nowhere (and say nothing).
    metrics = Metrics(metrics_publisher=DummyMetricsPublisher())
    translator = Translator(
        managed_policy_map={},
        sam_parser=Parser(),
        boto_session=boto3.session.Session(region_name=region),
        metrics=metrics,
    )
    pseudo = {"AWS::Region": region, "AWS::AccountId": "123456789012", "AWS::Partition": "aws"}
    try:
        return translator.translate(sam_template=template, parameter_values={**parameters, **pseudo})
    finally:
        metrics.publish()


# ---------------------------------------------------------------------------
# Evaluation under one parameter set
# ---------------------------------------------------------------------------


def _list_parameter(template: dict[str, Any], name: str) -> bool:
    kind = str(template.get("Parameters", {}).get(name, {}).get("Type", ""))
    return kind == "CommaDelimitedList" or kind.startswith("List<")


def evaluate(value: Any, template: dict[str, Any], parameters: ParameterSet) -> Any:
    """`value` with Ref, Fn::If, Fn::Join and the condition functions resolved
    under `parameters`; what cannot be known before deploy is UNKNOWN."""
    result = _evaluate(value, template, parameters)
    return None if result is _NO_VALUE else result


def _evaluate(value: Any, template: dict[str, Any], parameters: ParameterSet) -> Any:
    if isinstance(value, list):
        items = [_evaluate(v, template, parameters) for v in value]
        return [v for v in items if v is not _NO_VALUE]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (key, arg), = value.items()
        if key == "Ref":
            if arg == "AWS::NoValue":
                return _NO_VALUE
            if arg in parameters.values:
                raw = parameters.values[arg]
                return raw.split(",") if _list_parameter(template, arg) else raw
            return UNKNOWN
        if key == "Fn::If":
            holds = condition(arg[0], template, parameters)
            if holds is UNKNOWN:
                return UNKNOWN
            return _evaluate(arg[1] if holds else arg[2], template, parameters)
        if key == "Fn::Join":
            parts = _evaluate(arg[1], template, parameters)
            if not isinstance(parts, list) or any(not isinstance(p, (str, int)) for p in parts):
                return UNKNOWN
            return str(arg[0]).join(str(p) for p in parts)
        if key in ("Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or", "Condition"):
            return _condition_value(value, template, parameters)
        if key.startswith("Fn::"):
            return UNKNOWN
    items = {k: _evaluate(v, template, parameters) for k, v in value.items()}
    return {k: v for k, v in items.items() if v is not _NO_VALUE}


def condition(name: str, template: dict[str, Any], parameters: ParameterSet) -> Any:
    """Whether the named condition holds under `parameters` (True, False or UNKNOWN)."""
    if name not in parameters._conditions:
        definition = template.get("Conditions", {}).get(name)
        parameters._conditions[name] = (
            UNKNOWN if definition is None else _condition_value(definition, template, parameters)
        )
    return parameters._conditions[name]


def _condition_value(value: Any, template: dict[str, Any], parameters: ParameterSet) -> Any:
    (key, arg), = value.items()
    if key == "Condition":
        return condition(arg, template, parameters)
    if key == "Fn::Equals":
        left, right = (_scalar(_evaluate(v, template, parameters)) for v in arg)
        return UNKNOWN if UNKNOWN in (left, right) else left == right
    parts = [_condition_value(v, template, parameters) for v in (arg if isinstance(arg, list) else [arg])]
    if key == "Fn::Not":
        return UNKNOWN if parts[0] is UNKNOWN else not parts[0]
    if key == "Fn::And":
        if False in parts:
            return False
        return UNKNOWN if UNKNOWN in parts else True
    if key == "Fn::Or":
        if True in parts:
            return True
        return UNKNOWN if UNKNOWN in parts else False
    return UNKNOWN


def _scalar(value: Any) -> Any:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if value is UNKNOWN or isinstance(value, dict):
        return UNKNOWN
    return _as_parameter_value(value)


def exists(resource: dict[str, Any], template: dict[str, Any], parameters: ParameterSet) -> Any:
    """Whether a resource is created under `parameters` (its Condition)."""
    name = resource.get("Condition")
    return True if name is None else condition(name, template, parameters)


def truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


# ---------------------------------------------------------------------------
# IAM policy statements
# ---------------------------------------------------------------------------


def alternatives(value: Any) -> Iterator[Any]:
    """Every concrete value `value` may take: both branches of each Fn::If,
    list items one by one, nothing for AWS::NoValue."""
    if isinstance(value, list):
        for item in value:
            yield from alternatives(item)
    elif isinstance(value, dict) and set(value) == {"Fn::If"}:
        for branch in value["Fn::If"][1:]:
            yield from alternatives(branch)
    elif value == {"Ref": "AWS::NoValue"}:
        return
    else:
        yield value


def policy_statements(value: Any, path: list[Any]) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """Every policy statement inside `value` (a resource's properties), with its
    path: any object with a `Statement` of objects that have an `Effect`. Role
    inline policies, AWS::IAM::Policy and ManagedPolicy documents, trust and
    resource policies alike."""
    if isinstance(value, dict):
        if "Statement" in value:
            statements = list(alternatives(value["Statement"]))
            if statements and all(isinstance(s, dict) and "Effect" in s for s in statements):
                for index, statement in enumerate(statements):
                    yield statement, [*path, "Statement", index]
                return
        for key, item in value.items():
            yield from policy_statements(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from policy_statements(item, [*path, index])


def describe_statement(statement: dict[str, Any], path: list[Any]) -> str:
    sid = statement.get("Sid")
    where = ".".join(str(p) for p in path)
    return f"statement {sid!r} ({where})" if isinstance(sid, str) else f"statement {where}"
