"""``Memory``: a memory opened in this process.

Every operation of the engine's catalog is a method, generated from the catalog itself
(``hypermem._native.operations()``, the table the CLI, HTTP and MCP are generated from):
required fields are positional, the others keyword-only. An argument left at ``None`` is
not sent, so the defaults, the checks and the refusals are the engine's, never a second
copy here. A method returns the operation's JSON document as Python objects (what the
CLI prints with ``--json``); ``recall`` and ``pack`` return typed objects
(:class:`RecallResult`, :class:`Pack`) that give the document back with ``to_dict()``.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _native
from ._results import Pack, RecallResult

#: The catalog of operations, by name.
OPERATIONS: Dict[str, Dict[str, Any]] = {op["name"]: op for op in _native.operations()}

# Results with a typed view.
_TYPED: Dict[str, Callable[[Any], Any]] = {
    "recall": RecallResult.from_dict,
    "pack": Pack.from_dict,
}


class Memory:
    """A memory in a data directory, opened by this process (created when missing only
    when asked: ``create=True``).

    It holds the store's lock until :meth:`close` (or the end of a ``with`` block).
    Methods release the GIL while the engine works, so threads may call them
    concurrently. A refusal raises :class:`hypermem.Refused` (a subclass per error
    class) with the stable ``reason``.
    """

    def __init__(
        self,
        data_dir: Union[str, "os.PathLike[str]"],
        profile: Optional[str] = None,
        create: bool = False,
    ) -> None:
        self._native = _native.Memory(os.fspath(data_dir), profile, create)

    @classmethod
    def open(
        cls,
        data_dir: Union[str, "os.PathLike[str]"],
        profile: Optional[str] = None,
        create: bool = False,
    ) -> "Memory":
        """Opens the memory in ``data_dir``. ``profile`` is ``"lite"`` (the default),
        ``"standard"``, ``"scale"`` or the path of a profile TOML file. A directory that
        does not exist is created with ``create=True``; without it the open is refused
        (``data_dir_missing``), as the command line refuses it without ``--create``."""
        return cls(data_dir, profile, create)

    def call(self, op: str, **args: Any) -> Any:
        """Runs operation ``op`` of the catalog with ``args`` (``None`` values are not
        sent) and returns its result document."""
        sent = {k: v for k, v in args.items() if v is not None}
        return self._native.call(op, sent)

    def observe_batch(
        self, events: Sequence[Dict[str, Any]], embeddings: Any = None
    ) -> Dict[str, Any]:
        """Records several observations in one transaction: all are stored or none.

        ``events`` are dicts with the fields of :meth:`observe` (each names its
        project); ``embeddings``, when given, is an array of shape ``(len(events), d)``
        whose row ``i`` is event ``i``'s embedding. Returns ``{"event_ids": [...]}``.
        """
        events = [{k: v for k, v in e.items() if v is not None} for e in events]
        if embeddings is not None:
            if len(embeddings) != len(events):
                error = _native.InvalidInput(
                    f"embeddings: {len(embeddings)} rows for {len(events)} events"
                )
                error.reason, error.message, error.detail = (
                    "invalid_argument",
                    str(error),
                    None,
                )
                raise error
            for e, row in zip(events, embeddings):
                e["embedding"] = row
        return self.call("observe_batch", events=events)

    def close(self) -> None:
        """Releases the store (once calls in flight return); later calls raise
        :class:`hypermem.Conflict` with reason ``closed``."""
        self._native.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._native.closed

    @property
    def data_dir(self) -> str:
        """The data directory."""
        return os.fspath(self._native.data_dir)

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<hypermem.Memory {self.data_dir!r} ({state})>"


def _parameters(schema: Dict[str, Any]) -> List[inspect.Parameter]:
    """Required fields positional (in declaration order), the others keyword-only."""
    properties = schema.get("properties", {})
    required = list(schema.get("required", []))
    params = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for name in required
    ]
    params += [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
        for name in sorted(properties)
        if name not in required
    ]
    return params


def _docstring(op: Dict[str, Any]) -> str:
    schema = op["schema"]
    lines = [op["description"], ""]
    properties = schema.get("properties", {})
    if properties:
        lines.append("Arguments:")
        for name in [p.name for p in _parameters(schema)]:
            text = " ".join(properties[name].get("description", "").split())
            lines.append(f"    {name}: {text}")
    lines.append("")
    typed = {"recall": "a RecallResult", "pack": "a Pack"}
    lines.append(f"Returns {typed.get(op['name'], 'the result document')}.")
    return "\n".join(lines)


def _method(op: Dict[str, Any]) -> Callable[..., Any]:
    name = op["name"]
    signature = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + _parameters(op["schema"])
    )
    wrap = _TYPED.get(name)

    def method(self: Memory, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        fields = {k: v for k, v in bound.arguments.items() if k != "self"}
        result = self.call(name, **fields)
        return wrap(result) if wrap else result

    method.__name__ = name
    method.__qualname__ = f"Memory.{name}"
    method.__doc__ = _docstring(op)
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method


for _name, _op in OPERATIONS.items():
    if not hasattr(Memory, _name):
        setattr(Memory, _name, _method(_op))
