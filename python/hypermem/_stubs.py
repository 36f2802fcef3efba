"""Renders ``_memory.pyi``, the type stub of :class:`hypermem.Memory`, from the catalog.

The methods of ``Memory`` are generated at import from the engine's catalog, so editors
and type checkers see them only through this stub; a test checks that the committed stub
is what the catalog renders today. Regenerate it after a change to an operation::

    python -m hypermem._stubs > python/hypermem/_memory.pyi
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List

from . import _native

_HEADER = '''"""Type stub of hypermem.Memory, rendered from the catalog by hypermem._stubs."""

import datetime
import os
from typing import Any, Dict, List, Literal, Optional, Sequence, Union

import numpy

from ._results import Pack, RecallResult

Time = Union[int, str, datetime.date]
Embedding = Union[Sequence[float], numpy.ndarray]
OPERATIONS: Dict[str, Dict[str, Any]]

class Memory:
    def __init__(
        self,
        data_dir: Union[str, os.PathLike[str]],
        profile: Optional[str] = None,
        create: bool = False,
    ) -> None: ...
    @classmethod
    def open(
        cls,
        data_dir: Union[str, os.PathLike[str]],
        profile: Optional[str] = None,
        create: bool = False,
    ) -> Memory: ...
    def call(self, op: str, **args: Any) -> Any: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def data_dir(self) -> str: ...
    def __enter__(self) -> Memory: ...
    def __exit__(self, *exc: object) -> None: ...
'''

_RETURNS = {"recall": "RecallResult", "pack": "Pack"}
# Hand-written in _memory.py (an embeddings matrix beside the events).
_OVERRIDES = {
    "observe_batch": (
        "    def observe_batch(\n"
        "        self, events: Sequence[Dict[str, Any]], embeddings: Any = None\n"
        "    ) -> Dict[str, Any]: ...\n"
    )
}


def _type(schema: Dict[str, Any], defs: Dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name == "Time":
            return "Time"
        return _type(defs.get(name, {}), defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = schema[key]
            consts = [o["const"] for o in options if "const" in o]
            if consts and len(consts) == len(options):
                return "Literal[" + ", ".join(repr(c) for c in consts) + "]"
            kinds = [_type(o, defs) for o in options if o.get("type") != "null"]
            nullable = any(o.get("type") == "null" for o in options)
            inner = kinds[0] if len(kinds) == 1 else "Union[" + ", ".join(kinds) + "]"
            return f"Optional[{inner}]" if nullable else inner
    kind = schema.get("type")
    if isinstance(kind, list):
        nullable = "null" in kind
        inner = _type({**schema, "type": next(k for k in kind if k != "null")}, defs)
        return f"Optional[{inner}]" if nullable else inner
    if kind == "array":
        items = schema.get("items", {})
        if items.get("type") == "number":
            return "Embedding"
        return f"List[{_type(items, defs)}]"
    return {
        "string": "str",
        "integer": "int",
        "number": "float",
        "boolean": "bool",
        "object": "Dict[str, Any]",
    }.get(kind, "Any")


def _method(op: Dict[str, Any]) -> str:
    name = op["name"]
    if name in _OVERRIDES:
        return _OVERRIDES[name]
    schema = op["schema"]
    defs = schema.get("$defs", {})
    properties = schema.get("properties", {})
    required: List[str] = list(schema.get("required", []))
    params = ["self"]
    params += [f"{p}: {_type(properties[p], defs)}" for p in required]
    optional = sorted(p for p in properties if p not in required)
    if optional:
        params.append("*")
        for p in optional:
            t = _type(properties[p], defs)
            if not t.startswith("Optional["):
                t = f"Optional[{t}]"
            params.append(f"{p}: {t} = None")
    returns = _RETURNS.get(name, "Any")
    doc = " ".join(op["description"].split()).replace('"""', "'''")
    lines = [f"    def {name}(", *[f"        {p}," for p in params], f"    ) -> {returns}:"]
    lines.append(f'        """{doc}"""')
    return "\n".join(lines) + "\n"


def render() -> str:
    """The stub of ``Memory`` for the catalog of this build."""
    operations = sorted(_native.operations(), key=lambda o: o["name"])
    return _HEADER + "".join(_method(op) for op in operations)


if __name__ == "__main__":
    sys.stdout.write(render())
