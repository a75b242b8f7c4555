"""Cold start (docs/issues.md#issue-12): importing the Lambda handler module loads no heavy library;
they load where first needed (``chalicelib/deferred.py``). A structural check, not a
timed one: the figures come from ``bench/cold_start.py``."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from chalicelib.deferred import Deferred, DeferredEmbedder, DeferredSecretFinder, secret_detector

REPO = Path(__file__).resolve().parents[2]
HEAVY = [
    "numpy",
    "tiktoken",
    "detect_secrets",
    "ulid",
    "jinja2",
    "chalicelib.services.recall.embedding",
    "chalicelib.services.recall.relevance",
    "chalicelib.services.recall.relevance_features",
    "chalicelib.services.recall.unrelated",
    "chalicelib.services.secrets",
    "chalicelib.services.secrets.rules",
    "chalicelib.services.review.bedrock_reviewer",
]


def loaded_after(code: str) -> list[str]:
    """Which of ``HEAVY`` a fresh interpreter has loaded after running ``code``."""
    probe = (
        f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_app_loads_no_heavy_library() -> None:
    assert loaded_after("import app") == []


def test_building_the_services_loads_no_heavy_library_either() -> None:
    # A cold Lambda builds the services on its first request, whatever the route.
    code = (
        "from chalicelib import wiring\n"
        "from chalicelib.settings import Settings\n"
        "wiring.build_services(Settings(), client=object(), s3=object(), sqs=object())"
    )
    assert loaded_after(code) == []


def test_first_use_loads_the_library() -> None:
    code = (
        "from chalicelib.deferred import DeferredEmbedder, minilm_embedder\n"
        "DeferredEmbedder(minilm_embedder).embed(['warm the model'])"
    )
    assert {"numpy", "chalicelib.services.recall.embedding"} <= set(loaded_after(code))


def test_a_deferred_value_is_built_once_under_concurrent_first_use() -> None:
    builds: list[int] = []
    start = threading.Barrier(8)

    def build() -> int:
        builds.append(1)
        return len(builds)

    deferred = Deferred(build)
    results: list[int] = []

    def use() -> None:
        start.wait()
        results.append(deferred.get())

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == [1] and results == [1] * 8 and deferred.built


def test_stand_ins_answer_as_the_real_parts_do() -> None:
    finder = DeferredSecretFinder(secret_detector)
    assert not finder.target.built
    assert finder.find_secret("the deploy runs on Tuesdays") is None
    assert finder.find_secret("key AKIAIOSFODNN7EXAMPLE here") is not None
    assert finder.target.built

    class Fixed:
        def embed(self, texts: list[str]) -> list[bytes]:
            return [text.encode() for text in texts]

    embedder = DeferredEmbedder(lambda: Fixed())  # type: ignore[arg-type, return-value]
    assert embedder.embed(["a", "b"]) == [b"a", b"b"]
