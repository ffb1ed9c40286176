"""Syntax: the loop file's text to the IR (`frontend`) and whole loop files written back
(`loopfile`); expressions print with `thm3.ir.printer`."""
