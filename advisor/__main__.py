from advisor.cli.main import main

main()
