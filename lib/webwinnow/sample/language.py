"""Generated prose: small vocabularies, sentences and foreign-script text, all from a seeded RNG."""

from __future__ import annotations

import random

from .constants import _nlen

_DETS = "the the the a a this that every each some our their its one another no".split()
_PREPS = "of of in in on with from under across beyond near after before through without toward behind during".split()
_CONJS = "and and but while because although so yet since until whereas".split()
_ADVS = "quickly slowly rarely often quietly carefully again later soon nearly almost openly still".split()
_NOUNS = """river market council report system village harbor engine garden letter window station
budget winter season machine bridge theory record signal museum library committee forest valley
painter farmer teacher doctor student network program language surface measure pattern method
history region border coast island mountain festival journey chapter reader writer paper storm
harvest price school factory office street square tower castle kitchen camera planet column module
server archive version package document figure sample lantern ferry orchard railway canal meadow
mayor clerk merchant sailor weaver baker engineer witness judge ledger contract parcel cargo
harbour lighthouse quarry mill furnace wagon carriage compass anchor ribbon blanket candle basket
rumour verdict treaty estate tenant parish county province""".split()
_VERBS = """reported described opened closed built followed carried measured found kept moved visited
changed crossed noticed repaired painted counted shared studied tested explained collected released
announced approved rejected delayed improved questioned ordered gathered watched welcomed replaced
recorded published removed signed divided joined raised lowered traded sold bought borrowed
returned praised criticised inspected restored abandoned""".split()
_ADJS = """small large early late quiet bright northern southern central ancient modern simple careful
narrow broad heavy local public private formal rapid steady distant familiar hidden open recent
empty crowded wooden silver golden patient honest rural coastal annual weekly""".split()

_ONSETS = "b br c ch d dr f fl g gr h j k l m n p pl pr r s sh sk st t th tr v w z".split()
_VOWELS = "a e i o u a e o ai ea ou y".split()
_CODAS = ["", "", "", "n", "r", "l", "s", "m", "nd", "st", "rk", "x", "th"]
_ACCENTED_VOWELS = "é è à â ü ö ñ ç ê ô î".split()  # all in ISO-8859-1 and windows-1252
_NON_LATIN1 = "ő ł ž š č ę".split()  # outside ISO-8859-1: make a misdecode visible

_GREEK_SYL = "κα λο με τα νι στο πε ρι θε ση γα δο ξε φω χρο ου αι ει μά νή λί κό τύ πώ".split()
_CYRILLIC_SYL = "ка ло ме ти ро на сто во при же шу да ли ку ра ве мо ны пе зо".split()
_CJK_CHARS = "日本語文書山川水火木金土月人大小中上下学生先年時間国会社長新古高安道海空雨風花草森町村駅店手足目口".replace(
    "", " "
).split()


def _tokens_text(tokens: list[str]) -> str:
    out = ""
    for tok in tokens:
        if tok in {",", ";"}:
            out += tok
        else:
            out += (" " if out else "") + tok
    return out


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


class _Lang:
    """A seeded pseudo-English generator: vocabulary plus a tiny grammar."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        seen: set[str] = set(_NOUNS) | set(_VERBS) | set(_ADJS) | set(_DETS) | set(_PREPS)
        self.nouns = list(_NOUNS) + self._made_up(110, seen)
        self.verbs = list(_VERBS) + [w + "ed" for w in self._made_up(35, seen, max_syl=2)]
        self.adjs = list(_ADJS) + [w + rng.choice(["ic", "ous", "al", "ish"]) for w in self._made_up(30, seen, max_syl=2)]
        self.names = [w.capitalize() for w in self._made_up(50, seen)]
        self.accented = self._made_up(40, seen, accent=True)
        self.non_latin1 = self._made_up(12, seen, accent=True, extra=_NON_LATIN1)
        # nouns by normalized length, for sentences of an exact length
        self.nouns_by_len: dict[int, list[str]] = {}
        for w in self.nouns:
            self.nouns_by_len.setdefault(len(w), []).append(w)
        self.accent = False
        self.quotes = False

    def _made_up(self, n, seen, max_syl=3, accent=False, extra=None):
        rng = self.rng
        out = []
        while len(out) < n:
            syl = rng.randint(1, max_syl) if not accent else rng.randint(2, 3)
            w = ""
            for _ in range(syl):
                w += rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
            if accent:
                pool = extra if extra else _ACCENTED_VOWELS
                vowels = [i for i, c in enumerate(w) if c in "aeiou"]
                if not vowels:
                    continue
                i = rng.choice(vowels)
                w = w[:i] + rng.choice(pool) + w[i + 1 :]
            if len(w) < 3 or len(w) > 12 or w in seen:
                continue
            seen.add(w)
            out.append(w)
        return out

    # -- grammar -------------------------------------------------------------------------------
    def noun(self) -> str:
        if self.accent and self.rng.random() < 0.3:
            return self.rng.choice(self.accented)
        return self.rng.choice(self.nouns)

    def np(self, allow_pp=True, short=False) -> list[str]:
        rng = self.rng
        r = rng.random()
        if r < 0.1 and not short:
            toks = [rng.choice(self.names)]
        elif r < 0.17 and not short:
            n = rng.choice([rng.randint(2, 99), rng.randint(100, 2003)])
            toks = [str(n), _plural(self.noun())]
        else:
            toks = [rng.choice(_DETS)]
            if rng.random() < 0.35 and not short:
                toks.append(rng.choice(self.adjs))
            toks.append(self.noun())
        if allow_pp and not short and rng.random() < 0.3:
            toks += [rng.choice(_PREPS)] + self.np(False)
        return toks

    def clause(self, short=False) -> list[str]:
        rng = self.rng
        toks = self.np(short=short) + [rng.choice(self.verbs)]
        if not short and rng.random() < 0.15:
            toks.append(rng.choice(_ADVS))
        toks += self.np(short=short)
        if not short and rng.random() < 0.4:
            toks += [rng.choice(_PREPS)] + self.np(False)
        return toks

    def sentence_tokens(self, short=False) -> list[str]:
        toks = self.clause(short)
        if not short and self.rng.random() < 0.35:
            toks += [","] + [self.rng.choice(_CONJS)] + self.clause()
        return toks

    def _finish(self, toks: list[str]) -> str:
        text = _tokens_text(toks)
        text = text[0].upper() + text[1:] + "."
        if self.quotes and self.rng.random() < 0.3:
            words = text.split(" ")
            if len(words) > 4:
                i = self.rng.randrange(1, len(words) - 3)
                words[i] = "“" + words[i]
                words[i + 1] = words[i + 1] + "”"
                text = " ".join(words)
        return text

    def sentence(self, short=False) -> str:
        return self._finish(self.sentence_tokens(short))

    def sentence_exact(self, n: int) -> str:
        """A sentence whose normalized length is exactly ``n`` (15 <= n <= ~120)."""
        for _ in range(20000):
            short = n < 45 or (n < 70 and self.rng.random() < 0.5)
            toks = self.sentence_tokens(short)
            need = n - _nlen(_tokens_text(toks[:-1]))
            if need in self.nouns_by_len:
                toks[-1] = self.rng.choice(self.nouns_by_len[need])
                return self._finish(toks)
        raise RuntimeError(f"could not make a sentence of normalized length {n}")

    def sentences_exact(self, total: int) -> list[str]:
        """Whole sentences whose normalized lengths add up to exactly ``total``."""
        out: list[str] = []
        rest = total
        while rest > 90:
            for _ in range(500):
                s = self.sentence()
                if _nlen(s) <= rest - 25:
                    break
            else:  # pragma: no cover - the grammar always has short sentences
                s = self.sentence(short=True)
            out.append(s)
            rest -= _nlen(s)
        out.append(self.sentence_exact(rest))
        return out

    def paragraph(self, lo=2, hi=6) -> list[str]:
        return [self.sentence() for _ in range(self.rng.randint(lo, hi))]

    def phrase(self, lo=2, hi=5) -> str:
        toks = self.np()
        while len(toks) < lo:
            toks += [self.rng.choice(_PREPS)] + self.np(False)
        toks = toks[: max(hi, lo)]
        while len(toks) > 1 and (toks[-1] in _PREPS or toks[-1] in _DETS):
            toks.pop()
        text = _tokens_text(toks)
        return text[0].upper() + text[1:]

    def headline(self) -> str:
        rng = self.rng
        toks = self.np(allow_pp=False) + [rng.choice(self.verbs)] + self.np(allow_pp=False)
        if rng.random() < 0.5:
            toks += [rng.choice(_PREPS)] + self.np(False)
        toks = [t for t in toks if t not in _DETS or rng.random() < 0.4]
        text = _tokens_text(toks)
        return text[0].upper() + text[1:]


def _foreign_sentence(rng: random.Random, script: str) -> str:
    if script == "cjk":
        n = rng.randint(10, 28)
        chars = [rng.choice(_CJK_CHARS) for _ in range(n)]
        if n > 14:
            chars.insert(rng.randint(5, n - 5), "、")
        return "".join(chars) + "。"
    syl = _GREEK_SYL if script == "greek" else _CYRILLIC_SYL
    words = []
    for _ in range(rng.randint(6, 15)):
        w = "".join(rng.choice(syl) for _ in range(rng.randint(1, 3)))
        if script == "greek" and w.endswith("σ"):
            w = w[:-1] + "ς"
        words.append(w)
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


# --------------------------------------------------------------------------------------------
# page bodies: a list of blocks, rendered into <main>
