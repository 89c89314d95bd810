#!/usr/bin/env python3
"""Write tests/data/extract_cases.json: small pages, one per rule of main-content extraction, each with the
text resiliparse 1.1.0 extracts from it. `neardup._html` ports those rules; tests/test_html.py checks that
it gives the same text on every case.

    python -m venv /tmp/rp110 && /tmp/rp110/bin/pip install resiliparse==1.1.0
    /tmp/rp110/bin/python scripts/make_extract_cases.py

resiliparse 1.1.0 is the reference (its rules are public, in resiliparse/extract/html2text.pyx); it is not a
dependency of neardup, so the expected texts are stored rather than computed in the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import resiliparse
from resiliparse.extract.html2text import extract_plain_text

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "extract_cases.json"
PARA = "<p>The committee met on Tuesday and agreed the new budget after a long debate.</p>"


def page(body: str, *, doctype: bool = True, depth: int = 0) -> str:
    """A page with `body` inside `depth` neutral wrapper divs (the rules depend on depth below <body>)."""
    for _ in range(depth):
        body = f'<div class="wrap">{body}</div>'
    head = "<!doctype html>" if doctype else ""
    return f"{head}<html><head><title>t</title></head><body>{PARA}{body}</body></html>"


def links(n: int, word: str = "link") -> str:
    return "".join(f'<a href="/{i}">{word} {i}</a> ' for i in range(n))


CASES: dict[str, str] = {
    # root selection
    "one article-body root": page('<div class="article-body"><p>only this</p></div><p>not this</p>'),
    "two roots: the whole body": page('<div class="article-body"><p>one</p></div><div class="post-content"><p>two</p></div>'),
    "role=main root": page('<div role="main"><p>main part</p></div><p>outside</p>'),
    "root class, quirks mode: any case": page('<div class="ARTICLE-BODY"><p>quirks</p></div><p>outside</p>', doctype=False),
    "root class in any case, standards mode too": page('<div class="ARTICLE-BODY"><p>standards</p></div><p>outside</p>'),
    "nested root candidates": page('<div class="main-content"><div class="article-text"><p>inner</p></div></div><p>out</p>'),
    # skipped elements
    "script style noscript": page("<script>var x = 1;</script><style>p{}</style><noscript>enable js</noscript><p>after</p>"),
    "form fields": page('<label>Name</label><input value="v"><textarea>typed</textarea><button>Go</button>'
                        "<select><option>one</option></select><p>after</p>"),
    "figures and media": page("<figure><img alt='a cat'><figcaption>A cat</figcaption></figure><svg><text>svg text</text></svg>"
                              "<iframe>frame</iframe><object>obj</object><embed><p>after</p>"),
    "template content": page("<template><p>inert</p></template><p>after</p>"),
    # block and inline elements
    "inline elements join": page("<p>wo<b>rd</b> and <i>it</i>alic<span>s</span></p>"),
    "block elements separate": page("<div>one</div><div>two</div><p>three</p><li>four</li><h2>five</h2>"),
    "table cells are inline": page("<table><tr><td>cell</td><td>join</td></tr><tr><th>row</th><td>two</td></tr></table>"),
    "br is a block": page("<p>line<br>break</p>"),
    "comments ignored": page("<p>before<!-- hidden comment -->after</p>"),
    "entities and nbsp": page("<p>fish&nbsp;&amp;&nbsp;chips &lt;b&gt; caf&eacute; &#x263A;</p>"),
    "pre text": page("<pre>  two   spaces\n\tand a tab  </pre>"),
    # section 1: tag names
    "nav aside time audio video": page("<nav>menu</nav><aside>side</aside><p>at <time>noon</time> today</p>"
                                       "<audio>sound</audio><video>film</video>"),
    "h1 always kept": page('<h1 class="nav hidden">Heading</h1>', depth=4),
    "main always kept": page('<main class="sidebar">main text</main>', depth=4),
    "shallow footer dropped": page("<footer>footer text</footer>"),
    "deep footer with a sibling kept": page("<div><footer>article footer</footer><p>more</p></div>", depth=2),
    "deep footer, last element, dropped": page("<div><p>x</p><footer>last footer</footer></div>", depth=2),
    "deep footer of links dropped": page(f"<div><footer>{links(5)}</footer><p>more</p></div>", depth=2),
    "shallow ul dropped": page("<ul><li>item one</li><li>item two</li></ul>", depth=1),
    "deep ul of text kept": page("<ul><li>item one</li><li>item two</li></ul>", depth=4),
    "deep ul of links dropped": page(f"<ul><li>{links(3)}</li></ul>", depth=4),
    "teaser article dropped": page(f"<article>{links(4, 'read')} short</article>", depth=3),
    "long article kept": page(f"<article>{links(4, 'read')} {'words ' * 120}</article>", depth=3),
    "shallow teaser article kept": page(f"<article>{links(4, 'read')} short</article>", depth=1),
    # section 2: attributes
    "hidden attribute": page("<p hidden>invisible</p><p>visible</p>"),
    "aria-hidden and aria-expanded": page('<p aria-hidden="true">aria</p><div aria-expanded="false">menu</div>'
                                          '<p aria-hidden="false">shown</p>'),
    "rel and itemprop": page('<a rel="author" href="/a">Ann</a> <span itemprop="datePublished">2020</span>'
                             '<a rel=" next " href="/n">next</a><span itemprop="name">Name</span>'),
    # section 3: class and id on any element
    "hidden classes and styles": page('<p class="hidden">h1</p><p class="visually-hidden">h2</p>'
                                      '<p class="x" style="display:none">h3</p><p id="y" style="color:red; visibility:hidden;">h4</p>'
                                      '<p class="shown">kept</p>'),
    "a style alone is not read": page('<p style="display: none">no class or id: kept</p>'),
    "skip links": page('<a class="skip-link" href="#c">Skip</a><div id="pagination">1 2 3</div><span class="next">n</span>'),
    "sign-in and social, deep": page('<div><span class="login-box">Log in</span><span class="share-buttons">Share</span>'
                                     '<span class="social-links">Follow</span></div>', depth=3),
    "sign-in and social, shallow": page('<span class="login-box">Log in</span><span class="share-buttons">Share</span>'),
    "logos and ads": page('<span class="brand-logo">Logo</span><div class="ad">Buy</div><div class="sponsored">Spon</div>'
                          '<div data-ad="1">data ad</div><div class="ad_3f2a">hex ad</div><div class="adapt">adapt</div>'),
    "other junk is case sensitive": page('<div class="spinner">spin</div><div class="SPINNER">SPIN</div>'),
    # section 4: block elements
    "article classes whitelist": page('<div class="post-body nav" id="a">whitelisted</div><div class="nav" id="b">navigation</div>'),
    "a class without an id is whitelisted (sic)": page('<div class="sidebar">kept: "sidebar " ends in a separator</div>'
                                                       '<div class="sidebar" id="s">dropped</div>'),
    "landmark ids": page('<div id="footer">f</div><div id="site-header">h</div><div id="rightrail">r</div>'
                         '<div id="right">right</div>'),
    "header footer nav classes": page('<div class="site-header" id="a">hdr</div><div class="sitefooter" id="b">ftr</div>'
                                      '<div class="mainnav" id="c">nav</div><div class="breadcrumbs" id="d">crumbs</div>'
                                      '<div class="plain" id="e">kept</div>'),
    "recommended search sidebar": page('<div class="related-posts" id="a">rel</div><div class="searchbox" id="b">srch</div>'
                                       '<div class="left-sidebar" id="c">sb</div><div class="trending" id="d">trend</div>'),
    "modal gallery print": page('<div class="modal" id="a">mdl</div><div class="carousel" id="b">car</div>'
                                '<div class="print-only" id="c">prn</div>'),
    "inline elements skip block rules": page('<span class="sidebar">inline sidebar</span><span class="modal">inline modal</span>'),
    "td gets block rules": page('<table><tr><td class="sidebar" id="t">td side</td><td>td kept</td></tr></table>'),
    "aria roles need a class or id": page('<div role="navigation">rn</div><div role="banner" id="b">rb</div>'
                                          '<span role="navigation" id="s">rs</span><div role="article" id="a">ra</div>'),
    "rel=main whitelists (sic)": page('<div rel="main" class="sidebar">rel main</div>'),
    "deep div of links dropped": page(f'<div class="box" id="b">{links(6)}</div><p>after</p>', depth=3),
    "deep div of links, no id, whitelisted (sic)": page(f'<div class="box">{links(6)}</div>', depth=3),
    "deep plain div of links dropped": page(f"<div>{links(6)}</div>", depth=6),
    "deep plain div of text kept": page("<div>plain text here</div>", depth=6),
    # text nodes
    "private use icon and pilcrow": page("<p>before <span>\ue001</span> <a>\u00b6</a> after</p>"),
    "unicode spaces": page("<p>a\u2003b\u00a0c\u3000d</p>"),
    # odd documents
    "no body content": "<html><head><title>only head</title></head></html>",
    "frameset": "<html><frameset><frame src='a'></frameset></html>",
    "text only": "just some text, no tags at all",
    "nul and bad references": page("<p>nul\x00here &#0; &#xD800; &bogus; end</p>"),
    "deep nesting": "<html><body>" + "<div>" * 3000 + "deep" + "</div>" * 3000 + "</body></html>",
}


def main() -> None:
    cases = [{"name": name, "html": html,
              "text": " ".join(extract_plain_text(html, main_content=True, alt_texts=False,
                                                  preserve_formatting=False).split())}
             for name, html in CASES.items()]
    OUT.write_text(json.dumps({"resiliparse": resiliparse.__version__ if hasattr(resiliparse, "__version__")
                               else "1.1.0", "cases": cases}, ensure_ascii=True, indent=1) + "\n")
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
