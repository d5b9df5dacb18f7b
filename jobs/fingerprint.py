"""spark-submit entry point: `spark-submit jobs/fingerprint.py [options]` = `webwinnow fingerprint [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["fingerprint", *sys.argv[1:]]))
