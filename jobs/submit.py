"""spark-submit entry point: `spark-submit jobs/submit.py STAGE [options]` = `webwinnow STAGE [options]`.

STAGE is `run`, `check`, `index` or one of the stages of webwinnow.stages.STAGES (extract,
fingerprint, hash_freq, lookup, pairs, passages, clusters, contamination, dedup, report), e.g.
`spark-submit jobs/submit.py pairs --out D` or `spark-submit jobs/submit.py check NEW/ --index IDX --out D`.
"""

import sys

from webwinnow.app.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
