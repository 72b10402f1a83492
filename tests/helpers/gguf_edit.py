"""Test support: a copy of a GGUF file with a `tokenizer.chat_template` of the test's choosing
(what a model from a hub carries), so chat_format = "auto" can be driven end to end with the
embedded model's real weights. No tests here.

GGUF (v2/v3): "GGUF", version u32, tensor count u64, metadata count u64, the metadata
key/values, the tensor infos (offsets relative to the data section), padding to
`general.alignment` (32 by default), then the tensor data. The copy adds (or replaces) one
string key and re-pads, so the tensor data and its relative offsets are unchanged.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

_STRING, _ARRAY, _UINT32 = 8, 9, 4
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}   # type -> byte size


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        (v,) = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return v

    def string(self) -> bytes:
        n = self.take("Q")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s

    def skip_value(self, vtype: int) -> None:
        if vtype == _STRING:
            self.string()
        elif vtype == _ARRAY:
            itype, count = self.take("I"), self.take("Q")
            if itype in _FIXED:
                self.pos += _FIXED[itype] * count
            else:
                for _ in range(count):
                    self.skip_value(itype)
        else:
            self.pos += _FIXED[vtype]


def _string(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def with_chat_template(src: Path, dst: Path, template: str) -> Path:
    """Write `dst`: `src` with tokenizer.chat_template = `template`."""
    with open(src, "rb") as f:
        head = f.read(64 << 20)     # the metadata and tensor infos of a small model fit easily
    r = _Reader(head)
    if r.data[:4] != b"GGUF":
        raise ValueError(f"{src} is not a GGUF file")
    r.pos = 4
    version, n_tensors, n_kv = r.take("I"), r.take("Q"), r.take("Q")
    kv_start = r.pos
    kept: list[bytes] = []
    alignment = 32
    for _ in range(n_kv):
        start = r.pos
        key = r.string()
        vtype = r.take("I")
        if key == b"general.alignment" and vtype == _UINT32:
            alignment = r.take("I")
        else:
            r.skip_value(vtype)
        if key != b"tokenizer.chat_template":
            kept.append(head[start:r.pos])
    assert r.pos > kv_start
    infos_start = r.pos
    for _ in range(n_tensors):
        r.string()
        n_dims = r.take("I")
        r.pos += 8 * n_dims + 4 + 8
    infos = head[infos_start:r.pos]
    data_start = -(-r.pos // alignment) * alignment
    new_kv = _string(b"tokenizer.chat_template") + struct.pack("<I", _STRING) + _string(template.encode())
    out = struct.pack("<4sIQQ", b"GGUF", version, n_tensors, len(kept) + 1) + b"".join(kept) + new_kv + infos
    out += b"\0" * (-len(out) % alignment)
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        fout.write(out)
        fin.seek(data_start)
        shutil.copyfileobj(fin, fout, 16 << 20)
    return dst
