"""`python -m dialog_gym` runs the `dialog-gym` command line."""

import sys

from dialog_gym.cli import main

sys.exit(main())
