"""spark-submit entry point: `spark-submit jobs/pairs.py [options]` = `webwinnow pairs [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["pairs", *sys.argv[1:]]))
