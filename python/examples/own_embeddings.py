"""Bring your own embeddings: store turns with vectors from any model as a NumPy array,
and recall with the question's vector beside its text.

    python python/examples/own_embeddings.py

The vectors here are random stand-ins for a model's output (a row per text); with a real
model, pass its float32 array the same way.
"""

import tempfile

import numpy as np

import hypermem

texts = [
    "The invoice for March was paid on the 14th.",
    "Our cat Miso only eats salmon-flavoured food.",
    "The deployment window moved to Thursday night.",
]
rng = np.random.default_rng(0)
embeddings = rng.standard_normal((len(texts), 384)).astype(np.float32)  # (n, d)

with hypermem.Memory.open(tempfile.mkdtemp(prefix="hypermem-")) as memory:
    ids = memory.observe_batch([{"project": "home", "text": t} for t in texts], embeddings=embeddings)
    print("stored", ids["event_ids"])
    # A question whose (stand-in) embedding lies near the cat's.
    question = embeddings[1] + 0.3 * rng.standard_normal(384).astype(np.float32)
    for item in memory.recall("home", "what does the pet eat", embedding=question, k=2):
        parts = {s.name: round(s.contribution, 3) for s in item.signals}
        print(f"{item.score:.3f} {item.text} {parts}")
