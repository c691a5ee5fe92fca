"""cellsafe.report."""
