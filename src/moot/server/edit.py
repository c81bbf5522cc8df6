"""Editing the config of a debate created or queued, and not started yet.

`PATCH /api/debates/{id}` takes a JSON merge patch (RFC 7386) over the debate's config as it was written:
the stored config without the defaults moot fills in (`without_defaults`), so a patch of one field leaves the
others as the user wrote them and what was derived (names, stances, the judge following participant 1's
model) is derived again. A key set to null is removed, which brings its default back; lists are replaced
whole. `PUT /api/debates/{id}/config` replaces the config whole, for what a merge patch cannot say (`judge:
null`, no judge, is a removal there).

The new config passes every check a start would run (the filling of `moot run --config`, the format's
rules, each model's key and package, this server's limits) before anything is written. It is appended to
the debate's log as `config_edited`, never written over `debate_started`: the log keeps what was first
asked, the fold takes the last. People's seats were given join links when the debate was created, so an
edit must keep its people as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from moot.config_files.defaults import without_defaults
from moot.domain.config import DebateConfig
from moot.domain.events import ConfigEdited, Notice
from moot.domain.state import fold
from moot.engine import check_run, price_notice
from moot.errors import ConfigError, NotFoundError, StateError, StoreConflictError
from moot.protocols import assesses_rounds, get_protocol, planned_rounds
from moot.server.configs import check_depth, requested
from moot.server.manager import DebateManager
from moot.server.seats import seat_plan
from moot.server.security import check_config

router = APIRouter(tags=["debates"])

_PATCH_DOC = (
    "A JSON merge patch (RFC 7386) over the debate's config as written: a key set to null is removed (its "
    "default comes back), a mapping is merged, a list replaced whole"
)


@router.patch("/api/debates/{debate_id}")
async def patch_debate(
    request: Request, debate_id: str, patch: Annotated[dict[str, Any], Body(description=_PATCH_DOC)]
) -> DebateConfig:
    """Change the config of a debate created with `start=false` and not started yet; the answer is the new
    config as the debate will run it. 409 once it has started, 404 for an unknown debate, 422 naming the field
    a start would refuse."""
    check_depth(patch)
    return await edit_config(request, debate_id, lambda written: merge_patch(written, patch))


@router.put("/api/debates/{debate_id}/config")
async def put_debate_config(
    request: Request,
    debate_id: str,
    config: Annotated[dict[str, Any], Body(description="The whole config, as POST /api/debates takes it")],
) -> DebateConfig:
    """Replace the config of a debate created and not started yet, whole; otherwise as PATCH."""
    check_depth(config)
    return await edit_config(request, debate_id, lambda _written: config, saved_defaults=True)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: `patch` applied to `target` (neither is changed)."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


async def edit_config(
    request: Request,
    debate_id: str,
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    saved_defaults: bool = False,
) -> DebateConfig:
    """The debate's config replaced by `edit` of it as written, checked as a start checks it, then recorded. An
    edit of the config as written takes moot's defaults only; a whole new one (`saved_defaults`) is composed as
    POST composes one."""
    manager: DebateManager = request.app.state.manager
    refusal = "a config is edited only before the debate starts"
    async with manager.before_start(debate_id, refusal):  # a queued debate starts after the edit, as edited
        return await _edit(manager, request, debate_id, edit, saved_defaults)


async def _edit(
    manager: DebateManager,
    request: Request,
    debate_id: str,
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    saved_defaults: bool,
) -> DebateConfig:
    await _not_started_here(manager, debate_id)
    await manager.store.flush()  # progress markers first: the edit is checked against the whole log
    events = await manager.store.events(debate_id)
    if not events:
        raise NotFoundError(f"no debate {debate_id!r}")
    state = fold(events)
    if state.status not in ("created", "queued") or state.config is None:
        raise StateError(
            f"debate {debate_id!r} is {state.status}; a config is edited only before the debate starts "
            "(status created or queued)"
        )
    data = edit(without_defaults(state.config))
    config = requested(data, saved_defaults=saved_defaults).config
    if seat_plan(config) != seat_plan(state.config):
        raise ConfigError(
            "the people in this debate were given join links when it was created; keep its people (models "
            "`human`, the audience's people) and their names as they are, or create a new debate",
            field="participants",
        )
    check_config(config, request.app.state.settings)
    checked = check_run(config, manager.resolve)
    protocol = get_protocol(config.format)
    edited = ConfigEdited(
        debate_id=debate_id,
        config=config,
        planned_rounds=planned_rounds(protocol, config),
        gives_verdict=protocol.traits.gives_verdict,
        assesses_rounds=assesses_rounds(protocol, config),
        after_seq=state.last_seq,
    )
    await _not_started_here(manager, debate_id)  # a start may have come in while the store was read
    try:
        await manager.record(edited)
    except StoreConflictError:
        raise StateError(
            f"debate {debate_id!r} changed while its config was being edited (it was started?); "
            "read it again: a config is edited only before the debate starts"
        ) from None
    # What a start tells about its config (moot.engine.loop), told about the new one: the old ones went with it.
    messages = [(config.format, m) for m in protocol.notices(config)]
    if (unpriced := price_notice(config)) is not None:
        messages.append(("budget", unpriced))
    for source, message in messages:
        await manager.record(Notice(debate_id=debate_id, source=source, message=message))
    manager.keep_checks(debate_id, checked)
    return config


async def _not_started_here(manager: DebateManager, debate_id: str) -> None:
    if manager.running(debate_id) and not manager.queued(debate_id):
        raise StateError(f"debate {debate_id!r} is running; a config is edited only before the debate starts")
    if manager.dispatcher is not None and await manager.dispatcher.active(debate_id):
        raise StateError(
            f"debate {debate_id!r} is queued or running on a worker; a config is edited only before it starts"
        )


__all__ = ["edit_config", "merge_patch", "router"]
