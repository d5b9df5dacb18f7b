"""spark-submit entry point: `spark-submit jobs/report.py [options]` = `webwinnow report [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["report", *sys.argv[1:]]))
