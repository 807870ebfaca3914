"""Ingest: a bundle read into parsed rows. In: a path (folder, archive, compressed or plain file).
Out: the files found and skipped, what each is (sniffed by content), and batches of parsed, folded rows."""
