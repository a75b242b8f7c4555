"""Print the CloudFormation resources merged into ``chalice package`` output
(``make package``): the table from ``infra/tables.py``, so it is defined once.

Usage: ``python -m infra.template > build/resources.json``
"""

from __future__ import annotations

import json
import sys
from typing import Any

from infra.tables import table_definition

PROD_TABLE = "pinework-prod"
NOT_FOUND_BODY = {
    "error": {"code": "not_found", "message": "No such route. The API lives under /api/v1."}
}
"""What a request to an unknown path gets, deployed and locally."""


def resources(table_name: str = PROD_TABLE) -> dict[str, Any]:
    """Return the template fragment with the DynamoDB table (deletion-protected)."""
    definition = table_definition(table_name)
    properties = {
        "TableName": definition["TableName"],
        "BillingMode": definition["BillingMode"],
        "AttributeDefinitions": definition["AttributeDefinitions"],
        "KeySchema": definition["KeySchema"],
        "GlobalSecondaryIndexes": definition["GlobalSecondaryIndexes"],
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
        "SSESpecification": {"SSEEnabled": True},
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
        }
    }


if __name__ == "__main__":
    json.dump(resources(), sys.stdout, indent=2)
    sys.stdout.write("\n")
