"""spark-submit entry point: `spark-submit jobs/hash_freq.py [options]` = `webwinnow hash_freq [options]`."""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(["hash_freq", *sys.argv[1:]]))
