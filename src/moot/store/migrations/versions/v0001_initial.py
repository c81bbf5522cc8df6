"""Create the debates projection and the events log.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "debates",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("topic", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("format", sa.String(32), nullable=False),
        sa.Column("turn_order", sa.String(16), nullable=False),
        sa.Column("rounds", sa.Integer, nullable=False),
        sa.Column("participants", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("winner", sa.Text, nullable=True),
        sa.Column("config", sa.JSON, nullable=False),
    )
    op.create_index("ix_debates_created_at", "debates", ["created_at"])
    op.create_table(
        "events",
        sa.Column(
            "debate_id",
            sa.String(64),
            sa.ForeignKey("debates.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("events")
    op.drop_index("ix_debates_created_at", table_name="debates")
    op.drop_table("debates")
