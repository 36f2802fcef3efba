"""Type stub of hypermem.hdv."""

from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy
import numpy.typing as npt

Vectors = npt.NDArray[numpy.uint64]

DEFAULT_DIM: int

def kernel() -> str:
    """The kernel tier this process runs (`avx512`, `avx2` or `scalar`)."""

def words_address(vectors: Vectors) -> int:
    """The address of the words the kernels read for `vectors` (`vectors.ctypes.data`)."""

def random(n: Optional[int] = None, dim: int = ..., seed: int = 0) -> Vectors:
    """`n` random vectors of `dim` bits, shape `(n, dim/64)`; `(dim/64,)` when `n` is None."""

def bind(a: Vectors, b: Vectors) -> Vectors:
    """Row-wise XOR (equal shapes, or one vector bound to every row)."""

def permute(a: Vectors, k: int = 1) -> Vectors:
    """Each vector rotated by `k` bit positions (negative `k` rotates back)."""

def bundle(vectors: Vectors, seed: int = 0) -> Vectors:
    """The bitwise majority of the rows; ties broken by the coin of `seed`."""

def hamming(a: Vectors, b: Vectors) -> Union[int, npt.NDArray[numpy.uint32]]:
    """An int for two vectors; a uint32 array for rows against one vector or row by row."""

def similarity(a: Vectors, b: Vectors) -> Union[float, npt.NDArray[numpy.float64]]:
    """`1 - 2 * hamming / D`, shaped as `hamming`."""

def top_k(
    block: Vectors,
    queries: Vectors,
    k: int = 10,
    max_distance: Optional[int] = None,
    threads: int = 1,
) -> Tuple[npt.NDArray[numpy.int64], npt.NDArray[numpy.uint32]]:
    """The `k` nearest rows of `block` to each query: `(indices, distances)`."""

def to_bits(vectors: Vectors) -> npt.NDArray[numpy.uint8]:
    """The bits, one byte per bit, shape `(..., D)`."""

def from_bits(bits: npt.ArrayLike) -> Vectors:
    """Vectors from bits: the inverse of `to_bits`."""

class TextEncoder:
    def __init__(self, dim: int = ..., seed: Optional[int] = None, ngram: int = 3) -> None: ...
    def encode(self, text: Union[str, Sequence[str]]) -> Vectors: ...

class NgramEncoder:
    def __init__(self, n: int = 3, dim: int = ..., seed: int = 0) -> None: ...
    def encode(self, text: Union[str, Sequence[str]]) -> Vectors: ...

class LevelEncoder:
    def __init__(
        self, min: float, max: float, levels: int, dim: int = ..., seed: int = 0
    ) -> None: ...
    def encode(self, x: Union[float, Sequence[float]]) -> Vectors: ...
    def level_of(self, x: float) -> int: ...

class RecordEncoder:
    def __init__(self, dim: int = ..., seed: int = 0) -> None: ...
    def encode(self, fields: Dict[str, Vectors], seed: int = 0) -> Vectors: ...
    def unbind(self, record: Vectors, role: str) -> Vectors: ...

class Projector:
    def __init__(self, input: int, dim: int = ..., seed: int = 0) -> None: ...
    def project(self, embeddings: npt.NDArray[numpy.float32]) -> Vectors: ...

class Resonator:
    def __init__(self, codebooks: List[Vectors]) -> None: ...
    def factor(
        self,
        product: Vectors,
        max_iterations: int = 100,
        seed: int = 0,
        random_start: bool = False,
    ) -> Dict[str, object]: ...
