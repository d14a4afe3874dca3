"""compact trace storage

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 21:45:00.000000

A result's traces move from one JSONB document (`traces.data`, read whole by every reader:
9 M points took 1.3 GB of API memory per read) to compressed chunks of one series each
(`trace_chunks`, services/runs/trace_codec.py), with the layout in `traces`. Existing traces
are converted one at a time, their flows and links streamed out of the JSONB one item at a
time; the downgrade writes the JSONB documents back.
"""

from collections.abc import Iterator, Sequence

import numpy as np
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from services.runs import trace_codec

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LAYOUT = ("samples", "chunk_samples", "series", "items")


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column(
        "traces",
        sa.Column("samples", sa.BigInteger(), nullable=True, comment="sample times (the length of every series)"),
    )
    op.add_column(
        "traces", sa.Column("chunk_samples", sa.Integer(), nullable=True, comment="samples per chunk of every series")
    )
    op.add_column(
        "traces",
        sa.Column(
            "series",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=True,
            comment="[{kind: time|flow|link, name, quantity, dtype: f8|i8}]; its index is trace_chunks.series",
        ),
    )
    op.add_column(
        "traces",
        sa.Column(
            "items",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=True,
            comment='{"flows": [names], "links": [names]}: the traced flows and links, in the core\'s order',
        ),
    )
    op.create_table(
        "trace_chunks",
        sa.Column("result_id", sa.Uuid(), nullable=False),
        sa.Column("chunk", sa.Integer(), nullable=False),
        sa.Column("series", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.CheckConstraint("chunk >= 0", name=op.f("ck_trace_chunks_chunk_not_negative")),
        sa.CheckConstraint("series >= 0", name=op.f("ck_trace_chunks_series_not_negative")),
        sa.ForeignKeyConstraint(
            ["result_id"], ["traces.result_id"], name=op.f("fk_trace_chunks_result_id_traces"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("result_id", "chunk", "series", name=op.f("pk_trace_chunks")),
    )
    # The chunks are zlib-compressed already: PostgreSQL need not try again.
    op.execute("ALTER TABLE trace_chunks ALTER COLUMN data SET STORAGE EXTERNAL")

    conn = op.get_bind()
    for (result_id,) in conn.execute(sa.text("SELECT result_id FROM traces ORDER BY result_id")).all():
        _to_chunks(conn, result_id)

    for column in LAYOUT:
        op.alter_column("traces", column, nullable=False)
    op.create_check_constraint(op.f("ck_traces_samples_not_negative"), "traces", "samples >= 0")
    op.create_check_constraint(op.f("ck_traces_chunk_samples_positive"), "traces", "chunk_samples >= 1")
    op.drop_column("traces", "data")


def _to_chunks(conn: sa.Connection, result_id: object) -> None:
    """One JSONB trace as chunks: the sample times, then each flow and link item alone."""
    one = {"id": result_id}
    time_s = conn.execute(
        sa.text("SELECT coalesce(data->'time_s', '[]') FROM traces WHERE result_id = :id"), one
    ).scalar_one()
    count = conn.execute(
        sa.text(
            "SELECT count(*) FROM traces, jsonb_array_elements(coalesce(data->'flows', '[]') || coalesce(data->'links', '[]')) item, "
            "jsonb_each(item) kv WHERE result_id = :id AND kv.key <> 'name' AND jsonb_typeof(kv.value) = 'array'"
        ),
        one,
    ).scalar_one()
    samples, chunk_samples = len(time_s), trace_codec.chunk_samples_for(1 + count)
    items = conn.execute(
        sa.text(
            "SELECT kind, item FROM traces, LATERAL ("
            " SELECT 0 AS o, 'flows' AS kind, i, item FROM jsonb_array_elements(coalesce(data->'flows', '[]')) WITH ORDINALITY f(item, i)"
            " UNION ALL"
            " SELECT 1, 'links', i, item FROM jsonb_array_elements(coalesce(data->'links', '[]')) WITH ORDINALITY l(item, i)"
            ") x WHERE result_id = :id ORDER BY o, i"
        ).execution_options(yield_per=1),
        one,
    )
    series, names = [], {"flows": [], "links": []}

    def store(group: Iterator[tuple[str, str | None, str, Sequence[object]]]) -> None:
        for kind, name, quantity, values in group:
            dtype, chunks = trace_codec.encode_series(values, samples, chunk_samples)
            series.append({"kind": kind, "name": name, "quantity": quantity, "dtype": dtype})
            if chunks:
                conn.execute(
                    sa.text(
                        "INSERT INTO trace_chunks (result_id, chunk, series, data) VALUES (:id, :chunk, :series, :data)"
                    ),
                    [{"id": result_id, "chunk": c, "series": len(series) - 1, "data": d} for c, d in enumerate(chunks)],
                )

    store(trace_codec.series_of({"time_s": time_s}))
    for key, item in items:  # one flow or link in memory at a time
        names[key].append(item["name"])
        store(trace_codec.item_series(key.removesuffix("s"), item))
    conn.execute(
        sa.text(
            "UPDATE traces SET samples = :samples, chunk_samples = :chunk, series = :series, items = :items WHERE result_id = :id"
        ).bindparams(sa.bindparam("series", type_=postgresql.JSONB), sa.bindparam("items", type_=postgresql.JSONB)),
        {"id": result_id, "samples": samples, "chunk": chunk_samples, "series": series, "items": names},
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.add_column("traces", sa.Column("data", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    conn = op.get_bind()
    for result_id, series, items in conn.execute(
        sa.text("SELECT result_id, series, items FROM traces ORDER BY result_id")
    ).all():
        chunks: list[list[np.ndarray]] = [[] for _ in series]
        for number, data in conn.execute(
            sa.text("SELECT series, data FROM trace_chunks WHERE result_id = :id ORDER BY series, chunk"),
            {"id": result_id},
        ):
            chunks[number].append(trace_codec.decode(data, series[number]["dtype"]))
        values = [np.concatenate(c) if c else np.empty(0) for c in chunks]
        conn.execute(
            sa.text("UPDATE traces SET data = :data WHERE result_id = :id").bindparams(
                sa.bindparam("data", type_=postgresql.JSONB)
            ),
            {"id": result_id, "data": trace_codec.assemble(series, items, values)},
        )
    op.drop_table("trace_chunks")
    op.drop_constraint(op.f("ck_traces_chunk_samples_positive"), "traces", type_="check")
    op.drop_constraint(op.f("ck_traces_samples_not_negative"), "traces", type_="check")
    for column in LAYOUT:
        op.drop_column("traces", column)
    op.alter_column("traces", "data", nullable=False)
