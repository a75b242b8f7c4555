"""The ``ModelFile`` contract (chalicelib/storage/protocols.py;
docs/operations.md#reranker-weights): weights too large for the Lambda zip, read as a local
file: the S3 adapter (on moto) downloads once into its folder, the local one is the
checkout's file; both raise ``ModelFileMissing`` when there is nothing to read."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.settings import Settings
from chalicelib.storage.keys import RERANKER_WEIGHTS_OBJECT
from chalicelib.storage.model_files import LocalModelFile, S3ModelFile
from chalicelib.storage.protocols import ModelFile, ModelFileMissing
from tests.helpers import BUCKET

WEIGHTS = bytes(range(256)) * 4096 + b"tail"
"""1 MiB and a bit: more than one chunk of the copy."""


class CountedS3:
    """An S3 client factory that counts the clients built and the ``GetObject`` calls."""

    def __init__(self, s3: Any) -> None:
        self.s3 = s3
        self.gets = 0
        self.lock = threading.Lock()
        s3.meta.events.register("before-call.s3.GetObject", self._count)

    def _count(self, **_: Any) -> None:
        with self.lock:
            self.gets += 1

    def __call__(self) -> Any:
        return self.s3


def s3_file(s3: Any, folder: Path) -> tuple[S3ModelFile, CountedS3]:
    counted = CountedS3(s3)
    return S3ModelFile(counted, BUCKET, RERANKER_WEIGHTS_OBJECT, folder / "models"), counted


IMPLEMENTATIONS: dict[str, Callable[[Any, Path, bool], ModelFile]] = {
    "s3": lambda s3, folder, present: s3_file(s3, folder)[0],
    "local": lambda s3, folder, present: LocalModelFile(folder / "checkout.npz"),
}


def _place(s3: Any, folder: Path) -> None:
    s3.put_object(Bucket=BUCKET, Key=RERANKER_WEIGHTS_OBJECT, Body=WEIGHTS)
    (folder / "checkout.npz").write_bytes(WEIGHTS)


@pytest.mark.parametrize("implementation", sorted(IMPLEMENTATIONS))
def test_the_path_holds_the_weights_byte_for_byte(
    implementation: str, s3: Any, tmp_path: Path
) -> None:
    _place(s3, tmp_path)
    model = IMPLEMENTATIONS[implementation](s3, tmp_path, True)
    assert model.path().read_bytes() == WEIGHTS
    assert model.path().read_bytes() == WEIGHTS


@pytest.mark.parametrize("implementation", sorted(IMPLEMENTATIONS))
def test_missing_weights_raise_model_file_missing_naming_them(
    implementation: str, s3: Any, tmp_path: Path
) -> None:
    model = IMPLEMENTATIONS[implementation](s3, tmp_path, False)
    with pytest.raises(ModelFileMissing, match=r"ms-marco-minilm-l12-int8\.npz|checkout\.npz"):
        model.path()
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())


def test_a_missing_bucket_is_model_file_missing_too(s3: Any, tmp_path: Path) -> None:
    model = S3ModelFile(lambda: s3, "no-such-bucket", RERANKER_WEIGHTS_OBJECT, tmp_path)
    with pytest.raises(ModelFileMissing, match="s3://no-such-bucket/models/"):
        model.path()


def test_the_second_call_downloads_nothing(s3: Any, tmp_path: Path) -> None:
    _place(s3, tmp_path)
    model, counted = s3_file(s3, tmp_path)
    first = model.path()
    assert model.path() == first
    assert counted.gets == 1
    assert first == tmp_path / "models" / "ms-marco-minilm-l12-int8.npz"
    assert [item.name for item in first.parent.iterdir()] == [first.name]  # no temporary left


def test_a_file_already_in_the_folder_is_reused_without_a_call(s3: Any, tmp_path: Path) -> None:
    # A warm container, or another process that downloaded it first.
    _place(s3, tmp_path)
    s3_file(s3, tmp_path)[0].path()
    again, counted = s3_file(s3, tmp_path)
    assert again.path().read_bytes() == WEIGHTS
    assert counted.gets == 0


def test_concurrent_first_calls_download_once(s3: Any, tmp_path: Path) -> None:
    _place(s3, tmp_path)
    model, counted = s3_file(s3, tmp_path)
    start = threading.Barrier(8)

    def first_use(_: int) -> Path:
        start.wait()
        return model.path()

    with ThreadPoolExecutor(8) as pool:
        paths = set(pool.map(first_use, range(8)))
    assert counted.gets == 1
    assert len(paths) == 1
    assert paths.pop().read_bytes() == WEIGHTS


def test_a_failed_download_leaves_no_file_and_the_next_call_retries(
    s3: Any, tmp_path: Path
) -> None:
    _place(s3, tmp_path)

    class Broken(io.RawIOBase):
        def readinto(self, buffer: Any) -> int:
            raise ConnectionResetError("reset while reading")

    def broken_body(parsed: dict[str, Any], **_: Any) -> None:
        parsed["Body"] = Broken()

    model, counted = s3_file(s3, tmp_path)
    s3.meta.events.register("after-call.s3.GetObject", broken_body)
    with pytest.raises(ConnectionResetError):
        model.path()
    assert not any((tmp_path / "models").glob("*"))  # the temporary is gone
    s3.meta.events.unregister("after-call.s3.GetObject", broken_body)
    assert model.path().read_bytes() == WEIGHTS
    assert counted.gets == 2


@pytest.mark.parametrize(
    ("environment", "kind"),
    [
        ({}, LocalModelFile),
        ({"AWS_LAMBDA_FUNCTION_NAME": "pinework-prod"}, S3ModelFile),
        ({"PINEWORK_MODEL_SOURCE": "s3"}, S3ModelFile),
        ({"AWS_LAMBDA_FUNCTION_NAME": "x", "PINEWORK_MODEL_SOURCE": "local"}, LocalModelFile),
    ],
)
def test_reranker_weights_come_from_the_bucket_on_lambda(
    environment: dict[str, str], kind: type, tmp_path: Path
) -> None:
    # The checkout's models/ file exists here (make builds it before the tests).
    def no_client() -> Any:
        raise AssertionError("choosing builds no client")

    chosen = wiring.reranker_weights(Settings.from_env(environment), no_client)
    assert isinstance(chosen, kind)
