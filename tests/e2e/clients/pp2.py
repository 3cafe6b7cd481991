"""The PROXY v2 header the test clients send before their request, as
wire/pp2.c writes it: the signature, version 2 and a command (LOCAL: no
addresses), then type-length-value fields; the sandbox id is
PP2_TYPE_UNIQUE_ID.  Imported by the clients here and tests/fleet's.
"""
import struct

SIG = b"\r\n\r\n\x00\r\nQUIT\n"
LOCAL = 0x20
UNIQUE_ID = 0x05


def header(tlvs, command=LOCAL):
    """The header with the (type, bytes) fields tlvs, in order."""
    body = b"".join(bytes([t]) + struct.pack(">H", len(v)) + v
                    for t, v in tlvs)
    return SIG + bytes([command, 0x00]) + struct.pack(">H", len(body)) + body


def sandbox(ident):
    """The header that names the sandbox ident, and nothing else."""
    return header([(UNIQUE_ID, ident.encode())])
