"""spark-submit entry point: `spark-submit jobs/submit.py STAGE [options]` = `webwinnow STAGE [options]`.

STAGE is `run` or one of the stages of webwinnow.stages.STAGES (extract, fingerprint,
hash_freq, pairs, passages, clusters, report), e.g. `spark-submit jobs/submit.py pairs --out D`.
"""

import sys

from webwinnow.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
