"""Keep with each debate what kept it from running as asked, so listings can say it ended degraded.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29

Nothing to fill in: `DebateCompleted.problems`, which the column projects, is new with this revision; a debate
stored before it lists as it did (NULL: no problems recorded).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("debates", sa.Column("problems", sa.JSON, nullable=True))


def downgrade() -> None:
    # Batch mode: SQLite drops a column by copying the table.
    with op.batch_alter_table("debates") as batch:
        batch.drop_column("problems")
