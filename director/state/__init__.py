"""Machine state: the journal, the run lifecycle table, the lease."""
