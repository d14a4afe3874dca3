"""Request and response bodies of experiment management (docs/experiments.md): the PATCH of a
run or sweep, what a DELETE removed, two sweeps side by side."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationInfo, field_validator

from services.experiments import MAX_NOTE_LENGTH
from services.experiments.service import Deleted, Edit


class Changes(BaseModel):
    """Every field optional; those given are applied together, or none is (a refused field
    is a 422 naming it). Owner or admin only."""

    model_config = ConfigDict(extra="forbid")

    shared: StrictBool | None = Field(default=None, description="visible to the whole lab")
    tags: list[str] | None = Field(
        default=None, max_length=100, description="the tags, replacing the current ones ([] clears them)"
    )
    add_tags: list[str] = Field(default_factory=list, max_length=100, description="tags to add")
    remove_tags: list[str] = Field(default_factory=list, max_length=100, description="tags to remove")
    note: str | None = Field(
        default=None,
        max_length=MAX_NOTE_LENGTH,
        description=f"free text, at most {MAX_NOTE_LENGTH} characters (null clears it)",
    )
    archived: StrictBool | None = Field(
        default=None,
        description="hidden from the default lists (true) or restored (false); only once nothing is queued or running",
    )

    @field_validator("shared", "tags", "archived", mode="before")
    @classmethod
    def _not_null(cls, value: Any, info: ValidationInfo) -> Any:
        """A null here would silently change nothing: refused, naming the field."""
        if value is None:
            raise ValueError(f"`{info.field_name}` cannot be null: leave it out to keep it as it is")
        return value

    def edit(self) -> Edit:
        return Edit(
            shared=self.shared,
            tags=self.tags,
            add_tags=self.add_tags,
            remove_tags=self.remove_tags,
            set_note="note" in self.model_fields_set,
            note=self.note,
            archived=self.archived,
        )


class DeletedOut(BaseModel):
    runs: int = Field(description="runs deleted")
    results: int = Field(
        description="results deleted with their per-flow rows and traces (a result another run shares stays)"
    )

    @classmethod
    def of(cls, deleted: Deleted) -> DeletedOut:
        return cls(runs=deleted.runs, results=deleted.results)


class ComparedSweep(BaseModel):
    id: uuid.UUID
    name: str | None
    preset: str | None


class SweepComparisonOut(BaseModel):
    a: ComparedSweep
    b: ComparedSweep
    metric: str
    axes: list[str] = Field(description="the axes both sweeps have: the rows are aligned on them and the flow group")
    only_a: list[str] = Field(description="axes of `a` only (columns `a.<path>`)")
    only_b: list[str] = Field(description="axes of `b` only (columns `b.<path>`)")
    rows: list[dict[str, Any]] = Field(
        description="per aligned key: the common axes' values, `flow`, `a_*` and `b_*` statistics (null where one "
        "sweep has no such point), `difference` (b − a) and `ratio` (b / a) of the means"
    )
