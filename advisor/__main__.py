from advisor.cli.entry import main

main()
