"""What every build stage's process shares: progress and stage timing (``progress``), durable file writes
(``durable``: fsync, atomic rename) and handing freed memory back to the system between stages (``memory``)."""
