"""The store's first schema: scenarios and their versions, curves, studies.

Revision ID: 0001
Revises:
Create Date: 2026-01-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the four tables."""
    op.create_table(
        "scenarios",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("project", sa.String(100), nullable=False),
        sa.Column("latest_version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(100), nullable=False),
    )
    op.create_index("ix_scenarios_project", "scenarios", ["project"])
    op.create_table(
        "scenario_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("scenario_id", sa.Integer, sa.ForeignKey("scenarios.id", ondelete="CASCADE"), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("fields", sa.Text, nullable=False),
        sa.Column("changes", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("saved_by", sa.String(100), nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("engine_version", sa.String(40), nullable=False),
        sa.UniqueConstraint("scenario_id", "version", name="uq_scenario_versions_scenario_version"),
    )
    op.create_table(
        "curves",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("points", sa.Integer, nullable=False),
        sa.Column("provenance", sa.Text, nullable=False),
        sa.Column("project", sa.String(100), nullable=False),
        sa.Column("saved_by", sa.String(100), nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "studies",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("project", sa.String(100), nullable=False),
        sa.Column("scenario_name", sa.String(200), nullable=False),
        sa.Column("scenario_version", sa.Integer, nullable=True),
        sa.Column("inputs", sa.Text, nullable=False),
        sa.Column("results", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("saved_by", sa.String(100), nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("engine_version", sa.String(40), nullable=False),
    )
    op.create_index("ix_studies_project", "studies", ["project"])


def downgrade() -> None:
    """Drop them."""
    for table in ("studies", "curves", "scenario_versions", "scenarios"):
        op.drop_table(table)
