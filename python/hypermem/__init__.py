"""hypermem: governed long-term memory for AI agents, on a SIMD hyperdimensional core.

- :class:`Memory` opens a memory in a data directory; every operation of the engine
  (observe, recall, pack, beliefs and plans, episodes, procedures, prospective items,
  gaps, pulse, map, forget_project, ...) is one of its methods.
- :mod:`hypermem.hdv` is the hypervector algebra over NumPy ``uint64`` arrays.
- A refusal raises :class:`Refused` (``.reason``, ``.message``, ``.detail``), through the
  subclass of its error class: :class:`InvalidInput`, :class:`NotFound`,
  :class:`Conflict`, :class:`TooLarge`, :class:`Unavailable`, :class:`Internal`,
  :class:`Forbidden`.
"""

from . import hdv
from ._memory import OPERATIONS, Memory
from ._native import (
    Conflict,
    Forbidden,
    Internal,
    InvalidInput,
    NotFound,
    Refused,
    TooLarge,
    Unavailable,
    __version__,
)
from ._results import Anchor, Pack, PackItem, RecallItem, RecallResult, Signal

__all__ = [
    "OPERATIONS",
    "Anchor",
    "Conflict",
    "Forbidden",
    "Internal",
    "InvalidInput",
    "Memory",
    "NotFound",
    "Pack",
    "PackItem",
    "RecallItem",
    "RecallResult",
    "Refused",
    "Signal",
    "TooLarge",
    "Unavailable",
    "__version__",
    "hdv",
]
