"""Type stub of hypermem.Memory, rendered from the catalog by hypermem._stubs."""

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
    def apply_plan(
        self,
        plan: Dict[str, Any],
    ) -> Any:
        """Apply a governance plan: belief operations (assert, reinforce, correct, contradict, propose, promote, reject) with evidence, expected versions and an idempotency key, all validated before the first write and committed together; the same plan again is `already_applied`."""
    def associations(
        self,
        project: str,
        *,
        limit: Optional[int] = None,
    ) -> Any:
        """Candidate associations pulse ticks found between episodes and concepts (by prototype similarity and ripple over synapses), newest first: candidates, never facts."""
    def belief_assert(
        self,
        project: str,
        key: str,
        statement: str,
        evidence: List[int],
        *,
        confidence: Optional[float] = None,
        idempotency_key: Optional[str] = None,
        ownership: Optional[str] = None,
    ) -> Any:
        """Assert a belief under a key, backed by evidence event ids of the same project (user-owned beliefs need a user event). The same statement again reinforces it; a different one is recorded as a possible conflict."""
    def belief_at(
        self,
        project: str,
        key: str,
        at: Time,
    ) -> Any:
        """The belief of a key that was valid at a time (RFC 3339, a date, or epoch ms); none valid then is `not_found`."""
    def belief_correct(
        self,
        project: str,
        key: str,
        statement: str,
        evidence: List[int],
        *,
        expected_version: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> Any:
        """Correct the active belief of a key: the old version is superseded and its validity window closed."""
    def belief_current(
        self,
        project: str,
        key: str,
    ) -> Any:
        """The active belief of a key; a key without one is a `not_found` error saying whether it has older versions."""
    def belief_history(
        self,
        project: str,
        key: str,
    ) -> Any:
        """Every version of a key, oldest first; a key no belief ever had is `not_found`."""
    def candidate_approve(
        self,
        project: str,
        id: int,
    ) -> Any:
        """Promote a candidate belief to an active one, through a governed plan (refused with the rule it breaks, nothing written)."""
    def candidate_reject(
        self,
        project: str,
        id: int,
    ) -> Any:
        """Reject a candidate belief, through a governed plan; it stays in history as rejected."""
    def candidates(
        self,
        project: str,
    ) -> Any:
        """Candidate beliefs the curator drew from what users said, waiting for approval: approve one with `candidate_approve` or drop it with `candidate_reject`."""
    def concept_show(
        self,
        project: str,
        id: int,
    ) -> Any:
        """One concept with each supporting episode and its events, so what a concept stands for can be checked against what was said."""
    def concepts(
        self,
        project: str,
    ) -> Any:
        """The concepts consolidation made of a project's episodes: label, supporting episodes, reliability and outcome counts."""
    def episode_append(
        self,
        project: str,
        episode: int,
        event: int,
    ) -> Any:
        """Append a recorded event to an episode (once per event)."""
    def episode_end(
        self,
        project: str,
        episode: int,
        *,
        outcome: Optional[str] = None,
        reward: Optional[float] = None,
    ) -> Any:
        """Seal an episode with its outcome and reward."""
    def episode_show(
        self,
        project: str,
        id: int,
    ) -> Any:
        """One episode as stored: its events in order, status, outcome, reward, and the previous and next episodes of its agent."""
    def episode_start(
        self,
        project: str,
        *,
        agent: Optional[str] = None,
    ) -> Any:
        """Start an episode for an agent (its open one is sealed and chained)."""
    def forget_project(
        self,
        project: str,
        *,
        confirm: Optional[bool] = None,
    ) -> Any:
        """Erase a project from every store. Cannot be undone: requires confirm = true."""
    def gaps(
        self,
        project: str,
        *,
        limit: Optional[int] = None,
    ) -> Any:
        """Knowledge gaps of a project: questions its memory could not answer well."""
    def map(
        self,
        project: str,
        *,
        limit: Optional[int] = None,
    ) -> Any:
        """One project at a glance: sizes, time span, threads, episodes, concepts, beliefs, procedures."""
    def memory_show(
        self,
        project: str,
        id: int,
    ) -> Any:
        """One stored memory (by event id) with what the engine keeps about it: its access count and long-term-potentiation strength, its tier, and the beliefs citing it."""
    def migrate(
        self,
        *,
        dry_run: Optional[bool] = None,
    ) -> Any:
        """Apply the pending schema migrations of this memory and report them (from and to versions); `dry_run: true` only reports."""
    def observe(
        self,
        project: str,
        text: str,
        *,
        agent: Optional[str] = None,
        at: Optional[Time] = None,
        embedding: Optional[Embedding] = None,
        kind: Optional[Literal['message', 'observation', 'action', 'thought', 'reward', 'error', 'tool_call', 'tool_result', 'task']] = None,
        role: Optional[Literal['user', 'assistant', 'tool', 'system']] = None,
        session: Optional[str] = None,
        source: Optional[str] = None,
        source_id: Optional[str] = None,
        speaker: Optional[str] = None,
        thread: Optional[str] = None,
    ) -> Any:
        """Record one observation (a message, a fact, an action) in a project's long-term memory. Returns its event id, which beliefs cite as evidence."""
    def observe_batch(
        self, events: Sequence[Dict[str, Any]], embeddings: Any = None
    ) -> Dict[str, Any]: ...
    def pack(
        self,
        project: str,
        query: str,
        *,
        at_least: Optional[int] = None,
        available: Optional[int] = None,
        budget: Optional[int] = None,
        embedding: Optional[Embedding] = None,
        session: Optional[str] = None,
        wait_ms: Optional[int] = None,
    ) -> Pack:
        """Build a context pack for a query within a token budget (25 % of `available` by default, never above 30 %), with a receipt for every candidate."""
    def plan_audit(
        self,
        project: str,
        idempotency_key: str,
    ) -> Any:
        """What an applied governance plan changed, one line per operation in order: the operation, the belief it wrote and its outcome, as committed with the plan."""
    def procedure_add(
        self,
        project: str,
        name: str,
        trigger: str,
        steps: List[str],
    ) -> Any:
        """Store a procedure: a name, a trigger (when to use it) and its steps."""
    def procedure_outcome(
        self,
        project: str,
        id: int,
        success: bool,
    ) -> Any:
        """Record whether a procedure worked (success true or false)."""
    def procedure_suggest(
        self,
        project: str,
        query: str,
        *,
        k: Optional[int] = None,
    ) -> Any:
        """Procedures whose trigger matches a situation, weighted by their reliability."""
    def proposals(
        self,
        project: str,
    ) -> Any:
        """Self-improvement proposals the meta-memory raised for a project (a rule over its metrics was crossed), with the metrics that triggered each, oldest first."""
    def prospective_complete(
        self,
        project: str,
        id: int,
    ) -> Any:
        """Mark a confirmed prospective item done; its history keeps every transition."""
    def prospective_confirm(
        self,
        project: str,
        id: int,
        event: int,
    ) -> Any:
        """Confirm a pending item by a later, explicitly affirmative user event."""
    def prospective_defer(
        self,
        project: str,
        id: int,
        until: Time,
    ) -> Any:
        """Postpone a prospective item to a new due time (`until`): a confirmed item becomes deferred, a pending one stays pending (deferring never confirms)."""
    def prospective_due(
        self,
        project: str,
        *,
        at: Optional[Time] = None,
    ) -> Any:
        """Confirmed items due at a time (default now)."""
    def prospective_propose(
        self,
        project: str,
        text: str,
        event: int,
        *,
        due: Optional[Time] = None,
        kind: Optional[Literal['intention', 'commitment', 'reminder', 'open_loop', 'plan']] = None,
    ) -> Any:
        """Record a pending intention, commitment, reminder, open loop or plan created by an event; it becomes active only when a later user event confirms it."""
    def prospective_reject(
        self,
        project: str,
        id: int,
    ) -> Any:
        """Refuse a pending or confirmed prospective item; it stays in history as rejected."""
    def prospective_show(
        self,
        project: str,
        id: int,
    ) -> Any:
        """One prospective item with its status and history."""
    def pulse(
        self,
        project: str,
    ) -> Any:
        """Run one maintenance tick on a project now (tier moves, consolidation, decay, curation) within the profile's time budget; returns what each phase did."""
    def recall(
        self,
        project: str,
        query: str,
        *,
        at_least: Optional[int] = None,
        context: Optional[int] = None,
        embedding: Optional[Embedding] = None,
        k: Optional[int] = None,
        session: Optional[str] = None,
        wait_ms: Optional[int] = None,
    ) -> RecallResult:
        """Find the memories of a project that answer a query (free text, "quoted phrases", filters such as role:user since:2025-01-01). Returns ranked items with their score breakdown and source anchor."""
    def record_event(
        self,
        project: str,
        text: str,
        *,
        agent: Optional[str] = None,
        at: Optional[Time] = None,
        embedding: Optional[Embedding] = None,
        kind: Optional[Literal['message', 'observation', 'action', 'thought', 'reward', 'error', 'tool_call', 'tool_result', 'task']] = None,
        role: Optional[Literal['user', 'assistant', 'tool', 'system']] = None,
        session: Optional[str] = None,
        source: Optional[str] = None,
        source_id: Optional[str] = None,
        speaker: Optional[str] = None,
        thread: Optional[str] = None,
    ) -> Any:
        """Record one observation, as `observe`, and return the whole stored event (id, time, session, thread) instead of its id alone."""
    def stats(
        self,
    ) -> Any:
        """Counts per project of this memory: events, vectors per tier, beliefs, episodes, procedures."""
