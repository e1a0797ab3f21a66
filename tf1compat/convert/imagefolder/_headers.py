"""Format, height and width of an encoded image from its header, without decoding pixels,
and whether the file is whole.

Only what slim's ``Image`` handler decodes to one ``[height, width, 3]`` image is taken
(``tf.image.decode_image`` / ``decode_jpeg``): JPEG (baseline, extended or progressive),
PNG, and BMP of 8 (grey), 24 or 32 bits. GIF and WebP decode to animations
(``[frames, h, w, c]``), TIFF and OS/2 BMP not at all; each gets a reason naming it.
A file cut off or damaged where it is cheap to see is refused too, as TensorFlow's
decoders refuse it: a JPEG without its end-of-image marker after the scan, a PNG whose
chunks do not run whole, CRCs checked, to IEND, a BMP shorter than its pixel rows.
"""

import struct
import zlib

SUPPORTED = "a JPEG, PNG or BMP image"

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_JPEG_FRAMES = {0xC0: "baseline", 0xC1: "extended", 0xC2: "progressive"}
_JPEG_OTHER_FRAMES = {0xC3: "lossless", 0xC5: "hierarchical", 0xC6: "hierarchical",
                      0xC7: "hierarchical", 0xC9: "arithmetic-coded", 0xCA: "arithmetic-coded",
                      0xCB: "arithmetic-coded", 0xCD: "hierarchical arithmetic-coded",
                      0xCE: "hierarchical arithmetic-coded", 0xCF: "arithmetic-coded lossless"}
_JPEG_STANDALONE = {0x01, *range(0xD0, 0xD9)}     # TEM, RST0-7, SOI: no length field
_UNSUPPORTED = [(b"GIF87a", "GIF"), (b"GIF89a", "GIF"), (b"II*\x00", "TIFF"),
                (b"MM\x00*", "TIFF"), (b"\xff\x0a", "JPEG XL"),
                (b"\x00\x00\x00\x0cJXL ", "JPEG XL")]


def read_image_header(data: bytes) -> tuple[str, int, int]:
    """``(format, height, width)`` of the encoded image ``data``: format ``"jpeg"``,
    ``"png"`` or ``"bmp"``. Raises ``ValueError`` saying what the bytes are instead."""
    if not data:
        raise ValueError("empty file")
    if data.startswith(_PNG_SIGNATURE):
        size = _png_size(data)
        _check_png_chunks(data)
        return ("png", *size)
    if data.startswith(b"\xff\xd8\xff"):
        return ("jpeg", *_jpeg_size(data))
    if data.startswith(b"BM"):
        return ("bmp", *_bmp_size(data))
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        raise ValueError("a WebP image, which TensorFlow decodes as an animation "
                         "(slim's Image handler cannot read it)")
    for signature, name in _UNSUPPORTED:
        if data.startswith(signature):
            raise ValueError(f"a {name} image, which slim's Image handler cannot decode")
    raise ValueError(f"not an image (starts with {data[:8].hex(' ')})")


def _png_size(data: bytes) -> tuple[int, int]:
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise ValueError("a PNG image whose IHDR header is missing or cut off")
    width, height = struct.unpack(">II", data[16:24])
    return _checked(height, width, "PNG")


def _check_png_chunks(data: bytes) -> None:
    """Walk the chunks to IEND, checking each one's CRC (as libpng does)."""
    i = len(_PNG_SIGNATURE)
    while i + 12 <= len(data):
        (length,) = struct.unpack(">I", data[i:i + 4])
        tag = data[i + 4:i + 8]
        end = i + 8 + length
        if end + 4 > len(data):
            break
        (stored,) = struct.unpack(">I", data[end:end + 4])
        if zlib.crc32(data[i + 4:end]) != stored:
            raise ValueError(f"a PNG image whose {tag.decode('latin-1')!r} chunk at byte {i} "
                             "is damaged (CRC mismatch)")
        if tag == b"IEND":
            return
        i = end + 4
    raise ValueError(f"a PNG image cut off at byte {len(data)} (no IEND chunk)")


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """Walk the JPEG segments to the frame header (SOFn), then check the end-of-image
    marker follows the first scan (entropy-coded data never holds one)."""
    i = 2
    size = None
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            raise ValueError(f"a JPEG image with a broken segment at byte {i}")
        marker = data[i + 1]
        if marker == 0xFF:                        # fill byte
            i += 1
            continue
        if marker in _JPEG_STANDALONE:
            i += 2
            continue
        if marker in (0xD9, 0xDA):                # end of image, start of scan
            break
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if marker in _JPEG_OTHER_FRAMES:
            raise ValueError(f"a {_JPEG_OTHER_FRAMES[marker]} JPEG (SOF{marker - 0xC0}), "
                             "which TensorFlow does not decode")
        if marker in _JPEG_FRAMES and i + 9 <= len(data):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            size = _checked(height, width, "JPEG")
        i += 2 + length
    if size is None:
        raise ValueError("a JPEG image without a frame header (cut off?)")
    if data.find(b"\xff\xd9", i) < 0:
        raise ValueError(f"a JPEG image cut off at byte {len(data)} (no end-of-image "
                         "marker after its scan)")
    return size


def _bmp_size(data: bytes) -> tuple[int, int]:
    if len(data) < 26:
        raise ValueError("a BMP image whose header is cut off")
    (header_size,) = struct.unpack("<I", data[14:18])
    if header_size == 12:                         # BITMAPCOREHEADER: 16-bit sizes
        raise ValueError("an OS/2 BMP, which TensorFlow does not decode")
    if header_size < 40 or len(data) < 54:
        raise ValueError(f"a BMP image with an unknown header ({header_size} bytes)")
    width, height, _, bits, compression = struct.unpack("<iiHHI", data[18:34])
    (colors,) = struct.unpack("<I", data[46:50])
    if compression not in (0, 3):                 # BI_RGB, BI_BITFIELDS
        raise ValueError(f"a compressed BMP (compression {compression}), which TensorFlow "
                         "does not decode")
    if bits not in (8, 24, 32):
        raise ValueError(f"a {bits}-bit BMP; TensorFlow decodes 8-bit grey, 24- and "
                         "32-bit BMPs")
    start = 14 + header_size
    if bits == 8 and not _grey_palette(data[start:start + (colors or 256) * 4]):
        raise ValueError("an 8-bit BMP with a colour palette, which TensorFlow would "
                         "decode as grey levels")
    height, width = _checked(abs(height), width, "BMP")
    (pixels_start,) = struct.unpack("<I", data[10:14])
    needed = pixels_start + (bits * width + 31) // 32 * 4 * height
    if len(data) < needed:
        raise ValueError(f"a BMP image cut off at byte {len(data)} (its pixel rows need "
                         f"{needed} bytes)")
    return height, width


def _grey_palette(palette: bytes) -> bool:
    """Whether a BMP palette (4 bytes per colour, B G R first) maps each index to the
    grey level of the same value."""
    return all(palette[i * 4:i * 4 + 3] == bytes([i, i, i]) for i in range(len(palette) // 4))


def _checked(height: int, width: int, name: str) -> tuple[int, int]:
    if height <= 0 or width <= 0:
        raise ValueError(f"a {name} image of {width}x{height} pixels")
    return height, width
