"""hypermem.Memory through Python, as an agent calls it."""

import concurrent.futures
import datetime
import importlib.resources

import numpy as np
import pytest

import hypermem
from hypermem import _stubs


@pytest.fixture
def memory(tmp_path):
    with hypermem.Memory.open(tmp_path / "data", create=True) as m:
        yield m


def seed_project(m):
    """The history the cross-surface test of the Rust suite stores (tests/http.rs)."""
    m.observe("acme", "I prefer dark mode in every editor", thread="t1", at="2025-01-01T10:00:00Z")
    m.observe(
        "acme",
        "Noted: dark mode everywhere",
        thread="t1",
        role="assistant",
        at=datetime.datetime(2025, 1, 1, 10, 1, tzinfo=datetime.timezone.utc),
    )
    m.record_event("acme", "The staging deploy runs on Fridays", thread="t2", at="2025-01-01T10:02:00Z")
    m.observe_batch(
        [
            {"project": "acme", "text": "Yes, please remind me", "thread": "t1", "at": "2025-01-01T10:03:00Z"},
            {"project": "acme", "text": "The licence renewal is due in March", "thread": "t2", "at": "2025-01-01T10:04:00Z"},
        ]
    )


def test_every_operation_of_the_catalog_runs_once(memory):
    called = set()
    real_call = memory.call

    def counting(op, **args):
        called.add(op)
        return real_call(op, **args)

    memory.call = counting
    m = memory
    seed_project(m)
    m.pulse("acme")
    assert m.map("acme")["project"] == "acme"
    assert [s["project"] for s in m.stats()] == ["acme"]
    recalled = m.recall("acme", "which editor theme", k=5)
    assert recalled.items and recalled.items[0].text == "I prefer dark mode in every editor"
    pack = m.pack("acme", "editor theme", available=2000)
    assert "dark mode" in pack.text()
    m.belief_assert("acme", "user.theme", "prefers dark mode", [1], ownership="user")
    m.belief_correct("acme", "user.theme", "prefers dark mode in editors", [1])
    assert m.belief_current("acme", "user.theme")["statement"] == "prefers dark mode in editors"
    assert m.belief_at("acme", "user.theme", "2999-01-01")["statement"] == "prefers dark mode in editors"
    assert len(m.belief_history("acme", "user.theme")) == 2
    plan = {
        "project": "acme",
        "idempotency_key": "p1",
        "ops": [
            {"op": "assert", "key": "project.deploy", "statement": "deploys on Fridays", "ownership": "project", "evidence": [3]}
        ],
    }
    m.apply_plan(plan)
    assert len(m.plan_audit("acme", "p1")) == 1
    assert m.memory_show("acme", 1)["event"]["id"] == 1
    episode = m.episode_start("acme", agent="a")["episode"]
    assert m.episode_append("acme", episode, 2)["outcome"] == "appended"
    m.episode_end("acme", episode, outcome="done", reward=1.0)
    assert m.episode_show("acme", episode)["id"] == episode
    procedure = m.procedure_add("acme", "theme", "a new editor is installed", ["switch to dark mode"])["procedure"]
    assert m.procedure_suggest("acme", "a new editor is installed")
    m.procedure_outcome("acme", procedure, True)
    item = m.prospective_propose("acme", text="renew the licence", event=3, due="2999-01-01")["id"]
    m.prospective_confirm("acme", item, 4)
    m.prospective_defer("acme", item, "2999-02-01")
    assert [i["id"] for i in m.prospective_due("acme", at="2999-03-01")] == [item]
    assert m.prospective_show("acme", item)["id"] == item
    m.prospective_complete("acme", item)
    with pytest.raises(hypermem.Conflict) as refused:
        m.prospective_reject("acme", item)
    assert refused.value.reason == "invalid_transition"
    assert isinstance(m.concepts("acme"), list)
    with pytest.raises(hypermem.NotFound):
        m.concept_show("acme", 1)
    assert isinstance(m.candidates("acme"), list)
    for op in (m.candidate_approve, m.candidate_reject):
        with pytest.raises(hypermem.Refused) as refused:
            op("acme", 99)
        assert refused.value.reason == "unknown_belief"
    assert isinstance(m.gaps("acme"), list)
    assert isinstance(m.associations("acme", limit=5), list)
    assert isinstance(m.proposals("acme"), list)
    assert m.migrate(dry_run=True)["dry_run"] is True
    with pytest.raises(hypermem.InvalidInput) as refused:
        m.forget_project("acme")
    assert refused.value.reason == "confirmation_required"
    receipt = m.forget_project("acme", confirm=True)
    assert receipt["ledger"]["rows"]["events"] == 5
    assert m.stats() == []
    assert called == set(hypermem.OPERATIONS), set(hypermem.OPERATIONS) - called


def test_recall_result_is_typed_and_gives_the_document_back(memory):
    seed_project(memory)
    result = memory.recall("acme", "dark mode editor")
    document = memory.call("recall", project="acme", query="dark mode editor")
    assert result.to_dict() == document
    top = result[0]
    assert isinstance(top, hypermem.RecallItem)
    assert top.id == top.anchor.event == document["items"][0]["event"]["id"]
    assert top.anchor.thread == "t1"
    assert top.anchor.created_at == 1735725600000
    assert [s.name for s in top.signals] == [b[0] for b in document["items"][0]["fused"]["breakdown"]]
    assert top.score == pytest.approx(sum(s.contribution for s in top.signals))
    assert len(result) == len(document["items"])


def test_pack_is_typed_and_within_budget(memory):
    seed_project(memory)
    pack = memory.pack("acme", "licence renewal", available=1000)
    assert isinstance(pack, hypermem.Pack)
    assert pack.used <= pack.budget
    assert pack.items and all(i.anchor is not None for i in pack.items)
    assert sum(i.tokens for i in pack.items) == pack.used
    assert pack.to_dict()["used"] == pack.used


def test_embeddings_from_numpy(memory):
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((3, 16)).astype(np.float32)
    texts = ["alpha note", "beta note", "gamma note"]
    ids = memory.observe_batch([{"project": "emb", "text": t} for t in texts], embeddings=vectors)["event_ids"]
    assert len(ids) == 3
    memory.observe("emb", "delta note", embedding=vectors[0] * 0.5)
    result = memory.recall("emb", "note", embedding=vectors[1])
    assert result.items[0].text == "beta note"
    assert any(s.name == "semantic" for s in result.items[0].signals)
    with pytest.raises(hypermem.InvalidInput) as refused:
        memory.observe("emb", "wrong size", embedding=np.ones(8, dtype=np.float32))
    assert refused.value.reason == "invalid_argument"
    assert "16-dimensional" in refused.value.message
    with pytest.raises(hypermem.InvalidInput) as refused:
        memory.observe_batch([{"project": "emb", "text": "x"}], embeddings=vectors)
    assert refused.value.reason == "invalid_argument"


@pytest.mark.parametrize(
    "call, reason, cls",
    [
        (lambda m: m.recall("nobody", "anything"), "unknown_project", hypermem.NotFound),
        (lambda m: m.observe("bad project!", "x"), "invalid_project", hypermem.InvalidInput),
        (lambda m: m.observe("p", "x", role="robot"), "invalid_argument", hypermem.InvalidInput),
        (lambda m: m.recall("p", "x", k=0), "invalid_argument", hypermem.InvalidInput),
        (lambda m: m.call("recall", project="p"), "invalid_request", hypermem.InvalidInput),
        (lambda m: m.call("recall", project="p", query="x", colour="red"), "invalid_request", hypermem.InvalidInput),
        (lambda m: m.call("no_such_op"), "unknown_operation", hypermem.NotFound),
        (lambda m: m.observe("p", "x", at=object()), "invalid_argument", hypermem.InvalidInput),
        (lambda m: m.belief_current("p", "k"), "not_found", hypermem.NotFound),
    ],
)
def test_refusals_raise_with_their_reason(memory, call, reason, cls):
    memory.observe("p", "something stored")
    with pytest.raises(cls) as refused:
        call(memory)
    e = refused.value
    assert isinstance(e, hypermem.Refused)
    assert e.reason == reason
    assert e.message and "sqlite" not in e.message.lower()


def test_a_refusal_writes_nothing(memory):
    memory.observe("p", "kept")
    with pytest.raises(hypermem.InvalidInput):
        memory.observe_batch([{"project": "p", "text": "fine"}, {"project": "p", "text": "bad", "role": "robot"}])
    assert memory.stats()[0]["events"] == 1


def test_governance_refusal_carries_its_detail(memory):
    memory.observe("p", "the assistant said so", role="assistant")
    with pytest.raises(hypermem.Refused) as refused:
        memory.belief_assert("p", "user.x", "likes tea", [1], ownership="user")
    assert refused.value.reason == "user_ownership_requires_user_evidence"
    assert refused.value.detail["op_index"] == 0


def test_threads_recall_concurrently(memory):
    memory.observe_batch([{"project": "t", "text": f"note {i} about topic {i % 7}"} for i in range(200)])
    expected = memory.recall("t", "topic 3").to_dict()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: memory.recall("t", "topic 3").to_dict(), range(64)))
    assert all(r == expected for r in results)


def test_closed_memory_refuses_and_releases_the_store(tmp_path):
    m = hypermem.Memory.open(tmp_path)
    m.observe("p", "x")
    with pytest.raises(hypermem.Unavailable) as refused:
        hypermem.Memory.open(tmp_path)
    assert refused.value.reason == "store_locked"
    m.close()
    assert m.closed
    with pytest.raises(hypermem.Conflict) as refused:
        m.stats()
    assert refused.value.reason == "closed"
    with hypermem.Memory.open(tmp_path) as again:
        assert again.stats()[0]["events"] == 1


def test_a_missing_directory_is_refused_unless_created(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(hypermem.Refused) as refused:
        hypermem.Memory.open(missing)
    assert refused.value.reason == "data_dir_missing"
    assert not missing.exists(), "a refused open creates nothing"
    with hypermem.Memory.open(missing, create=True) as m:
        m.observe("p", "x")
    assert (missing / "ledger.db").exists()


def test_profiles_by_name_and_refused_by_name(tmp_path):
    with hypermem.Memory.open(tmp_path / "a", profile="lite", create=True) as m:
        assert m.stats() == []
    with pytest.raises(hypermem.InvalidInput) as refused:
        hypermem.Memory.open(tmp_path / "b", profile="scale")
    assert refused.value.reason == "profile_not_built"
    with pytest.raises(hypermem.Refused) as refused:
        hypermem.Memory.open(tmp_path / "c", profile=str(tmp_path / "missing.toml"))
    assert refused.value.reason == "invalid_argument"
    assert "missing.toml" in refused.value.message


def test_methods_carry_signatures_and_docs():
    import inspect

    sig = inspect.signature(hypermem.Memory.recall)
    assert list(sig.parameters)[:3] == ["self", "project", "query"]
    assert sig.parameters["k"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "ranked items" in hypermem.Memory.recall.__doc__
    with pytest.raises(TypeError):
        hypermem.Memory.recall(None, "p")


def test_the_type_stub_matches_the_catalog():
    committed = importlib.resources.files("hypermem").joinpath("_memory.pyi").read_text()
    assert committed == _stubs.render(), "regenerate: python -m hypermem._stubs > python/hypermem/_memory.pyi"
