"""The package's version, in one place below every layer (the lab stamps it on its results)."""

__version__ = "0.1.0"
