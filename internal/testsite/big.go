package testsite

import (
	"fmt"
	"strings"
	"sync"
)

// The shape of big.html: BigSections sections of BigItemsPerSection items;
// item i is a link (i%3 == 0, #link-i), a button (i%3 == 1, #button-i) or a
// text input (i%3 == 2, #input-i, name "input-i").
const (
	BigSections        = 50
	BigItemsPerSection = 9
	BigItems           = BigSections * BigItemsPerSection
)

var bigOnce = sync.OnceValue(buildBig)

func bigPage() string { return bigOnce() }

var bigWords = []string{
	"amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor",
	"indigo", "juniper", "kestrel", "lagoon", "meadow", "nickel", "orchid",
	"pebble", "quartz", "raven", "summit", "tundra", "umber", "violet",
	"willow", "xenon", "yarrow", "zephyr",
}

func buildBig() string {
	var b strings.Builder
	b.WriteString(`<!doctype html>
<!--
  big.html (PageBig) — a page of about 2,000 elements, built by the server
  (big.go), the same on every request. 450 items in 50 sections; item i is
  a link (#link-i, i%3==0), a button (#button-i, i%3==1) or an input
  (#input-i, i%3==2). The first viewport holds #top-search, #top-button and
  #top-link and the first few items; the rest is below. A click on any
  button writes its id to #big-result and reports Event "big-click"
  (Form "id"). #bottom-button is the last element of the page.
-->
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Big page — abctl test site</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/site.css">
<style>
  .item { margin: 2px 0; }
  .item .n { display: inline-block; width: 5em; color: #555; }
  .item .d { display: inline-block; width: 16em; }
  section { border-top: 1px solid #ccc; padding-top: 4px; }
</style>
<script src="/site.js"></script>
</head>
<body>
<header id="top">
<h1 id="title">Catalogue of 450 items</h1>
<p id="intro">A long, plain page. Most of its controls are far below the first screen.</p>
<div id="top-controls">
<label for="top-search">Search</label> <input type="search" id="top-search" name="q" placeholder="Search items">
<button type="button" id="top-button">Go</button>
<a id="top-link" href="#section-49">Jump to the last section</a>
</div>
<p id="big-result">Nothing clicked</p>
</header>
<main id="content">
`)
	for s := 0; s < BigSections; s++ {
		fmt.Fprintf(&b, "<section id=\"section-%d\">\n<h2>Section %d</h2>\n<p>Items %d to %d.</p>\n<ul>\n",
			s, s, s*BigItemsPerSection, (s+1)*BigItemsPerSection-1)
		for k := 0; k < BigItemsPerSection; k++ {
			i := s*BigItemsPerSection + k
			word := bigWords[(i*7)%len(bigWords)]
			fmt.Fprintf(&b, `<li class="item"><span class="n">Item %d</span><span class="d">%s %d</span>`, i, word, i)
			switch i % 3 {
			case 0:
				fmt.Fprintf(&b, `<a id="link-%d" href="#section-%d">Open %s</a>`, i, (s+1)%BigSections, word)
			case 1:
				fmt.Fprintf(&b, `<button type="button" id="button-%d" data-item="%d">Select %s</button>`, i, i, word)
			case 2:
				fmt.Fprintf(&b, `<input type="text" id="input-%d" name="input-%d" placeholder="Note for %s">`, i, i, word)
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n</section>\n")
	}
	b.WriteString(`</main>
<footer id="bottom">
<button type="button" id="bottom-button">Bottom</button>
</footer>
<script>
document.addEventListener('click', function (ev) {
  var btn = ev.target.closest('button');
  if (!btn) return;
  document.getElementById('big-result').textContent = 'clicked ' + btn.id;
  testsite.report('big-click', {id: btn.id});
});
</script>
</body>
</html>
`)
	return b.String()
}
