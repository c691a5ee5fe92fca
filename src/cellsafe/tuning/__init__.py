"""cellsafe.tuning."""
