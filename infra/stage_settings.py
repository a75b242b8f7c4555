"""Operator settings that are stack parameters on both deploy paths, so a deploy keeps
them unless they are given again (CloudFormation keeps a parameter's previous value
when a deploy does not pass it; the Makefile passes a setting only when given:
docs/operations.md#parameters-make-variables).

- The key-value store's exposure (docs/reference.md#kv-quotas): ``KvAnonymousAccess``
  (``off``: anonymous scopes take no key, their quota is 0) and every ``PINEWORK_KV_*``
  quota and the new-scope rate, each one parameter and one environment variable of the
  functions (``KV_SETTINGS``).
- The table's optional on-demand throughput maximum (``TableMaxReadRequestUnits``,
  ``TableMaxWriteRequestUnits``; 0: no maximum), a ceiling on what an abuse can cost.
- On the ``make deploy`` path, the settings chalice applies (the stage throttle, the
  API's reserved concurrency, the worker cap): parameters of the resources stack that
  it gives back as outputs, which ``infra/deploy.py`` reads (``CHALICE_SETTINGS``).

Choices: docs/DECISIONS.md#releases-an-operator-can-trust-issue-44.
"""

from __future__ import annotations

from typing import Any

from chalicelib.limits import (
    KV_ACCOUNT_MAX_BYTES,
    KV_ACCOUNT_MAX_KEYS,
    KV_ANON_MAX_BYTES,
    KV_ANON_MAX_KEYS,
    KV_ANON_VALUE_MAX_BYTES,
    KV_BYOK_MAX_BYTES,
    KV_BYOK_MAX_KEYS,
    KV_BYOK_NEW_SCOPES_PER_DAY,
)

KV_ANONYMOUS_ACCESS = "KvAnonymousAccess"
"""The switch of anonymous key-value scopes: ``on`` (their quota) or ``off`` (quota 0:
every anonymous write is refused ``kv_quota_exceeded``)."""
KV_ANONYMOUS_ON = "KvAnonymousAccessOn"
"""The condition ``KvAnonymousAccess == on``."""
KV_SETTINGS: dict[str, tuple[str, int, str]] = {
    "KvAnonMaxKeys": ("PINEWORK_KV_ANON_MAX_KEYS", KV_ANON_MAX_KEYS, "keys of one anonymous scope"),
    "KvAnonMaxBytes": (
        "PINEWORK_KV_ANON_MAX_BYTES",
        KV_ANON_MAX_BYTES,
        "bytes of keys and values of one anonymous scope",
    ),
    "KvAnonMaxValueBytes": (
        "PINEWORK_KV_ANON_MAX_VALUE_BYTES",
        KV_ANON_VALUE_MAX_BYTES,
        "largest anonymous value, as it travels",
    ),
    "KvByokMaxKeys": ("PINEWORK_KV_BYOK_MAX_KEYS", KV_BYOK_MAX_KEYS, "keys of one X-Api-Key scope"),
    "KvByokMaxBytes": (
        "PINEWORK_KV_BYOK_MAX_BYTES",
        KV_BYOK_MAX_BYTES,
        "bytes of one X-Api-Key scope",
    ),
    "KvByokNewScopesPerDay": (
        "PINEWORK_KV_BYOK_NEW_SCOPES_PER_DAY",
        KV_BYOK_NEW_SCOPES_PER_DAY,
        "new X-Api-Key scopes one network may start per UTC day (0: none)",
    ),
    "KvAccountMaxKeys": (
        "PINEWORK_KV_ACCOUNT_MAX_KEYS",
        KV_ACCOUNT_MAX_KEYS,
        "keys of one workspace scope",
    ),
    "KvAccountMaxBytes": (
        "PINEWORK_KV_ACCOUNT_MAX_BYTES",
        KV_ACCOUNT_MAX_BYTES,
        "bytes of one workspace scope",
    ),
}
"""Parameter -> (the functions' environment variable, default, what it bounds): the
defaults are the service's own (``chalicelib/limits.py``)."""
ANONYMOUS_QUOTAS = ("KvAnonMaxKeys", "KvAnonMaxBytes")
"""The parameters ``KvAnonymousAccess=off`` overrides with 0."""
TABLE_MAX_READ = "TableMaxReadRequestUnits"
TABLE_MAX_WRITE = "TableMaxWriteRequestUnits"
"""The table's on-demand throughput maximum (0: none)."""
TABLE_THROUGHPUT_CAPPED = "TableThroughputCapped"
"""The condition: either maximum is set."""


def kv_parameters() -> dict[str, Any]:
    """``KvAnonymousAccess`` and one Number parameter per ``KV_SETTINGS`` entry."""
    parameters: dict[str, Any] = {
        KV_ANONYMOUS_ACCESS: {
            "Type": "String",
            "AllowedValues": ["on", "off"],
            "Default": "on",
            "Description": "Anonymous key-value scopes (no credential): on, with their "
            "quota; off: every anonymous write is refused (docs/reference.md#kv-quotas).",
        }
    }
    for name, (variable, default, what) in KV_SETTINGS.items():
        parameters[name] = {
            "Type": "Number",
            "MinValue": 0,
            "Default": default,
            "Description": f"The {what} ({variable}).",
        }
    return parameters


def kv_conditions() -> dict[str, Any]:
    """``KvAnonymousAccessOn``."""
    return {KV_ANONYMOUS_ON: {"Fn::Equals": [{"Ref": KV_ANONYMOUS_ACCESS}, "on"]}}


def kv_value(name: str) -> Any:
    """The expression of one ``KV_SETTINGS`` parameter's value as the functions get it:
    its ``Ref``, or 0 for an anonymous quota while anonymous access is off."""
    if name in ANONYMOUS_QUOTAS:
        return {"Fn::If": [KV_ANONYMOUS_ON, {"Ref": name}, "0"]}
    return {"Ref": name}


def kv_environment() -> dict[str, Any]:
    """The functions' ``PINEWORK_KV_*`` variables (the one-stack template)."""
    return {variable: kv_value(name) for name, (variable, _, _) in KV_SETTINGS.items()}


def kv_outputs() -> dict[str, Any]:
    """The resources stack's outputs, one per ``KV_SETTINGS`` entry, with the value the
    functions get (``infra/deploy.py`` sets them as environment variables)."""
    return {name: {"Value": kv_value(name)} for name in KV_SETTINGS}


def throughput_parameters() -> dict[str, Any]:
    """``TableMaxReadRequestUnits`` and ``TableMaxWriteRequestUnits`` (0: no maximum)."""
    return {
        name: {
            "Type": "Number",
            "MinValue": 0,
            "Default": 0,
            "Description": f"The table's on-demand maximum of {kind} request units a second "
            "(0: none). Requests past it are throttled (the table-throttles alarm).",
        }
        for name, kind in ((TABLE_MAX_READ, "read"), (TABLE_MAX_WRITE, "write"))
    }


def throughput_conditions() -> dict[str, Any]:
    """``TableThroughputCapped``: either maximum is set."""
    return {
        TABLE_THROUGHPUT_CAPPED: {
            "Fn::Not": [
                {
                    "Fn::And": [
                        {"Fn::Equals": [{"Ref": TABLE_MAX_READ}, "0"]},
                        {"Fn::Equals": [{"Ref": TABLE_MAX_WRITE}, "0"]},
                    ]
                }
            ]
        }
    }


_NONE = {"Ref": "AWS::NoValue"}


def on_demand_throughput() -> dict[str, Any]:
    """The table's ``OnDemandThroughput`` with the maximum of each kind that is set,
    absent when neither is (CloudFormation takes no ``-1``, DynamoDB's "no maximum")."""
    return {
        "Fn::If": [
            TABLE_THROUGHPUT_CAPPED,
            {
                "MaxReadRequestUnits": {
                    "Fn::If": [f"{TABLE_MAX_READ}Set", {"Ref": TABLE_MAX_READ}, _NONE]
                },
                "MaxWriteRequestUnits": {
                    "Fn::If": [f"{TABLE_MAX_WRITE}Set", {"Ref": TABLE_MAX_WRITE}, _NONE]
                },
            },
            {"Ref": "AWS::NoValue"},
        ]
    }


def throughput_set_conditions() -> dict[str, Any]:
    """``TableMaxReadRequestUnitsSet`` and ``TableMaxWriteRequestUnitsSet``."""
    return {
        f"{name}Set": {"Fn::Not": [{"Fn::Equals": [{"Ref": name}, "0"]}]}
        for name in (TABLE_MAX_READ, TABLE_MAX_WRITE)
    }


def parameters() -> dict[str, Any]:
    """Every parameter of this module (both templates)."""
    return {**kv_parameters(), **throughput_parameters()}


def conditions() -> dict[str, Any]:
    """Every condition of this module (both templates)."""
    return {**kv_conditions(), **throughput_conditions(), **throughput_set_conditions()}


CHALICE_SETTINGS = (
    "ApiThrottleRateLimit",
    "ApiThrottleBurstLimit",
    "ApiReservedConcurrency",
    "ReviewWorkerMaxConcurrency",
)
"""The ``make deploy`` settings chalice or the API applies, kept as resources-stack
parameters and read back from its outputs of the same name (``infra/deploy.py``)."""
UNRESERVED = "none"
"""The ``ApiReservedConcurrency`` output when none is reserved (an output is never empty)."""
