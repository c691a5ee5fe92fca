"""cellsafe.metrics."""
