"""hypermem.hdv against NumPy references, and its zero-copy contract."""

import concurrent.futures

import numpy as np
import pytest

import hypermem
from hypermem import hdv

D = 10_048
W = D // 64


def popcount_rows(x):
    return hdv.to_bits(x).sum(axis=-1)


def test_random_is_reproducible_and_balanced():
    a = hdv.random(4, D, seed=3)
    assert a.shape == (4, W) and a.dtype == np.uint64
    assert np.array_equal(a, hdv.random(4, D, seed=3))
    assert not np.array_equal(a, hdv.random(4, D, seed=4))
    assert hdv.random(dim=D, seed=3).shape == (W,)
    ones = popcount_rows(a) / D
    assert np.all(np.abs(ones - 0.5) < 0.03)


def test_results_are_buffers_the_engine_allocated():
    a = hdv.random(3, D, seed=1)
    # NumPy does not own the buffer: it holds the engine's allocation as its base.
    assert not a.flags.owndata
    assert type(a.base).__name__ == "PySliceContainer"
    assert a.flags.c_contiguous and a.flags.writeable


def test_arguments_are_read_in_place():
    block = hdv.random(1000, D, seed=2)
    assert hdv.words_address(block) == block.ctypes.data
    row = block[10]
    assert hdv.words_address(row) == block.ctypes.data + 10 * W * 8
    # Any buffer of 64-bit unsigned items is read in place too.
    view = memoryview(block)
    assert hdv.words_address(view) == block.ctypes.data
    assert np.array_equal(hdv.top_k(view, row, k=1)[0], [10])
    import array

    words = array.array("Q", block[0].tolist())
    assert hdv.hamming(words, block[0]) == 0
    ints = np.zeros((2, W), dtype=np.int64)
    with pytest.raises(hypermem.InvalidInput) as refused:
        hdv.words_address(ints)
    assert refused.value.reason == "invalid_argument"
    with pytest.raises(hypermem.InvalidInput) as refused:
        hdv.top_k(block[:, ::2], block[0, ::2])
    assert "C-contiguous" in refused.value.message


def test_bind_is_xor_and_its_own_inverse():
    a, b = hdv.random(5, D, seed=1), hdv.random(5, D, seed=2)
    assert np.array_equal(hdv.bind(a, b), a ^ b)
    assert np.array_equal(hdv.bind(hdv.bind(a, b), b), a)
    # One vector binds to every row.
    assert np.array_equal(hdv.bind(a, b[0]), a ^ b[0])
    assert hdv.bind(a[0], b[0]).shape == (W,)
    with pytest.raises(hypermem.InvalidInput) as refused:
        hdv.bind(a, hdv.random(5, 1024))
    assert refused.value.reason == "dimension_mismatch"
    with pytest.raises(hypermem.InvalidInput):
        hdv.bind(a, b[:2])


def test_permute_rotates_bits():
    a = hdv.random(3, D, seed=5)
    for k in (1, 63, 64, 1000, -7):
        expected = hdv.from_bits(np.roll(hdv.to_bits(a), k, axis=-1))
        assert np.array_equal(hdv.permute(a, k), expected), k
    assert np.array_equal(hdv.permute(hdv.permute(a, 77), -77), a)


@pytest.mark.parametrize("n", [1, 2, 3, 11, 64, 101])
def test_bundle_is_the_bitwise_majority(n):
    v = hdv.random(n, D, seed=n)
    counts = hdv.to_bits(v).sum(axis=0)
    out = hdv.to_bits(hdv.bundle(v, seed=9))
    assert np.all(out[2 * counts > n] == 1)
    assert np.all(out[2 * counts < n] == 0)
    # Ties (even n) follow the seed, reproducibly.
    assert np.array_equal(hdv.bundle(v, seed=9), hdv.bundle(v, seed=9))
    with pytest.raises(hypermem.InvalidInput) as refused:
        hdv.bundle(np.zeros((0, W), dtype=np.uint64))
    assert refused.value.reason == "invalid_argument"


def test_hamming_and_similarity_match_numpy():
    a = hdv.random(50, D, seed=1)
    q = hdv.random(dim=D, seed=2)
    expected = popcount_rows(a ^ q)
    assert np.array_equal(hdv.hamming(a, q), expected)
    assert np.array_equal(hdv.hamming(q, a), expected)
    assert hdv.hamming(a[0], q) == expected[0]
    assert isinstance(hdv.hamming(a[0], q), int)
    b = hdv.random(50, D, seed=3)
    assert np.array_equal(hdv.hamming(a, b), popcount_rows(a ^ b))
    assert np.allclose(hdv.similarity(a, q), 1 - 2 * expected / D)
    assert hdv.similarity(a[0], a[0]) == 1.0


@pytest.mark.parametrize("threads", [1, 0])
def test_top_k_matches_a_numpy_scan(threads):
    block = hdv.random(3000, D, seed=11)
    queries = hdv.random(7, D, seed=12)
    queries[3] = block[1234]
    idx, dist = hdv.top_k(block, queries, k=10, threads=threads)
    assert idx.shape == dist.shape == (7, 10)
    for qi in range(7):
        d = popcount_rows(block ^ queries[qi])
        order = np.lexsort((np.arange(len(d)), d))[:10]
        assert np.array_equal(idx[qi], order)
        assert np.array_equal(dist[qi], d[order])
    assert idx[3, 0] == 1234 and dist[3, 0] == 0
    one_idx, one_dist = hdv.top_k(block, queries[3], k=5, threads=threads)
    assert one_idx.shape == (5,) and one_idx[0] == 1234


def test_top_k_pads_what_it_cannot_fill():
    block = hdv.random(3, D, seed=1)
    idx, dist = hdv.top_k(block, block[0], k=5)
    assert list(idx[3:]) == [-1, -1] and list(dist[3:]) == [2**32 - 1] * 2
    idx, _ = hdv.top_k(block, block[0], k=5, max_distance=0)
    assert list(idx) == [0, -1, -1, -1, -1]
    with pytest.raises(hypermem.InvalidInput):
        hdv.top_k(block, block[0], k=0)


def test_top_k_runs_in_threads_without_the_gil():
    block = hdv.random(20_000, D, seed=3)
    queries = hdv.random(16, D, seed=4)
    expected = [hdv.top_k(block, q, k=3)[0].tolist() for q in queries]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda q: hdv.top_k(block, q, k=3)[0].tolist(), queries))
    assert got == expected


def test_bits_round_trip():
    a = hdv.random(4, 1024, seed=8)
    bits = hdv.to_bits(a)
    assert bits.shape == (4, 1024) and set(np.unique(bits)) <= {0, 1}
    assert np.array_equal(hdv.from_bits(bits), a)


def test_text_encoder_puts_shared_words_close():
    enc = hdv.TextEncoder(dim=D)
    v = enc.encode(["the cat sat on the mat", "the cat sat on a mat", "quarterly revenue grew"])
    assert v.shape == (3, W)
    assert hdv.similarity(v[0], v[1]) > 0.5 > hdv.similarity(v[0], v[2])
    assert np.array_equal(enc.encode("the cat sat on the mat"), v[0])


def test_ngram_encoder_identifies_languages():
    enc = hdv.NgramEncoder(3, dim=D)
    english = enc.encode("the quick brown fox jumps over the lazy dog and then it runs far away from the house")
    german = enc.encode("der schnelle braune fuchs springt ueber den faulen hund und dann laeuft er weit weg vom haus")
    probe = enc.encode("the dog runs over the house and then far away")
    assert hdv.similarity(probe, english) > hdv.similarity(probe, german)
    with pytest.raises(hypermem.Refused):
        enc.encode("ab")


def test_level_encoder_is_graded():
    enc = hdv.LevelEncoder(0.0, 100.0, 21, dim=D)
    v = enc.encode([0.0, 10.0, 50.0, 100.0])
    sims = hdv.similarity(v, v[0])
    assert sims[0] == 1.0 and sims[1] > sims[2] > sims[3]
    assert enc.level_of(50.0) == 10
    # Outside the range clamps to the extremes; NaN is refused.
    assert np.array_equal(enc.encode(200.0), v[3])
    with pytest.raises(hypermem.InvalidInput) as refused:
        enc.encode(float("nan"))
    assert refused.value.reason == "invalid_argument"


def test_record_fields_unbind_to_their_values():
    enc = hdv.RecordEncoder(dim=D, seed=1)
    values = hdv.random(3, D, seed=40)
    record = enc.encode({"name": values[0], "city": values[1], "job": values[2]})
    for i, role in enumerate(["name", "city", "job"]):
        noisy = enc.unbind(record, role)
        assert int(np.argmax(hdv.similarity(values, noisy))) == i


def test_projector_tracks_cosine():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    near = x[0] + 0.1 * rng.standard_normal(64).astype(np.float32)
    proj = hdv.Projector(64, dim=D, seed=3)
    v = proj.project(np.vstack([x, near]))
    assert v.shape == (3, W)
    assert hdv.similarity(v[0], v[2]) > 0.8 > abs(hdv.similarity(v[0], v[1])) + 0.5
    assert np.array_equal(proj.project(x[0]), v[0])
    with pytest.raises(hypermem.InvalidInput):
        proj.project(np.zeros(63, dtype=np.float32))


def test_resonator_factors_a_product():
    books = [hdv.random(10, D, seed=100 * f) for f in range(3)]
    product = hdv.bind(hdv.bind(books[0][4], books[1][7]), books[2][1])
    found = hdv.Resonator(books).factor(product, max_iterations=50, seed=9)
    assert found["indices"] == [4, 7, 1]
    assert found["exact"] is True
