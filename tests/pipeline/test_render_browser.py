"""The standalone page of `spacy_punctgen.render` in a real headless browser (Chromium from the
system packages, driven by Selenium through chromedriver).

Opens the page, and checks: it loads without a console error or a script running (the page has
no script, and words that look like markup must stay text); the screenshot is not blank; every
slot's underlying and surface strings are in the rendered DOM and laid out with a real size; the
words of a sentence do not overlap (the layout's text-width estimate holds in a real font).
Skips, saying why, where Chromium, chromedriver, Selenium or Pillow is missing.
"""
import io
import shutil

import pytest
import spacy
from spacy.tokens import Doc

from spacy_punctgen.api.picture import render

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

#: Words and a mark that would be markup (a script, an image whose error handler runs) unescaped.
HOSTILE_WORD = "<script>window.__pwned=1</script>"
HOSTILE_OBJ = '<img src=x onerror="window.__pwned=2">'
HOSTILE_MARK = "</svg>"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Chromium and chromedriver from the system packages (Debian: apt-get install -y chromium "
           "chromium-driver)")


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--hide-scrollbars", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page(tmp_path_factory, gold_docs):
    nlp = spacy.blank("en")
    nlp.add_pipe("punctgen")  # the shipped English model
    docs = [nlp(doc) for doc in gold_docs(nlp, n=10)] + [nlp(hostile_doc(nlp.vocab))]
    ren = render(docs, model=nlp.get_pipe("punctgen"), page=True)
    path = ren.save(tmp_path_factory.mktemp("render") / "page.html")
    return ren, path


def hostile_doc(vocab):
    words = [HOSTILE_WORD, "said", HOSTILE_OBJ, HOSTILE_MARK, "loudly", "."]
    return Doc(vocab, words=words, spaces=[True] * 5 + [False],
               pos=["PROPN", "VERB", "NOUN", "PUNCT", "ADV", "PUNCT"],
               heads=[1, 1, 1, 1, 1, 1], deps=["nsubj", "ROOT", "obj", "punct", "advmod", "punct"])


def _severe(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def test_page_renders_in_chromium(browser, page):
    Image = pytest.importorskip("PIL.Image", reason="needs Pillow to read the screenshot")
    ren, path = page
    browser.get(path.resolve().as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    assert browser.title == ren.title
    # no error in the console, and nothing ran: neither the page nor the words that look like markup
    assert _severe(browser) == []
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.scripts.length") == 0
    assert browser.execute_script("return document.images.length") == 0

    # one figure and one drawn SVG per sentence
    n = len(ren.sentences)
    sizes = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure.pg-sentence svg'))"
        ".map(s => { const r = s.getBoundingClientRect(); return [r.width, r.height]; })")
    assert len(sizes) == n and all(w > 100 and h > 100 for w, h in sizes)

    # every slot's strings are in the DOM, per sentence and in slot order, and take up room
    drawn = browser.execute_script("""
        return Array.from(document.querySelectorAll('figure.pg-sentence')).map(fig => {
          const texts = cls => Array.from(fig.querySelectorAll('text.' + cls)).map(t => {
            const b = t.getBBox();
            const own = Array.from(t.childNodes).filter(c => c.nodeName !== 'title')
                             .map(c => c.textContent).join('');
            return [own, b.width, b.height];
          });
          return {surface: texts('pg-surface'), underlying: texts('pg-underlying'),
                  words: texts('pg-word').map((w, i) => [w[0], fig.querySelectorAll('text.pg-word')[i]
                                                             .getBBox().x, w[1]]),
                  all: fig.textContent};
        });""")
    assert len(drawn) == n
    n_marks = 0
    for sv, fig in zip(ren.sentences, drawn):
        surfaces = [" ".join(v.surface) for v in sv.slots if v.surface]
        underlying = ["?" if v.underlying is None else " ".join(v.underlying) for v in sv.slots
                      if v.underlying is None or v.underlying]
        assert [t for t, _, _ in fig["surface"]] == surfaces
        assert [t for t, _, _ in fig["underlying"]] == underlying
        for s in surfaces:
            assert s in fig["all"]
        assert all(w > 0 and h > 0 for _, w, h in fig["surface"] + fig["underlying"])
        n_marks += len(surfaces)
        # the words, left to right, do not overlap
        words = fig["words"]
        assert [w for w, _, _ in words] == sv.words
        for (_, x0, w0), (_, x1, _) in zip(words, words[1:]):
            assert x0 + w0 <= x1 + 0.5
    assert n_marks >= 10
    text = browser.execute_script("return document.body.textContent")
    for raw in (HOSTILE_WORD, HOSTILE_OBJ, HOSTILE_MARK):
        assert raw in text  # shown as text

    # the screenshot is a picture, not a blank page
    png = browser.get_screenshot_as_png()
    img = Image.open(io.BytesIO(png)).convert("L")
    assert img.size[0] >= 1000 and img.size[1] >= 700
    hist = img.histogram()
    total = sum(hist)
    mean = sum(i * c for i, c in enumerate(hist)) / total
    variance = sum(c * (i - mean) ** 2 for i, c in enumerate(hist)) / total
    dark = sum(hist[:128]) / total
    assert variance > 100, variance  # a blank page has variance 0
    assert 0.002 < dark < 0.5, dark  # some ink, on a light background
    # one sentence's picture on its own: ink in it too
    svg = browser.find_element("css selector", "figure.pg-sentence svg")
    one = Image.open(io.BytesIO(svg.screenshot_as_png)).convert("L")
    assert one.getextrema()[0] < 100 and one.getextrema()[1] > 200
    assert _severe(browser) == []
