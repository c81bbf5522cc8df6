"""Tag the debates `moot eval` held with their run, so listings can leave them out.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25

Nothing to fill in: `DebateStarted.eval_run`, which the column projects, is new with this revision, so every
debate already stored is an ordinary one (NULL) and stays listed.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("debates", sa.Column("eval_run", sa.String(64), nullable=True))
    op.create_index("ix_debates_eval_run", "debates", ["eval_run"])


def downgrade() -> None:
    op.drop_index("ix_debates_eval_run", table_name="debates")
    # Batch mode: SQLite drops a column by copying the table.
    with op.batch_alter_table("debates") as batch:
        batch.drop_column("eval_run")
