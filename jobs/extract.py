"""spark-submit entry point: `spark-submit jobs/extract.py [options]` = `webwinnow extract [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["extract", *sys.argv[1:]]))
