"""The click application (installed as `thm3.cli`)."""
