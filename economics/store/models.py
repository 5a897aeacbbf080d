"""The store's tables as SQLAlchemy 2 models. The migrations (``migrations/versions``) create the same tables: a
test compares them on SQLite and PostgreSQL, so the two never drift apart.

JSON is kept as text the store writes and reads itself (:mod:`economics.store.records`): strict JSON (no NaN, no
Infinity) on every engine, and a value edited by hand into something else is refused on reading, naming its column.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from economics.store.limits import NAME_CHARS, PROJECT_CHARS, WHO_CHARS


class Base(DeclarativeBase):
    """The store's tables."""


class Scenario(Base):
    """A named scenario: its project and the number of its newest version (the optimistic-concurrency check)."""

    __tablename__ = "scenarios"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(NAME_CHARS), unique=True)
    project: Mapped[str] = mapped_column(sa.String(PROJECT_CHARS), default="", index=True)
    latest_version: Mapped[int] = mapped_column(sa.Integer)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True))
    created_by: Mapped[str] = mapped_column(sa.String(WHO_CHARS))
    versions: Mapped[list[ScenarioVersion]] = relationship(back_populates="scenario", cascade="all, delete-orphan",
                                                          passive_deletes=True, order_by="ScenarioVersion.version")


class ScenarioVersion(Base):
    """One saved version of a scenario: its fields (JSON object), who saved it and when, what changed against the
    version before (JSON list), the note given and the engine's version.
    """

    __tablename__ = "scenario_versions"
    __table_args__ = (sa.UniqueConstraint("scenario_id", "version", name="uq_scenario_versions_scenario_version"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    scenario_id: Mapped[int] = mapped_column(sa.ForeignKey("scenarios.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(sa.Integer)
    fields: Mapped[str] = mapped_column(sa.Text)
    changes: Mapped[str] = mapped_column(sa.Text)
    note: Mapped[str] = mapped_column(sa.Text, default="")
    saved_by: Mapped[str] = mapped_column(sa.String(WHO_CHARS))
    saved_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True))
    engine_version: Mapped[str] = mapped_column(sa.String(40))
    scenario: Mapped[Scenario] = relationship(back_populates="versions")


class Curve(Base):
    """A curve file (``import-benchmark`` output) by the SHA-256 of its bytes, with its provenance (JSON)."""

    __tablename__ = "curves"
    sha256: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(NAME_CHARS))
    data: Mapped[bytes] = mapped_column(sa.LargeBinary)
    points: Mapped[int] = mapped_column(sa.Integer)
    provenance: Mapped[str] = mapped_column(sa.Text)
    project: Mapped[str] = mapped_column(sa.String(PROJECT_CHARS), default="")
    saved_by: Mapped[str] = mapped_column(sa.String(WHO_CHARS))
    saved_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True))


class Study(Base):
    """A study or plan: its kind, the scenario (and version) it was computed from, its inputs and results (JSON)."""

    __tablename__ = "studies"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(NAME_CHARS), unique=True)
    kind: Mapped[str] = mapped_column(sa.String(40))
    project: Mapped[str] = mapped_column(sa.String(PROJECT_CHARS), default="", index=True)
    scenario_name: Mapped[str] = mapped_column(sa.String(NAME_CHARS), default="")
    scenario_version: Mapped[int | None] = mapped_column(sa.Integer, nullable=True)
    inputs: Mapped[str] = mapped_column(sa.Text)
    results: Mapped[str] = mapped_column(sa.Text)
    note: Mapped[str] = mapped_column(sa.Text, default="")
    saved_by: Mapped[str] = mapped_column(sa.String(WHO_CHARS))
    saved_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True))
    engine_version: Mapped[str] = mapped_column(sa.String(40))
