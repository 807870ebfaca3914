"""The catalogue: patterns/ loaded and checked. In: the TOML files of patterns/ (and extra signature folders).
Out: frozen records (signatures, taxonomy, formats, witnesses, acceptance thresholds), or issues with file:line."""
