from typing import Any, Dict, Iterable, List, Optional

import numpy as np

class VmafError(ValueError):
    """What vmafhip could not do, and why: a bad model, feature, picture or file."""

def models() -> List[str]: ...

class Result:
    frames: Dict[str, np.ndarray]
    pooled: Dict[str, Dict[str, float]]
    aggregates: Dict[str, float]
    engine: str
    fps: float
    def __len__(self) -> int: ...
    def to_pandas(self) -> Any: ...
    def text(self, format: str = "json") -> str: ...
    def write(self, path: str, format: Optional[str] = None) -> None: ...

def score(
    reference: str,
    distorted: str,
    model: str = "vmaf_v0.6.1",
    features: Iterable[str] = (),
    backend: str = "auto",
    *,
    width: Optional[int] = None,
    height: Optional[int] = None,
    pixel_format: str = "420",
    bitdepth: int = 8,
    device: int = 0,
    threads: int = 0,
    subsample: int = 1,
    on_gpu_error: str = "auto",
) -> Result: ...

class Scorer:
    width: int
    height: int
    pixel_format: str
    bitdepth: int
    def __init__(
        self,
        width: int,
        height: int,
        pixel_format: str = "420",
        bitdepth: int = 8,
        model: str = "vmaf_v0.6.1",
        features: Iterable[str] = (),
        backend: str = "auto",
        device: int = 0,
        threads: int = 0,
        subsample: int = 1,
        on_gpu_error: str = "auto",
    ) -> None: ...
    @property
    def engine(self) -> str: ...
    def push(self, reference: Any, distorted: Any) -> None: ...
    def flush(self) -> Result: ...
