"""Proof on corpora. In: case folders with truth.json, the catalogue. Out: scores per field, every
signature sample replayed, results as JUnit XML and SARIF for CI."""
