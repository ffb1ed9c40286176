"""Syntax: the loop file's text to the IR (`frontend`) and back (`printer` for
expressions, `loopfile` for whole files)."""
