"""The policy rules against small templates: the fixture passes every rule, and
each test breaks one thing and expects exactly its rule to fire.

Run: python -m unittest discover -s tools/policy (scripts/sam-check does).
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from cfnlint.config import ConfigMixIn
from cfnlint.rules import Rules
from cfnlint.runner.template.runner import run_template_by_file_path

HERE = Path(__file__).resolve().parent
TEMPLATE = (HERE / "fixtures" / "template.yaml").read_text()
SAMCONFIG = (HERE / "fixtures" / "samconfig.toml").read_text()
# The policy rules alone, loaded as `cfn-lint --append-rules tools/policy/rules`
# loads them (cfn-lint's own rules run in `sam validate --lint`).
RULES = Rules.create_from_directory(str(HERE / "rules"))
CONFIG = ConfigMixIn([], regions=["us-east-1"])


def edit(text: str, old: str, new: str) -> str:
    """`text` with the one occurrence of `old` replaced (a fixture edit must hit)."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def lint(template: str = TEMPLATE, samconfig: str | None = SAMCONFIG) -> list[tuple[str, str]]:
    """(rule id, message) of every policy finding, with samconfig.toml beside the
    template (none when `samconfig` is None)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "template.yaml"
        path.write_text(template)
        if samconfig is not None:
            (path.parent / "samconfig.toml").write_text(samconfig)
        matches = list(run_template_by_file_path(str(path), CONFIG, RULES, False))
    return [(m.rule.id, m.message) for m in matches]


def prod(*overrides: str) -> str:
    """The fixture's samconfig with prod's parameter_overrides replaced."""
    lines = "".join(f'    "{o}",\n' for o in overrides)
    head = SAMCONFIG[: SAMCONFIG.index("parameter_overrides")]
    return f"{head}parameter_overrides = [\n{lines}]\n"


PROD = ("EnableAlarms=true", "AlarmEmail=alarms@example.com", "DeletionProtection=true")


class Rules(unittest.TestCase):
    def assert_only(self, findings: list[tuple[str, str]], rule: str, *phrases: str, count: int | None = None):
        ids = sorted({r for r, _ in findings})
        self.assertEqual(ids, [rule], findings)
        if count is not None:
            self.assertEqual(len(findings), count, findings)
        for phrase in phrases:
            self.assertTrue(any(phrase in m for _, m in findings), f"no finding says {phrase!r}: {findings}")

    def test_every_policy_rule_is_loaded(self):
        self.assertEqual(sorted(RULES.data), [f"E900{n}" for n in range(1, 10)])

    def test_the_fixture_passes_every_rule(self):
        self.assertEqual(lint(), [])

    # E9001
    def test_a_function_without_a_duration_alarm(self):
        template = edit(TEMPLATE, "      MetricName: Duration\n", "      MetricName: Invocations\n")
        self.assert_only(lint(template), "E9001", "GetItemFunction has no alarm on AWS/Lambda Duration", count=2)

    def test_an_alarm_on_another_function_does_not_count(self):
        template = edit(
            TEMPLATE,
            "      MetricName: Errors\n      Dimensions:\n        - Name: FunctionName\n          Value: !Ref GetItemFunction\n",
            "      MetricName: Errors\n      Dimensions:\n        - Name: FunctionName\n          Value: another-function\n",
        )
        self.assert_only(lint(template), "E9001", "no alarm on AWS/Lambda Errors")

    def test_alarms_off_by_default(self):
        template = edit(TEMPLATE, 'Default: "true"\n    AllowedValues: ["true", "false"]\n  AlarmEmail', 'Default: "false"\n    AllowedValues: ["true", "false"]\n  AlarmEmail')
        findings = lint(template)
        # Prod turns them on: only the defaults fail, once per metric.
        self.assert_only(findings, "E9001", "under the parameter defaults", "condition AlarmsEnabled", count=3)

    # E9002
    def test_a_wildcard_action(self):
        template = edit(TEMPLATE, "                - dynamodb:GetItem\n", "                - dynamodb:Get*\n")
        self.assert_only(lint(template), "E9002", "'TableAccess'", "'dynamodb:Get*'", count=1)

    def test_a_wildcard_in_either_branch_of_an_if_or_in_not_action(self):
        template = edit(
            TEMPLATE,
            "              Action:\n                - dynamodb:GetItem\n",
            "              Action:\n                - !If [AlarmsEnabled, dynamodb:GetItem, \"*\"]\n"
            "              NotAction: s3:*\n",
        )
        findings = lint(template)
        self.assertIn("E9002", {r for r, _ in findings})
        messages = [m for r, m in findings if r == "E9002"]
        self.assertTrue(any("Action '*'" in m for m in messages), messages)
        self.assertTrue(any("NotAction 's3:*'" in m for m in messages), messages)

    # E9003
    def test_a_write_on_every_resource(self):
        template = edit(
            TEMPLATE,
            "                - dynamodb:GetItem\n              Resource: !GetAtt Table.Arn\n",
            "                - dynamodb:GetItem\n                - dynamodb:PutItem\n              Resource: \"*\"\n",
        )
        self.assert_only(lint(template), "E9003", "dynamodb:PutItem on every resource", count=1)

    def test_reads_and_resourceless_writes_may_use_every_resource(self):
        template = edit(
            TEMPLATE,
            "                - dynamodb:GetItem\n              Resource: !GetAtt Table.Arn\n",
            "                - dynamodb:GetItem\n                - dynamodb:Query\n"
            "                - xray:PutTraceSegments\n              Resource: \"*\"\n",
        )
        self.assertEqual(lint(template), [])

    # E9004
    def test_a_table_without_point_in_time_recovery(self):
        template = edit(TEMPLATE, "PointInTimeRecoveryEnabled: true", "PointInTimeRecoveryEnabled: false")
        self.assert_only(lint(template), "E9004", "Table has no point-in-time recovery", count=2)

    # E9005
    def test_deletion_protection_off_by_default(self):
        template = edit(
            TEMPLATE,
            'DeletionProtection:\n    Type: String\n    Default: "true"',
            'DeletionProtection:\n    Type: String\n    Default: "false"',
        )
        # The table and the pool, under the defaults; prod turns it on.
        self.assert_only(lint(template), "E9005", "under the parameter defaults", "UserPool", "Table", count=2)

    def test_deletion_protection_off_in_prod(self):
        samconfig = prod("EnableAlarms=true", "AlarmEmail=alarms@example.com", "DeletionProtection=false")
        self.assert_only(lint(samconfig=samconfig), "E9005", "under the prod config", count=2)

    def test_a_pool_without_deletion_protection(self):
        template = edit(TEMPLATE, "!If [DeletionProtectionOn, ACTIVE, INACTIVE]", "INACTIVE")
        self.assert_only(lint(template), "E9005", "UserPool has no deletion protection", count=2)

    # E9006
    def test_mfa_off(self):
        template = edit(TEMPLATE, "MfaConfiguration: OPTIONAL", 'MfaConfiguration: "OFF"')
        self.assert_only(lint(template), "E9006", "MFA 'OFF'", count=2)

    def test_mfa_left_at_cognitos_default(self):
        template = edit(TEMPLATE, "      MfaConfiguration: OPTIONAL\n      EnabledMfas:\n        - SOFTWARE_TOKEN_MFA\n", "")
        self.assert_only(lint(template), "E9006", "MFA 'OFF'", count=2)

    # E9007
    def test_localhost_and_plain_http_origins_in_prod(self):
        for origin in ("http://localhost:3000", "https://localhost:3000", "https://127.0.0.1", "http://app.example.com", "*"):
            with self.subTest(origin=origin):
                findings = lint(samconfig=prod(*PROD, f"CorsAllowedOrigins=https://app.example.com,{origin}"))
                self.assert_only(findings, "E9007", repr(origin), count=1)

    def test_no_origin_in_prod_means_no_cors(self):
        self.assertEqual(lint(samconfig=prod(*PROD)), [])

    def test_local_origins_are_fine_outside_prod(self):
        template = edit(TEMPLATE, 'CommaDelimitedList\n    Default: ""', "CommaDelimitedList\n    Default: http://localhost:3000")
        self.assertEqual(lint(template), [])

    # E9008
    def test_alarms_off_in_prod(self):
        findings = lint(samconfig=prod("EnableAlarms=false", "AlarmEmail=alarms@example.com", "DeletionProtection=true"))
        self.assertEqual({r for r, _ in findings}, {"E9001", "E9008"}, findings)
        self.assertTrue(any(r == "E9008" and "EnableAlarms is 'false'" in m for r, m in findings), findings)

    def test_no_alarm_address_in_prod(self):
        findings = lint(samconfig=prod("EnableAlarms=true", "DeletionProtection=true"))
        self.assert_only(findings, "E9008", "No email subscription", count=1)

    def test_an_alarm_that_notifies_no_one_in_prod(self):
        template = edit(
            TEMPLATE,
            "      ExtendedStatistic: p99\n      Period: 300\n      EvaluationPeriods: 3\n      Threshold: 2500\n"
            "      ComparisonOperator: GreaterThanThreshold\n      AlarmActions:\n        - !Ref AlarmTopic\n",
            "      ExtendedStatistic: p99\n      Period: 300\n      EvaluationPeriods: 3\n      Threshold: 2500\n"
            "      ComparisonOperator: GreaterThanThreshold\n",
        )
        self.assert_only(lint(template), "E9008", "GetItemDurationAlarm notifies no one", count=1)

    # E9009
    def test_a_client_that_sends_the_password(self):
        template = edit(
            TEMPLATE,
            "        - ALLOW_USER_SRP_AUTH\n",
            "        - ALLOW_USER_SRP_AUTH\n        - ALLOW_USER_PASSWORD_AUTH\n",
        )
        self.assert_only(lint(template), "E9009", "UserPoolClient allows ALLOW_USER_PASSWORD_AUTH", count=2)

    def test_without_a_prod_config_the_prod_checks_fail(self):
        findings = lint(samconfig=None)
        self.assertEqual(sorted({r for r, _ in findings}), ["E9007", "E9008"], findings)
        self.assertTrue(all("no samconfig.toml beside the template" in m for _, m in findings), findings)
        findings = lint(samconfig='version = 0.1\n[default.deploy.parameters]\nstack_name = "x"\n')
        self.assertTrue(all("no parameter_overrides in [prod.deploy.parameters]" in m for _, m in findings), findings)


if __name__ == "__main__":
    unittest.main()
