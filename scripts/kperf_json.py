"""Reads kperf result documents, plain or gzip-compressed (*.json.gz), for the report scripts."""
import gzip
import json


def load_document(path):
    """The parsed JSON document at `path`; gzip files are recognised by their magic bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def display_name(path):
    """The file name a report shows: the base name, without a ".gz", so that a report made from
    compressed documents reads as the one made from their plain copies."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".gz") else name
