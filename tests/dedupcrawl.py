"""A crawl made to break dedup: as JSONL items (crawl order = line order, no times, so the earlier
line is the source), each case with the passages it plants.

- cap: two pages sharing 1,500 separate paragraphs, more than passages.max_spans;
- repeats: a paragraph once in one page and 40 times in another, more than pairing.max_repeats;
- chain: one passage in three pages, A → B → C;
- overlap: a passage P in two pages and its first part X in an earlier third;
- cluster: two near-duplicate pages and a third page holding a passage of both and one of each;
- template: a passage that is its host's template (in more than max_df pages) where it is the
  source, and content where it is the copy, with more content around it in both.

Paragraphs are words of random syllables between separators unique to their page, so nothing of
k characters is shared but what is planted.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SYLLABLES = "ka lo mi ne su ta ri po ve zu ga hi jo qu xe wy bo cy da fe".split()
#: max_df for this crawl: the template case's passage is in 7 pages of its host
MAX_DF = 5


class Crawl:
    def __init__(self, seed: int = 5) -> None:
        self.rng = random.Random(seed)
        self.items: list[dict] = []
        self.passages: dict[str, str] = {}

    def words(self, chars: int) -> str:
        out: list[str] = []
        while sum(len(w) + 1 for w in out) < chars:
            out.append("".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 4))))
        return " ".join(out)

    def sep(self) -> str:
        return f" [{self.rng.randrange(10**12)}] "

    def page(self, id_: str, *parts: str) -> None:
        """A page: its parts between separators, unique text before and after."""
        body = self.sep().join([self.words(600), *parts, self.words(600)])
        self.items.append({"id": id_, "text": body})

    def plant(self, name: str, chars: int) -> str:
        self.passages[name] = text = self.words(chars)
        return text


def build(folder: Path) -> dict[str, str]:
    """Write the crawl into folder (crawl.jsonl, site.jsonl); return the planted passages."""
    c = Crawl()
    paragraphs = [c.words(200) for _ in range(1500)]
    c.passages.update({f"cap-{i}": p for i, p in enumerate(paragraphs)})
    c.page("cap-a", *paragraphs)
    c.page("cap-b", *paragraphs)

    p = c.plant("repeated", 300)
    c.page("rep-a", p)
    c.items.append({"id": "rep-b", "text": c.sep().join([p] * 40)})

    p = c.plant("chain", 300)
    for name in ("chain-a", "chain-b", "chain-c"):
        c.page(name, p)

    p = c.words(400)  # whole in no page once its head is cut from the later two: each part in one
    c.passages["overlap-head"] = head = p[:220].rsplit(" ", 1)[0]
    c.passages["overlap-tail"] = p[len(head) :].strip()
    c.page("overlap-e", head)
    c.page("overlap-r", p)
    c.page("overlap-j", p)

    # one member is dropped (which one: the clusters' order, by doc_id here): its own passage stays
    # in the third page, the kept member's leaves it
    body = c.words(3000)
    in_both, in_1, in_2 = c.plant("cluster-both", 250), c.plant("cluster-near-1", 250), c.plant("cluster-near-2", 250)
    c.items.append({"id": "near-1", "text": c.sep().join([body, in_both, in_1])})
    c.items.append({"id": "near-2", "text": c.sep().join([body, in_both, in_2])})
    c.page("cluster-x", in_both, in_1, in_2)

    (folder / "crawl.jsonl").write_text("".join(json.dumps(i) + "\n" for i in c.items))

    # site.jsonl: ids are URLs, so pages have hosts and --strip-template applies
    c.items = []
    template, content = c.words(200), c.plant("template-content", 200)
    c.passages["template+content"] = template + " " + content
    c.items.append({"id": "http://d.example/first", "text": c.words(1500)})
    for i in range(6):
        c.page(f"http://d.example/p{i}", template)
    c.page("http://d.example/source", template + " " + content)
    c.page("http://o.example/copy", template + " " + content)
    (folder / "site.jsonl").write_text("".join(json.dumps(i) + "\n" for i in c.items))
    return c.passages
