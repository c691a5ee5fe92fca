"""Test-wide settings: property-based tests draw the same examples on every run (never flaky)."""

from hypothesis import settings

settings.register_profile("cellsafe", derandomize=True, database=None)
settings.load_profile("cellsafe")
