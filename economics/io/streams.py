"""Byte streams under the table readers: a path, bytes in memory or a pipe opened once; gzip and zstd undone with
their errors made the user's and their output bounded; UTF-16 transcoded and byte-order marks dropped.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from economics.schema.validation import InputError
from economics.schema.values import shown, shown_path

GZIP_MAGIC, ZSTD_MAGIC, PARQUET_MAGIC = b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"PAR1"


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


UTF8_BOM = b"\xef\xbb\xbf"


class Chain(io.RawIOBase):
    """A readable stream: ``head`` bytes already read, then the rest of ``rest``."""

    def __init__(self, head: bytes, rest: Any) -> None:
        self.head, self.rest = head, rest

    def readable(self) -> bool:
        """Always: the stream is read, never written."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` whole unless the input ends (Arrow takes a short read for a block boundary)."""
        view = memoryview(buffer).cast("B")
        n = min(len(view), len(self.head))
        view[:n] = self.head[:n]
        self.head = self.head[n:]
        while n < len(view):
            data = self.rest.read(len(view) - n)
            if not data:
                break
            view[n:n + len(data)] = data
            n += len(data)
        return n


MAX_BUFFERED_BYTES = 1 << 30
"""A Parquet or JSON table from a pipe or standard input is read whole (Parquet needs to seek, JSON is one
document): at most this many bytes, else an :class:`InputError` that says to pass a file by path."""


Source = str | Path | bytes | IO[bytes]
"""A table to read: a path, its bytes, or a binary stream (standard input, a pipe), read once from the start."""


def stream_of(source: Source) -> IO[bytes] | None:
    """A stream to read ``source`` from once, where it is one: a binary stream, or a path naming a pipe or a
    device (which can be opened only once; a regular file is opened by the readers as they need). Else None.
    """
    if isinstance(source, bytes):
        return None
    if not isinstance(source, str | Path):
        return source
    try:
        mode = os.stat(source).st_mode
    except (OSError, ValueError):
        return None  # the reader names the path it cannot read
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        try:
            return open(source, "rb")  # noqa: SIM115 - closed with the reader
        except OSError as exc:
            raise InputError(f"cannot read {shown_path(str(source))}: {exc.strerror or type(exc).__name__}") from None
    return None


def read_up_to(stream: IO[bytes], n: int) -> bytes:
    """Up to ``n`` bytes of ``stream`` (fewer only at its end: a pipe hands out what it holds)."""
    parts, got = [], 0
    while got < n:
        data = stream.read(n - got)
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def open_source(source: Source) -> tuple[Any, Callable[[], float | None]]:
    """(raw byte stream, fraction read so far or None) of a path, of bytes already in memory or of a stream."""
    if not isinstance(source, str | Path | bytes):
        return source, lambda: None
    if isinstance(source, bytes):
        buffer = pa.BufferReader(source)
        return buffer, lambda: buffer.tell() / max(len(source), 1)
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed with the reader
        size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        raise InputError(f"cannot read {shown_path(str(source))}: {exc.strerror or type(exc).__name__}") from None
    except ValueError as exc:
        raise InputError(f"cannot read {shown_path(str(source))}: {exc}") from None
    return handle, lambda: handle.tell() / max(size, 1) if not handle.closed else 1.0


MAX_DECOMPRESSED_BYTES = 64 << 30
"""Decompressed bytes a gzip or zstd input may hold (64 GB, about 500 million scenario rows); beyond it the read
stops with an :class:`InputError` (``evaluate --max-decompressed-mb`` sets another bound)."""


class Decompressed:
    """A decompressing stream whose errors are the user's (a damaged, cut-short or over-long file: an
    :class:`InputError` naming what is wrong), never an internal error, and whose output is bounded.
    """

    def __init__(self, inner: Any, codec: str, limit: int) -> None:
        self.inner, self.codec, self.limit, self.count = inner, codec, limit, 0

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` decompressed bytes."""
        try:
            data = bytes(self.inner.read(n))
        except EOFError:
            raise InputError(f"the {self.codec} file is cut short (it ends before its end-of-stream marker); "
                             "refused") from None
        except (OSError, zlib.error, pa.ArrowInvalid) as exc:
            raise InputError(f"the {self.codec} file is damaged ({shown(str(exc), 200)}); refused") from None
        self.count += len(data)
        if self.count > self.limit:
            raise InputError(f"the {self.codec} file decompresses to more than {self.limit >> 20:,} MB "
                             "(--max-decompressed-mb sets the bound)")
        return data

    def close(self) -> None:
        """Close the decompressor."""
        self.inner.close()


def decompressed(raw: Any, limit: int | None = None) -> tuple[Any, bytes]:
    """(stream, first bytes) with gzip or zstd undone when the magic bytes say so. Gzip goes through Python's
    reader, which checks the trailer (CRC and length) and refuses a cut-short stream or trailing garbage.
    """
    head = raw.read(4)
    bound = MAX_DECOMPRESSED_BYTES if limit is None else limit
    if head.startswith(GZIP_MAGIC):
        inner = Decompressed(gzip.GzipFile(fileobj=Chain(head, raw), mode="rb"), "gzip", bound)
        return inner, inner.read(4)
    if head.startswith(ZSTD_MAGIC):
        zstd = pa.CompressedInputStream(pa.PythonFile(Chain(head, raw), mode="r"), "zstd")
        inner = Decompressed(zstd, "zstd", bound)
        return inner, inner.read(4)
    return raw, head


def utf8_stream(stream: Any, head: bytes) -> Any:
    """A UTF-8 byte stream without a byte-order mark: UTF-16 with a BOM is transcoded, a UTF-8 BOM dropped."""
    if head.startswith(UTF16_BOMS):
        return pa.transcoding_input_stream(pa.PythonFile(Chain(head, stream), mode="r"), "utf-16", "utf-8")
    return Chain(head.removeprefix(UTF8_BOM), stream)
