"""The people's routes: a person's turn, verdict and audience vote through their join link (moot.server.seats),
who a link's seat is, the audience's counts, and the creator's management of the seats. Also what the debate's
JSON (`GET /api/debates/{id}`) says of its people: what is awaited of them, and the audience.

    GET  /api/debates/{id}/seat                 the seat's token: who am I
    POST /api/debates/{id}/turns                {"text"}: a participant's turn (their seat's token) -> 201 {seq, round}
    POST /api/debates/{id}/verdict              a PersonVerdict (a judge's seat's token) -> 201 {seq}
    POST /api/debates/{id}/audience/voters      a voter id for one person of the audience (the audience's token) -> 201
    POST /api/debates/{id}/audience/votes       {"voter", "choice", "confidence"} (the audience's token) -> 201
    GET  /api/debates/{id}/audience             the audience's counts (the audience's token, or the API's)
    GET  /api/debates/{id}/seats                the seats, never a token (the API's token: the debate's creator)
    POST /api/debates/{id}/seats/{seat}/revoke  the seat's token stops working
    POST /api/debates/{id}/seats/{seat}/token   a new token and link for the seat; the old one stops working
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from moot.domain.audience import CHOICES, PHASES, Choice, Swing, Tally
from moot.domain.audience import Phase as AudiencePhase
from moot.domain.config import DebateConfig
from moot.domain.events import TurnAwaited, TurnCompleted, VerdictAwaited, utc_now
from moot.domain.person_verdict import PersonVerdict
from moot.domain.state import DebateState, split_turn_key, verdict_key
from moot.domain.text import PlainText
from moot.domain.verdict import ScoredCriterion
from moot.errors import ConfigError, NotFoundError, StateError
from moot.judging.schema import criteria_of
from moot.protocols import get_protocol
from moot.server.manager import DebateManager
from moot.server.people import ASK_AGAIN_WAIT_S, Pending, judge_seat
from moot.server.seats import (
    SeatInfo,
    SeatLink,
    SeatState,
    link_base,
    needs_seat,
    new_token,
    seat_link,
    seat_of,
    token_hash,
)
from moot.server.voters import ISSUED_PATTERN, issue, issued
from moot.store.seats import SeatRecord

router = APIRouter(prefix="/api/debates", tags=["people"])

_PLAIN: TypeAdapter[str] = TypeAdapter(PlainText)


# --- bodies and answers ------------------------------------------------------------------------------------


class TurnGiven(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The turn: plain text (newlines and tabs, no other control character)")


class TurnTaken(BaseModel):
    seq: int = Field(description="The seq of the stored turn_completed")
    round: int


class VerdictTaken(BaseModel):
    seq: int = Field(description="The seq of the stored verdict (judge_verdict for a panel seat)")


class VoteGiven(BaseModel):
    model_config = ConfigDict(extra="forbid")

    voter: Annotated[str, Field(pattern=ISSUED_PATTERN)] = Field(
        description="A voter id this server issued (POST .../audience/voters), kept by the browser: one vote per id "
        "per phase"
    )
    choice: Choice
    confidence: int = Field(default=50, ge=0, le=100, description="How sure, 0-100")


class VoterIssued(BaseModel):
    voter: str = Field(description="This person's voter id: keep it, and send it with each vote")


class AudienceView(BaseModel):
    """The audience: the vote open to people now, and each phase's counts (the people's so far while it is
    open; the counted votes, people's and personas', once counted), and the swing once both are counted."""

    open: AudiencePhase | None = Field(description="The vote people may cast now; null: none")
    closes_at: datetime | None = Field(description="When the open vote closes (null: at the first round)")
    counts: dict[AudiencePhase, dict[str, int] | None] = Field(
        description="Per phase: for, against, undecided, people, personas (null: no votes yet)"
    )
    swing: Swing | None = None


class VoteTaken(AudienceView):
    voted: AudiencePhase


class Awaiting(BaseModel):
    """What a debate waits for from a person."""

    kind: Literal["turn", "verdict"]
    seat: str
    name: str
    round: int | None = None
    deadline: datetime | None = None
    max_chars: int | None = None
    criteria: list[ScoredCriterion] | None = Field(default=None, description="What a verdict scores")
    names_winner: bool | None = Field(default=None, description="Whether a verdict may name a winner")


class DebateView(DebateState):
    """The debate's state, folded from its events (it reads back as a DebateState: the fields below are extra),
    with what it waits for from people as a list and its audience."""

    awaiting_people: list[Awaiting] = Field(
        default_factory=list,
        description="What the debate waits for from people now, a list of the state's `awaiting` by seat",
    )
    audience: AudienceView | None = Field(
        default=None, description="The audience's votes (null: no audience)"
    )


# --- the debate's JSON ---------------------------------------------------------------------------------------


def awaiting_of(state: DebateState) -> list[Awaiting]:
    config = state.config
    if config is None:
        return []
    found: list[Awaiting] = []
    for awaited in state.awaiting.values():
        if isinstance(awaited, TurnAwaited):
            found.append(
                Awaiting(
                    kind="turn",
                    seat=awaited.participant_id,
                    name=config.speaker_name(awaited.participant_id),
                    round=awaited.round,
                    deadline=awaited.deadline,
                    max_chars=awaited.max_chars,
                )
            )
        elif isinstance(awaited, VerdictAwaited):
            seated = awaited.judge is not None and awaited.judge < len(config.judges)
            judge = config.judges[awaited.judge] if seated and awaited.judge is not None else config.judge
            found.append(
                Awaiting(
                    kind="verdict",
                    seat=judge_seat(awaited.judge),
                    name=awaited.name,
                    deadline=awaited.deadline,
                    criteria=criteria_of(judge),
                    names_winner=get_protocol(config.format).traits.names_winner,
                )
            )
    return found


async def debate_view(manager: DebateManager, state: DebateState) -> DebateView:
    values = {name: getattr(state, name) for name in DebateState.model_fields}
    audience = await _audience(manager, state.debate_id, state.config, state) if state.config else None
    return DebateView.model_construct(
        state.model_fields_set, **values, awaiting_people=awaiting_of(state), audience=audience
    )


def open_phase(config: DebateConfig, state: DebateState | None) -> AudiencePhase | None:
    """The audience's vote people may cast now: `before` until it is counted at the first round, `after` while
    its window (audience_opened) is open; None otherwise."""
    if config.audience is None or not config.audience.people:
        return None
    if state is None:  # created, waiting for a running slot: nothing stored yet
        return "before"
    counted = state.audience_votes
    if "before" not in counted:
        return None if state.status == "completed" else "before"
    opened = state.audience_open
    if "after" in counted or opened is None or opened.phase != "after":
        return None
    return "after" if opened.closes_at is None or opened.closes_at > utc_now() else None


async def _audience(
    manager: DebateManager, debate_id: str, config: DebateConfig | None, state: DebateState | None
) -> AudienceView | None:
    if config is None or config.audience is None:
        return None
    phase = open_phase(config, state)
    opened = state.audience_open if state is not None else None
    counts: dict[AudiencePhase, dict[str, int] | None] = {}
    for each in PHASES:
        counted = state.tally(each) if state is not None else None
        if counted is None and each == phase:
            stored = await manager.store.audience_votes_of(debate_id, each)
            counted = Tally(
                counts={c: sum(v.choice == c for v in stored) for c in CHOICES}, people=len(stored)
            )
        counts[each] = _counts(counted) if counted is not None else None
    return AudienceView(
        open=phase,
        closes_at=opened.closes_at if opened is not None and opened.phase == phase else None,
        counts=counts,
        swing=state.swing() if state is not None else None,
    )


def _counts(counted: Tally) -> dict[str, int]:
    return {
        **{c: counted.counts.get(c, 0) for c in CHOICES},
        "people": counted.people,
        "personas": counted.personas,
    }


# --- helpers ---------------------------------------------------------------------------------------------------


def _manager(request: Request) -> DebateManager:
    manager: DebateManager = request.app.state.manager
    return manager


async def _stored_state(manager: DebateManager, debate_id: str) -> DebateState | None:
    try:
        return await manager.store.state(debate_id)
    except NotFoundError:
        return None


async def _debate(manager: DebateManager, debate_id: str) -> tuple[DebateConfig, DebateState | None]:
    """The debate's config and stored state (None: created, not stored yet); 404 when there is no such debate."""
    state = await _stored_state(manager, debate_id)
    run = manager.get(debate_id)
    config = state.config if state is not None else run.config if run is not None else None
    if config is None:
        raise NotFoundError(f"no debate {debate_id!r}")
    return config, state


def _names(names: list[str]) -> str:
    return " and ".join(dict.fromkeys(names))


def _asks_turn(seat: str) -> Callable[[str], bool]:
    return lambda key: split_turn_key(key)[0] == seat


async def _awaited(
    manager: DebateManager, debate_id: str, seat: SeatRecord, asked: Callable[[str], bool], what: str
) -> tuple[DebateConfig, Pending]:
    """The answer the debate's run waits for from this seat now; 409 saying why, when it waits for none.
    `asked` tells the seat's keys in the state's `awaiting`."""
    config, state = await _debate(manager, debate_id)
    people = manager.people
    found = people.pending(debate_id, seat.seat)
    stored = state is not None and any(asked(key) for key in state.awaiting)
    if not found and manager.get(debate_id) is not None and stored:
        # Asked for in the log, and its run (carried on after a restart, say) is a moment from asking again.
        again = await people.asked(debate_id, seat.seat, ASK_AGAIN_WAIT_S)
        found = [again] if again is not None else []
    if found:
        return config, found[0]
    if manager.get(debate_id) is None:
        status = state.status if state is not None else "created"
        later = f"; {what} is asked for again when it carries on" if stored else ""
        raise StateError(f"the debate is not running; it is {status}{later}")
    others = [p for p in people.pending(debate_id) if p.seat != seat.seat]
    if others:
        raise StateError(f"the debate is waiting for {_names([p.ask.name for p in others])}, not {seat.name}")
    under_way = [config.speaker_name(s) for s in manager.under_way(debate_id) if s != seat.seat]
    if under_way:
        raise StateError(f"the debate is waiting for {_names(under_way)}, not {seat.name}")
    raise StateError(f"the debate is not waiting for {what} from {seat.name} now")


def _turn_text(text: str, limit: int) -> str:
    """The turn as given, checked: 422 naming `text` when it is empty, too long or has a control character."""
    try:
        checked = _PLAIN.validate_python(text)
    except ValidationError as exc:
        message = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
        raise ConfigError(message, field="text") from None
    checked = checked.strip()
    if not checked:
        raise ConfigError("is empty; write your turn", field="text")
    if len(checked) > limit:
        raise ConfigError(
            f"{len(checked):,} characters; a turn may have at most {limit:,} (limits.human_turn_max_chars)",
            field="text",
        )
    return checked


async def _seat(manager: DebateManager, debate_id: str, seat: str) -> SeatRecord:
    await _debate(manager, debate_id)
    found = next((s for s in await manager.store.seats_of(debate_id) if s.seat == seat), None)
    if found is None:
        raise NotFoundError(
            f"no seat {seat!r} in debate {debate_id!r}; GET /api/debates/{debate_id}/seats lists them"
        )
    return found


def _info(seat: SeatRecord) -> SeatInfo:
    return SeatInfo(debate_id=seat.debate_id, seat=seat.seat, kind=seat.kind, name=seat.name)


# --- a seat's own routes -----------------------------------------------------------------------------------


@router.get("/{debate_id}/seat")
async def whoami(request: Request, debate_id: str) -> SeatInfo:
    """Who the join link's seat is (its token as X-Moot-Seat)."""
    seat = seat_of(request.scope)
    if seat is None:
        raise HTTPException(403, "this request carries no join link's token; send it as X-Moot-Seat")
    return _info(seat)


@router.post("/{debate_id}/turns", status_code=201)
async def give_turn(request: Request, debate_id: str, body: TurnGiven) -> TurnTaken:
    """A person's turn, from their seat's join link: answered once the turn is stored."""
    seat = needs_seat(request.scope, "participant")
    manager = _manager(request)
    config, _ = await _debate(manager, debate_id)
    text = _turn_text(body.text, config.limits.human_turn_max_chars)
    _, pending = await _awaited(manager, debate_id, seat, _asks_turn(seat.seat), "your turn")
    limit = getattr(pending.ask, "max_chars", config.limits.human_turn_max_chars)
    text = _turn_text(text, limit)
    stored = await manager.people.give(pending, text)
    assert isinstance(stored, TurnCompleted) and stored.seq is not None
    return TurnTaken(seq=stored.seq, round=stored.round)


@router.post("/{debate_id}/verdict", status_code=201)
async def give_verdict(request: Request, debate_id: str, body: PersonVerdict) -> VerdictTaken:
    """A person's verdict, from their judge's seat's join link: checked as the engine checks it (422 naming the
    field), answered once it is stored."""
    seat = needs_seat(request.scope, "judge")
    manager = _manager(request)
    panel_seat = None if seat.seat == "judge" else int(seat.seat.removeprefix("judge-"))
    key = verdict_key(panel_seat)
    _, pending = await _awaited(manager, debate_id, seat, key.__eq__, "a verdict")
    if pending.check is not None:
        pending.check(body)  # a ConfigError naming the field: 422, and the verdict is still awaited
    stored = await manager.people.give(pending, body)
    assert stored.seq is not None
    return VerdictTaken(seq=stored.seq)


@router.post("/{debate_id}/audience/voters", status_code=201)
async def new_voter(request: Request, debate_id: str) -> VoterIssued:
    """A voter id for one person holding the audience's join link (moot.server.voters): a vote needs one this server
    issued. Limited per client address: 429 with Retry-After beyond it."""
    seat = needs_seat(request.scope, "audience")
    await _debate(_manager(request), debate_id)
    address = request.client.host if request.client is not None else "unknown"
    wait = request.app.state.voter_ids.take(debate_id, address)
    if wait is not None:
        raise HTTPException(
            429,
            f"too many voter ids from this address for this debate; try again in {wait:.0f} s",
            headers={"Retry-After": str(max(1, round(wait)))},
        )
    return VoterIssued(voter=issue(seat))


@router.post("/{debate_id}/audience/votes", status_code=201)
async def vote(request: Request, debate_id: str, body: VoteGiven) -> VoteTaken:
    """An audience vote from the audience's join link: one per voter id (issued by POST .../audience/voters) per
    phase."""
    seat = needs_seat(request.scope, "audience")
    if not issued(seat, body.voter):
        raise HTTPException(
            403,
            "this voter id was not issued for this debate's audience link (made up, another debate's, or the link "
            f"was renewed); ask for one with POST /api/debates/{debate_id}/audience/voters",
        )
    manager = _manager(request)
    await _debate(manager, debate_id)

    async def phase_now() -> AudiencePhase:
        config, state = await _debate(manager, debate_id)
        phase = open_phase(config, state)
        if phase is None:
            raise StateError("the vote is closed")
        return phase

    voted = await manager.people.vote(debate_id, body.voter, body.choice, body.confidence, phase_now)
    config, state = await _debate(manager, debate_id)
    view = await _audience(manager, debate_id, config, state)
    assert view is not None
    return VoteTaken(**view.model_dump(), voted=voted)


@router.get("/{debate_id}/audience")
async def audience(request: Request, debate_id: str) -> AudienceView:
    """The audience's vote open now and the counts: the people's so far while it is open, then the counted."""
    manager = _manager(request)
    config, state = await _debate(manager, debate_id)
    view = await _audience(manager, debate_id, config, state)
    if view is None:
        raise NotFoundError(f"debate {debate_id!r} has no audience")
    return view


# --- the creator's --------------------------------------------------------------------------------------------


@router.get("/{debate_id}/seats")
async def list_seats(request: Request, debate_id: str) -> list[SeatState]:
    """The debate's seats for people, without their tokens."""
    manager = _manager(request)
    await _debate(manager, debate_id)
    return [
        SeatState(**_info(s).model_dump(), revoked=s.revoked) for s in await manager.store.seats_of(debate_id)
    ]


@router.post("/{debate_id}/seats/{seat}/revoke")
async def revoke_seat(request: Request, debate_id: str, seat: str) -> SeatState:
    """The seat's join link stops working at once (a new token brings it back)."""
    manager = _manager(request)
    found = await _seat(manager, debate_id, seat)
    await manager.store.revoke_seat(debate_id, seat, utc_now())
    request.app.state.seat_streams.revoke(debate_id, seat)  # its open streams end now
    return SeatState(**_info(found).model_dump(), revoked=True)


@router.post("/{debate_id}/seats/{seat}/token")
async def renew_seat(request: Request, debate_id: str, seat: str) -> SeatLink:
    """A new join link for the seat, shown this once; the old one stops working."""
    manager = _manager(request)
    found = await _seat(manager, debate_id, seat)
    token = new_token()
    await manager.store.replace_seat_token(debate_id, seat, token_hash(token))
    request.app.state.seat_streams.revoke(debate_id, seat)  # the old token's open streams end now
    return seat_link(link_base(request), debate_id, seat, found.kind, found.name, token)


__all__ = ["AudienceView", "Awaiting", "DebateView", "awaiting_of", "debate_view", "open_phase", "router"]
