"""An agent loop: store every turn, and before each answer ask the memory for a context
pack within a token budget.

    python python/examples/agent_loop.py [data_dir]
"""

import sys
import tempfile

import hypermem

conversation = [
    ("user", "I'm planning the team offsite for the second week of May."),
    ("assistant", "Noted. Any constraints on the venue?"),
    ("user", "It must be reachable by train, and Priya is vegetarian."),
    ("assistant", "Understood: train access and vegetarian options."),
    ("user", "Budget is 4,000 euros for twelve people."),
    ("user", "Actually, make the budget 4,500 euros: two more people joined."),
]
questions = ["What is the offsite budget?", "What should the caterer know about Priya?"]

data_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="hypermem-")
with hypermem.Memory.open(data_dir, create=True) as memory:
    for role, text in conversation:
        memory.observe("offsite", text, role=role, session="planning")

    for question in questions:
        pack = memory.pack("offsite", question, available=2_000)
        print(f"Q: {question}")
        print(f"   context ({pack.used} of {pack.budget} tokens):")
        for item in pack:
            print(f"   - [{item.slot}, event {item.anchor.event}] {item.text}")
        memory.observe("offsite", question, role="user", session="asking")

    top = memory.recall("offsite", "budget euros", k=3)
    print("recall 'budget euros':")
    for item in top:
        why = ", ".join(f"{s.name}#{s.rank}" for s in item.signals)
        print(f"   {item.score:.3f} {item.text}  ({why})")
