"""Pinework Memory: every Lambda entry point, one line each (docs/conventions.md#rule-1)."""

from typing import Any

from chalice.app import Chalice, CloudWatchEvent, Cron, SQSEvent

from chalicelib.api.bulk import bulk_api
from chalicelib.api.dashboard import dashboard_web
from chalicelib.api.events import events_api
from chalicelib.api.kv import kv_api
from chalicelib.api.learnings import learnings_api
from chalicelib.api.lifecycle import lifecycle_api
from chalicelib.api.mcp import mcp_api
from chalicelib.api.memories import memories_api
from chalicelib.api.observe import observe
from chalicelib.api.openapi import openapi_api
from chalicelib.api.recalls import recalls_api
from chalicelib.api.reviews import reviews_api
from chalicelib.api.routines import routines_api
from chalicelib.api.webhooks import webhooks_api
from chalicelib.api.wiki import wiki_api
from chalicelib.jobs.lifecycle import lifecycle_batch
from chalicelib.jobs.reviews import fan_out, review_batch
from chalicelib.settings import (
    LIFECYCLE_WORKER_MAX_CONCURRENCY,
    lifecycle_queue_name,
    review_queue_name,
    review_worker_max_concurrency,
)
from chalicelib.wiring import services

app = Chalice(app_name="pinework")
# a log line and metrics per event (docs/issues.md#issue-12)
app.register_middleware(observe, "all")
app.register_blueprint(memories_api, url_prefix="/api/v1")
app.register_blueprint(bulk_api, url_prefix="/api/v1")
app.register_blueprint(recalls_api, url_prefix="/api/v1")
app.register_blueprint(routines_api, url_prefix="/api/v1")
app.register_blueprint(reviews_api, url_prefix="/api/v1")
app.register_blueprint(kv_api, url_prefix="/api/v1")
app.register_blueprint(learnings_api, url_prefix="/api/v1")
app.register_blueprint(wiki_api, url_prefix="/api/v1")
app.register_blueprint(lifecycle_api, url_prefix="/api/v1")
app.register_blueprint(events_api, url_prefix="/api/v1")
app.register_blueprint(webhooks_api, url_prefix="/api/v1")
app.register_blueprint(mcp_api, url_prefix="/api/v1")
# the persons' dashboard: /, /agents/…, /sign-in (docs/reference.md#13-dashboard)
app.register_blueprint(dashboard_web)
app.register_blueprint(openapi_api, url_prefix="/api/v1")


@app.schedule(Cron(0, 4, "*", "*", "?", "*"), name="review_fanout")
def review_fanout(event: CloudWatchEvent) -> dict[str, Any]:
    """04:00 UTC daily: one review message per agent with an active routine
    (docs/reference.md#9-review)."""
    return fan_out(services(), event.time)


# the queue and the trigger's concurrency are read when chalice deploys (docs/operations.md#deploy)
@app.on_sqs_message(
    queue=review_queue_name(),
    batch_size=10,
    name="review_worker",
    maximum_concurrency=review_worker_max_concurrency(),
)
def review_worker(event: SQSEvent) -> dict[str, Any]:
    """Review one agent per message; failed ones are reported for retry alone (a person's
    erasure or export found here, sent by release 0.1.0, still runs: CHANGELOG.md)."""
    return review_batch(services(), event.to_dict())


# erasures and exports on a queue of their own: never behind the nightly reviews
# (docs/reference.md#the-lifecycle-queue)
@app.on_sqs_message(
    queue=lifecycle_queue_name(),
    batch_size=1,
    name="lifecycle_worker",
    maximum_concurrency=LIFECYCLE_WORKER_MAX_CONCURRENCY,
)
def lifecycle_worker(event: SQSEvent) -> dict[str, Any]:
    """Run a person's erasure or export; a failed one is reported for retry."""
    return lifecycle_batch(services(), event.to_dict())
