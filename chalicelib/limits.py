"""Every limit of the service, in one place (docs/reference.md#5-limits, docs/reference.md#8-recall,
docs/reference.md#10-key-value; ours in docs/DECISIONS.md).

Characters are Unicode code points (Python ``len``) of the text as received; bytes
are UTF-8. Services and request models import their limits from here, so a limit
is changed once.
"""

from __future__ import annotations

from datetime import timedelta

# Memories (docs/reference.md#5-limits).
FACT_MAX_CHARS = 500
"""A fact's text; over it: 400 ``memory_text_too_long``."""
DAY_LINE_MAX_CHARS = 300
"""A day line as sent, before the ``HH:MM [TASK]`` prefix; over it: ``memory_text_too_long``."""
DAY_LOG_MAX_CHARS = 8000
"""One agent's day log for one UTC date, as stored (prefixes and newlines included);
a line that would pass it is 409 ``memory_day_full`` and is not written."""
ARCHIVE_REASON_MAX_CHARS = 500
"""An archive reason (required) and a veto's note."""
EVIDENCE_MAX_CHARS = 2000
"""The tool-output excerpt a save may carry (docs/reference.md#review-step-5)."""
DEFAULT_FACT_LIFETIME = timedelta(days=90)
"""A fact saved without ``expiresAt`` expires this long after its save."""
MAX_TAGS = 10
"""Tags one fact carries (docs/reference.md#tags); more: 400 ``memory_tag_invalid``."""
TAG_MAX_CHARS = 40
"""One tag, after trimming and case folding (docs/reference.md#tags)."""
TAG_PATTERN = r"[a-z0-9][a-z0-9._:-]*"
"""What a tag is made of once normalized (docs/reference.md#tags): lower-case ASCII
letters, digits, ``.``, ``_``, ``:`` and ``-``, starting with a letter or a digit."""
MAX_FILTER_TAGS = 10
"""Tags one list filter names, ``tag`` and ``anyTag`` together (docs/reference.md#tags)."""
MAX_METADATA_KEYS = 10
"""Keys of one fact's metadata (docs/reference.md#metadata); more: 400
``memory_metadata_invalid``."""
METADATA_KEY_PATTERN = r"[a-z][a-z0-9_.-]{0,39}"
"""A metadata key once trimmed and lower-cased: a letter, then letters, digits, ``_``,
``.`` and ``-``, 40 characters at most."""
METADATA_STRING_MAX_CHARS = 200
"""One metadata string value."""
METADATA_MAX_BYTES = 2048
"""A fact's whole metadata as compact JSON (UTF-8 bytes)."""
MAX_FILTER_METADATA = 5
"""Conditions one metadata filter holds (docs/reference.md#metadata-filters); more: 400
``metadata_filter_invalid``."""
MAX_FILTER_IN_VALUES = 10
"""Values one ``in`` condition names (docs/reference.md#metadata-filters)."""
"""Tags one list filter names, ``tag`` and ``anyTag`` together (docs/reference.md#tags)."""
HEADER_MAX_CHARS = 128
"""``X-Pinework-Run``, ``-Task``, ``-Session`` and a body's ``sessionId`` (printable ASCII)."""

# Lists (docs/reference.md#5-limits).
DEFAULT_LIST_LIMIT = 100
"""Items in a list page when ``limit`` is not given."""
MAX_LIST_LIMIT = 500
"""The largest list page; a larger ``limit`` is lowered to it, not refused."""
MAX_LEARNING_PAGE = 200
"""Most learnings one page of ``GET /learnings`` holds; a larger ``limit`` is read as
this (docs/reference.md#15-learnings)."""

# Recall (docs/reference.md#5-limits, docs/reference.md#8-recall).
RECALL_QUERY_MAX_CHARS = 4000
"""A recall ``query``, and a run-start ``task``, ``message`` or ``slashCommand``."""
SCORE_CUTOFF = 0.5
"""Recall keeps facts scoring at least this, best first."""
MAX_MEMORIES = 300
"""At most this many memories in one recall."""
MAX_MEMORY_TOKENS = 12_000
"""At most this many cl100k tokens of memory lines in one recall (whole memories)."""
MAX_DAY_LOG_TOKENS = 2_000
"""The day-log part of a recall block, on top of the memories (oldest lines cut first)."""
SESSION_WINDOW = timedelta(hours=24)
"""A resumed session that had a run-start recall this recently gets no block."""

# Reviews (docs/reference.md#9-review; docs/issues.md#issue-12).
REVIEW_MAX_CONFLICTS = 25
"""Conflicts one review sends to a person at most, each group of duplicates in one of
them at most: the rest are found again by the next review, once these are decided, so
a store of many values of one attribute never floods the Waiting page
(docs/reference.md#review-step-5)."""
REVIEW_INLINE_MAX_FACTS = 1_000
"""A person's ``POST /reviews`` runs inside the API call (200 with the report) when the
reviewer is ``rules`` and the agent has at most this many facts, live and archived;
otherwise it is queued (202) for the review worker, so API Gateway's 29 s never cuts a
review off (``PINEWORK_REVIEW_INLINE_MAX_FACTS``; measured in docs/DECISIONS.md)."""

# Key-value meta-tools (docs/reference.md#10-key-value).
KEY_MAX_BYTES = 512
"""Keys are 1 to 512 bytes of UTF-8."""
VALUE_MAX_BYTES = 5_767_168
"""5.5 MiB: the largest value, measured as it travels in a recall answer (UTF-8,
JSON-escaped). A Lambda answer stops at 6 MB (API Gateway at 10 MB), and the
answer's envelope needs the rest; larger is 413 ``payload_too_large``."""
JSON_INTEGER_MAX_DIGITS = 4000
"""Digits of an integer in a request body read as a Python ``int``; a longer one is
kept as its text in key-value values and MCP (``exact_json``) and is
``invalid_request`` in other bodies, whose numbers are counts and limits (Python
refuses to convert integers over 4,300 digits)."""
KV_PAGE_DEFAULT_KEYS = 100
"""Keys in one ``recall {}`` page when ``limit`` is not given."""
KV_PAGE_MAX_KEYS = 1000
"""The most keys in one ``recall {}`` page; a larger ``limit`` is lowered to it."""
KV_PAGE_MAX_BYTES = 1_048_576
"""1 MiB of keys (as JSON, quotes, escapes and commas counted) at most in one
``recall {}`` page; past it the page ends early and ``next`` continues."""
MCP_BATCH_MAX_MESSAGES = 10
"""The most JSON-RPC messages in one ``/mcp`` batch; a larger batch is refused whole."""

# Key-value quotas per scope kind (docs/reference.md#kv-quotas; PINEWORK_KV_* settings).
# A scope's bytes are the UTF-8 bytes of its keys plus those of its stored values.
KV_ANON_MAX_KEYS = 250
"""Keys one anonymous (client IP) scope may hold."""
KV_ANON_MAX_BYTES = 4 * 1_048_576
"""4 MiB: keys and values one anonymous scope may hold."""
KV_ANON_VALUE_MAX_BYTES = 262_144
"""256 KiB: the largest anonymous value, measured like ``VALUE_MAX_BYTES``; below the
300 KiB kept in the item, so anonymous values never reach S3 at the defaults."""
KV_BYOK_MAX_KEYS = 5_000
"""Keys one ``X-Api-Key`` scope may hold (any client can make up a key: kept modest)."""
KV_BYOK_MAX_BYTES = 50 * 1_048_576
"""50 MiB: keys and values one ``X-Api-Key`` scope may hold."""
KV_BYOK_NEW_SCOPES_PER_DAY = 5
"""New ``X-Api-Key`` scopes one source network (an IPv4 address or an IPv6 /64) may
start per UTC day; 0 starts none. Scopes that exist keep working from anywhere."""
KV_NEW_SCOPES_COUNTER_LIFETIME = timedelta(days=2)
"""A network's counter of new scopes for one UTC day is kept this long after the day
starts (DynamoDB TTL), past the day's end."""
IPV6_SCOPE_PREFIX = 64
"""IPv6 callers are grouped by this prefix (a /64 is one subscriber's network) for the
anonymous scope and the new-scope cap; IPv4 callers by their address."""
IPV6_SITE_PREFIX = 48
"""IPv6 callers' new ``X-Api-Key`` scopes are also counted by this prefix (a /48, one
site, holds 65,536 /64s; docs/reference.md#kv-new-scopes)."""
KV_BYOK_NEW_SCOPES_SITE_FACTOR = 4
"""An IPv6 /48 may start this many times a /64's new ``X-Api-Key`` scopes per UTC day
(20 at the default 5; docs/reference.md#kv-new-scopes)."""
KV_ACCOUNT_MAX_KEYS = 100_000
"""Keys one workspace (bearer token) scope may hold."""
KV_ACCOUNT_MAX_BYTES = 1_073_741_824
"""1 GiB: keys and values one workspace scope may hold."""
ANONYMOUS_LIFETIME = timedelta(hours=24)
"""Anonymous entries expire this long after their last write."""
API_KEY_MAX_CHARS = 4096
"""The longest ``X-Api-Key`` accepted."""

# The dashboard (docs/reference.md#13-dashboard; ours, docs/DECISIONS.md "Dashboard").
SESSION_IDLE_LIFETIME = timedelta(hours=12)
"""A dashboard session ends this long after the person's last request."""
SESSION_MAX_LIFETIME = timedelta(days=7)
"""A dashboard session ends this long after sign-in, however active."""
SESSION_REFRESH_INTERVAL = timedelta(minutes=15)
"""The idle expiry is pushed back at most this often (one write, not one per request)."""
SIGN_IN_LINK_LIFETIME = timedelta(minutes=10)
"""A one-time sign-in link works once, within this long of being made."""
NEXT_PATH_MAX_CHARS = 2000
"""A ``next`` path (where to go after sign-in or a form) longer than this, once
percent-encoded, is replaced by ``/`` (docs/reference.md#13-dashboard)."""
SEARCH_SCAN_MAX = 2000
"""Memories one dashboard search request reads at most (DynamoDB has no text search:
the newest are read page by page; the person may continue with the next ones)."""
AS_OF_LIST_READ_MAX = 500
"""Memories one as-of list request rebuilds at most (docs/reference.md#as-of-a-moment):
each costs one Query of its history; past it the page is short and ``nextToken`` goes
on."""
DASHBOARD_PAGE_SIZE = 50
"""Memories on one page of an agent's memory list."""
MEMORY_LIST_COUNT_MAX = 1000
"""Index items one page of an agent's memory list reads at most to say how many there
are ("of 1,000+" past it; docs/reference.md#list-totals)."""
PENDING_COUNT_MAX = 250
"""Waiting review actions one page of the Waiting list reads at most to count them."""
RECALL_LOG_COUNT_MAX = 100
"""Recall log entries one page of an agent's recall log reads at most to count them."""
REVIEWS_COUNT_MAX = 500
"""Review summaries one page of an agent's reports reads at most to count them."""

# Throttling (docs/reference.md#6-errors, docs/issues.md#issue-12).
THROTTLED_RETRY_AFTER_SECONDS = 1
"""``Retry-After`` of a 429 ``rate_limited`` answer. botocore has already retried the
throttled call (adaptive mode, 5 attempts) before the service gives up, so a client
that waits this long and retries meets a store that has had time to adapt."""

# Bearer tokens (docs/reference.md#authentication, docs/issues.md#issue-12).
TOKEN_ROTATION_GRACE = timedelta(hours=24)
"""How long a rotated token keeps working beside its replacement (``--grace-hours``)."""
TOKEN_ROTATION_GRACE_MAX = timedelta(days=30)
"""The longest grace period an operator may ask for."""
TOKEN_LAST_USED_INTERVAL = timedelta(hours=1)
"""``lastUsedAt`` is written at most this often per token (one conditional write)."""
TOKEN_PREFIX_CHARS = 8
"""The non-secret start of a token kept for listings (``pwk_`` + 4 random characters)."""
TOKEN_LABEL_MAX_CHARS = 100
"""An operator's label for a token (``--label``)."""

# The dashboard's history (docs/reference.md#history-diff, docs/issues.md#issue-21-item-6).
HISTORY_DIFF_MAX_STEPS = 20_000
"""Work allowed for one edit record's word diff on a memory's page (token comparisons
and edit-graph steps); past it the page shows the plain before and after."""
HISTORY_PAGE_DIFF_MAX_STEPS = 200_000
"""Work allowed for all the word diffs of one page of a memory's history (100 records);
once spent, the page's later edit records show the plain before and after."""

# --- the secret check's bounds (docs/reference.md#secret-check-bounds) -----------------------

SECRET_DATA_RUN_MIN_CHARS = 1025
"""A run of base64-like characters this long (over 1 KiB) is data: only credential
shapes are looked for in it, and it is also read decoded when it decodes to text."""
SECRET_WINDOWED_FROM_CHARS = 65_536
"""Text longer than this is checked in windows around the places a rule could match."""
SECRET_TOKEN_WINDOW_CHARS = 64
"""Characters read on each side of a candidate token in such text."""
SECRET_KEYWORD_WINDOW_CHARS = (128, 320)
"""Characters read before and after a secret keyword or marker in such text (an
assignment's key comes before it, its value, up to 256 characters, after)."""
SECRET_SCAN_BUDGET_CHARS = 1_048_576
"""The most characters the full detector reads for one text; past it the text is refused."""

LEARNING_MAX_CHARS = FACT_MAX_CHARS
"""A learning's text, as a fact's (docs/reference.md#learning-limits)."""
MAX_LIVE_LEARNINGS = 200
"""Proposed and active learnings a workspace may hold at once: every recall reads the
active ones (one Query), so the count bounds its cost."""
LEARNING_PROPOSALS_PER_DAY = 20
"""Proposals one agent may make per UTC day (``rate_limited`` after that)."""
MAX_RECALLED_LEARNINGS = 10
"""Learnings in one recall's block at most."""
MAX_LEARNING_TOKENS = 1_000
"""Tokens of the learnings block's lines at most (cl100k)."""
MAX_KEPT = 40
"""At most this many facts of one recall score >= 0.5: past it the cut rises to just
above the 41st best (docs/DECISIONS.md#reranker-issue-28: kept counts are what moved
most on stores the cut was never fitted on; the cap holds on any store)."""

EXPORTS_PER_WORKSPACE_PER_DAY = 10
"""Exports one workspace may request per UTC day (docs/reference.md#exports-for-a-person,
docs/issues.md#issue-41-item-2); one more is refused ``rate_limited`` until midnight UTC."""
EXPORT_SLOT_HOLD = timedelta(hours=2)
"""How long a queued or running export holds its workspace's one export slot at most: a
second request meanwhile answers the one that holds it (200). An export whose worker
gave up (the queue's retries spent) frees the slot after this long."""

# Wiki pages (docs/reference.md#17-wiki-pages, docs/issues.md#issue-45)
PAGE_TEXT_MAX_CHARS = 40_000
"""A wiki page's Markdown text, in characters (code points)."""
PAGE_TITLE_MAX_CHARS = 200
"""A wiki page's title."""
PAGE_SLUG_MAX_CHARS = 80
"""A wiki page's slug (lowercase letters, digits, single hyphens)."""
PAGE_TAGS_MAX = 10
"""Tags on one wiki page."""
PAGE_TAG_MAX_CHARS = 40
"""One wiki page tag."""
MAX_LIVE_PAGES = 2_000
"""Draft and published wiki pages of a workspace (archived ones are not counted)."""
MAX_PAGE_LIST = 200
"""The most wiki pages one list page returns."""
SECTION_MAX_TOKENS = 256
"""A wiki page's section, in tokens (cl100k) of its text at most: a longer one is split
(docs/reference.md#page-sections)."""
MAX_RECALLED_SECTIONS = 5
"""Wiki sections in one recall's block at most (docs/reference.md#wiki-in-recall)."""
MAX_SECTION_TOKENS = 1_500
"""Tokens of the wiki sections' lines in one recall's block at most (cl100k)."""
MAX_PAGE_SECTIONS = 400
"""Sections of one page in the section index at most (its first ones, in page order)."""
