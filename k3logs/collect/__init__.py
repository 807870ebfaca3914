"""`k3logs collect`: a fixed list of read-only commands run on one node. Out: a support bundle archive."""
