"""`python -m director`."""

from director.cli import main

main()
