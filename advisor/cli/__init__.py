"""The `advisor` command line (Typer + Rich). Commands only wire arguments to
the store and print; the work is in advisor.store and friends."""
