"""Diagnosis over the event table. In: parsed rows and the catalogue. Out: every event on a node, rank and
one UTC time line, the signatures that fired, the outcome, and the decision: the first cause and its phase."""
