"""A request's body as the parts a computation reads: a table sent as the body (JSON, CSV or Parquet, by its
Content-Type, or sniffed from its first bytes as the CLI does) or as multipart form fields (``scenarios``,
``candidates``, ``curves``, ``files``).
"""

from __future__ import annotations

from typing import Any

from economics.api.errors import ApiError, Code

TABLE_TYPES = {
    "application/json": "json", "text/json": "json",
    "text/csv": "csv", "application/csv": "csv", "text/plain": "csv",
    "application/vnd.apache.parquet": "parquet", "application/x-parquet": "parquet", "application/parquet": "parquet",
    "application/octet-stream": None, "application/gzip": None, "application/zstd": None, "": None,
}
"""The Content-Types a table body may have, and the format each says (None: told by the first bytes)."""

FORM_FIELDS = ("scenarios", "candidates", "curves", "files")
REPEATED_FORM_FIELDS = frozenset({"files"})
"""The form field that may be sent more than once (import-benchmark's benchmark files); a second ``scenarios``,
``candidates`` or ``curves`` is refused, never left unread."""
MAX_FORM_FILES = 64
"""Files in one form (import-benchmark's benchmark files, and the others)."""


def media_type(content_type: str | None) -> str:
    """The media type of a Content-Type header, lower case, without its parameters."""
    return (content_type or "").split(";")[0].strip().lower()


def table_format(content_type: str | None) -> str | None:
    """The table format a Content-Type says (None: sniffed); :class:`ApiError` 415 for one that is not a table's."""
    kind = media_type(content_type)
    if kind not in TABLE_TYPES:
        raise ApiError(Code.UNSUPPORTED_MEDIA_TYPE, f"Content-Type '{kind[:100]}' is not a table's: send JSON "
                       "(application/json), CSV (text/csv), Parquet (application/vnd.apache.parquet) or "
                       "multipart/form-data with a 'scenarios' file")
    return TABLE_TYPES[kind]


async def form_parts(request: Any) -> dict[str, list[tuple[str, bytes]]]:
    """The files and fields of a multipart form, by field name; :class:`ApiError` for an unknown field."""
    try:
        form = await request.form(max_files=MAX_FORM_FILES, max_fields=MAX_FORM_FILES)
    except Exception as exc:  # the multipart parser's own errors: a malformed form is the client's
        raise ApiError(Code.UNUSABLE_INPUT, f"not a usable multipart form: {str(exc)[:200]}") from None
    parts: dict[str, list[tuple[str, bytes]]] = {}
    try:
        for name, value in form.multi_items():
            if name not in FORM_FIELDS:
                raise ApiError(Code.UNUSABLE_INPUT, f"form field '{name[:100]}' is not one of "
                               f"{', '.join(FORM_FIELDS)}")
            if name in parts and name not in REPEATED_FORM_FIELDS:
                raise ApiError(Code.UNUSABLE_INPUT, f"form field '{name}' is given more than once; send one "
                               f"'{name}' (only 'files' may be repeated)", [
                                   {"row": None, "field": name, "value": None,
                                    "message": f"{name}: given more than once"}])
            if isinstance(value, str):
                parts.setdefault(name, []).append((name, value.encode()))
            else:
                parts.setdefault(name, []).append((value.filename or name, await value.read()))
    finally:
        await form.close()
    return parts


async def request_parts(request: Any) -> tuple[dict[str, list[tuple[str, bytes]]], str | None]:
    """(parts, input format) of a request: a form's fields, or the body as ``scenarios`` in the format its
    Content-Type says.
    """
    content_type = request.headers.get("content-type")
    if media_type(content_type) == "multipart/form-data":
        return await form_parts(request), None
    fmt = table_format(content_type)
    body = await request.body()
    return ({"scenarios": [("body", body)]} if body else {}), fmt
