"""Every key format of the single table, in one place (docs/conventions.md#layers: storage).

| item | pk | sk |
| --- | --- | --- |
| memory | ``MEMORY#<mem_id>`` | ``MEMORY`` |
| audit record | ``MEMORY#<mem_id>`` | ``AUDIT#<aud_id>`` |
| live day row pointer | ``DAYLOG#<agt_id>#<YYYY-MM-DD>`` | ``DAYLOG`` |
| token | ``TOKEN#<sha256 hex>`` | ``TOKEN`` |
| token id -> its hash (revoke, rotate) | ``TOKENID#<tok_id>`` | ``TOKENID`` |
| recall log entry | ``RECALLS#<agt_id>`` | ``<rcl_id>`` |
| recall counters of a page of memories | ``RECALLCOUNT#<agt_id>`` | ``PAGE#<000-189>`` |
| run-start session | ``SESSION#<agt_id>#<session id>`` | ``SESSION`` |
| workspace | ``WORKSPACE#<wsp_id>`` | ``WORKSPACE`` |
| agent | ``AGENT#<agt_id>`` | ``AGENT`` |
| person | ``PERSON#<usr_id>`` | ``PERSON`` |
| e-mail claim of a person | ``PERSONEMAIL#<wsp_id>#<keyed digest of e-mail>`` | ``PERSONEMAIL`` |
| key-value entry | ``KV#<scope>`` | ``KEY#<key>`` |
| key-value scope usage (keys, bytes) | ``KV#<scope>`` | ``USAGE`` |
| new X-Api-Key scopes of a network per UTC day | ``KVNEW#<keyed digest>`` | ``DAY#<date>`` |
| routine | ``ROUTINE#<agt_id>`` | ``ROUTINE`` |
| review of one date (claim) | ``REVIEWDATE#<agt_id>#<YYYY-MM-DD>`` | ``REVIEWDATE`` |
| review summary | ``REVIEWS#<agt_id>`` | ``<rvw_id>`` |
| review summary (lookup by id) | ``REVIEW#<rvw_id>`` | ``REVIEW`` |
| decision on a review action | ``REVIEW#<rvw_id>`` | ``ACTION#<action id>`` |
| queued manual review (run) | ``REVIEW#<rvw_id>`` | ``RUN`` |
| lift claim | ``LIFT#<agt_id>#<sha256 of normalized text>`` | ``LIFT`` |
| a rejected review action | ``REJECTED#<agt_id>`` | ``<sha256 signature>`` |
| an agent of a workspace (listing) | ``WORKSPACE#<wsp_id>`` | ``AGENT#<agt_id>`` |
| a dashboard session | ``WEBSESSION#<sha256 hex of the cookie>`` | ``WEBSESSION`` |
| a one-time dashboard sign-in code | ``SIGNIN#<sha256 hex of the code>`` | ``SIGNIN`` |
| a table upgrade done (marker) | ``UPGRADE#<name>`` | ``UPGRADE`` |
| idempotency record (docs/issues.md#issue-15) | ``IDEMPOTENCY#<sha256 of scope and key>`` |
``IDEMPOTENCY`` |
| an undone review action | ``REVIEW#<rvw_id>`` | ``UNDO#<action id>`` |
| a review action waiting for a person | ``PENDING#<wsp_id>`` | ``<agt_id>#<rvw_id>#<action id>`` |
| vetoed-text index | ``VETO#<agt_id>`` | ``TEXT#<sha>`` / ``SAME#<sha>`` / ``INDEXED`` |
| recall index: a loose entry | ``RECALLINDEX#<agt_id>`` | ``L#<mem_id>`` |
| recall index: a segment of packed entries | ``RECALLINDEX#<agt_id>`` | ``S#<expiry µs>#<id>`` |
| recall index: a volume (an S3 object) | ``RECALLINDEX#<agt_id>`` | ``S#<expiry µs>#<vol_id>`` |
| recall index: a tombstone | ``RECALLINDEX#<agt_id>`` | ``X#<mem_id>`` |
| recall index: complete (marker) | ``RECALLINDEX#<agt_id>`` | ``~BUILT`` |
| an erasure's progress, then its tombstone | ``ERASURE#<id>`` | ``RECORD`` |
| an id an unfinished erasure collected | ``ERASURE#<id>`` | ``ID#<id>`` |
| a workspace's erasure epoch | ``ERASURE#<wsp_id>`` | ``EPOCH`` |
| a workspace's past erasure (listing, newest last) | ``ERASURE#<wsp_id>`` | ``LIST#<time>#<id>`` |
| how far archived memories' audit texts were swept | ``RETENTION#<agt_id>`` | ``ARCHIVEDTEXTS`` |
| a person's export of an agent or the workspace | ``EXPORT#<exp_id>`` | ``EXPORT`` |
| a workspace's queued or running export | ``WORKSPACE#<wsp_id>`` | ``EXPORTSLOT`` |
| a workspace's exports of one UTC day | ``WORKSPACE#<wsp_id>`` | ``EXPORTDAY#<date>`` |
| a learning | ``LEARNINGS#<wsp_id>`` | ``LEARNING#<lrn_id>`` |
| a workspace's count of live learnings | ``LEARNINGS#<wsp_id>`` | ``COUNT`` |
| an agent's learning proposals on a date | ``LEARNINGS#<wsp_id>`` | ``RATE#<agt_id>#<date>`` |
| a rejected or retired text | ``LEARNINGS#<wsp_id>`` | ``REJECTED#<TEXT|SAME>#<sha>`` |
| a learning's copy filed by state | ``LEARNINGS#<wsp_id>#<state>`` | ``<lrn_id>`` |
| the workspace's learnings are filed by state (marker) | ``LEARNINGS#<wsp_id>`` | ``STATES`` |
| a learning's history record | ``LEARNING#<lrn_id>`` | ``AUDIT#<aud_id>`` |
| an owner mark (an item not keyed by its owner) | ``OWNED#<owner id>`` | ``<pk>|<sk>`` |
| a published page's packed sections | ``WIKISECTIONS#<wsp_id>`` | ``P#<pag_id>`` |
| a live fact by content | ``SAMEFACT#<wsp_id>#<digest>`` | ``<agt_id>#<mem_id>`` |
| its agent is filed (marker) | ``SAMEFACTS#<agt_id>`` | ``INDEXED`` |
| a fact's tag (tag index) | ``MEMORYTAGS#<agt_id>`` | ``<tag>#<status>#<mem_id>`` |
| a fact's metadata value | ``MEMORYMETA#<agt_id>`` | ``<key>#<status>#<text>#<mem_id>`` |
| a person's bulk action on memories | ``BULK#<wsp_id>`` | ``<blk_id>`` |
| a change event of a workspace's UTC day | ``EVENTS#<wsp_id>#<YYYY-MM-DD>`` | ``<evt_id>`` |
| its copy in the agent's own feed | ``AGENTEVENTS#<agt_id>#<YYYY-MM-DD>`` | ``<evt_id>`` |
| a webhook endpoint | ``WEBHOOKS#<wsp_id>`` | ``ENDPOINT#<whk_id>`` |
| the workspace's count of webhook endpoints | ``WEBHOOKS#<wsp_id>`` | ``COUNT`` |
| a webhook delivery attempt | ``WEBHOOKS#<wsp_id>`` | ``DELIVERY#<whk_id>#<dlv_id>`` |
| every endpoint, for the delivery worker | ``WEBHOOKDIR#<shard 0-3>`` | ``<wsp_id>#<whk_id>`` |

A key-value scope is ``account#<wsp_id>``, ``byok#<sha256 hex>`` or
``anon#<sha256 hex>`` (docs/reference.md#10-key-value). Anonymous entries carry ``expiresAtEpoch``,
the table's DynamoDB TTL attribute (epoch seconds); so do rotated tokens, idempotency
records, the counters of new key-value scopes and the dashboard's sessions and sign-in
codes, review items, exports' records and change events; memories never do.

List indexes of memories (GSIs, sort key ``lsk`` = memory id), each projecting only
what its reader needs (docs/DECISIONS.md#narrow-list-indexes-issue-23-item-2):
``byAgentKind`` (agent, kind and status; a few small attributes) for an agent's
lists, facts, counts and pictures, and ``byWorkspaceShard`` /
``byWorkspaceStatusShard`` (workspace, optionally status, and one of
``WORKSPACE_SHARDS`` shards chosen by agent; ``kind`` projected) for a workspace's
lists. A list reads ids from an index, then the items (BatchGetItem).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from chalicelib.models.learning import LearningState
from chalicelib.models.page import PageState

MEMORY_SK = "MEMORY"
SORT_ATTRIBUTE = "lsk"
"""Sort key of every list index: the memory id (a ULID), so ids sort by time."""
AUDIT_PREFIX = "AUDIT#"

BY_AGENT = "byAgent"
BY_AGENT_STATUS = "byAgentStatus"
BY_WORKSPACE = "byWorkspace"
BY_WORKSPACE_STATUS = "byWorkspaceStatus"

RETIRED_MEMORY_INDEXES: dict[str, str] = {
    BY_AGENT: "gsiAgent",
    BY_AGENT_STATUS: "gsiAgentStatus",
    BY_WORKSPACE: "gsiWorkspace",
    BY_WORKSPACE_STATUS: "gsiWorkspaceStatus",
}
"""The first release's four list indexes (index name -> its partition-key attribute),
each projecting every attribute, embedding included. Retired by
docs/issues.md#issue-23-item-2: nothing reads them, items written since carry none of
these attributes (a change of an older item removes them), and ``infra/tables.py``
keeps their definitions only for the upgrade steps that drop them."""

BY_WORKSPACE_SHARD = "byWorkspaceShard"
BY_WORKSPACE_STATUS_SHARD = "byWorkspaceStatusShard"
WORKSPACE_INDEXES: dict[str, str] = {
    BY_WORKSPACE_SHARD: "gsiWorkspaceShard",
    BY_WORKSPACE_STATUS_SHARD: "gsiWorkspaceStatusShard",
}
"""A workspace's memories (index name -> its partition-key attribute): partition
``<wsp_id>#<shard>`` and ``<wsp_id>#<status>#<shard>``, sort ``lsk``; they project
``WORKSPACE_INDEX_PROJECTION`` only (docs/issues.md#issue-23-item-2)."""
WORKSPACE_INDEX_PROJECTION = ("kind",)
"""What the workspace indexes carry besides their keys: a list filtered by kind
filters on the index (a memory's kind never changes, so no update rewrites it)."""
WORKSPACE_SHARDS = 16
"""How many partitions each workspace index spreads one workspace over, by a stable
hash of the agent id: no partition key is written by every agent of a workspace
(docs/issues.md#issue-23-item-2). Fixed: a reader queries every shard, and changing it
needs every memory item rewritten."""


def workspace_shard(agent_id: str) -> int:
    """The shard (0 to ``WORKSPACE_SHARDS - 1``) of an agent's memories in the workspace
    indexes: a stable hash of its id."""
    digest = hashlib.sha256(agent_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % WORKSPACE_SHARDS


def workspace_index_partitions(workspace_id: str, status: str | None) -> tuple[str, list[str]]:
    """The workspace index to read and the partition value of each of its shards: every
    memory of the workspace (``status`` None) or those of one status."""
    if status is None:
        return BY_WORKSPACE_SHARD, [
            f"{workspace_id}#{shard:02d}" for shard in range(WORKSPACE_SHARDS)
        ]
    return BY_WORKSPACE_STATUS_SHARD, [
        f"{workspace_id}#{status}#{shard:02d}" for shard in range(WORKSPACE_SHARDS)
    ]


def memory_key(memory_id: str) -> dict[str, str]:
    """Primary key of a memory item."""
    return {"pk": f"MEMORY#{memory_id}", "sk": MEMORY_SK}


def audit_key(memory_id: str, audit_id: str) -> dict[str, str]:
    """Primary key of an audit record; it shares its memory's partition."""
    return {"pk": f"MEMORY#{memory_id}", "sk": f"{AUDIT_PREFIX}{audit_id}"}


def day_pointer_key(agent_id: str, date: str) -> dict[str, str]:
    """Primary key of the item naming the one live day row of an agent and date."""
    return {"pk": f"DAYLOG#{agent_id}#{date}", "sk": "DAYLOG"}


def recall_log_partition(agent_id: str) -> str:
    """Partition of an agent's recall log (the injection log), entries sorted by id."""
    return f"RECALLS#{agent_id}"


def recall_log_key(agent_id: str, recall_id: str) -> dict[str, str]:
    """Primary key of one recall log entry."""
    return {"pk": recall_log_partition(agent_id), "sk": recall_id}


RECALL_COUNTER_PAGES = 190
"""How many items hold an agent's recall counters (docs/reference.md#8-recall,
docs/issues.md#issue-3). A recall updates each page it touches once, with a plain ``UpdateItem``
after the transaction of its log entry and session claim
(docs/DECISIONS.md#recall-counters-off-the-transaction-issue-23-item-2). A page holds
``n_<mem_id>`` (count), ``t_<mem_id>`` (last recalled at) and ``lastRecallId``
(``items.RECALL_GUARD_ATTRIBUTE``)."""


def recall_counter_page(memory_id: str) -> int:
    """The page (0-189) of a memory's recall counters: a stable hash of its id."""
    digest = hashlib.sha256(memory_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % RECALL_COUNTER_PAGES


def recall_counter_key(agent_id: str, page: int) -> dict[str, str]:
    """Primary key of one page of an agent's recall counters."""
    return {"pk": f"RECALLCOUNT#{agent_id}", "sk": f"PAGE#{page:03d}"}


def session_key(agent_id: str, session_id: str) -> dict[str, str]:
    """Primary key of the run-start recall state of one agent's session."""
    return {"pk": f"SESSION#{agent_id}#{session_id}", "sk": "SESSION"}


def token_key(token_hash: str) -> dict[str, str]:
    """Primary key of a token item (the SHA-256 hex of the bearer token)."""
    return {"pk": f"TOKEN#{token_hash}", "sk": "TOKEN"}


def token_id_key(token_id: str) -> dict[str, str]:
    """Primary key of the item that names a token's hash by its ``tok_…`` id."""
    return {"pk": f"TOKENID#{token_id}", "sk": "TOKENID"}


BY_TOKEN_PRINCIPAL = "byTokenPrincipal"
"""Sparse GSI over token items (the only items with ``principalId``): a principal's
tokens, for ``pinework admin list-tokens``. Token items written before the index
existed carry the attribute too, so DynamoDB indexes them when the index is built."""
TOKEN_INDEX_PARTITION = "principalId"


def workspace_key(workspace_id: str) -> dict[str, str]:
    """Primary key of a workspace item."""
    return {"pk": f"WORKSPACE#{workspace_id}", "sk": "WORKSPACE"}


def agent_key(agent_id: str) -> dict[str, str]:
    """Primary key of an agent item."""
    return {"pk": f"AGENT#{agent_id}", "sk": "AGENT"}


def person_key(person_id: str) -> dict[str, str]:
    """Primary key of a person item."""
    return {"pk": f"PERSON#{person_id}", "sk": "PERSON"}


BY_AGENT_KIND = "byAgentKind"
"""GSI over memories: partition ``gsiAgentKind`` = ``<agt_id>#<kind>#<status>``, sort
``lsk``; projects only ``AGENT_KIND_PROJECTION``, so counting or charting an agent's
memories reads a few dozen bytes per memory instead of the whole item (docs/issues.md#issue-13)."""
AGENT_KIND_INDEX_PARTITION = "gsiAgentKind"
AGENT_KIND_PROJECTION = (
    "createdAt",
    "archivedAt",
    "archiveReason",
    "expiresAt",
    "charCount",
    "date",
)
"""The attributes ``byAgentKind`` carries besides its keys."""


def agent_kind_index_value(agent_id: str, kind: str, status: str) -> dict[str, str]:
    """The ``byAgentKind`` partition value a memory item carries for its state."""
    return {AGENT_KIND_INDEX_PARTITION: f"{agent_id}#{kind}#{status}"}


def person_email_key(workspace_id: str, email_digest: str) -> dict[str, str]:
    """Primary key of the claim one person of a workspace holds on an e-mail address
    (the digest is the service's, of the normalised address)."""
    return {"pk": f"PERSONEMAIL#{workspace_id}#{email_digest}", "sk": "PERSONEMAIL"}


def workspace_index_values(workspace_id: str, agent_id: str, status: str) -> dict[str, str]:
    """The workspace-index partition values a memory item carries for its state (its
    agent's shard, ``workspace_shard``)."""
    shard = workspace_shard(agent_id)
    return {
        WORKSPACE_INDEXES[BY_WORKSPACE_SHARD]: f"{workspace_id}#{shard:02d}",
        WORKSPACE_INDEXES[BY_WORKSPACE_STATUS_SHARD]: f"{workspace_id}#{status}#{shard:02d}",
    }


KV_TTL_ATTRIBUTE = "expiresAtEpoch"
"""The table's DynamoDB TTL attribute (epoch seconds): anonymous KV entries, rotated
tokens, dashboard sessions and sign-in codes carry it; memories never do."""
KV_KEY_PREFIX = "KEY#"


def kv_partition(scope: str) -> str:
    """Partition key of every entry of one key-value scope (``KV#<scope>``)."""
    return f"KV#{scope}"


def kv_key(scope: str, key: str) -> dict[str, str]:
    """Primary key of one key-value entry: the scope's partition, ``KEY#<key>``."""
    return {"pk": kv_partition(scope), "sk": f"{KV_KEY_PREFIX}{key}"}


KV_USAGE_SK = "USAGE"
"""Sort key of a scope's usage item; it sorts after every ``KEY#`` entry of the partition."""


def kv_usage_key(scope: str) -> dict[str, str]:
    """Primary key of one key-value scope's usage item (its key count and bytes,
    docs/reference.md#kv-quotas): the scope's partition, ``USAGE``."""
    return {"pk": kv_partition(scope), "sk": KV_USAGE_SK}


def kv_new_scopes_key(network: str, day: str) -> dict[str, str]:
    """Primary key of the counter of new key-value scopes one source network started
    on one UTC day (docs/reference.md#kv-quotas): ``KVNEW#<network>``, ``DAY#<YYYY-MM-DD>``."""
    return {"pk": f"KVNEW#{network}", "sk": f"DAY#{day}"}


ROUTINE_SK = "ROUTINE"
BY_ROUTINE_STATUS = "byRoutineStatus"
"""Sparse GSI over routines: partition ``gsiRoutineStatus`` (``active`` or ``paused``;
absent on tombstones), sort ``routineSk`` = ``<wsp_id>#<agt_id>``. The nightly
fan-out pages through ``active``; a workspace's routines are a ``begins_with``."""
ROUTINE_INDEX_PARTITION = "gsiRoutineStatus"
ROUTINE_INDEX_SORT = "routineSk"


def routine_key(agent_id: str) -> dict[str, str]:
    """Primary key of an agent's routine item (one per agent, docs/reference.md#9-review)."""
    return {"pk": f"ROUTINE#{agent_id}", "sk": ROUTINE_SK}


def routine_index_values(workspace_id: str, agent_id: str, status: str) -> dict[str, str]:
    """The sparse-index attributes of a routine in ``status`` (none for a tombstone)."""
    if status not in ("active", "paused"):
        return {}
    return {ROUTINE_INDEX_PARTITION: status, ROUTINE_INDEX_SORT: f"{workspace_id}#{agent_id}"}


def review_date_key(agent_id: str, date: str) -> dict[str, str]:
    """Primary key of the record that claims an agent's review of one UTC date."""
    return {"pk": f"REVIEWDATE#{agent_id}#{date}", "sk": "REVIEWDATE"}


def review_partition(agent_id: str) -> str:
    """Partition of an agent's review summaries, sorted by review id (newest last)."""
    return f"REVIEWS#{agent_id}"


def review_key(agent_id: str, review_id: str) -> dict[str, str]:
    """Primary key of one review summary (the full report is in S3)."""
    return {"pk": review_partition(agent_id), "sk": review_id}


def review_lookup_key(review_id: str) -> dict[str, str]:
    """Primary key of the copy of a review summary found by id."""
    return {"pk": review_lookup_partition(review_id), "sk": "REVIEW"}


def review_run_key(review_id: str) -> dict[str, str]:
    """Primary key of a queued manual review's run record (docs/issues.md#issue-12)."""
    return {"pk": review_lookup_partition(review_id), "sk": "RUN"}


def review_lookup_partition(review_id: str) -> str:
    """Partition of a review's lookup item and of its action decisions."""
    return f"REVIEW#{review_id}"


DECISION_PREFIX = "ACTION#"


def review_decision_key(review_id: str, action_id: str) -> dict[str, str]:
    """Primary key of a person's decision on one action of an approval-mode review."""
    return {"pk": review_lookup_partition(review_id), "sk": f"{DECISION_PREFIX}{action_id}"}


def rejection_partition(agent_id: str) -> str:
    """Partition of the actions a person rejected for an agent (one item each)."""
    return f"REJECTED#{agent_id}"


def rejection_key(agent_id: str, signature: str) -> dict[str, str]:
    """Primary key of one rejected action (``ReviewAction.signature``) of an agent."""
    return {"pk": rejection_partition(agent_id), "sk": signature}


def workspace_agent_key(workspace_id: str, agent_id: str) -> dict[str, str]:
    """Primary key of the item that lists an agent under its workspace (the dashboard's
    agents overview: one Query of the workspace's partition, ``AGENT#`` prefix)."""
    return {"pk": workspace_key(workspace_id)["pk"], "sk": f"{WORKSPACE_AGENT_PREFIX}{agent_id}"}


WORKSPACE_AGENT_PREFIX = "AGENT#"


def web_session_key(secret_hash: str) -> dict[str, str]:
    """Primary key of a dashboard session (the SHA-256 hex of its cookie value)."""
    return {"pk": f"WEBSESSION#{secret_hash}", "sk": "WEBSESSION"}


def sign_in_code_key(code_hash: str) -> dict[str, str]:
    """Primary key of a one-time dashboard sign-in code (the SHA-256 hex of the code)."""
    return {"pk": f"SIGNIN#{code_hash}", "sk": "SIGNIN"}


def upgrade_marker_key(name: str) -> dict[str, str]:
    """Primary key of the marker saying the table upgrade ``name`` ran to its end."""
    return {"pk": f"UPGRADE#{name}", "sk": "UPGRADE"}


def lift_claim_key(agent_id: str, text_digest: str) -> dict[str, str]:
    """Primary key of the claim that a normalized text was lifted once for an agent."""
    return {"pk": f"LIFT#{agent_id}#{text_digest}", "sk": "LIFT"}


IDEMPOTENCY_SK = "IDEMPOTENCY"


def idempotency_key(record_key: str) -> dict[str, str]:
    """Key of one idempotency record (docs/issues.md#issue-15): ``record_key`` is Powertools' hashed
    key, ``IDEMPOTENCY#[<wsp_…>#<principal>#]<sha256 hex>`` (``storage/idempotency.py``), so
    records spread over partitions and an erasure finds an owner's records by key."""
    return {"pk": record_key, "sk": IDEMPOTENCY_SK}


UNDO_PREFIX = "UNDO#"


def review_undo_key(review_id: str, action_id: str) -> dict[str, str]:
    """Primary key of the record that a person undid one action of a review."""
    return {"pk": review_lookup_partition(review_id), "sk": f"{UNDO_PREFIX}{action_id}"}


def pending_partition(workspace_id: str) -> str:
    """Partition of a workspace's review actions that wait for a person."""
    return f"PENDING#{workspace_id}"


def pending_key(workspace_id: str, agent_id: str, review_id: str, action_id: str) -> dict[str, str]:
    """Primary key of one review action waiting for a person (sorted by agent, then
    review: the oldest review first)."""
    return {"pk": pending_partition(workspace_id), "sk": f"{agent_id}#{review_id}#{action_id}"}


def veto_partition(agent_id: str) -> str:
    """Partition of the index of an agent's vetoed texts (docs/issues.md#issue-14-item-5)."""
    return f"VETO#{agent_id}"


def veto_key(agent_id: str, index_key: str) -> dict[str, str]:
    """Primary key of one vetoed-text index entry (``TEXT#<sha256>`` or ``SAME#<sha256>``)."""
    return {"pk": veto_partition(agent_id), "sk": index_key}


def veto_marker_key(agent_id: str) -> dict[str, str]:
    """Primary key of the marker saying the agent's earlier vetoes are in the index."""
    return {"pk": veto_partition(agent_id), "sk": "INDEXED"}


RECALL_INDEX_PREFIX = "RECALLINDEX#"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_microseconds(moment: datetime) -> int:
    """Whole epoch microseconds of an aware datetime (exact: no float rounding)."""
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def recall_index_partition(agent_id: str) -> str:
    """Partition of an agent's recall index (docs/issues.md#issue-23-item-1,
    ``recall_index.py``): loose entries, segments, tombstones and the marker."""
    return f"{RECALL_INDEX_PREFIX}{agent_id}"


LOOSE_PREFIX = "L#"
SEGMENT_PREFIX = "S#"
TOMBSTONE_PREFIX = "X#"


def recall_index_loose_key(agent_id: str, memory_id: str) -> dict[str, str]:
    """Primary key of a fact's loose entry: written by the fact's own transaction, until
    a compaction packs it into a segment."""
    return {"pk": recall_index_partition(agent_id), "sk": f"{LOOSE_PREFIX}{memory_id}"}


def recall_index_tombstone_key(agent_id: str, memory_id: str) -> dict[str, str]:
    """Primary key of the tombstone of a fact that left the index (archived, vetoed,
    superseded) while a segment may still hold a copy of its entry."""
    return {"pk": recall_index_partition(agent_id), "sk": f"{TOMBSTONE_PREFIX}{memory_id}"}


def recall_index_segment_key(
    agent_id: str, last_expiry: datetime, segment_id: str
) -> dict[str, str]:
    """Primary key of a segment (many packed entries): the latest expiry among them
    first (16-digit epoch microseconds), so a key condition skips wholly expired ones."""
    return {
        "pk": recall_index_partition(agent_id),
        "sk": f"{SEGMENT_PREFIX}{epoch_microseconds(last_expiry):016d}#{segment_id}",
    }


def recall_index_segment_floor(moment: datetime) -> str:
    """The smallest segment sort key with an entry that expires after ``moment``; a key
    condition ``sk >= floor`` reads those segments, the tombstones and the marker."""
    return f"{SEGMENT_PREFIX}{epoch_microseconds(moment) + 1:016d}"


RECALL_INDEX_OBJECT_PREFIX = "recall-index/"
"""Where the bucket keeps recall index volumes (``recall_index_volume_object``)."""


def recall_index_volume_object(agent_id: str, volume_id: str) -> str:
    """The S3 key of a recall index volume: packed entries too many for table items, read
    through their pointer item (a segment key with ``o``, docs/issues.md#issue-23-item-2)."""
    return f"{RECALL_INDEX_OBJECT_PREFIX}{agent_id}/{volume_id}"


EXPORT_OBJECT_PREFIX = "exports/"
"""Where the bucket keeps a workspace's cached exports, ``exports/<wsp_id>/<exp_id>.json``
(docs/reference.md#exports-for-a-person): erasing a memory or an agent deletes them, and
the bucket's lifecycle rule expires them."""


EXPORT_KEPT_DAYS = 7
"""How long a person's export (its file and its record) is kept: the bucket's ``Exports``
lifecycle rule and the record's TTL."""


def export_object(workspace_id: str, export_id: str) -> str:
    """The S3 key of a person's export file (docs/reference.md#exports-for-a-person)."""
    return f"{EXPORT_OBJECT_PREFIX}{workspace_id}/{export_id}.json"


def export_slot_key(workspace_id: str) -> dict[str, str]:
    """Primary key of a workspace's one export slot (``exportId``, ``heldUntil``): the
    queued or running export (docs/reference.md#exports-for-a-person)."""
    return {"pk": workspace_key(workspace_id)["pk"], "sk": "EXPORTSLOT"}


def export_day_key(workspace_id: str, day: str) -> dict[str, str]:
    """Primary key of how many exports a workspace requested on one UTC day (``n``;
    expires with TTL)."""
    return {"pk": workspace_key(workspace_id)["pk"], "sk": f"EXPORTDAY#{day}"}


def export_key(export_id: str) -> dict[str, str]:
    """Primary key of a person's export's record (status, counts, the file's key)."""
    return {"pk": f"EXPORT#{export_id}", "sk": "EXPORT"}


MODEL_OBJECT_PREFIX = "models/"
"""Where the bucket keeps model weights too large for the Lambda zip
(docs/operations.md#reranker-weights); deploys upload them, the API reads them."""
RERANKER_WEIGHTS_OBJECT = f"{MODEL_OBJECT_PREFIX}ms-marco-minilm-l12-int8.npz"
"""The S3 key of the recall reranker's weights (``scripts/build_reranker.py`` writes the
file of the same name under ``models/`` in the checkout)."""


RECALL_INDEX_BUILT_SK = "~BUILT"
"""Sort key of the marker that an agent's recall index holds every live fact; ``~``
sorts after segments and tombstones, so the Query that reads them reads it too."""


def recall_index_marker_key(agent_id: str) -> dict[str, str]:
    """Primary key of the marker saying the agent's recall index is complete (written
    with the agent, or by the backfill once it indexed the agent's earlier facts)."""
    return {"pk": recall_index_partition(agent_id), "sk": RECALL_INDEX_BUILT_SK}


RETENTION_PREFIX = "RETENTION#"


def archived_texts_mark_key(agent_id: str) -> dict[str, str]:
    """Key of how far an agent's archived memories' audit texts have been swept
    (``sweptThrough``: every memory archived at or before it was swept;
    docs/reference.md#retention)."""
    return {"pk": f"{RETENTION_PREFIX}{agent_id}", "sk": "ARCHIVEDTEXTS"}


ERASURE_PREFIX = "ERASURE#"


def erasure_partition(target_id: str) -> str:
    """Partition of the erasure of an agent, a person or a workspace
    (docs/reference.md#erasing-an-agent-a-person-or-a-workspace)."""
    return f"{ERASURE_PREFIX}{target_id}"


def erasure_record_key(target_id: str) -> dict[str, str]:
    """Primary key of an erasure's record: its progress while it runs, then the tombstone
    that says who erased what and when."""
    return {"pk": erasure_partition(target_id), "sk": "RECORD"}


def erasure_epoch_key(workspace_id: str) -> dict[str, str]:
    """Primary key of a workspace's erasure epoch (``epoch``: a new random value at the
    start and end of every erasure touching the workspace); an export that saw it change
    while it ran discards its file (docs/reference.md#exports-for-a-person)."""
    return {"pk": erasure_partition(workspace_id), "sk": "EPOCH"}


ERASURE_LIST_PREFIX = "LIST#"


def erasure_list_key(workspace_id: str, at: str, target_id: str) -> dict[str, str]:
    """Primary key of a workspace's listing entry of one erasure (of a memory, an agent
    or a person; ``at`` its RFC 3339 request time): the workspace's erasures are read by
    key, newest first (docs/reference.md#past-erasures). It shares the partition of the
    workspace's erasure epoch, which no erasure of an agent or a person deletes."""
    return {"pk": erasure_partition(workspace_id), "sk": f"{ERASURE_LIST_PREFIX}{at}#{target_id}"}


def erasure_id_key(target_id: str, found_id: str) -> dict[str, str]:
    """Primary key of one id an unfinished erasure collected (a memory, a review, a
    token, a person of the workspace)."""
    return {"pk": erasure_partition(target_id), "sk": f"ID#{found_id}"}


LEARNINGS_PREFIX = "LEARNINGS#"


def learnings_partition(workspace_id: str) -> str:
    """The partition of a workspace's learnings, their count, the agents' proposal
    counters and the rejected texts' index (docs/reference.md#15-learnings)."""
    return f"{LEARNINGS_PREFIX}{workspace_id}"


def learning_key(workspace_id: str, learning_id: str) -> dict[str, str]:
    """Primary key of a learning (its workspace in the key: a read never crosses one)."""
    return {"pk": learnings_partition(workspace_id), "sk": f"LEARNING#{learning_id}"}


def learning_count_key(workspace_id: str) -> dict[str, str]:
    """Primary key of how many proposed and active learnings a workspace holds (``live``)."""
    return {"pk": learnings_partition(workspace_id), "sk": "COUNT"}


def learning_rate_key(workspace_id: str, agent_id: str, date: str) -> dict[str, str]:
    """Primary key of one agent's proposals on one UTC date (``n``; expires with TTL)."""
    return {"pk": learnings_partition(workspace_id), "sk": f"RATE#{agent_id}#{date}"}


def learning_rejected_key(workspace_id: str, digest_key: str) -> dict[str, str]:
    """Primary key of a rejected text's index entry (``TEXT#``/``SAME#`` + SHA-256, the
    vetoes' digests), naming the rejected learning."""
    return {"pk": learnings_partition(workspace_id), "sk": f"REJECTED#{digest_key}"}


LEARNING_STATE_PREFIX = "lrn_"
"""The sort-key prefix of a state partition: its copies are keyed by learning id (newest
last: ids are ULIDs)."""


LEARNING_STATE_NAMES = tuple(state.value for state in LearningState)
"""Every state a learning is filed under."""


def learning_state_partition(workspace_id: str, state: str) -> str:
    """The partition of the workspace's learnings in ``state`` (their copies), apart
    from the others, so a recall reads the active ones only and a list pages one state
    whatever the others hold (docs/reference.md#15-learnings)."""
    return f"{learnings_partition(workspace_id)}#{state}"


def learning_state_key(workspace_id: str, state: str, learning_id: str) -> dict[str, str]:
    """Primary key of a learning's copy filed by its state."""
    return {"pk": learning_state_partition(workspace_id, state), "sk": learning_id}


def learning_states_marker_key(workspace_id: str) -> dict[str, str]:
    """Primary key of the marker saying every learning of the workspace is filed by state
    (learnings stored before the copies existed are filed on first read)."""
    return {"pk": learnings_partition(workspace_id), "sk": "STATES"}


def learning_audit_key(learning_id: str, audit_id: str) -> dict[str, str]:
    """Primary key of one history record of a learning."""
    return {"pk": learning_history_partition(learning_id), "sk": f"AUDIT#{audit_id}"}


def learning_history_partition(learning_id: str) -> str:
    """The partition of a learning's history records."""
    return f"LEARNING#{learning_id}"


OWNED_PREFIX = "OWNED#"
"""Partition of the owner marks of one agent, person or workspace (``owner_mark_key``)."""


def owned_partition(owner_id: str) -> str:
    """The partition of ``owner_id``'s owner marks: ``OWNED#<agt_…|usr_…|wsp_…>``."""
    return f"{OWNED_PREFIX}{owner_id}"


def owner_mark_key(owner_id: str, owned: dict[str, str]) -> dict[str, str]:
    """Primary key of the mark that says ``owned`` (an item whose key cannot be derived
    from its owner: a run-start session, a lift claim, a review date's claim, a dashboard
    session, a sign-in code, an e-mail claim, an idempotency record, an export's record)
    belongs to ``owner_id``: ``OWNED#<owner>``, ``<owned pk>|<owned sk>``. Erasures and
    exports find such items through their owner's marks
    (docs/reference.md#erasing-an-agent-a-person-or-a-workspace)."""
    return {"pk": owned_partition(owner_id), "sk": f"{owned['pk']}|{owned['sk']}"}


def owned_key(mark_sk: str) -> dict[str, str]:
    """The key of the item a mark's sort key names (``owner_mark_key``)."""
    pk, _, sk = mark_sk.rpartition("|")
    return {"pk": pk, "sk": sk}


AGENT_MEMORY_STATES = tuple(
    (kind, status) for kind in ("fact", "day") for status in ("active", "archived", "erased")
)
"""Every ``byAgentKind`` partition of one agent: each memory kind in each stored status
(``models/memory.py``)."""


def agent_kind_values(agent_id: str, kind: str, status: str) -> dict[str, str]:
    """``:partition`` of a Query of ``byAgentKind`` for one agent, kind and status."""
    return {
        ":partition": agent_kind_index_value(agent_id, kind, status)[AGENT_KIND_INDEX_PARTITION]
    }


MEMORY_TAGS_PREFIX = "MEMORYTAGS#"


def memory_tags_partition(agent_id: str) -> str:
    """The partition of the agent's tag index (``storage/memory_tags.py``)."""
    return f"{MEMORY_TAGS_PREFIX}{agent_id}"


def memory_tag_prefix(tag: str, status: str) -> str:
    """The sort-key prefix of the entries of one tag and memory status: ``<tag>#<status>#``
    (a tag holds no ``#``, docs/reference.md#tags)."""
    return f"{tag}#{status}#"


def memory_tag_key(agent_id: str, tag: str, status: str, memory_id: str) -> dict[str, str]:
    """The tag index entry of one fact, tag and status."""
    return {
        "pk": memory_tags_partition(agent_id),
        "sk": f"{memory_tag_prefix(tag, status)}{memory_id}",
    }


MEMORY_META_PREFIX = "MEMORYMETA#"


def memory_meta_partition(agent_id: str) -> str:
    """The partition of the agent's metadata index (``storage/memory_metadata.py``)."""
    return f"{MEMORY_META_PREFIX}{agent_id}"


def memory_meta_prefix(key: str, status: str) -> str:
    """The sort-key prefix of the entries of one metadata key and memory status:
    ``<key>#<status>#`` (a key holds no ``#``, docs/reference.md#metadata)."""
    return f"{key}#{status}#"


def memory_meta_key(
    agent_id: str, key: str, status: str, text: str, memory_id: str
) -> dict[str, str]:
    """The metadata index entry of one fact, key and status; ``text`` is the value's
    index text (``models/metadata_filter.index_text``)."""
    return {
        "pk": memory_meta_partition(agent_id),
        "sk": f"{memory_meta_prefix(key, status)}{text}#{memory_id}",
    }


def owner_partitions(owner_id: str) -> list[str]:
    """The partitions keyed by one id (the partition keys above that hold nothing else):
    an agent's own, a person's, a workspace's shared ones (listing, learnings, actions
    waiting for a person, key-value entries of its account scope, wiki pages, bulk
    actions), a
    memory's, a review's, a token id's, a learning's history, a wiki page's history.
    Empty for another id."""
    prefix = owner_id.split("_", 1)[0]
    if prefix == "agt":
        return [
            agent_key(owner_id)["pk"],
            routine_key(owner_id)["pk"],
            recall_log_partition(owner_id),
            recall_counter_key(owner_id, 0)["pk"],
            review_partition(owner_id),
            rejection_partition(owner_id),
            veto_partition(owner_id),
            recall_index_partition(owner_id),
            archived_texts_mark_key(owner_id)["pk"],
            same_facts_marker_key(owner_id)["pk"],
            memory_tags_partition(owner_id),
            memory_meta_partition(owner_id),
        ]
    if prefix == "wsp":
        return [
            workspace_key(owner_id)["pk"],
            learnings_partition(owner_id),
            *(learning_state_partition(owner_id, state) for state in LEARNING_STATE_NAMES),
            pending_partition(owner_id),
            kv_partition(f"account#{owner_id}"),
            pages_partition(owner_id),
            *(page_state_partition(owner_id, state) for state in PAGE_STATE_NAMES),
            section_index_partition(owner_id),
            bulk_partition(owner_id),
            webhooks_partition(owner_id),
        ]
    single = {
        "usr": lambda: person_key(owner_id)["pk"],
        "mem": lambda: memory_key(owner_id)["pk"],
        "rvw": lambda: review_lookup_partition(owner_id),
        "tok": lambda: token_id_key(owner_id)["pk"],
        "lrn": lambda: learning_history_partition(owner_id),
        "pag": lambda: page_history_partition(owner_id),
    }.get(prefix)
    return [] if single is None else [single()]


PAGE_STATE_NAMES = tuple(state.value for state in PageState)


def pages_partition(workspace_id: str) -> str:
    """The partition of a workspace's wiki pages, their slugs' claims and their count
    (``storage/wiki_pages.py``)."""
    return f"WIKI#{workspace_id}"


def page_state_partition(workspace_id: str, state: str) -> str:
    """The partition of a workspace's page summaries filed under ``state``."""
    return f"{pages_partition(workspace_id)}#{state}"


def page_history_partition(page_id: str) -> str:
    """The partition of a wiki page's history records."""
    return f"WIKIPAGE#{page_id}"


def section_index_partition(workspace_id: str) -> str:
    """The partition of a workspace's section index: every section of its published
    pages with its embedding, what a recall reads of the wiki and nothing else
    (docs/reference.md#page-sections, ``storage/wiki_sections.py``)."""
    return f"WIKISECTIONS#{workspace_id}"


def section_key(workspace_id: str, page_id: str, index: int) -> dict[str, str]:
    """Primary key of one section item of release 0.x's section index (one item a
    section), which ``upgrade-table`` (marker ``metadata-index-wiki-pages-v1``) replaces by page
    records (``section_page_key``)."""
    return {"pk": section_index_partition(workspace_id), "sk": f"{page_id}#{index:04d}"}


SECTION_PAGE_PREFIX = "P#"
"""The sort-key prefix of a page's record in its workspace's section index."""


def section_page_key(workspace_id: str, page_id: str) -> dict[str, str]:
    """Primary key of a published page's record in the workspace's section index: its
    version and the S3 object of its packed sections (docs/issues.md#issue-45-item-3)."""
    return {
        "pk": section_index_partition(workspace_id),
        "sk": f"{SECTION_PAGE_PREFIX}{page_id}",
    }


WIKI_SECTIONS_OBJECT_PREFIX = "wiki-sections/"
"""Where the bucket keeps the packed sections of published pages."""


def section_page_object(workspace_id: str, page_id: str, version: int) -> str:
    """The S3 key of a page version's packed sections: written once, never changed (a
    reader caches it by this key), deleted when the page's record moves past it."""
    return f"{WIKI_SECTIONS_OBJECT_PREFIX}{workspace_id}/{page_id}/{version:010d}"


def same_fact_partition(workspace_id: str, digest: str) -> str:
    """The partition of the workspace's live facts whose normalized text has ``digest``
    (``normalized.content_digest``): the review finds the other agents holding a fact
    with one Query of it (docs/issues.md#issue-41-item-3). The digest spreads a
    workspace over as many partitions as it has distinct facts (no shard is written by
    every agent, as ``WORKSPACE_SHARDS`` ensures for the workspace indexes)."""
    return f"SAMEFACT#{workspace_id}#{digest}"


def same_fact_key(workspace_id: str, digest: str, agent_id: str, memory_id: str) -> dict[str, str]:
    """Primary key of one live fact's entry in the shared-facts index."""
    return {"pk": same_fact_partition(workspace_id, digest), "sk": f"{agent_id}#{memory_id}"}


def same_facts_marker_key(agent_id: str) -> dict[str, str]:
    """Primary key of the marker saying the agent's live facts saved before the
    shared-facts index existed are filed in it (its first review files them)."""
    return {"pk": f"SAMEFACTS#{agent_id}", "sk": "INDEXED"}


def bulk_partition(workspace_id: str) -> str:
    """The partition of a workspace's bulk actions (``storage/bulk_actions.py``)."""
    return f"BULK#{workspace_id}"


EVENTS_PREFIX = "EVENTS#"
AGENT_EVENTS_PREFIX = "AGENTEVENTS#"
EVENT_KEPT_DAYS = 30
"""How long the pull feed keeps an event (docs/reference.md#change-events): its item's
TTL is its time plus this many days, and a read skips what is past it."""
EVENT_TTL_SLACK_DAYS = 14
"""How many days past ``EVENT_KEPT_DAYS`` an erasure still reads event partitions:
DynamoDB deletes expired items lazily (days late), and an erasure deletes them all."""


def workspace_events_partition(workspace_id: str, day: str) -> str:
    """The partition of a workspace's change events of one UTC day (``yyyy-mm-dd``), the
    events sorted by id (ULIDs: time order). docs/reference.md#change-events."""
    return f"{EVENTS_PREFIX}{workspace_id}#{day}"


def agent_events_partition(agent_id: str, day: str) -> str:
    """The partition of the copies of one agent's change events of one UTC day: the
    agent's own feed reads only it (docs/reference.md#change-events)."""
    return f"{AGENT_EVENTS_PREFIX}{agent_id}#{day}"


def event_partitions(owner_id: str, days: list[str]) -> list[str]:
    """The event partitions of a workspace (``wsp_…``) or an agent (``agt_…``) for
    ``days``; empty for another id (erasure and export read them by key)."""
    if owner_id.startswith("wsp_"):
        return [workspace_events_partition(owner_id, day) for day in days]
    if owner_id.startswith("agt_"):
        return [agent_events_partition(owner_id, day) for day in days]
    return []


WEBHOOK_DIRECTORY_SHARDS = 4
"""How many partitions the delivery worker's list of every endpoint spreads over (by a
stable hash of the workspace id): registrations of busy workspaces do not all write one
partition. Fixed: the worker reads every shard."""


def webhooks_partition(workspace_id: str) -> str:
    """The partition of a workspace's webhook endpoints, their count and their recent
    deliveries (docs/reference.md#webhooks, ``storage/webhooks.py``)."""
    return f"WEBHOOKS#{workspace_id}"


def webhook_directory_key(workspace_id: str, webhook_id: str) -> dict[str, str]:
    """The delivery worker's entry of one endpoint: ``WEBHOOKDIR#<shard>``,
    ``<wsp_id>#<whk_id>`` (an owner mark of the workspace names it for erasure)."""
    digest = hashlib.sha256(workspace_id.encode("utf-8")).digest()
    shard = int.from_bytes(digest[:4], "big") % WEBHOOK_DIRECTORY_SHARDS
    return {"pk": f"WEBHOOKDIR#{shard}", "sk": f"{workspace_id}#{webhook_id}"}
