"""The Live State ledger: splicing, cells, the plan file on disk, diffs."""
