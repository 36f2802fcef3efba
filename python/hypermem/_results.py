"""Typed views of the recall and pack documents.

Each object is built from the operation's JSON document (the one the CLI prints with
``--json``) and gives it back unchanged with ``to_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple


@dataclass(frozen=True)
class Signal:
    """One source's part in a fused score: the source (``bm25``, ``bigram``, ``vector``,
    ``semantic``, a prior such as ``user``), the candidate's rank in it (0 for a prior)
    and what it added to the score."""

    name: str
    rank: int
    contribution: float


@dataclass(frozen=True)
class Anchor:
    """Where a memory came from: its event id and the caller's own coordinates."""

    event: int
    created_at: int
    source_id: Optional[str] = None
    thread: Optional[str] = None
    session: Optional[str] = None
    source: Optional[str] = None
    speaker: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Anchor":
        """From a pack's ``anchor`` object or a stored event."""
        return cls(
            event=d["event"] if "event" in d else d["id"],
            created_at=d["created_at"],
            source_id=d.get("source_id"),
            thread=d.get("thread"),
            session=d.get("session"),
            source=d.get("source"),
            speaker=d.get("speaker"),
        )


@dataclass(frozen=True)
class RecallItem:
    """One recalled memory, with its score breakdown and source anchor."""

    id: int
    text: str
    score: float
    similarity: float
    role: str
    kind: str
    signals: Tuple[Signal, ...]
    anchor: Anchor
    supersedes: Optional[int]
    duplicates: Tuple[int, ...]
    event: Dict[str, Any] = field(repr=False)
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RecallItem":
        event = d["event"]
        fused = d["fused"]
        return cls(
            id=event["id"],
            text=event["content"],
            score=fused["score"],
            similarity=d["similarity"],
            role=event["role"],
            kind=event["kind"],
            signals=tuple(Signal(n, r, c) for n, r, c in fused["breakdown"]),
            anchor=Anchor.from_dict(event),
            supersedes=d.get("supersedes"),
            duplicates=tuple(d.get("duplicates") or ()),
            event=event,
            raw=d,
        )

    @property
    def context(self) -> Optional[Dict[str, Any]]:
        """The chronological neighbours asked for with ``context=`` (or None)."""
        return self.raw.get("context")

    def to_dict(self) -> Dict[str, Any]:
        """The item as the operation returned it."""
        return self.raw


@dataclass(frozen=True)
class RecallResult:
    """A ranked recall: iterate it for its items, best first."""

    items: Tuple[RecallItem, ...]
    suppressed: Tuple[Any, ...]
    time_hint_ignored: bool
    unembedded: Optional[int]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RecallResult":
        return cls(
            items=tuple(RecallItem.from_dict(i) for i in d["items"]),
            suppressed=tuple(d.get("suppressed") or ()),
            time_hint_ignored=bool(d.get("time_hint_ignored", False)),
            unembedded=d.get("unembedded"),
            raw=d,
        )

    def __iter__(self) -> Iterator[RecallItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> RecallItem:
        return self.items[i]

    def to_dict(self) -> Dict[str, Any]:
        """The document as the operation returned it."""
        return self.raw


@dataclass(frozen=True)
class PackItem:
    """One text selected into a context pack, with why and where it came from."""

    id: int
    text: str
    slot: str
    tokens: int
    reason: str
    role: Optional[str]
    anchor: Optional[Anchor]
    raw: Dict[str, Any] = field(repr=False, compare=False)
    #: For a text carried in part (the whole was over budget): the byte range it holds.
    excerpt: Optional[Tuple[int, int]] = None
    #: Other events with the same text once folded (however it was typed) it stands for.
    folded: Tuple[int, ...] = ()

    @classmethod
    def from_pair(cls, pair: List[Any]) -> "PackItem":
        meta, text = pair
        anchor = meta.get("anchor")
        excerpt = meta.get("excerpt")
        return cls(
            id=meta["id"],
            text=text,
            slot=meta["slot"],
            tokens=meta["tokens"],
            reason=meta["reason"],
            role=meta.get("role"),
            anchor=Anchor.from_dict(anchor) if anchor else None,
            raw=meta,
            excerpt=(excerpt[0], excerpt[1]) if excerpt else None,
            folded=tuple(meta.get("folded") or ()),
        )


@dataclass(frozen=True)
class Pack:
    """A context pack within a token budget: iterate it for its items, in pack order."""

    budget: int
    used: int
    items: Tuple[PackItem, ...]
    suppressed: Tuple[Any, ...]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Pack":
        return cls(
            budget=d["budget"],
            used=d["used"],
            items=tuple(PackItem.from_pair(p) for p in d["items"]),
            suppressed=tuple(d.get("suppressed") or ()),
            raw=d,
        )

    def __iter__(self) -> Iterator[PackItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def text(self, separator: str = "\n") -> str:
        """The selected texts joined, ready for a prompt."""
        return separator.join(i.text for i in self.items)

    def to_dict(self) -> Dict[str, Any]:
        """The document as the operation returned it."""
        return self.raw
