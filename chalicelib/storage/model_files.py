"""Model weights as local files (``ModelFile``, docs/operations.md#reranker-weights).

``S3ModelFile`` reads one object of the stack's bucket (``models/…``, uploaded by both
deploy paths) into a local folder on first use, as a Lambda function does into ``/tmp``:
written under a temporary name and renamed into place, so a reader never sees half a
file; one download per process however many threads ask at once; a file already there
(a warm container, or another process that got there first) is reused without a call.
``LocalModelFile`` is the checkout's own file (``make`` builds it).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from chalicelib.storage.aws_errors import S3_THROTTLING, translate_errors
from chalicelib.storage.protocols import ModelFileMissing

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_CHUNK = 1 << 20
"""Bytes copied from the response to the file at a time."""


class S3ModelFile:
    """``ModelFile`` from an S3 object, kept in ``local_dir`` (the client is built on first
    download: docs/conventions.md#rule-6).

    Args:
        client_factory: returns a boto3 S3 client.
        bucket: the bucket (``settings.bucket_name``).
        key: the object (``keys.RERANKER_WEIGHTS_OBJECT``).
        local_dir: where the file is kept (``settings.model_dir``; created when needed).
            The file keeps the key's last part as its name.
    """

    def __init__(
        self, client_factory: Callable[[], S3Client], bucket: str, key: str, local_dir: Path
    ) -> None:
        self._factory = client_factory
        self._bucket = bucket
        self._key = key
        self._target = local_dir / key.rsplit("/", 1)[-1]
        self._lock = threading.Lock()

    def path(self) -> Path:
        """The local file, downloaded by the first call (one ``GetObject``).

        Raises:
            ModelFileMissing: the bucket has no such object (or no such bucket).
            RateLimited: S3 throttled the download.
        """
        if self._target.is_file():
            return self._target
        with self._lock:  # one download however many threads ask at once
            if not self._target.is_file():
                self._download()
        return self._target

    def _download(self) -> None:
        s3 = translate_errors(self._factory(), S3_THROTTLING)
        try:
            response = s3.get_object(Bucket=self._bucket, Key=self._key)
        except ClientError as error:
            if error.response["Error"]["Code"] in ("NoSuchKey", "NoSuchBucket", "404"):
                raise ModelFileMissing(
                    f"s3://{self._bucket}/{self._key} does not exist: deploy again "
                    "(both deploy paths upload it; docs/operations.md#reranker-weights)"
                ) from error
            raise
        self._target.parent.mkdir(parents=True, exist_ok=True)
        # A temporary name in the same folder, renamed once complete: the rename is
        # atomic, so another process never reads a partial file.
        handle, temporary = tempfile.mkstemp(
            dir=self._target.parent, prefix=f".{self._target.name}.", suffix=".part"
        )
        try:
            with os.fdopen(handle, "wb") as file:
                shutil.copyfileobj(response["Body"], file, _CHUNK)
            os.replace(temporary, self._target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


class LocalModelFile:
    """``ModelFile`` already on this machine (the checkout's ``models/`` file).

    Args:
        file: the weights' path.
    """

    def __init__(self, file: Path) -> None:
        self._file = file

    def path(self) -> Path:
        """The file itself.

        Raises:
            ModelFileMissing: it does not exist (run ``make``: docs/operations.md#reranker-weights).
        """
        if not self._file.is_file():
            raise ModelFileMissing(
                f"{self._file} does not exist: build it with `make models/{self._file.name}` "
                "(docs/operations.md#reranker-weights)"
            )
        return self._file
