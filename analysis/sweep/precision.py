"""The four floating-point types of the kernels: NumPy storage, encoding and decoding.

A float64 array is *encoded* into the storage of a type (rounded to nearest) and a
kernel's output is *decoded* back to float64. For Kernel Tuner's C backend, which
refuses float16 (and bfloat16) ndarrays, 16-bit data travel as uint16 views of the
same bits (`for_c=True`); the C++ ports read them as `half` / `bfloat16` directly.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

FLOAT_TYPES = ("double", "float", "half", "bfloat16")
INT_TYPES = ("int32", "int64", "uint32")
TYPE_BYTES = {"double": 8, "float": 4, "half": 2, "bfloat16": 2, "int32": 4, "int64": 8, "uint32": 4}
DTYPES: dict[str, np.dtype] = {
    "double": np.dtype(np.float64),
    "float": np.dtype(np.float32),
    "half": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint32": np.dtype(np.uint32),
}
SIXTEEN_BIT = ("half", "bfloat16")


def dtype(type_name: str) -> np.dtype:
    """NumPy dtype of a type name (bfloat16 from ml_dtypes)."""
    try:
        return DTYPES[type_name]
    except KeyError:
        raise ValueError(f"unknown type '{type_name}' (known: {', '.join(DTYPES)})") from None


def encode(values: np.ndarray, type_name: str, *, for_c: bool = False) -> np.ndarray:
    """`values` rounded to `type_name` storage (contiguous); 16-bit types as uint16 views if `for_c`."""
    out = np.ascontiguousarray(np.asarray(values).astype(dtype(type_name)))
    if for_c and type_name in SIXTEEN_BIT:
        return out.view(np.uint16)
    return out


def decode(storage: np.ndarray | np.generic, type_name: str) -> np.ndarray:
    """float64 values of `storage` holding `type_name` data (uint16 views of 16-bit types accepted)."""
    arr = np.asarray(storage)
    want = dtype(type_name)
    if arr.dtype == np.uint16 and type_name in SIXTEEN_BIT:
        arr = arr.view(want)
    elif arr.dtype != want:
        raise ValueError(f"storage of dtype {arr.dtype} does not hold '{type_name}' data")
    return arr.astype(np.float64)


def storage_dtype(type_name: str, *, for_c: bool = False) -> np.dtype:
    """dtype of the encoded storage of `type_name`."""
    if for_c and type_name in SIXTEEN_BIT:
        return np.dtype(np.uint16)
    return dtype(type_name)


def ctype_name(type_name: str) -> str:
    """C type of one element as the ports declare it (half and bfloat16 from common/precision.h)."""
    return {"int32": "int", "int64": "long long", "uint32": "unsigned int"}.get(type_name, type_name)
