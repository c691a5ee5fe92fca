"""cellsafe.datasets."""
