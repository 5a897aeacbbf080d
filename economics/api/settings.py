"""The HTTP API's settings: limits, pools, token and CORS, read from ``token-economics serve``'s options or the
environment (``TOKEN_ECONOMICS_API_*``), each checked against its bounds before the server starts.

The server's uvicorn worker processes each build the app from the environment (:func:`from_environment`), so
``serve`` writes its options there before starting them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

ENV_PREFIX = "TOKEN_ECONOMICS_API_"
TOKEN_VARIABLE = "TOKEN_ECONOMICS_API_TOKEN"
SHORT_TOKEN_CHARS = 16
"""A token shorter than this is accepted with a warning (``openssl rand -hex 32`` makes a 64-character one)."""


@dataclass(frozen=True)
class Limit:
    """A setting's bounds [low, high] and what it means (the option's help and the message naming it)."""

    low: float
    high: float
    help: str


LIMITS: dict[str, Limit] = {
    "max_body_mb": Limit(1, 4096, "largest request body accepted [MB]; a larger one is answered 413"),
    "max_rows": Limit(1, 10_000_000, "most scenarios in one request; more are answered 422, naming the limit"),
    "request_timeout_s": Limit(0.1, 3600, "time limit of one computation [s]; past it the work is stopped (its "
                               "worker process replaced) and the request answered 504"),
    "queue_timeout_s": Limit(0, 600, "longest wait for a free worker [s]; past it the request is answered 503"),
    "header_timeout_s": Limit(1, 3600, "longest a client may take to send a request's headers, from the moment the "
                              "server waits for them [s]; past it the connection is answered 408 and closed"),
    "body_timeout_s": Limit(1, 3600, "longest silence while a client sends a request's body [s]; past it the "
                            "connection is answered 408 and closed"),
    "evaluate_workers": Limit(1, 64, "worker processes for evaluate, explain and compare"),
    "study_workers": Limit(1, 64, "worker processes for plan, retrofit, uncertainty, report and import-benchmark "
                           "(apart, so a long plan never holds up an evaluate)"),
    "worker_memory_mb": Limit(1536, 1 << 20, "memory limit of each worker process (data and private writable "
                              "mappings, about 1.3 GB of it the loaded engine's and the server's) [MB]; a "
                              "computation that needs more is answered 507"),
    "max_samples": Limit(1, 1_000_000, "most Monte Carlo samples an uncertainty request may ask for"),
}
"""Every numeric setting, its bounds and its meaning: the one source for the options, the environment and the
checks."""


@dataclass(frozen=True)
class Settings:
    """The server's limits (:data:`LIMITS` gives each one's bounds and meaning), the bearer token ('' = none) and the
    origins allowed by CORS (none by default: browsers on other origins are refused).
    """

    max_body_mb: float = 64
    max_rows: int = 100_000
    request_timeout_s: float = 60
    queue_timeout_s: float = 10
    header_timeout_s: float = 20
    body_timeout_s: float = 20
    evaluate_workers: int = 2
    study_workers: int = 1
    worker_memory_mb: int = 4096
    max_samples: int = 100_000
    token: str = ""
    cors_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Refuse a setting outside its bounds, naming it."""
        for name, limit in LIMITS.items():
            value = getattr(self, name)
            if not limit.low <= value <= limit.high:
                raise ValueError(f"{name}: must be between {limit.low:g} and {limit.high:g} ({limit.help}), "
                                 f"got {value!r}")

    @property
    def max_body_bytes(self) -> int:
        """:attr:`max_body_mb` in bytes."""
        return int(self.max_body_mb * (1 << 20))


def _number(name: str, text: str) -> float:
    kind = int if isinstance(getattr(Settings, name), int) else float
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}: not a {'whole ' if kind is int else ''}number: "
                         f"{text[:80]!r}") from None


def from_environment(env: Mapping[str, str] | None = None) -> Settings:
    """The settings the environment gives (``TOKEN_ECONOMICS_API_MAX_ROWS=...``, ``..._TOKEN``,
    ``..._CORS_ORIGINS`` comma-separated), the defaults elsewhere; :class:`ValueError` naming a bad one.

    >>> from_environment({"TOKEN_ECONOMICS_API_MAX_ROWS": "10"}).max_rows
    10
    """
    env = os.environ if env is None else env
    given: dict[str, object] = {}
    for f in fields(Settings):
        text = env.get(ENV_PREFIX + f.name.upper())
        if f.name == "token" and text is not None:
            given[f.name] = checked_token(text)
            continue
        if text is None or text == "":
            continue
        if f.name == "cors_origins":
            given[f.name] = tuple(o.strip() for o in text.split(",") if o.strip())
        else:
            given[f.name] = _number(f.name, text)
    try:
        return Settings(**given)  # type: ignore[arg-type]
    except ValueError as exc:  # "max_rows: must be ..." -> "TOKEN_ECONOMICS_API_MAX_ROWS: must be ..."
        name, rest = str(exc).split(":", 1)
        raise ValueError(ENV_PREFIX + name.upper() + ":" + rest) from None


def checked_token(text: str) -> str:
    r"""The bearer token as set in :data:`TOKEN_VARIABLE`; :class:`ValueError` naming the variable, never the
    token, when it is empty (``"$(cat /run/secrets/missing)"`` gives that: the server would have started open) or
    has whitespace around it (a secret file's newline, as an environment file or an orchestrator passes it whole,
    or a Windows ``\r``: no client could have sent it).

    >>> checked_token("a-long-random-token")
    'a-long-random-token'
    """
    if text == "":
        raise ValueError(f"{TOKEN_VARIABLE}: set but empty; give the token, or unset the variable to serve without "
                         "one")
    if text != text.strip():
        raise ValueError(f"{TOKEN_VARIABLE}: has whitespace or a line ending around it (a secret file's newline or "
                         "Windows \\r, a pasted space); no client could send it: strip it")
    return text


def token_warning(settings: Settings) -> str | None:
    """One line when the token is set but shorter than :data:`SHORT_TOKEN_CHARS` (never the token itself)."""
    if settings.token and len(settings.token) < SHORT_TOKEN_CHARS:
        return (f"warning: {TOKEN_VARIABLE} is shorter than {SHORT_TOKEN_CHARS} characters: easy to guess; "
                "make a long random one (openssl rand -hex 32)")
    return None


def to_environment(settings: Settings) -> dict[str, str]:
    """The environment that gives ``settings`` back (:func:`from_environment`), for uvicorn's worker processes."""
    out = {}
    for f in fields(Settings):
        value = getattr(settings, f.name)
        if f.name == "token" and not value:  # no token: no variable (a set but empty one is refused)
            continue
        out[ENV_PREFIX + f.name.upper()] = ",".join(value) if isinstance(value, tuple) else str(value)
    return out
