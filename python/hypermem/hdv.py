"""Binary hypervectors as NumPy ``uint64`` arrays, on the engine's SIMD kernels.

A vector of ``D`` bits is ``D/64`` words: an array of shape ``(D/64,)``, and ``n``
vectors an array of shape ``(n, D/64)``; bit ``i`` is bit ``i % 64`` of word ``i // 64``.
Arguments are read where they lie (C-contiguous ``uint64``: no copy, see
:func:`words_address`); results are arrays over buffers the engine allocated (no copy
either). Kernels run with the GIL released.
"""

from __future__ import annotations

import numpy as np

from ._native import hdv as _impl

DEFAULT_DIM: int = _impl.DEFAULT_DIM

kernel = _impl.kernel
words_address = _impl.words_address
random = _impl.random
bind = _impl.bind
permute = _impl.permute
bundle = _impl.bundle
hamming = _impl.hamming
similarity = _impl.similarity
top_k = _impl.top_k
TextEncoder = _impl.TextEncoder
NgramEncoder = _impl.NgramEncoder
LevelEncoder = _impl.LevelEncoder
RecordEncoder = _impl.RecordEncoder
Projector = _impl.Projector
Resonator = _impl.Resonator


def to_bits(vectors: np.ndarray) -> np.ndarray:
    """The bits of ``vectors`` as a ``uint8`` array of 0 and 1, shape ``(..., D)``: the
    one-byte-per-bit layout of torchhd's and NumPy's binary vectors."""
    words = np.ascontiguousarray(vectors, dtype=np.uint64)
    as_bytes = words.view(np.uint8).reshape(*words.shape[:-1], words.shape[-1] * 8)
    return np.unpackbits(as_bytes, axis=-1, bitorder="little")


def from_bits(bits: np.ndarray) -> np.ndarray:
    """Vectors from bits (any integer or bool array of 0 and 1, shape ``(..., D)`` with
    ``D`` a multiple of 64): the inverse of :func:`to_bits`."""
    bits = np.asarray(bits)
    if bits.shape[-1] % 64:
        raise ValueError(f"the last axis holds {bits.shape[-1]} bits, not a multiple of 64")
    packed = np.packbits(bits.astype(bool), axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view(np.uint64)


__all__ = [
    "DEFAULT_DIM",
    "LevelEncoder",
    "NgramEncoder",
    "Projector",
    "RecordEncoder",
    "Resonator",
    "TextEncoder",
    "bind",
    "bundle",
    "from_bits",
    "hamming",
    "kernel",
    "permute",
    "random",
    "similarity",
    "to_bits",
    "top_k",
    "words_address",
]
