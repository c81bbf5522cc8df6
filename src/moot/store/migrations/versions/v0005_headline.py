"""Keep with each debate its result in one line, so listings can say how every kind of debate came out.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02

The column holds `DebateState.headline` (moot.domain.result: the line `moot show`, the exports and the page lead
with) once the debate has a result or has ended: a council's answer, a design review's design, a verdict's
winner. Debates stored before this revision get theirs here, folded from their logs; a log this moot cannot
read keeps NULL and lists without one.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("debates", sa.Column("headline", sa.Text, nullable=True))
    from moot.store.projection import HEADLINE_EVENTS, listed_headline

    connection = op.get_bind()
    debates = sa.table("debates", sa.column("id", sa.String), sa.column("headline", sa.Text))
    events = sa.table(
        "events",
        sa.column("debate_id", sa.String),
        sa.column("seq", sa.Integer),
        sa.column("type", sa.String),
        sa.column("payload", sa.Text),
    )
    ended = sa.select(events.c.debate_id).where(events.c.type.in_(HEADLINE_EVENTS)).distinct()
    for debate_id in connection.execute(ended).scalars().all():
        payloads = connection.execute(
            sa.select(events.c.payload).where(events.c.debate_id == debate_id).order_by(events.c.seq)
        ).scalars()
        headline = listed_headline(list(payloads))
        if headline is not None:
            connection.execute(sa.update(debates).where(debates.c.id == debate_id).values(headline=headline))


def downgrade() -> None:
    # Batch mode: SQLite drops a column by copying the table.
    with op.batch_alter_table("debates") as batch:
        batch.drop_column("headline")
