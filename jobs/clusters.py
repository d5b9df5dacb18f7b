"""spark-submit entry point: `spark-submit jobs/clusters.py [options]` = `webwinnow clusters [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["clusters", *sys.argv[1:]]))
