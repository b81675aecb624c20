"""`python -m gpuvisit <command>`: the GPU visit's commands (gpuvisit.cli)."""

import sys

from gpuvisit.cli import main

sys.exit(main())
