"""`python -m thm3`: the command line, as `thm3`."""
from thm3.cli.main import main

main(prog_name="thm3")
