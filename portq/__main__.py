"""``python -m portq``: the same command line as the ``portq`` script (``portq.cli``)."""

import sys

from portq.cli import main

sys.exit(main())
