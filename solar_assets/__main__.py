"""``python -m solar_assets`` (and ``python -m solar``): the ``solar`` command."""
import sys

from solar_assets.cli import main

sys.exit(main())
