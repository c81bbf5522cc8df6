"""The people in a debate: each seat's join-link token (its hash only) and the audience's people's votes.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27

Two new tables, nothing to fill in: debates stored before this revision have no people in them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "seats",
        sa.Column("debate_id", sa.String(64), primary_key=True),
        sa.Column("seat", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_seats_token_hash", "seats", ["token_hash"], unique=True)
    op.create_table(
        "audience_votes",
        sa.Column("debate_id", sa.String(64), primary_key=True),
        sa.Column("phase", sa.String(8), primary_key=True),
        sa.Column("voter_hash", sa.String(64), primary_key=True),
        sa.Column("choice", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Integer, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("audience_votes")
    op.drop_index("ix_seats_token_hash", table_name="seats")
    op.drop_table("seats")
