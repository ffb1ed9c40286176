"""Synthesis of the combine: a sketch taken from `left` (`sketch`), bottom-up enumeration
(`enumeration`), and SymPy tidying of rational fields (`tidy`)."""
