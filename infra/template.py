"""Print the CloudFormation resources merged into ``chalice package`` output
(``make package``): the table from ``infra/tables.py``, so it is defined once.

Usage: ``python -m infra.template > build/resources.json``
"""

from __future__ import annotations

import json
import sys
from typing import Any

from chalicelib.settings import REVIEW_QUEUE_NAME
from infra.tables import table_definition, time_to_live

PROD_TABLE = "pinework-prod"
PROD_BUCKET = "pinework-prod"
"""``PINEWORK_BUCKET_NAME`` of the prod stage (``.chalice/config.json``)."""
NOT_FOUND_BODY = {
    "error": {
        "code": "not_found",
        "message": "No such route (see the route table in the README).",
    }
}
"""What a request to an unknown path gets, deployed and locally."""


def resources(table_name: str = PROD_TABLE, bucket_name: str = PROD_BUCKET) -> dict[str, Any]:
    """Return the template fragment: the DynamoDB table (with its TTL) and the S3 bucket
    for large key-value values, both deletion-protected."""
    definition = table_definition(table_name)
    properties = {
        "TableName": definition["TableName"],
        "BillingMode": definition["BillingMode"],
        "AttributeDefinitions": definition["AttributeDefinitions"],
        "KeySchema": definition["KeySchema"],
        "GlobalSecondaryIndexes": definition["GlobalSecondaryIndexes"],
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "SSESpecification": {"SSEEnabled": True},
        "TimeToLiveSpecification": time_to_live(),
    }
    return {
        "Resources": {
            # API Gateway answers unknown paths itself; keep them in our envelope.
            "UnknownRouteResponse": {
                "Type": "AWS::ApiGateway::GatewayResponse",
                "Properties": {
                    "RestApiId": {"Ref": "RestAPI"},
                    "ResponseType": "MISSING_AUTHENTICATION_TOKEN",
                    "StatusCode": "404",
                    "ResponseTemplates": {"application/json": json.dumps(NOT_FOUND_BODY)},
                },
            },
            "MemoryTable": {
                "Type": "AWS::DynamoDB::Table",
                "DeletionPolicy": "Retain",
                "UpdateReplacePolicy": "Retain",
                "Properties": properties,
            },
            "LargeObjectBucket": {
                "Type": "AWS::S3::Bucket",
                "DeletionPolicy": "Retain",
                "UpdateReplacePolicy": "Retain",
                "Properties": bucket_properties(bucket_name),
            },
            **review_queue_resources(),
            **__import__("infra.observability").observability.resources(),  # alarms, dashboard
        }
    }


def review_queue_resources() -> dict[str, Any]:
    """The review fan-out queue (SPEC §9) with its dead-letter queue, and the worker's
    event source set to report partial batch failures (merged into Chalice's own)."""
    return {
        "ReviewDeadLetterQueue": {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "QueueName": f"{REVIEW_QUEUE_NAME}-dead",
                "MessageRetentionPeriod": 1209600,
                "SqsManagedSseEnabled": True,
            },
        },
        "ReviewQueue": {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "QueueName": REVIEW_QUEUE_NAME,
                # Six times the worker's 600 s timeout (.chalice/config.json; the
                # Bedrock reviewer may take ~20 s per agent, 10 agents a batch), as AWS
                # advises for Lambda sources; also longer than the review's 15-minute
                # claim lease, so a retry takes over the claim of a crashed review.
                "VisibilityTimeout": 3600,
                "SqsManagedSseEnabled": True,
                "RedrivePolicy": {
                    "deadLetterTargetArn": {"Fn::GetAtt": ["ReviewDeadLetterQueue", "Arn"]},
                    "maxReceiveCount": 5,
                },
            },
        },
        "ReviewWorker": {
            "DependsOn": ["ReviewQueue"],
            "Properties": {
                "Events": {
                    "ReviewWorkerSqsEventSource": {
                        "Properties": {"FunctionResponseTypes": ["ReportBatchItemFailures"]}
                    }
                }
            },
        },
    }


def bucket_properties(bucket_name: str) -> dict[str, Any]:
    """The bucket: private, encrypted, and anonymous key-value values (``kv/anon/``)
    deleted two days after their write, when their 24-hour entry is long gone."""
    return {
        "BucketName": bucket_name,
        "PublicAccessBlockConfiguration": {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        },
        "BucketEncryption": {
            "ServerSideEncryptionConfiguration": [
                {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
            ]
        },
        "LifecycleConfiguration": {
            "Rules": [
                {
                    "Id": "AnonymousKeyValueValues",
                    "Status": "Enabled",
                    "Prefix": "kv/anon/",
                    "ExpirationInDays": 2,
                },
                {
                    "Id": "AbortIncompleteUploads",
                    "Status": "Enabled",
                    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1},
                },
            ]
        },
    }


if __name__ == "__main__":
    json.dump(resources(), sys.stdout, indent=2)
    sys.stdout.write("\n")
