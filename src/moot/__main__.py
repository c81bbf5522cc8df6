from moot.cli.app import main

main()
