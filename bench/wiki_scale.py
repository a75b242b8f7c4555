"""Recall time with a large wiki (docs/issues.md#issue-45-item-3): the target is that a
workspace with 1,000 published pages of 50 sections adds at most 1.5x to a recall's time
against the same agent's recall with no wiki (median of the rounds, through the HTTP API
of the local server).

The real local server is started as ``make serve`` runs it (``bench/recall_scale.py``'s
``Server``: its own ports and a temporary data folder); an agent of its demo workspace
gets ``--facts`` facts seeded straight into its DynamoDB as the service stores them. The
wiki is written straight through the storage adapter's own formats, not the API
(embedding 50,000 sections one publish at a time would take hours): ``--pages`` published
page items (``wiki_pages.page_to_item``), and for each its section index item and packed
record (``wiki_sections.page_item``, ``pack_sections``) in the server's bucket. Section
texts and embeddings are the project's own ``docs/*.md`` cut as publishing cuts them
(``SectionIndexer.sections_of``, embedded in batches here), cycled over the pages with
the page's number in each text, ``--sections`` a page.

Rounds: recalls of the agent with no wiki, then with the wiki (its first recall, which
reads every record into the server's process, is the cold read, timed apart), then
with the wiki's index items deleted again (no wiki); one new question a round
(``capacity_units.question``), the first round of each phase a warm-up.

Usage: ``.venv/bin/python bench/wiki_scale.py [--pages 100] [--sections 50] [--facts 200]
[--rounds 8]``; the issue's size is ``--pages 1000``.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _offline

REPO_ROOT = _offline.REPO_ROOT

import boto3  # noqa: E402
import httpx  # noqa: E402

from bench.capacity_units import fact_text, question  # noqa: E402
from bench.recall_scale import Agent, Server, seed  # noqa: E402
from chalicelib import wiring  # noqa: E402
from chalicelib.models.page import IndexedSection, Page, PageState  # noqa: E402
from chalicelib.services.recall.tokens import Cl100kTokenCounter  # noqa: E402
from chalicelib.services.wiki.index import SectionIndexer  # noqa: E402
from chalicelib.storage.dynamodb import to_attributes  # noqa: E402
from chalicelib.storage.keys import section_page_key  # noqa: E402
from chalicelib.storage.wiki_pages import page_to_item  # noqa: E402
from chalicelib.storage.wiki_sections import (  # noqa: E402
    pack_sections,
    page_item,
    unpack_sections,
)
from infra.local_dynamodb import put_items  # noqa: E402
from infra.local_server import BUCKET  # noqa: E402

TABLE = "pinework-local"
PAGE_CHARACTERS = 40_000


def docs_sections(embedder: Any) -> list[IndexedSection]:
    """The sections of ``docs/*.md`` cut into pages of ``PAGE_CHARACTERS``, each page's
    slug its file's stem, embedded (kept in ``build/`` under a digest of the texts, so a
    second run does not embed them again: about 1,100 sections, minutes on a busy CPU)."""
    indexer = SectionIndexer(_NoStore(), Cl100kTokenCounter(), None, lambda *_: None)
    now = datetime.now(UTC)
    cut: list[IndexedSection] = []
    for path in sorted((REPO_ROOT / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for start in range(0, len(text), PAGE_CHARACTERS):
            page = Page(
                id="pag_source",
                workspace_id="wsp_source",
                title=path.stem,
                slug=path.stem,
                text=text[start : start + PAGE_CHARACTERS],
                state=PageState.PUBLISHED,
                created_by="usr_bench",
                created_at=now,
                updated_by="usr_bench",
                updated_at=now,
            )
            cut += indexer.sections_of(page)
    digest = hashlib.sha256(
        "\n".join(f"{s.slug}|{s.scored_text}" for s in cut).encode("utf-8")
    ).hexdigest()[:16]
    cache = REPO_ROOT / "build" / f"wiki-docs-sections-{digest}.bin"
    if cache.is_file():
        stored = unpack_sections(cache.read_bytes(), "wsp_source", "pag_source", 1, "")
        return [replace(s, embedding=t.embedding) for s, t in zip(cut, stored, strict=True)]
    vectors = [
        vector
        for start in range(0, len(cut), 64)
        for vector in embedder.embed([s.scored_text for s in cut[start : start + 64]])
    ]
    embedded = [replace(s, embedding=v) for s, v in zip(cut, vectors, strict=True)]
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(pack_sections(embedded))
    return embedded


class _NoStore:
    """The section store ``docs_sections`` never writes to."""

    def replace(self, *_: Any) -> None:
        raise NotImplementedError

    def remove(self, *_: Any) -> None:
        raise NotImplementedError

    def sections(self, *_: Any) -> list[IndexedSection]:
        return []

    def pages(self, *_: Any) -> list[Any]:
        return []


def seed_wiki(
    server: Server, workspace_id: str, source: list[IndexedSection], pages: int, per_page: int
) -> list[dict[str, str]]:
    """Write ``pages`` published pages of ``per_page`` sections; their index keys."""
    client = boto3.client("dynamodb", endpoint_url=server.dynamodb, region_name="us-east-1")
    s3 = boto3.client("s3", endpoint_url=server.dynamodb, region_name="us-east-1")
    now = datetime.now(UTC)
    items: list[dict[str, Any]] = []
    keys: list[dict[str, str]] = []
    for number in range(pages):
        page_id = f"pag_{number:026d}"
        slug = f"bench-page-{number}"
        page = Page(
            id=page_id,
            workspace_id=workspace_id,
            title=f"Bench page {number}",
            slug=slug,
            text="(sections written by bench/wiki_scale.py)",
            state=PageState.PUBLISHED,
            created_by="usr_bench",
            created_at=now,
            updated_by="usr_bench",
            updated_at=now,
            published_at=now,
        )
        sections = [
            replace(
                source[(number * per_page + at) % len(source)],
                workspace_id=workspace_id,
                page_id=page_id,
                version=1,
                index=at,
                slug=slug,
                text=f"{source[(number * per_page + at) % len(source)].text} (page {number})",
            )
            for at in range(per_page)
        ]
        record = page_item(workspace_id, page_id, 1, slug, len(sections))
        s3.put_object(Bucket=BUCKET, Key=str(record["o"]), Body=pack_sections(sections))
        items += [to_attributes(page_to_item(page)), to_attributes(record)]
        keys.append(section_page_key(workspace_id, page_id))
    put_items(client, TABLE, items)
    return keys


def phase(http: httpx.Client, agent: Agent, rounds: int, first: int) -> list[float]:
    """``rounds`` recalls' seconds, a new question each."""
    seconds: list[float] = []
    for number in range(rounds):
        started = time.perf_counter()
        response = http.post(
            "/memories/recall",
            json={"query": question((first + number) * 37 % agent.facts)},
            headers={"Authorization": f"Bearer {agent.token}"},
        )
        elapsed = time.perf_counter() - started
        response.raise_for_status()
        seconds.append(elapsed)
    return seconds


def main() -> int:
    """Start the server, seed, measure and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--sections", type=int, default=50, help="sections a page")
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=8, help="a phase's; the first a warm-up")
    parser.add_argument("--ports", type=int, nargs=2, default=None, help="API and DynamoDB")
    args = parser.parse_args()

    started = time.perf_counter()
    embedder = wiring.default_embedder()
    source = docs_sections(embedder)
    texts = [fact_text(number) for number in range(args.facts)]
    vectors = [v for start in range(0, len(texts), 64) for v in embedder.embed(texts[start:][:64])]
    print(
        f"embedded {len(source):,} docs sections and {len(texts):,} facts in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="wiki-scale-") as data_dir:
        server = Server(Path(data_dir))
        if args.ports:
            server.api_port, server.dynamodb_port = args.ports
        server.start()
        try:
            workspace_id = server.demo()["workspaceId"]
            issued = server.create_agent(workspace_id, "bench-wiki")
            agent = Agent("agent", issued["id"], issued["token"], args.facts)
            client = boto3.client("dynamodb", endpoint_url=server.dynamodb, region_name="us-east-1")
            seed(client, workspace_id, agent, vectors)
            with httpx.Client(base_url=server.api, timeout=300) as http:
                before = phase(http, agent, args.rounds, 0)[1:]
                started = time.perf_counter()
                keys = seed_wiki(server, workspace_id, source, args.pages, args.sections)
                print(
                    f"wrote {args.pages:,} pages x {args.sections} sections in "
                    f"{time.perf_counter() - started:.0f} s",
                    flush=True,
                )
                cold, *wiki = phase(http, agent, args.rounds, args.rounds)
                for key in keys:
                    client.delete_item(TableName=TABLE, Key=to_attributes(key))
                after = phase(http, agent, args.rounds, 2 * args.rounds)[1:]
        finally:
            server.stop()
    none = before + after
    print(f"\nrecall of an agent with {args.facts} facts (median of {len(none)} / {len(wiki)}):")
    print(f"  no wiki:                      {statistics.median(none) * 1000:8.1f} ms")
    print(
        f"  {args.pages:,} pages x {args.sections} sections: "
        f"{statistics.median(wiki) * 1000:8.1f} ms"
    )
    print(f"  first recall after the wiki was written (cold read): {cold * 1000:.0f} ms")
    ratio = statistics.median(wiki) / statistics.median(none)
    print(f"wiki / no wiki (medians): {ratio:.2f}x (target: at most 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
