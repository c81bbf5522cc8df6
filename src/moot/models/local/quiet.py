"""llama-cpp-python without its file-descriptor redirect.

Asked to be quiet (`verbose=False`), llama-cpp-python points file descriptors 1 and 2 at /dev/null while it loads
a model (`suppress_stdout_stderr`). They are the process's, not the library's: whatever moot writes meanwhile (the
CLI's first event under `--json`, a line on stderr, a server's log, another thread's output) is lost. llama.cpp's
own messages do not need it: they reach the library's log callback, which prints only errors at `verbose=False`.
So the redirect is replaced, once, by one that redirects nothing; the library's quiet setting still holds.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

# The modules of llama-cpp-python 0.3 that import the redirect by name.
_MODULES = ("llama_cpp._internals", "llama_cpp.llama", "llama_cpp.llama_chat_format")
_lock = threading.Lock()
_done = False


class _LeaveDescriptorsAlone:
    """Has `suppress_stdout_stderr`'s signature and does nothing."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> _LeaveDescriptorsAlone:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        return None


def leave_descriptors_alone() -> None:
    """Make llama-cpp-python's loading leave fds 1 and 2 where they point (idempotent, thread-safe)."""
    global _done
    with _lock:
        if _done:
            return
        import importlib

        for name in _MODULES:
            module: Any = importlib.import_module(name)
            if hasattr(module, "suppress_stdout_stderr"):
                module.suppress_stdout_stderr = _LeaveDescriptorsAlone
        _done = True
