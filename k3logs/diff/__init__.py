"""What a failing run does differently. In: two analyses (failing, last good) or one multi-node analysis.
Out: a DiffReport (diff.schema.json)."""
