"""The bucket's lifecycle rule for anonymous key-value values (docs/reference.md#kv-lifetime):
every template that creates the bucket expires ``kv/anon/`` within
two days and never expires the permanent scopes' values, and the rule is one S3 accepts."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from moto import mock_aws

from infra.template import package_fragment, resources_stack


def buckets(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        resource["Properties"]
        for resource in template["Resources"].values()
        if resource.get("Type") == "AWS::S3::Bucket"
    ]


@pytest.mark.parametrize("template", [package_fragment, resources_stack])
def test_anonymous_values_expire_and_kept_values_do_not(template: Any) -> None:
    (bucket,) = buckets(template())
    rules = bucket["LifecycleConfiguration"]["Rules"]
    expiring = [  # the rules that expire any key-value object (review reports have theirs)
        rule
        for rule in rules
        if "ExpirationInDays" in rule
        and (rule.get("Prefix", "").startswith("kv/") or "kv/".startswith(rule.get("Prefix", "")))
    ]
    assert [(rule["Prefix"], rule["Status"]) for rule in expiring] == [("kv/anon/", "Enabled")]
    assert 1 <= expiring[0]["ExpirationInDays"] <= 2


def test_the_rule_is_one_s3_accepts() -> None:
    """(The adapter names anonymous objects under ``kv/anon/``: the kv repository's contract.)"""
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="lifecycle-test")
        (bucket,) = buckets(resources_stack())
        (rule,) = [
            r for r in bucket["LifecycleConfiguration"]["Rules"] if r.get("Prefix") == "kv/anon/"
        ]
        # The same rule in the S3 API's words is accepted by S3 (moto checks its shape).
        s3.put_bucket_lifecycle_configuration(
            Bucket="lifecycle-test",
            LifecycleConfiguration={
                "Rules": [
                    {
                        "ID": rule["Id"],
                        "Status": rule["Status"],
                        "Filter": {"Prefix": rule["Prefix"]},
                        "Expiration": {"Days": rule["ExpirationInDays"]},
                    }
                ]
            },
        )
        assert s3.get_bucket_lifecycle_configuration(Bucket="lifecycle-test")["Rules"][0][
            "Filter"
        ] == {"Prefix": "kv/anon/"}
