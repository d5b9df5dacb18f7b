"""`python -m webwinnow.sample OUT_DIR [--pages N] [--seed S] [--files F]`."""

from .warcs import main

raise SystemExit(main())
