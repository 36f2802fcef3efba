"""numpy peers for `cargo bench --bench bundle` and `--bench encode -- char_trigrams`.

Majority bundling of n packed vectors (D = 10,048 bits as 157 uint64 words) and the
letter-trigram protocol (every trigram of 1,000 characters bound from cached permuted
item vectors, then bundled), each written the fastest ways numpy allows:

- bit-sliced: counters as planes of uint64 words, one ripple-carry add per input,
  vectorised over the words (the packed reference the issues name);
- unpacked: unpack every input to bytes and sum them in one call (more memory, fewer
  calls: usually numpy's fastest).

Prints the median time per bundle (microseconds) of each, and for the trigrams the
characters per second. Run beside the Rust benches, on the same machine state:

    python3 benches/peers/bundle_numpy.py
"""
import statistics
import time

import numpy as np

D = 10_048
WORDS = D // 64
rng = np.random.default_rng(7)


def bitsliced_majority(vectors):
    n = len(vectors)
    planes = [np.zeros(WORDS, dtype=np.uint64) for _ in range(max(1, n.bit_length()))]
    for x in vectors:
        carry = x
        for p in range(len(planes)):
            s = planes[p]
            planes[p] = s ^ carry
            carry = s & carry
    # counter > n / 2  <=>  counter >= n // 2 + 1 (ties, for even n, left at 0 here:
    # the coin costs numpy one more pass and is not what is compared)
    threshold = n // 2 + 1
    out = np.zeros(WORDS, dtype=np.uint64)
    # greater-or-equal comparison of the bit-sliced counters with a constant, MSB first
    gt = np.zeros(WORDS, dtype=np.uint64)
    eq = np.full(WORDS, np.uint64(0xFFFF_FFFF_FFFF_FFFF))
    for p in reversed(range(len(planes))):
        if (threshold >> p) & 1:
            eq = eq & planes[p]
        else:
            gt = gt | (eq & planes[p])
            eq = eq & ~planes[p]
    out = gt | eq
    return out


def unpacked_majority(matrix):
    counts = np.unpackbits(matrix.view(np.uint8), axis=1).sum(axis=0, dtype=np.uint32)
    return np.packbits(counts * 2 > matrix.shape[0]).view(np.uint64)


def median_us(fn, repeats=30, inner=None):
    if inner is None:
        t = time.perf_counter()
        fn()
        once = time.perf_counter() - t
        inner = max(1, int(0.02 / max(once, 1e-7)))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return statistics.median(times) * 1e6


def rotate_bits(words, shift):
    """Cyclic rotation of a D-bit vector by `shift` bits (the permutation rho^shift)."""
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")
    return np.packbits(np.roll(bits, shift), bitorder="little").view(np.uint64)


def main():
    print(f"numpy {np.__version__}, D = {D}")
    for n in (11, 101):
        vectors = [rng.integers(0, 2**63, WORDS, dtype=np.uint64) for _ in range(n)]
        matrix = np.stack(vectors)
        a = bitsliced_majority(vectors)
        b = unpacked_majority(matrix)
        assert (a == b).all() or n % 2 == 0
        print(f"bundle n = {n:>3}: bit-sliced {median_us(lambda: bitsliced_majority(vectors)):9.1f} us"
              f"   unpacked {median_us(lambda: unpacked_majority(matrix)):9.1f} us")

    text = ("the quick brown fox jumps over the lazy dog while a wizard quickly "
            "jinxed the gnomes before they vaporized ") * 10
    text = text[:1000]
    alphabet = sorted(set(text))
    index = {c: i for i, c in enumerate(alphabet)}
    items = [rng.integers(0, 2**63, WORDS, dtype=np.uint64) for _ in alphabet]
    # cached permutations: shifted[shift][symbol]
    shifted = np.stack([np.stack([rotate_bits(v, s) for v in items]) for s in range(3)])
    codes = np.array([index[c] for c in text])

    def trigrams_unpacked():
        grams = shifted[2][codes[:-2]] ^ shifted[1][codes[1:-1]] ^ shifted[0][codes[2:]]
        return np.unpackbits(grams.view(np.uint8), axis=1).sum(axis=0, dtype=np.uint32)

    def trigrams_bitsliced():
        grams = shifted[2][codes[:-2]] ^ shifted[1][codes[1:-1]] ^ shifted[0][codes[2:]]
        return bitsliced_majority(list(grams))

    for name, fn in (("unpacked", trigrams_unpacked), ("bit-sliced", trigrams_bitsliced)):
        us = median_us(fn, repeats=10)
        print(f"trigrams of 1,000 chars, {name:>10}: {us:9.1f} us = {1000 / us:6.3f} M chars/s")


if __name__ == "__main__":
    main()
