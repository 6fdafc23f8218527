"""The journal layer: records, transactions, load, group commit, reclaim."""
