"""spark-submit entry point: `spark-submit jobs/run.py [options]` = `webwinnow run [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["run", *sys.argv[1:]]))
