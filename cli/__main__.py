from thm3.cli.main import main

main()
