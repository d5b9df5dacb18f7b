"""spark-submit entry point: `spark-submit jobs/passages.py [options]` = `webwinnow passages [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["passages", *sys.argv[1:]]))
