"""cellsafe.mechanisms."""
