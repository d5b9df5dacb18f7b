"""Single-core throughput of the fingerprinting kernels: ``python bench/bench_kernel.py``.

Prints one line per measurement, MB/s of UTF-8 text per core (the kernels are single-threaded
Numba code), best of 5 runs after a JIT warm-up:

    kernel  fingerprint_batch  english  k=50 w=100 robust  312.4 MB/s

Corpora are generated with fixed seeds: (a) English-like prose from a word list, many documents
of 2-50 KB; (b) mixed-script text (Latin, Greek, Cyrillic, Arabic, CJK, emoji, combining marks,
expanding characters). Also times the separate stages on prebuilt arrays, and reports the
fingerprint density achieved against the 2/(w+1) expected on random text.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import webwinnow as ww  # noqa: E402
from webwinnow.core import kernel  # noqa: E402
from webwinnow.core.charfold import fold_table  # noqa: E402

RUNS = 5
MB = 1e6


@njit(cache=True)
def circular_winnow(hashes, m, w, robust, selected):
    """The paper's winnowing loop (Schleimer, Wilkerson, Aiken 2003, figure 5) on a circular
    buffer of w hashes, kept minimal as the yardstick for kernel._winnow_into: the first window
    is filled before anything is selected (as the kernel does), then each new hash either
    becomes the minimum or, when the minimum leaves, the buffer is rescanned right to left for
    the rightmost minimum. Robust: a new hash equal to the minimum does not replace it."""
    if m <= 0:
        return 0
    w = min(w, m)
    buf = np.empty(w, dtype=np.int64)
    for i in range(w):
        buf[i] = hashes[i]
    best = w - 1
    for i in range(w - 2, -1, -1):
        if buf[i] < buf[best]:
            best = i
    selected[0] = best
    count = 1
    pos = best  # global index of the selection
    r = w - 1
    low = buf[best]
    for i in range(w, m):
        r = r + 1 if r + 1 < w else 0  # a compare, not a modulo: the buffer's index wraps
        h = hashes[i]
        buf[r] = h
        if pos == i - w:  # the selection left the window: rescan, rightmost minimum first
            best = r
            j = r
            for _ in range(w - 1):
                j = j - 1 if j > 0 else w - 1
                if buf[j] < buf[best]:
                    best = j
            low = buf[best]
            pos = i - (r - best if r >= best else r - best + w)
            selected[count] = pos
            count += 1
        elif h < low or (not robust and h == low):
            best = r
            low = h
            pos = i
            selected[count] = pos
            count += 1
    return count


WORDS = """
the of and to a in is it you that he was for on are with as his they be at one have this from
or had by hot word but what some we can out other were all there when up use your how said an
each she which do their time if will way about many then them write would like so these her
long make thing see him two has look more day could go come did number sound no most people
my over know water than call first who may down side been now find any new work part take get
place made live where after back little only round man year came show every good me give our
under name very through just form sentence great think say help low line differ turn cause
much mean before move right boy old too same tell does set three want air well also play small
end put home read hand port large spell add even land here must big high such follow act why
ask men change went light kind off need house picture try us again animal point mother world
near build self earth father head stand own page should country found answer school grow study
still learn plant cover food sun four between state keep eye never last let thought city tree
cross farm hard start might story saw far sea draw left late run while press close night real
life few north open seem together next white children begin got walk example ease paper group
always music those both mark often letter until mile river car feet care second book carry took
science eat room friend began idea fish mountain stop once base hear horse cut sure watch color
face wood main enough plain girl usual young ready above ever red list though feel talk bird
soon body dog family direct pose leave song measure door product black short numeral class wind
question happen complete ship area half rock order fire south problem piece told knew pass since
top whole king space heard best hour better true during hundred five remember step early hold
west ground interest reach fast verb sing listen six table travel less morning ten simple
several vowel toward war lay against pattern slow center love person money serve appear road
map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry dark
machine note wait plan figure star box noun field rest correct able pound done beauty drive
""".split()

MIXED_WORDS = (
    "Ελλάδα φιλοσοφία λόγος Σωκράτης ψυχή ἀρετή Москва книга человек время жизнь говорить "
    "Straße Größe naïve café résumé façade ﬁnancial ﬂow Ｗｉｄｅ ｔｅｘｔ ﷺ "
    "مرحبا كتاب العربية مدينة 中文 文字 北京 東京 日本語 漢字 한국어 서울 "
    "हिन्दी भाषा ภาษาไทย 😀 🎉 👍🏽 e\u0301te\u0301 n\u0303 𝐁𝐨𝐥𝐝 𐐀𐐁 2024 ٣٤٥"
).split()

PUNCT_AFTER = [",", ",", ";", ":", ""]


def prose(rng: random.Random, words: list[str], size: int) -> str:
    """Sentences of Zipf-weighted words, with capitals, punctuation and paragraph breaks."""
    weights = [1.0 / (i + 1) for i in range(len(words))]
    out: list[str] = []
    length = 0
    while length < size:
        n = rng.randint(5, 25)
        sentence = rng.choices(words, weights, k=n)
        sentence[0] = sentence[0].capitalize()
        for i in range(n - 1):
            if rng.random() < 0.08:
                sentence[i] += rng.choice(PUNCT_AFTER)
        text = " ".join(sentence) + rng.choice([". ", ". ", "? ", "! ", ".\n\n"])
        out.append(text)
        length += len(text)
    return "".join(out)[:size]


def corpus(words: list[str], total: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    docs: list[str] = []
    size = 0
    while size < total:
        doc = prose(rng, words, rng.randint(2_000, 50_000))
        docs.append(doc)
        size += len(doc.encode("utf-8"))
    return docs


def best_of(fn, runs: int = RUNS) -> float:
    fn()  # warm-up (JIT compilation, caches)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def report(what: str, name: str, params: str, nbytes: int, seconds: float) -> None:
    print(f"kernel  {what:<18} {name:<8} {params:<22} {nbytes / MB / seconds:8.1f} MB/s", flush=True)


def main() -> int:
    t_start = time.perf_counter()
    fold, expand = fold_table()
    corpora = {
        "english": corpus(WORDS, 8_000_000, 1),
        "mixed": corpus(MIXED_WORDS, 4_000_000, 2),
    }
    configs = [(50, 100, True), (50, 100, False), (5, 4, True)]
    for name, docs in corpora.items():
        arr = pa.array(docs, type=pa.large_string())
        nbytes = arr.buffers()[2].size
        print(f"# {name}: {len(docs)} docs, {nbytes / MB:.1f} MB UTF-8, {sum(map(len, docs)) / MB:.1f} M chars")
        for k, w, robust in configs:
            params = f"k={k} w={w} {'robust' if robust else 'standard'}"
            fp = ww.fingerprint_batch(arr, k, w, robust)
            seconds = best_of(lambda: ww.fingerprint_batch(arr, k, w, robust))
            report("fingerprint_batch", name, params, nbytes, seconds)
            expected = 2 / (w + 1)
            print(
                f"kernel  {'density':<18} {name:<8} {params:<22} {fp.density:.5f} "
                f"(2/(w+1) = {expected:.5f}, ratio {fp.density / expected:.3f})",
                flush=True,
            )
        chars = best_of(lambda: ww.fingerprint_batch(arr, 50, 100))
        fp = ww.fingerprint_batch(arr, 5, 16, unit="word")
        seconds = best_of(lambda: ww.fingerprint_batch(arr, 5, 16, unit="word"))
        report("fingerprint_batch", name, "word k=5 w=16", nbytes, seconds)
        print(
            f"kernel  {'density':<18} {name:<8} {'word k=5 w=16':<22} {fp.density:.5f} (2/(w+1) = {2 / 17:.5f}); "
            f"{fp.norm_chars.sum() / MB:.2f} M words; {chars / seconds:.2f}x the speed of k=50 w=100 in characters",
            flush=True,
        )
        fp = ww.fingerprint_batch(arr, 50, 100, mod_p=100)
        seconds = best_of(lambda: ww.fingerprint_batch(arr, 50, 100, mod_p=100))
        report("fingerprint_batch", name, "k=50 mod_p=100", nbytes, seconds)
        print(f"kernel  {'density':<18} {name:<8} {'k=50 mod_p=100':<22} {fp.density:.5f} (1/p = 0.01000)")

        # the stages, on the whole corpus as one document in prebuilt arrays
        data = np.frombuffer("".join(docs).encode("utf-8"), dtype=np.uint8)
        size = data.shape[0]
        cap = size + 1
        while True:  # expansions (ﷺ → 15 letters) can make the normalized text outgrow the bytes
            codes = np.empty(cap, dtype=np.int32)
            offsets = np.empty(cap, dtype=np.int64)
            n = kernel._normalize_into(data, 0, size, fold, expand, codes, offsets)
            if n >= 0:
                break
            cap *= 2
        hashes = np.empty(cap, dtype=np.int64)
        selected = np.empty(cap, dtype=np.int64)
        seconds = best_of(lambda: kernel._normalize_into(data, 0, size, fold, expand, codes, offsets))
        report("_normalize_into", name, "", size, seconds)
        m = kernel._kgram_hashes_into(codes, n, 50, hashes)
        seconds = best_of(lambda: kernel._kgram_hashes_into(codes, n, 50, hashes))
        report("_kgram_hashes_into", name, "k=50", size, seconds)
        for robust in (True, False):
            label = f"k=50 w=100 {'robust' if robust else 'standard'}"
            seconds = best_of(lambda: kernel._winnow_into(hashes, m, 100, robust, selected))
            report("_winnow_into", name, label, size, seconds)
            ours = selected[: kernel._winnow_into(hashes, m, 100, robust, selected)].copy()
            theirs = np.empty(cap, dtype=np.int64)
            circular = best_of(lambda: circular_winnow(hashes, m, 100, robust, theirs))
            report("circular buffer", name, label, size, circular)
            same = np.array_equal(ours, theirs[: circular_winnow(hashes, m, 100, robust, theirs)])
            print(
                f"kernel  {'winnow ratio':<18} {name:<8} {label:<22} {circular / seconds:8.2f}x the circular "
                f"buffer's speed (target >= 0.7); same selections: {same}",
                flush=True,
            )
        print(f"#   normalized {n / MB:.2f} M chars, {m / MB:.2f} M k-grams", flush=True)
    code = code_corpus(1_000_000, 3)
    arr = pa.array(code, type=pa.large_string())
    nbytes = arr.buffers()[2].size
    print(f"# code: {len(code)} docs of C, {nbytes / MB:.1f} MB UTF-8", flush=True)
    chars = best_of(lambda: ww.fingerprint_batch(arr, 50, 100), runs=3)
    fp = ww.fingerprint_batch(arr, 23, 17, unit="code")
    seconds = best_of(lambda: ww.fingerprint_batch(arr, 23, 17, unit="code"), runs=3)
    report("fingerprint_batch", "code", "code k=23 w=17 (c)", nbytes, seconds)
    print(
        f"kernel  {'density':<18} {'code':<8} {'code k=23 w=17 (c)':<22} {fp.density:.5f} (2/(w+1) = {2 / 18:.5f}); "
        f"{fp.norm_chars.sum() / MB:.2f} M tokens; {chars / seconds:.3f}x the speed of characters (Pygments lexes "
        "in Python)",
        flush=True,
    )
    print(f"# total {time.perf_counter() - t_start:.1f} s")
    return 0


def code_corpus(total: int, seed: int) -> list[str]:
    """C functions with random names and constants, a few to a document."""
    rng = random.Random(seed)
    names = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(1, 12))) for _ in range(500)]
    docs, size = [], 0
    while size < total:
        parts = []
        for _ in range(rng.randint(1, 6)):
            f, a, b, i = (rng.choice(names) for _ in range(4))
            parts.append(
                f"static int {f}(const char *{a}, size_t {b}) {{\n    int {i}, n = {rng.randint(0, 999)};\n"
                f"    for ({i} = 0; {i} < (int){b}; {i}++) {{ /* scan */\n        if ({a}[{i}] == '\\n') n += "
                f"{rng.randint(1, 9)};\n        else n ^= 0x{rng.randint(0, 255):02x};\n    }}\n"
                f'    printf("%s: %d\\n", "{f}", n);\n    return n;\n}}\n'
            )
        docs.append("\n".join(parts))
        size += len(docs[-1])
    return docs


if __name__ == "__main__":
    sys.exit(main())
