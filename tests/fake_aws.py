"""A fake ``aws`` command for the release tests (docs/operations.md#teardown,
#the-artifact-bucket): an executable put first on the PATH that answers from a JSON
state file and logs every call, so ``make artifact-bucket`` and ``make teardown`` run
as an operator runs them, against nothing real.

State: ``account`` (``sts get-caller-identity``; absent: the call fails as without
credentials), ``buckets`` (name -> ``{"owner": id, "settings": {...}}``), ``objects``
(``s3://bucket/key`` -> text), ``things`` (names of deletable things: ``stack:NAME``,
``function:ARN``, ``rest_api:ID``, ``rule:NAME``, ``mapping:UUID``, ``layer:ARN``),
``outputs`` (stack name -> ``{OutputKey: OutputValue}``) and ``fail`` (a list of
substrings: a call whose words joined by spaces contain one fails with ``(Throttling)``).
The CLI's own error text is copied: ``An error occurred (CODE) when calling …``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

SCRIPT = r"""
import json, os, sys
state_path = os.environ["FAKE_AWS_STATE"]
state = json.load(open(state_path))
args = sys.argv[1:]
with open(os.environ["FAKE_AWS_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")

def value(name, default=None):
    return args[args.index(name) + 1] if name in args else default

def fail(code, operation="Operation", message="failed"):
    sys.stderr.write(
        f"\nAn error occurred ({code}) when calling the {operation} operation: {message}\n"
    )
    sys.exit(254)

def save():
    json.dump(state, open(state_path, "w"))

joined = " ".join(args)
for pattern in state.get("fail", []):
    if pattern in joined:
        fail("Throttling", message="Rate exceeded")
service, command = args[0], args[1] if len(args) > 1 else ""
things = state.setdefault("things", [])

def delete_thing(name, operation):
    if name not in things:
        fail("ResourceNotFoundException", operation, f"{name} not found")
    things.remove(name)
    save()

if service == "sts":
    if "account" not in state:
        fail("ExpiredToken", "GetCallerIdentity", "The security token is expired")
    print(state["account"])
elif service == "s3api":
    bucket = value("--bucket")
    buckets = state.setdefault("buckets", {})
    owner = value("--expected-bucket-owner")
    if command == "create-bucket":
        if bucket in buckets:
            mine = buckets[bucket]["owner"] == state.get("account")
            fail("BucketAlreadyOwnedByYou" if mine else "BucketAlreadyExists", "CreateBucket")
        buckets[bucket] = {"owner": state["account"], "settings": {}}
        save()
    elif bucket not in buckets:
        fail("404", "HeadBucket", "Not Found")
    elif owner is not None and buckets[bucket]["owner"] != owner:
        fail("403", "HeadBucket", "Forbidden")
    elif command != "head-bucket":
        buckets[bucket]["settings"][command] = args[args.index(bucket) + 1:]
        save()
elif service == "s3" and command in ("cp", "rm"):
    urls = [word for word in args[2:] if word.startswith("s3://")]
    bucket = urls[0][5:].split("/", 1)[0]
    owner = value("--expected-bucket-owner")
    if owner is None or state.get("buckets", {}).get(bucket, {}).get("owner") != owner:
        fail("403", "HeadObject", "Forbidden")
    objects = state.setdefault("objects", {})
    if command == "rm":
        objects.pop(urls[0], None)
    elif args[2].startswith("s3://"):
        if args[2] not in objects:
            sys.stderr.write(
                "fatal error: An error occurred (404) when calling the HeadObject "
                "operation: Key does not exist\n"
            )
            sys.exit(1)
        open(args[3], "w").write(objects[args[2]])
    else:
        objects[args[3]] = open(args[2]).read()
    save()
elif service == "cloudformation":
    stack = value("--stack-name")
    if command == "describe-stacks":
        if f"stack:{stack}" not in things:
            fail("ValidationError", "DescribeStacks", f"Stack with id {stack} does not exist")
        outputs = state.get("outputs", {}).get(stack, {})
        print(json.dumps({"Stacks": [{"StackName": stack, "Outputs": [
            {"OutputKey": k, "OutputValue": v} for k, v in outputs.items()]}]}))
    elif command == "delete-stack":
        if f"stack:{stack}" in things:
            things.remove(f"stack:{stack}")
            save()
    elif command == "wait":
        pass
    else:
        fail("UnknownCommand", command)
elif service == "lambda" and command == "delete-function":
    delete_thing("function:" + value("--function-name"), "DeleteFunction")
elif service == "lambda" and command == "delete-event-source-mapping":
    delete_thing("mapping:" + value("--uuid"), "DeleteEventSourceMapping")
elif service == "lambda" and command == "delete-layer-version":
    delete_thing(f"layer:{value('--layer-name')}:{value('--version-number')}", "DeleteLayerVersion")
elif service == "apigateway" and command == "delete-rest-api":
    delete_thing("rest_api:" + value("--rest-api-id"), "DeleteRestApi")
elif service == "events" and command == "remove-targets":
    if "rule:" + value("--rule") not in things:
        fail("ResourceNotFoundException", "RemoveTargets", "Rule does not exist")
elif service == "events" and command == "delete-rule":
    delete_thing("rule:" + value("--name"), "DeleteRule")
else:
    fail("UnknownCommand", " ".join(args[:2]))
"""


class FakeAws:
    """A fake ``aws`` in ``folder``: ``env`` is the environment to run commands with
    (the fake first on the PATH), ``state`` reads and ``set_state`` writes its state,
    ``calls`` lists the argument lists of every call made so far."""

    def __init__(self, folder: Path, state: dict[str, Any]) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.state_path = folder / "state.json"
        self.log_path = folder / "calls.jsonl"
        self.log_path.write_text("")
        script = folder / "aws"
        script.write_text(f"#!{sys.executable}\n{SCRIPT}")
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.set_state(state)
        self.env = {
            **os.environ,
            "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_AWS_STATE": str(self.state_path),
            "FAKE_AWS_LOG": str(self.log_path),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Replace the fake's state."""
        self.state_path.write_text(json.dumps(state))

    @property
    def state(self) -> dict[str, Any]:
        """The fake's state now."""
        loaded: dict[str, Any] = json.loads(self.state_path.read_text())
        return loaded

    @property
    def calls(self) -> list[list[str]]:
        """Every call's arguments, in order."""
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]
