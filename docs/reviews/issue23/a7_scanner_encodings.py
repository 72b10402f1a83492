"""Attack 7: encoded spellings of a vault value that the scanner's find() misses.

Each line prints HELD (found) or MISSED for one spelling of the value. Run:
  PYTHONPATH=$PWD /work/main/.venv/bin/python docs/reviews/issue23/a7_scanner_encodings.py
"""
import base64, codecs, html, sys
from assistant.secrets.scanner import Scanner

V = "sk-Q7mZpX4vL2nR9tB6wY3c"
s = Scanner({"apikey": V})
raw = V.encode()

def b32hex(b):
    std = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"; ext = "0123456789ABCDEFGHIJKLMNOPQRSTUV"
    return base64.b32encode(b).decode().translate(str.maketrans(std, ext))

cases = {
    "raw": V,
    "upper": V.upper(),
    "rot13": codecs.encode(V, "rot13"),
    "rot13 upper": codecs.encode(V, "rot13").upper(),
    "rot13 lower": codecs.encode(V, "rot13").lower(),
    "reversed": V[::-1],
    "reversed lower": V[::-1].lower(),
    "base32": base64.b32encode(raw).decode(),
    "base32 lower": base64.b32encode(raw).decode().lower(),
    "base32 in text": "token=" + base64.b32encode(b"x" + raw).decode(),
    "base32hex": b32hex(raw),
    "base64": base64.b64encode(raw).decode(),
    "utf16le b64": base64.b64encode(V.encode("utf-16-le")).decode(),
    "utf16be b64": base64.b64encode(V.encode("utf-16-be")).decode(),
    "utf16 (bom) b64": base64.b64encode(V.encode("utf-16")).decode(),
    "utf16le hex": V.encode("utf-16-le").hex(),
    "utf32le b64": base64.b64encode(V.encode("utf-32-le")).decode(),
    "html dec": "".join(f"&#{ord(c)};" for c in V),
    "html dec no ;": "".join(f"&#{ord(c)}" for c in V),
    "html dec 0-padded": "".join(f"&#{ord(c):04d};" for c in V),
    "html hex": "".join(f"&#x{ord(c):x};" for c in V),
    "html HEX upper X": "".join(f"&#X{ord(c):X};" for c in V),
    "html hex 0-padded": "".join(f"&#x{ord(c):04x};" for c in V),
    "html one char": V[:5] + f"&#{ord(V[5])};" + V[6:],
    "html named+dec mix": html.escape(V[:3]) + "".join(f"&#{ord(c)};" for c in V[3:]),
    "dec list": ", ".join(str(b) for b in raw),
    "dec list ;": "; ".join(str(b) for b in raw),
    "dec list |": "|".join(str(b) for b in raw),
    "dec list 0-pad": ",".join(f"{b:03d}" for b in raw),
    "hex list": " ".join(f"0x{b:02x}" for b in raw),
    "hex list ,": ",".join(f"0x{b:02X}" for b in raw),
    "hex colon": ":".join(f"{b:02x}" for b in raw),
    "hex list ;": ";".join(f"0x{b:02x}" for b in raw),
    "octal list": ",".join(f"0o{b:o}" for b in raw),
    "octal escaped": "".join(f"\\{b:03o}" for b in raw),
    "chr() calls": "+".join(f"chr({b})" for b in raw),
    "u+ codepoints": " ".join(f"U+{ord(c):04X}" for c in V),
    "\\u{} (js/rust)": "".join(f"\\u{{{ord(c):x}}}" for c in V),
    "ascii85": base64.a85encode(raw).decode(),
    "base85": base64.b85encode(raw).decode(),
    "spaced letters": " ".join(V),
    "dot-separated": ".".join(V),
    "dash-separated": "-".join(V),
    "nfd/fullwidth": V.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)}),
    "url %XX all": "".join(f"%{b:02x}" for b in raw),
    "mixed case hex": raw.hex().upper(),
    "quoted-printable all": "".join(f"={b:02X}" for b in raw),
    "base64 of lower": base64.b64encode(V.lower().encode()).decode(),
    "base64 of b64": base64.b64encode(base64.b64encode(raw)).decode(),
    "punycode idna-ish": "xn--" + V,
}
for name, text in cases.items():
    hit = bool(s.find("note: " + text + " end"))
    print(("HELD  " if hit else "MISSED"), name)
