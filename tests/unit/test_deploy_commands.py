"""The deploy commands read as they run (docs/operations.md#deploy, docs/issues.md):
``make -n`` prints every command of ``make deploy``, ``make deploy-cloudformation`` and
``make teardown``; each ``aws cloudformation deploy`` among them whose template is over
CloudFormation's inline limit (51,200 bytes: ``aws cloudformation deploy`` refuses it
without ``--s3-bucket``) must upload it to the artifact bucket."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from infra import rate_limits, template

REPO = Path(__file__).resolve().parents[2]
INLINE_LIMIT_BYTES = 51_200
"""``aws cloudformation deploy``'s limit for a template sent in the request body."""
GENERATED = re.compile(r"-m infra\.template (\w+) > (\S+)")
"""A recipe line writing ``python -m infra.template <kind>`` to a file."""
GLOBAL_OPTIONS = {"--region", "--profile", "--output", "--endpoint-url"}
"""AWS CLI options with a value that may come before the command."""
SEPARATORS = {";", "&&", "||", "|", "do", "then", "else", "fi", "done"}


def dry_run(*variables: str) -> list[str]:
    """The command lines ``make -n`` prints for the deploy, contract and teardown targets."""
    done = subprocess.run(
        [
            "make",
            "-n",
            "-o",
            ".venv/.installed-stamp",
            "deploy",
            "deploy-cloudformation",
            "contract",
            "contract-cloudformation",
            "teardown",
            "teardown-cloudformation",
            "STAGE=x",
            "STACK=pinework-x",
            "ARTIFACT_BUCKET=b",
            "AWS_ACCOUNT=111122223333",
            "AWS_REGION=us-east-1",
            *variables,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def cloudformation_deploys(lines: list[str]) -> list[list[str]]:
    """The arguments of every ``aws cloudformation deploy`` in the lines (also inside a
    shell loop or after ``&&``)."""
    found = []
    for line in lines:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        words = list(lexer)
        for start in range(len(words) - 1):
            if words[start : start + 2] != ["aws", "cloudformation"]:
                continue
            command = start + 2
            while command < len(words) - 1 and words[command] in GLOBAL_OPTIONS:
                command += 2  # e.g. aws cloudformation --region us-east-1 deploy
            if command < len(words) and words[command] == "deploy":
                end = command + 1
                while end < len(words) and words[end] not in SEPARATORS:
                    end += 1
                found.append(words[start + 2 : command] + words[command + 1 : end])
    return found


def option(arguments: list[str], name: str) -> str | None:
    """The value of ``--name value`` in the arguments, or None."""
    for number, word in enumerate(arguments[:-1]):
        if word == name:
            return arguments[number + 1]
    return None


def template_bytes(path: str, lines: list[str]) -> int | None:
    """The size of the template the recipe writes at ``path``: generated in-process when
    a line writes it with ``python -m infra.template <kind>``, else None (unknown)."""
    for line in lines:
        for kind, target in GENERATED.findall(line):
            if target == path:
                printed = io.StringIO()
                try:
                    with contextlib.redirect_stdout(printed):
                        template.main([kind])
                except SystemExit:  # a kind this checkout cannot print yet: unknown
                    return None
                return len(printed.getvalue().encode())
    return None


@pytest.mark.parametrize("waf", ["on", "off"])
def test_every_template_over_the_inline_limit_is_deployed_through_the_bucket(waf: str) -> None:
    lines = dry_run(f"WAF_RATE_LIMITING={waf}")
    deploys = cloudformation_deploys(lines)
    stacks = {option(arguments, "--stack-name") for arguments in deploys}
    assert {"pinework-x-resources", "pinework-x-operations", "pinework-x"} <= stacks
    assert ("pinework-x-waf" in stacks) == (waf == "on")
    for arguments in deploys:
        path = option(arguments, "--template-file")
        assert path is not None, arguments
        size = template_bytes(path, lines)
        # chalice's packaged template (build/packaged.yaml) and anything not generated
        # here is taken as over the limit: the packaged one is ~500 KB.
        over = size is None or size > INLINE_LIMIT_BYTES
        if over:
            assert option(arguments, "--s3-bucket") == "b", (path, size, arguments)
            assert option(arguments, "--s3-prefix"), (path, arguments)


def test_the_packaged_template_is_over_the_limit_so_the_rule_matters() -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        template.main(["package"])
    # The fragment alone is over the limit; chalice's swagger only adds to it.
    assert len(printed.getvalue().encode()) > INLINE_LIMIT_BYTES


def test_the_finder_sees_deploys_in_loops_and_chains() -> None:
    lines = [
        "for level in 1 2; do aws cloudformation deploy --stack-name s --template-file t.json "
        "--parameter-overrides TableIndexLevel=$level; done",
        "aws s3 mb s3://b && aws cloudformation --region r deploy --template-file u.json "
        "--s3-bucket b",
        "aws cloudformation --region r delete-stack --stack-name s",
    ]
    found = cloudformation_deploys(lines)
    assert [option(arguments, "--template-file") for arguments in found] == ["t.json", "u.json"]
    assert option(found[0], "--s3-bucket") is None
    assert option(found[1], "--s3-bucket") == "b"


def documented_commands() -> list[str]:
    """The lines of docs/operations.md's fenced shell blocks that run ``aws cloudformation``,
    continuations joined."""
    text = (REPO / "docs" / "operations.md").read_text()
    lines: list[str] = []
    for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.DOTALL):
        joined = re.sub(r"\\\n\s*", " ", block)
        lines += [line.strip() for line in joined.splitlines() if "aws cloudformation" in line]
    return lines


def test_the_documented_by_hand_deploys_go_through_the_bucket_too() -> None:
    deploys = cloudformation_deploys(documented_commands())
    assert deploys, "docs/operations.md shows no aws cloudformation deploy any more"
    for arguments in deploys:
        # every template the docs deploy by hand is one of the stacks above: over the
        # inline limit, or the resources stack within bytes of it
        assert option(arguments, "--s3-bucket"), arguments
        path = option(arguments, "--template-file")
        assert path in {"build/resources-stack.json", "build/packaged.yaml"}, arguments


def overrides(lines: list[str], stack: str) -> set[str]:
    """The ``Key`` of every ``Key=Value`` the last deploy of ``stack`` passes."""
    deploy = [arguments for arguments in cloudformation_deploys(lines) if stack in arguments][-1]
    given = deploy[deploy.index("--parameter-overrides") + 1 :]
    return {word.split("=", 1)[0] for word in given if "=" in word}


def test_a_kept_setting_is_passed_only_when_given() -> None:
    kept = {
        "AlarmEmail",
        "KmsKeyArn",
        "BackupPlan",
        "LogRetentionDays",
        "ExistingTableName",
        "Reviewer",
        "BedrockModelId",
    }
    for stack in ("pinework-x-resources", "pinework-x"):
        assert not kept & overrides(dry_run(), stack)  # the stack keeps what it has
        given = dry_run(
            "ALARM_EMAIL=", "BACKUP_PLAN=on", "EXISTING_TABLE_NAME=t-restored", "REVIEWER=bedrock"
        )
        assert {"AlarmEmail", "BackupPlan", "ExistingTableName", "Reviewer"} <= overrides(
            given, stack
        )
    cleared = [line for line in dry_run("ALARM_EMAIL=") if "pinework-x-operations" in line]
    assert any(re.search(r"AlarmEmail=(\s|$)", line) for line in cleared)  # empty clears it
    assert "ReviewQueueName" not in overrides(dry_run(), "pinework-x-resources")


SETTINGS = {
    "REVIEWER": ("Reviewer", "bedrock"),
    "BEDROCK_MODEL_ID": ("BedrockModelId", "m"),
    "ALARM_EMAIL": ("AlarmEmail", "a@example.com"),
    "KMS_KEY_ARN": ("KmsKeyArn", ""),
    "BACKUP_PLAN": ("BackupPlan", "on"),
    "LOG_RETENTION_DAYS": ("LogRetentionDays", "90"),
    "EXISTING_TABLE_NAME": ("ExistingTableName", "t-restored"),
    "API_RATE_LIMIT": ("ApiThrottleRateLimit", "20"),
    "API_BURST_LIMIT": ("ApiThrottleBurstLimit", "40"),
    "API_ACCESS_LOGS": ("ApiAccessLogs", "on"),
    "API_RESERVED_CONCURRENCY": ("ApiReservedConcurrency", "50"),
    "REVIEW_WORKER_MAX_CONCURRENCY": ("ReviewWorkerMaxConcurrency", "7"),
    "WAF_RATE_LIMITING": ("WafRateLimiting", "on"),
    "WAF_IP_LIMIT": ("WafIpLimit", "900"),
    "WAF_CREDENTIAL_LIMIT": ("WafCredentialLimit", "600"),
    "KV_ANONYMOUS_ACCESS": ("KvAnonymousAccess", "off"),
    "KV_ANON_MAX_KEYS": ("KvAnonMaxKeys", "10"),
    "KV_ANON_MAX_BYTES": ("KvAnonMaxBytes", "1000"),
    "KV_ANON_MAX_VALUE_BYTES": ("KvAnonMaxValueBytes", "100"),
    "KV_BYOK_MAX_KEYS": ("KvByokMaxKeys", "10"),
    "KV_BYOK_MAX_BYTES": ("KvByokMaxBytes", "1000"),
    "KV_BYOK_NEW_SCOPES_PER_DAY": ("KvByokNewScopesPerDay", "0"),
    "KV_ACCOUNT_MAX_KEYS": ("KvAccountMaxKeys", "10"),
    "KV_ACCOUNT_MAX_BYTES": ("KvAccountMaxBytes", "1000"),
    "TABLE_MAX_READ_UNITS": ("TableMaxReadRequestUnits", "4000"),
    "TABLE_MAX_WRITE_UNITS": ("TableMaxWriteRequestUnits", "1000"),
    "REVIEW_QUEUE_NAME": ("ReviewQueueName", "q"),
}
"""Every make variable an operator sets -> (the stack parameter it sets, a value)."""
COMPUTED = {
    "TableIndexLevel",  # the upgrade's steps (infra/upgrade.py)
    "ChaliceStage",  # STAGE, passed on every deploy
    "ChaliceApp",  # .chalice/config.json's app_name
    "RestApiId",  # what chalice deployed (infra.deploy waf-parameters)
    "ApiStage",
}
"""Parameters the deploys compute, never an operator's setting."""


def template_parameters(kind: str) -> set[str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        template.main([kind])
    return set(json.loads(printed.getvalue()).get("Parameters", {}))


def stacks_of(lines: list[str]) -> dict[str, list[set[str]]]:
    """Stack -> the parameter keys of each of its deploys."""
    found: dict[str, list[set[str]]] = {}
    for arguments in cloudformation_deploys(lines):
        stack = option(arguments, "--stack-name") or ""
        given = arguments[arguments.index("--parameter-overrides") + 1 :]
        keys = {word.split("=", 1)[0] for word in given if "=" in word}
        found.setdefault(stack, []).append(keys)
    return found


def test_every_parameter_an_operator_sets_has_a_make_variable() -> None:
    settable = {parameter for parameter, _ in SETTINGS.values()}
    operations = {
        name
        for name in template_parameters("operations")
        if not name.endswith(("Name", "Arn", "Namespace")) or name in settable
    }
    for kind in ("package", "resources", "waf"):
        missing = template_parameters(kind) - settable - COMPUTED
        assert not missing, (kind, missing)
    assert operations - settable - COMPUTED == set()


@pytest.mark.parametrize("variable", sorted(SETTINGS))
def test_a_setting_keeps_its_deployed_value_unless_given(variable: str) -> None:
    parameter, value = SETTINGS[variable]
    plain = stacks_of(dry_run())
    for stack, deploys in plain.items():
        for keys in deploys:
            assert parameter not in keys, (stack, keys)  # not given: the stack keeps it
    given = stacks_of(dry_run(f"{variable}={value}"))
    passed = {stack for stack, deploys in given.items() if any(parameter in k for k in deploys)}
    assert passed, variable
    one_stack = parameter in template_parameters("package")
    assert ("pinework-x" in passed) == one_stack, (variable, passed)
    if parameter in template_parameters("resources"):
        assert "pinework-x-resources" in passed
        # every deploy of the resources stack carries it (index steps included), but
        # the queue's name, changed only with the release's own deploy
        carried = [parameter in keys for keys in given["pinework-x-resources"]]
        assert all(carried) or (parameter == "ReviewQueueName" and carried.count(True) == 1)


def test_the_chalice_path_reads_its_kept_settings_back_from_the_stack() -> None:
    lines = dry_run()
    text = "\n".join(lines)
    assert "infra.deploy throttle --stage x --stack build/resources-stack-x.json" in text
    assert "--rate" not in text and "--api-reserved-concurrency" not in text
    assert "output ReviewWorkerMaxConcurrency" in text
    # not given: the WAF stack is redeployed when it exists, never deleted
    waf = [line for line in lines if "pinework-x-waf" in line]
    assert waf and not any("delete-stack" in line for line in waf)
    assert all("describe-stacks --stack-name pinework-x-waf" in line for line in waf)
    off = [line for line in dry_run("WAF_RATE_LIMITING=off") if "pinework-x-waf" in line]
    assert any("delete-stack" in line for line in off)
    done = subprocess.run(
        ["make", "-n", "deploy", "WAF_RATE_LIMITING=yes", "AWS_ACCOUNT=1", "ARTIFACT_BUCKET=b"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "WAF_RATE_LIMITING is on or off" in done.stdout


def test_the_operations_stack_watches_the_web_acl_the_waf_stack_has() -> None:
    def web_acl(*variables: str) -> str:
        (line,) = [
            line
            for line in dry_run(*variables)
            if "deploy --stack-name pinework-x-operations " in line
        ]
        found = re.search(r"WebAclName=(\S*|\$\(.*\))$", line)
        assert found, line
        return found.group(1)

    # the WAF stack's web ACL is named after it (infra/rate_limits.py)
    name = rate_limits.WEB_ACL_NAME.replace("${AWS::StackName}", "pinework-x-waf")
    assert web_acl("WAF_RATE_LIMITING=on") == name
    assert web_acl("WAF_RATE_LIMITING=off") == ""
    # not given: the name when the stage has a WAF stack (which the deploy then keeps)
    kept = web_acl()
    assert "describe-stacks --stack-name pinework-x-waf " in kept
    assert kept.endswith(f"&& echo {name})")
