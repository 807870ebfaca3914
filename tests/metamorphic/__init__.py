"""The metamorphic test bed (issue #21): transformations of a corpus bundle that must not change its diagnosis.

transforms.py  the transforms and the Mapping that carries a case's truth over to its variant
timefmt.py     every time shape a bundle holds, found and shifted in place
lines.py       a log line taken apart into wrapper, process prefix and head, and new lines written alike
noise.toml     benign lines as real software prints them, for the noise transform
bed.py         variants of a case, their truth, the diagnosis and what differs; the known failures
"""
