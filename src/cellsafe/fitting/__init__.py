"""cellsafe.fitting."""
