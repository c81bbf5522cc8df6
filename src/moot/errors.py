"""moot's one error hierarchy.

    MootError
    ├── UserError              the user can fix it: bad config, missing key, unknown id (CLI exit 2)
    │   ├── ConfigError        a field of a debate or participant is invalid
    │   ├── MissingKeyError    a provider's API key is not in the environment
    │   ├── ProviderNotInstalledError  the provider's optional extra is not installed
    │   ├── NotFoundError      no debate with that id in the store
    │   └── StateError         the action does not fit the debate's state (resume a completed debate)
    └── RunError               something failed while a debate was running
        ├── ModelCallError     a model call failed (vendor errors are translated to this at the adapter)
        └── StoreError         the event store could not be read or written
            └── StoreConflictError  another writer took the debate over (a stale worker)

Every error carries a one-line message that names the field and the fix.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Self

from moot.install import install_command

if TYPE_CHECKING:
    from moot.domain.faults import Fault


def one_line(error: BaseException | str, limit: int = 300) -> str:
    """The first line of an error's message, cut to `limit` characters; the type's name if it says nothing."""
    text = str(error).strip()
    if not text:
        return type(error).__name__ if isinstance(error, BaseException) else "unknown error"
    line = text.splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


# Who reads an error's words: the person at this machine's terminal (the default: the CLI), or another machine's
# user (the HTTP API, its web page, its MCP tools), who cannot run this machine's `moot` commands.
_ANSWERING_A_CLIENT: ContextVar[bool] = ContextVar("moot_answering_a_client", default=False)


@contextlib.contextmanager
def answering_a_client() -> Iterator[None]:
    """Inside it, messages are worded for another machine's user: no hint to run a `moot` command (`cli_hint`),
    no list of every choice where one name is asked for (moot.domain.text.unknown). The server wraps each request
    in it, and what a request sets going (a debate's run) inherits it."""
    token = _ANSWERING_A_CLIENT.set(True)
    try:
        yield
    finally:
        _ANSWERING_A_CLIENT.reset(token)


def answering_a_client_now() -> bool:
    """Whether the words made now are for another machine's user (`answering_a_client`)."""
    return _ANSWERING_A_CLIENT.get()


def cli_hint(words: str) -> str:
    """`words` (" (`moot models` lists them)", with their own leading space or semicolon): a hint that names a `moot`
    command, for the person at this machine's terminal; nothing in an answer to another machine
    (`answering_a_client`), whose reader cannot run it."""
    return "" if answering_a_client_now() else words


class MootError(Exception):
    """Base of every error moot raises on purpose."""


# A list in a config, as a person names one of its items ("participant 2"); any other list is named as it is.
_ITEMS = {
    "participants": "participant",
    "judges": "judge",
    "tools": "tool",
    "tool_phases": "tool phase",
    "people": "person",
    "context_files": "context file",
    "agents": "agent",
}


def spoken_field(field: str, names: Sequence[str | None] = ()) -> str:
    """A field's path as a person reads it: items counted from 1 as people count them, and a participant named
    when `names` (the participants' names, in order) has its name. `participants.1.model` reads
    `participant 2 (Bo), model`; a path without a list item is left as it is (`stopping.embeddings`).

    Only the words: `UserError.field` keeps the path (`participants.1.model`) that the API answers with and the
    page places its error by."""
    parts = field.split(".")
    if not any(part.isdigit() for part in parts[1:]):
        return field
    groups: list[str] = []
    plain: list[str] = []  # the parts since the last item, written as a dotted path
    i = 0
    while i < len(parts):
        part, index = parts[i], parts[i + 1] if i + 1 < len(parts) else ""
        if not index.isdigit() or part.isdigit():
            plain.append(part)
            i += 1
            continue
        if plain:
            groups.append(".".join(plain))
            plain = []
        n = int(index)
        words = f"{_ITEMS.get(part, part)} {n + 1}"
        about_the_name = parts[i + 2 : i + 3] == ["name"]
        if i == 0 and part == "participants" and not about_the_name and n < len(names):
            name = names[n]
            # A name that is itself wrong (a control character, a whole paragraph) is not repeated, nor the name
            # moot gives a participant that has none ("participant 2 (Speaker 2)").
            if name and name.isprintable() and len(name) <= 40 and name != f"Speaker {n + 1}":
                words += f" ({name})"
        groups.append(words)
        i += 2
    if plain:
        groups.append(".".join(plain))
    return ", ".join(groups)


class UserError(MootError):
    """A mistake the user can fix; reported as one line, exit code 2."""

    def __init__(
        self, message: str, *, field: str | None = None, paths: Mapping[str, str] | None = None
    ) -> None:
        self.field = field
        self.message = message
        # Each file of this machine the message names, with what that file is: the person at this machine
        # needs the path to fix it, a client of its server must not learn its layout (`public`).
        self.paths = dict(paths or {})
        super().__init__(f"{spoken_field(field)}: {message}" if field else message)

    def naming(self, names: Sequence[str | None]) -> Self:
        """This error with the participant it is about named, where its field is one of theirs: `names` are the
        debate's participants' names in order (`participant 2 (Bo), model: ...`). Returns the error itself."""
        if self.field:
            self.args = (f"{spoken_field(self.field, names)}: {self.message}",)
        return self

    def public(self) -> str:
        """The message as an answer to another machine gives it (the API, the MCP tools): each of this machine's
        files named by what it is, never by its path."""
        text = str(self)
        for path, name in self.paths.items():
            text = text.replace(path, name)
        return text


class ConfigError(UserError):
    """A debate configuration is invalid."""


class MissingKeyError(UserError):
    """A provider needs an API key that is not set."""

    def __init__(self, *, field: str, provider: str, env_var: str) -> None:
        self.provider = provider
        self.env_var = env_var
        super().__init__(
            f"{provider} needs {env_var}; set it in the environment or in a .env file"
            + cli_hint(" (see `moot models`)"),
            field=field,
        )


class ProviderNotInstalledError(UserError):
    """The Python package for a provider is missing."""

    def __init__(self, *, field: str, provider: str, extra: str | None, install: str | None = None) -> None:
        self.provider = provider
        self.install = install or install_command(extra)
        super().__init__(f"the {provider} provider is not installed; run `{self.install}`", field=field)


class NotFoundError(UserError):
    """Nothing with that id exists."""


class StateError(UserError):
    """The debate exists, but what was asked does not fit where it stands (HTTP 409)."""


class RunError(MootError):
    """A debate could not go on."""


class ModelCallError(RunError):
    """A model call failed after the adapter translated the vendor's error; `fault` says what kind of failure
    it was (moot.domain.faults), which decides whether it is tried again."""

    def __init__(self, message: str, *, model: str, fault: Fault | None = None) -> None:
        self.model = model
        self.fault = fault
        super().__init__(f"{model}: {message}")


class StoreError(RunError):
    """The event store failed."""


class StoreConflictError(StoreError):
    """Another writer appended to the debate first (or deleted it): this run of it must stop."""
