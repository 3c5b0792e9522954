"""A small, independent GGUF (v2/v3) reader for the NumPy reference.

Written from the format description (magic, version, tensor and metadata
counts, typed key/values, tensor infos, aligned data section); it shares no
code with the C++ engine so that a mistake on one side shows up as a
disagreement. Supports dequantizing F32, F16, BF16 and Q8_0 tensors.
"""
import struct

import numpy as np

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
GGML_F32, GGML_F16, GGML_Q8_0, GGML_BF16 = 0, 1, 8, 30
_BLOCK = {GGML_F32: (1, 4), GGML_F16: (1, 2), GGML_BF16: (1, 2), GGML_Q8_0: (32, 34),
          2: (32, 18), 12: (256, 144), 13: (256, 176), 14: (256, 210)}


class GGUFFile:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        self.off = 0
        if self._take(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        self.version = self._u("<I")
        if self.version not in (2, 3):
            raise ValueError(f"{path}: unsupported GGUF version {self.version}")
        n_tensors = self._u("<Q")
        n_kv = self._u("<Q")
        self.meta = {}
        for _ in range(n_kv):
            key = self._str()
            self.meta[key] = self._value(self._u("<I"))
        self.tensors = {}
        for _ in range(n_tensors):
            name = self._str()
            n_dims = self._u("<I")
            ne = [self._u("<Q") for _ in range(n_dims)]
            ttype = self._u("<I")
            offset = self._u("<Q")
            self.tensors[name] = (ttype, ne, offset)
        align = int(self.meta.get("general.alignment", 32))
        self.data_start = (self.off + align - 1) // align * align

    def _take(self, n):
        if self.off + n > len(self.buf):
            raise ValueError("truncated GGUF file")
        b = self.buf[self.off:self.off + n]
        self.off += n
        return b

    def _u(self, fmt):
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def _str(self):
        return self._take(self._u("<Q")).decode("utf-8", errors="surrogateescape")

    def _value(self, vtype):
        if vtype == 8:
            return self._str()
        if vtype == 9:
            etype = self._u("<I")
            n = self._u("<Q")
            if etype in _SCALAR and etype != 7:
                fmt = _SCALAR[etype]
                size = struct.calcsize(fmt)
                arr = np.frombuffer(self._take(size * n), dtype=np.dtype(fmt))
                return arr.tolist()
            return [self._value(etype) for _ in range(n)]
        if vtype in _SCALAR:
            return self._u(_SCALAR[vtype])
        raise ValueError(f"unknown metadata value type {vtype}")

    def arch(self):
        return self.meta["general.architecture"]

    def get(self, key, default=None):
        return self.meta.get(key, default)

    def has(self, name):
        return name in self.tensors

    def tensor(self, name):
        """The tensor as float64, shaped with the innermost dimension last."""
        ttype, ne, offset = self.tensors[name]
        n = int(np.prod(ne))
        bs, ts = _BLOCK.get(ttype, (None, None))
        if bs is None:
            raise ValueError(f"tensor {name}: type {ttype} not supported by the reference")
        start = self.data_start + offset
        raw = self.buf[start:start + n // bs * ts]
        if ttype == GGML_F32:
            out = np.frombuffer(raw, dtype="<f4").astype(np.float64)
        elif ttype == GGML_F16:
            out = np.frombuffer(raw, dtype="<f2").astype(np.float64)
        elif ttype == GGML_BF16:
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            out = bits.view(np.float32).astype(np.float64)
        elif ttype == GGML_Q8_0:
            blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "i1", 32)]))
            out = (blocks["d"].astype(np.float64)[:, None] * blocks["qs"].astype(np.float64)).reshape(-1)
        else:
            raise ValueError(f"tensor {name}: type {ttype} not supported by the reference")
        return out.reshape(list(reversed(ne)))
