"""``infra/iam_audit.py``: AWS calls mapped to IAM permissions, and the roles of
``infra/iam.py`` judged against them (what ``tests/iam_plugin.py`` relies on)."""

from __future__ import annotations

import pytest

from chalicelib.settings import DEFAULT_BEDROCK_MODEL_ID, REVIEW_QUEUE_NAME
from infra.aws_calls import AwsCall, naming_params
from infra.iam_audit import Audit, Permission, Stack, permissions, resolve, statement_allows

TABLE_ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/t"


def call(function: str, service: str, operation: str, **params: object) -> AwsCall:
    return AwsCall(function, service, operation, "us-east-1", naming_params(operation, params))


def actions(found: list[Permission]) -> list[tuple[str, str]]:
    return [(permission.action, permission.resource) for permission in found]


def test_each_item_of_a_transaction_needs_its_own_action() -> None:
    transaction = call(
        "api_handler",
        "dynamodb",
        "TransactWriteItems",
        TransactItems=[
            {"Put": {"TableName": "t", "Item": {"text": {"S": "a secret value"}}}},
            {"Update": {"TableName": "t"}},
            {"ConditionCheck": {"TableName": "t"}},
            {"Delete": {"TableName": "t"}},
        ],
    )
    assert "secret" not in transaction.to_json()  # names only, never item data
    assert actions(permissions(transaction)) == [
        ("dynamodb:PutItem", TABLE_ARN),
        ("dynamodb:UpdateItem", TABLE_ARN),
        ("dynamodb:ConditionCheckItem", TABLE_ARN),
        ("dynamodb:DeleteItem", TABLE_ARN),
    ]


def test_batches_indexes_objects_and_queues_name_their_resources() -> None:
    batch = call("api_handler", "dynamodb", "BatchGetItem", RequestItems={"t": {"Keys": []}})
    assert actions(permissions(batch)) == [("dynamodb:BatchGetItem", TABLE_ARN)]
    query = call("review_worker", "dynamodb", "Query", TableName="t", IndexName="byAgent")
    assert actions(permissions(query)) == [("dynamodb:Query", TABLE_ARN + "/index/byAgent")]
    get = call("api_handler", "s3", "GetObject", Bucket="b", Key="kv/keep/ab/cd")
    assert actions(permissions(get)) == [("s3:GetObject", "arn:aws:s3:::b/kv/keep/ab/cd")]
    url = "https://sqs.us-east-1.amazonaws.com/123456789012/q"
    send = call("review_fanout", "sqs", "SendMessageBatch", QueueUrl=url, Entries=[])
    assert actions(permissions(send)) == [
        ("sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q")
    ]
    lookup = call("review_fanout", "sqs", "GetQueueUrl", QueueName="q")
    assert actions(permissions(lookup)) == [
        ("sqs:GetQueueUrl", "arn:aws:sqs:us-east-1:123456789012:q")
    ]


def test_converse_through_an_inference_profile_needs_the_profile_and_the_model() -> None:
    converse = call(
        "review_worker", "bedrock-runtime", "Converse", modelId=DEFAULT_BEDROCK_MODEL_ID
    )
    profile, model = permissions(converse)
    assert profile.action == model.action == "bedrock:InvokeModel"
    assert profile.resource.endswith(f":inference-profile/{DEFAULT_BEDROCK_MODEL_ID}")
    assert model.resource.endswith("::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0")
    assert dict(model.context) == {"bedrock:InferenceProfileArn": profile.resource}


def test_an_operation_without_a_mapping_is_refused_not_guessed() -> None:
    with pytest.raises(ValueError, match="no IAM mapping"):
        permissions(call("api_handler", "dynamodb", "DescribeTable", TableName="t"))


def test_wildcards_and_conditions_are_matched_as_iam_does() -> None:
    statement = {
        "Effect": "Allow",
        "Action": ["s3:GetObject"],
        "Resource": ["arn:aws:s3:::b/kv/*"],
    }
    assert statement_allows(statement, Permission("f", "s3:GetObject", "arn:aws:s3:::b/kv/x/y"))
    assert not statement_allows(
        statement, Permission("f", "s3:GetObject", "arn:aws:s3:::b/reviews/x")
    )
    assert not statement_allows(statement, Permission("f", "s3:PutObject", "arn:aws:s3:::b/kv/x"))
    conditioned = {**statement, "Condition": {"StringEquals": {"k": "v"}}}
    assert not statement_allows(conditioned, Permission("f", "s3:GetObject", "arn:aws:s3:::b/kv/x"))
    assert statement_allows(
        conditioned, Permission("f", "s3:GetObject", "arn:aws:s3:::b/kv/x", (("k", "v"),))
    )
    with pytest.raises(ValueError):
        statement_allows({**statement, "Effect": "Deny"}, Permission("f", "s3:GetObject", "x"))


STACK = Stack(table="t", bucket="b", queue=REVIEW_QUEUE_NAME)


def test_the_old_shared_policy_would_have_failed_every_list_on_aws() -> None:
    # The regression of docs/issues.md#issue-12: BatchGetItem (recall counters) was not granted.
    old = {
        "Effect": "Allow",
        "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"],
        "Resource": [TABLE_ARN],
    }
    batch = call("api_handler", "dynamodb", "BatchGetItem", RequestItems={"t": {}})
    assert not any(statement_allows(old, permission) for permission in permissions(batch))
    assert Audit({"tests": STACK}).denied([batch]) == []  # the api_handler role allows it


def test_a_function_may_only_do_what_its_own_role_grants() -> None:
    audit = Audit({"tests": STACK})
    put_report = call("review_fanout", "s3", "PutObject", Bucket="b", Key="reviews/w/a/d/r.json")
    assert audit.denied([put_report]) == [
        "review_fanout: s3:PutObject on arn:aws:s3:::b/reviews/w/a/d/r.json (s3.PutObject)"
    ]
    other_table = call("api_handler", "dynamodb", "GetItem", TableName="someone-elses")
    assert len(audit.denied([other_table])) == 1
    unknown = call("not_a_function", "dynamodb", "GetItem", TableName="t")
    assert "not a Lambda function" in audit.denied([unknown])[0]


def test_bedrock_is_the_workers_alone_and_only_for_the_configured_model() -> None:
    rules = Audit({"tests": Stack(table="t", bucket="b", queue="q", reviewer="rules")})
    bedrock = Audit({"tests": Stack(table="t", bucket="b", queue="q", model="anthropic.m-v1:0")})
    profile = Audit(
        {"tests": Stack(table="t", bucket="b", queue="q", model=DEFAULT_BEDROCK_MODEL_ID)}
    )
    model_call = call("review_worker", "bedrock-runtime", "Converse", modelId="anthropic.m-v1:0")
    profile_call = call(
        "review_worker", "bedrock-runtime", "Converse", modelId=DEFAULT_BEDROCK_MODEL_ID
    )
    assert rules.denied([model_call])  # the rules reviewer's stack grants no model
    assert bedrock.denied([model_call]) == []
    assert bedrock.denied([profile_call])  # another model than the configured one
    assert profile.denied([profile_call]) == []
    assert profile.denied([model_call])  # the bare model, not through the profile
    api_call = call("api_handler", "bedrock-runtime", "Converse", modelId="anthropic.m-v1:0")
    assert bedrock.denied([api_call])


def test_unused_grants_are_listed_and_used_ones_are_not() -> None:
    audit = Audit({"tests": STACK})
    get = call("review_fanout", "dynamodb", "Query", TableName="t", IndexName="byRoutineStatus")
    unused = audit.unused([get])
    assert not any("review_fanout: ActiveRoutines" in line for line in unused)
    assert "review_fanout: ReviewQueueSend grants sqs:SendMessage on " in "\n".join(unused)
    assert not any("OwnLogGroup" in line for line in unused)  # the Lambda service's


def test_resolve_evaluates_the_templates_intrinsics() -> None:
    assert resolve({"Fn::Sub": "${MemoryTable.Arn}/index/x"}, STACK) == TABLE_ARN + "/index/x"
    assert resolve({"Fn::Join": ["", [{"Ref": "MemoryTable"}, "-dead"]]}, STACK) == "t-dead"
    assert resolve([{"Fn::If": ["UseBedrock", 1, {"Ref": "AWS::NoValue"}]}], STACK) == [1]
    rules = Stack(table="t", bucket="b", queue="q", reviewer="rules")
    assert resolve([{"Fn::If": ["UseBedrock", 1, {"Ref": "AWS::NoValue"}]}], rules) == []
    assert STACK.conditions()["BedrockReviewerCallsModel"] is True
    profile = Stack(table="t", bucket="b", queue="q", model=DEFAULT_BEDROCK_MODEL_ID)
    assert profile.conditions()["BedrockReviewerCallsProfile"] is True
    with pytest.raises(ValueError):
        resolve({"Fn::ImportValue": "x"}, STACK)
