"""Batch scan of an archive of bundles. In: a folder of bundles. Out: incidents.parquet (a row per bundle) and
a summary of the causes that recur; bundles run in worker processes (or Ray tasks), each with a time limit."""
