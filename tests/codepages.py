"""Pages holding program code, and a WARC of them: the code unit's test crawl.

ORIGINAL is a C function; RENAMED is the same program copied by someone who renamed every
identifier, changed every literal, dropped the comments and re-indented it: the code unit must
see one copy. OTHER is a different program.
"""

from __future__ import annotations

import html
import io
from pathlib import Path

ORIGINAL = """int count_words(const char *text, int limit) {
    int total = 0;  /* words seen */
    for (int i = 0; text[i] && i < limit; i++) {
        if (text[i] == ' ') total += 1;
    }
    printf("%d words\\n", total);
    return total + 0x10;
}"""
RENAMED = """int   n_w(const char*s,int max){int n=0;
  for(int j=0;s[j]&&j<max;j++){ if(s[j]=='x')n+=1; }
  printf("words: %d", n); return n+16;}"""
OTHER = """struct node { struct node *next; double value; };
double sum_list(struct node *head) {
    double acc = 0.0;
    while (head != NULL) { acc = acc * 2.0 - head->value; head = head->next; }
    return acc;
}"""

PAGES = {
    # url: (html, the code blocks html_code must give, joined by its form feed lines)
    "https://a.test/count.html": (
        "<html><body><h1>Counting words</h1><p>Call <code>count_words()</code> with a limit.</p>"
        f"<pre class='language-c'>{html.escape(ORIGINAL)}</pre><p>That is all.</p></body></html>",
        ORIGINAL,
    ),
    "https://b.test/copy.html": (
        "<html><body><p>My own solution (honest):</p><div class='highlight'><pre><code>"
        f"{html.escape(RENAMED)}</code></pre></div><p>and a list:</p><pre>{html.escape(OTHER)}</pre></body></html>",
        RENAMED + "\n\f\n" + OTHER,
    ),
    "https://c.test/prose.html": ("<html><body><p>No code here, only prose about <code>main</code>.</p></body></html>", ""),
}


def write_code_warc(path: Path) -> Path:
    """A WARC of PAGES, one response record each."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, (page, _) in PAGES.items():
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(url, "response", payload=io.BytesIO(page.encode()), http_headers=headers)
            )
    return path
