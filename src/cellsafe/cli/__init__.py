"""cellsafe.cli."""
