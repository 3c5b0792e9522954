"""Minimal GGUF v3 writer and reader (F32, F16 and Q8_0 tensors) in pure Python + numpy.

Design: the file is header (magic "GGUF", version 3, tensor count, metadata count), metadata
key/values (typed, little-endian; strings are u64 length + UTF-8 bytes; arrays are element
type + u64 count + elements), tensor infos (name, n_dims, dims innermost first, ggml type,
offset relative to the data section), padding to `general.alignment` (32), then each
tensor's bytes at its aligned offset. Q8_0 follows the ggml reference quantizer: per 32
values d = max|x| / 127 (stored as fp16), q = round_half_away(x * (1/d)) as int8.
Writing is atomic, as the engine's writer: a temporary file in the destination's directory,
fsynced and renamed over it (a symbolic link is followed); `write` refuses to replace a file
it is given as an input (same path, hard or symbolic link).
"""
import os
import struct
import tempfile

import numpy as np

GGUF_MAGIC = b"GGUF"
ALIGN = 32
# metadata value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
# ggml tensor types
T_F32, T_F16, T_Q8_0 = 0, 1, 8
QK8_0 = 32


def quantize_q8_0(x):
    """float32 array (last dim a multiple of 32) -> raw Q8_0 bytes, row-major."""
    x = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, QK8_0)
    amax = np.abs(x).max(axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    v = x * inv[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))).astype(np.int8)
    out = np.empty((x.shape[0], 2 + QK8_0), dtype=np.uint8)
    out[:, :2] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def dequantize_q8_0(raw, shape):
    b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 2 + QK8_0)
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    q = b[:, 2:].copy().view(np.int8).astype(np.float32)
    return (q * d).reshape(shape)


class Writer:
    def __init__(self):
        self.kv = []        # (key, type, value, elem_type)
        self.tensors = []   # (name, dims (torch order), ggml type, bytes)

    def add(self, key, vtype, value, elem_type=None):
        self.kv.append((key, vtype, value, elem_type))

    def add_tensor(self, name, array, ttype=T_F32):
        a = np.ascontiguousarray(array, dtype=np.float32)
        if ttype == T_F32:
            raw = a.tobytes()
        elif ttype == T_F16:
            raw = a.astype(np.float16).tobytes()
        elif ttype == T_Q8_0:
            raw = quantize_q8_0(a)
        else:
            raise ValueError(ttype)
        self.tensors.append((name, a.shape, ttype, raw))

    @staticmethod
    def _str(s):
        b = s.encode("utf-8")
        return struct.pack("<Q", len(b)) + b

    def _val(self, vtype, v, elem_type=None):
        if vtype == STRING:
            return self._str(v)
        if vtype == ARRAY:
            out = struct.pack("<IQ", elem_type, len(v))
            if elem_type == STRING:
                return out + b"".join(self._str(s) for s in v)
            fmt = {U32: "<I", I32: "<i", F32: "<f", U8: "<B", BOOL: "<?"}[elem_type]
            return out + b"".join(struct.pack(fmt, x) for x in v)
        fmt = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
               U64: "<Q", I64: "<q", F64: "<d"}[vtype]
        return struct.pack(fmt, v)

    def write(self, path, inputs=()):
        """Writes `path` atomically; raises ValueError when it is one of `inputs`."""
        for src in inputs:
            if os.path.abspath(src) == os.path.abspath(path) or (
                    os.path.exists(src) and os.path.exists(path) and os.path.samefile(src, path)):
                raise ValueError(f"refusing to write '{path}': it is the input file '{src}'; "
                                 "write the output to another path")
        dest = os.path.realpath(path) if os.path.islink(path) else path
        head = GGUF_MAGIC + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))
        for key, vtype, v, et in self.kv:
            head += self._str(key) + struct.pack("<I", vtype) + self._val(vtype, v, et)
        offset = 0
        offsets = []
        for name, shape, ttype, raw in self.tensors:
            dims = list(reversed(shape))            # ggml: innermost first
            head += self._str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
            head += struct.pack("<IQ", ttype, offset)
            offsets.append(offset)
            offset += (len(raw) + ALIGN - 1) // ALIGN * ALIGN
        head += b"\0" * (-len(head) % ALIGN)
        folder = os.path.dirname(os.path.abspath(dest))
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(dest) + ".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                if os.path.exists(dest):    # a replacement keeps the replaced file's mode
                    mode = os.stat(dest).st_mode & 0o7777
                else:
                    umask = os.umask(0)
                    os.umask(umask)
                    mode = 0o666 & ~umask
                os.fchmod(f.fileno(), mode)
                f.write(head)
                for (name, shape, ttype, raw) in self.tensors:
                    f.write(raw)
                    f.write(b"\0" * (-len(raw) % ALIGN))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, dest)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


class Reader:
    """Reads metadata and tensors (F32/F16/Q8_0 -> float32 numpy in torch shape order)."""

    def __init__(self, path):
        self.buf = open(path, "rb").read()
        self.pos = 0
        assert self.buf[:4] == GGUF_MAGIC, "not a GGUF file"
        self.pos = 4
        self.version, n_t, n_kv = self._u("<IQQ")
        self.meta = {}
        for _ in range(n_kv):
            k = self._s()
            (t,) = self._u("<I")
            self.meta[k] = self._v(t)
        self.infos = []
        for _ in range(n_t):
            name = self._s()
            (nd,) = self._u("<I")
            dims = self._u("<" + "Q" * nd)
            t, off = self._u("<IQ")
            self.infos.append((name, tuple(reversed(dims)), t, off))
        align = self.meta.get("general.alignment", ALIGN)
        self.data = self.pos + (-self.pos % align)

    def _u(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def _s(self):
        (n,) = self._u("<Q")
        s = self.buf[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def _v(self, t):
        if t == STRING:
            return self._s()
        if t == ARRAY:
            et, n = self._u("<IQ")
            return [self._v(et) for _ in range(n)]
        fmt = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
               U64: "<Q", I64: "<q", F64: "<d"}[t]
        return self._u(fmt)[0]

    def tensor(self, name):
        for n, shape, t, off in self.infos:
            if n != name:
                continue
            count = int(np.prod(shape))
            start = self.data + off
            if t == T_F32:
                return np.frombuffer(self.buf, np.float32, count, start).reshape(shape).copy()
            if t == T_F16:
                return np.frombuffer(self.buf, np.float16, count, start).astype(np.float32).reshape(shape)
            if t == T_Q8_0:
                nb = count // QK8_0 * (2 + QK8_0)
                return dequantize_q8_0(self.buf[start:start + nb], shape)
            raise ValueError(f"{name}: tensor type {t} not supported here")
        raise KeyError(name)

    def tensor_type(self, name):
        return next(t for n, _, t, _ in self.infos if n == name)
