"""Language identification with character-trigram bundling: one profile vector per
language, the nearest profile wins.

    python python/examples/langid.py
"""

import numpy as np

from hypermem import hdv

train = {
    "english": "the weather was fine so we walked along the river and talked about the old house where we grew up",
    "german": "das wetter war schoen also gingen wir am fluss entlang und sprachen ueber das alte haus in dem wir aufwuchsen",
    "french": "il faisait beau alors nous avons marche le long de la riviere en parlant de la vieille maison de notre enfance",
    "spanish": "hacia buen tiempo asi que caminamos junto al rio y hablamos de la vieja casa donde crecimos",
    "italian": "il tempo era bello quindi abbiamo camminato lungo il fiume parlando della vecchia casa dove siamo cresciuti",
}
tests = {
    "english": "we talked about the house by the river",
    "german": "wir sprachen ueber das haus am fluss",
    "french": "nous avons parle de la maison pres de la riviere",
    "spanish": "hablamos de la casa junto al rio",
    "italian": "abbiamo parlato della casa vicino al fiume",
}

encoder = hdv.NgramEncoder(3, dim=10_048, seed=1)
names = list(train)
profiles = encoder.encode([train[n] for n in names])          # (5, 157) uint64
queries = encoder.encode([tests[n] for n in names])
best, _ = hdv.top_k(profiles, queries, k=1)
for name, guess in zip(names, best[:, 0]):
    print(f"{name:>8} -> {names[guess]}")
print("accuracy", np.mean([names[g] == n for n, g in zip(names, best[:, 0])]))
