package markdown

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mdParseCases are markdown sources with their tree, written as the
// CommonMark spec writes its examples (see mdHTML). Most come from the
// spec; the rest are cases that broke, or nearly broke, the parser.
var mdParseCases = []struct{ name, src, want string }{
	// Paragraphs and line breaks.
	{"soft break", "a\nb", "<p>a\nb</p>\n"},
	{"hard break, spaces", "a  \nb", "<p>a<br />\nb</p>\n"},
	{"hard break, backslash", "a\\\nb", "<p>a<br />\nb</p>\n"},
	{"no hard break at the end", "a  ", "<p>a</p>\n"},
	{"backslash at the end", "a\\", "<p>a\\</p>\n"},
	{"leading spaces go", "  a\n   b", "<p>a\nb</p>\n"},
	{"CRLF", "a\r\nb\r\n\r\nc", "<p>a\nb</p>\n<p>c</p>\n"},
	{"CR", "a\rb", "<p>a\nb</p>\n"},
	{"tab inside text", "a\tb", "<p>a   b</p>\n"},

	// Headings.
	{"ATX", "# a", "<h1>a</h1>\n"},
	{"ATX level 6", "###### a", "<h6>a</h6>\n"},
	{"seven # is text", "####### a", "<p>####### a</p>\n"},
	{"# needs a space", "#a", "<p>#a</p>\n"},
	{"closing #s go", "# a ##", "<h1>a</h1>\n"},
	{"# inside a word stays", "# a#", "<h1>a#</h1>\n"},
	{"escaped closing #", "# a \\#", "<h1>a #</h1>\n"},
	{"empty heading", "#", "<h1></h1>\n"},
	{"three spaces of indent", "   # a", "<h1>a</h1>\n"},
	{"four spaces is code", "    # a", "<pre><code># a\n</code></pre>\n"},
	{"setext 1", "a\n===", "<h1>a</h1>\n"},
	{"setext 2 over lines", "a\nb\n---", "<h2>a\nb</h2>\n"},
	{"no lazy setext", "> a\n---", "<blockquote>\n<p>a</p>\n</blockquote>\n<hr />\n"},
	{"setext needs one run", "Foo\n= =", "<p>Foo\n= =</p>\n"},
	{"one dash after text is setext", "a\n-", "<h2>a</h2>\n"},

	// Thematic breaks.
	{"stars", "***", "<hr />\n"},
	{"spaced dashes", "- - -", "<hr />\n"},
	{"underscores", "_ _ _", "<hr />\n"},
	{"two are text", "--", "<p>--</p>\n"},
	{"break interrupts a paragraph", "a\n***", "<p>a</p>\n<hr />\n"},
	{"break before a list item", " * * *", "<hr />\n"},
	{"break ends a list", "- a\n---", "<ul>\n<li>a</li>\n</ul>\n<hr />\n"},

	// Code blocks.
	{"indented, blank lines inside kept, after dropped", "    a\n\n    b\n\n", "<pre><code>a\n\nb\n</code></pre>\n"},
	{"tab indents code", "\tcode", "<pre><code>code\n</code></pre>\n"},
	{"fenced", "```\na\n```", "<pre><code>a\n</code></pre>\n"},
	{"shorter fence does not close", "~~~~\na\n~~~\nb\n~~~~", "<pre><code>a\n~~~\nb\n</code></pre>\n"},
	{"unclosed fence runs to the end", "```go\nx\n", "<pre><code>x\n</code></pre>\n"},
	{"fence indent is taken off", "  ```\n  a\n    b\n ```", "<pre><code>a\n  b\n</code></pre>\n"},
	{"backtick info may not hold backticks", "``` ```\na", "<p><code> </code>\na</p>\n"},
	{"empty fence", "```\n```", "<pre><code></code></pre>\n"},
	{"fence in a list item", "- ```\n  a\n  ```\n- b", "<ul>\n<li>\n<pre><code>a\n</code></pre>\n</li>\n<li>b</li>\n</ul>\n"},
	{"fence with a blank line keeps the list tight", "1. ```\n   a\n\n   b\n   ```", "<ol>\n<li>\n<pre><code>a\n\nb\n</code></pre>\n</li>\n</ol>\n"},
	{"fence in a quote", "> ```\n> a\n> ```", "<blockquote>\n<pre><code>a\n</code></pre>\n</blockquote>\n"},
	{"fence ends with its quote", "> ```\na", "<blockquote>\n<pre><code></code></pre>\n</blockquote>\n<p>a</p>\n"},

	// HTML blocks.
	{"div", "<div>\nhi\n</div>", "<div>\nhi\n</div>\n"},
	{"comment spans a blank line", "<!-- a\n\nb -->\nc", "<!-- a\n\nb -->\n<p>c</p>\n"},
	{"script spans a blank line", "<script>\n\nx\n</script>\ny", "<script>\n\nx\n</script>\n<p>y</p>\n"},
	{"block ends at a blank line", "<DIV CLASS=\"a\">\n\n*b*", "<DIV CLASS=\"a\">\n<p><em>b</em></p>\n"},
	{"any lone tag starts a block", "<a href=\"x\">\n*b*", "<a href=\"x\">\n*b*\n"},
	{"inline tag then text is a paragraph", "<span>x</span>", "<p><span>x</span></p>\n"},
	{"lone tag cannot interrupt a paragraph", "a\n<a href=\"x\">", "<p>a\n<a href=\"x\"></p>\n"},

	// Block quotes.
	{"lazy continuation", "> a\nb", "<blockquote>\n<p>a\nb</p>\n</blockquote>\n"},
	{"blank line ends a quote", "> a\n\nb", "<blockquote>\n<p>a</p>\n</blockquote>\n<p>b</p>\n"},
	{"nested without space", ">> a", "<blockquote>\n<blockquote>\n<p>a</p>\n</blockquote>\n</blockquote>\n"},
	{"lazy at depth", "> > > a\n> b\nc", "<blockquote>\n<blockquote>\n<blockquote>\n<p>a\nb\nc</p>\n</blockquote>\n</blockquote>\n</blockquote>\n"},
	{"list in a quote", "> - a\n> - b", "<blockquote>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n</blockquote>\n"},
	{"empty quote line splits paragraphs", "> a\n>\n> b", "<blockquote>\n<p>a</p>\n<p>b</p>\n</blockquote>\n"},
	{"tabs after >", ">\t\tfoo", "<blockquote>\n<pre><code>  foo\n</code></pre>\n</blockquote>\n"},

	// Lists.
	{"tight", "- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
	{"loose", "- a\n\n- b", "<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n</ul>\n"},
	{"ordered", "1. a\n2. b", "<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n"},
	{"start number and )", "3) a\n4) b", "<ol start=\"3\">\n<li>a</li>\n<li>b</li>\n</ol>\n"},
	{"two digits", "10. a", "<ol start=\"10\">\n<li>a</li>\n</ol>\n"},
	{"new bullet, new list", "- a\n+ b", "<ul>\n<li>a</li>\n</ul>\n<ul>\n<li>b</li>\n</ul>\n"},
	{"new delimiter, new list", "1. a\n1) b", "<ol>\n<li>a</li>\n</ol>\n<ol>\n<li>b</li>\n</ol>\n"},
	{"nested by 2", "- a\n  - b\n    - c", "<ul>\n<li>a\n<ul>\n<li>b\n<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n</li>\n</ul>\n"},
	{"nested by 3", "1. a\n   1. b\n      1. c", "<ol>\n<li>a\n<ol>\n<li>b\n<ol>\n<li>c</li>\n</ol>\n</li>\n</ol>\n</li>\n</ol>\n"},
	{"nested by 4", "-   a\n    - b", "<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n"},
	{"4 under a 2-wide marker nests", "- a\n    - b", "<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n"},
	{"6 under a 2-wide marker continues the text", "- a\n      - b", "<ul>\n<li>a\n- b</li>\n</ul>\n"},
	{"tab nests", "- a\n\t- b", "<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n"},
	{"tab after the marker", "-\tfoo", "<ul>\n<li>foo</li>\n</ul>\n"},
	{"creeping indent", "- a\n - b\n  - c\n   - d\n    - e", "<ul>\n<li>a</li>\n<li>b</li>\n<li>c</li>\n<li>d\n- e</li>\n</ul>\n"},
	{"two paragraphs in an item", "- a\n\n  b", "<ul>\n<li>\n<p>a</p>\n<p>b</p>\n</li>\n</ul>\n"},
	{"nested list after a blank line", "1. a\n\n   - b", "<ol>\n<li>\n<p>a</p>\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ol>\n"},
	{"empty item", "- a\n-\n- c", "<ul>\n<li>a</li>\n<li></li>\n<li>c</li>\n</ul>\n"},
	{"item starting with a blank line", "-\n  foo", "<ul>\n<li>foo</li>\n</ul>\n"},
	{"at most one blank line at an item's start", "-\n\n  foo", "<ul>\n<li></li>\n</ul>\n<p>foo</p>\n"},
	{"only 1. interrupts a paragraph", "a\n2. b", "<p>a\n2. b</p>\n"},
	{"1. interrupts a paragraph", "a\n1. b", "<p>a</p>\n<ol>\n<li>b</li>\n</ol>\n"},
	{"quote in an item", "- a\n  > b\n- c", "<ul>\n<li>a\n<blockquote>\n<p>b</p>\n</blockquote>\n</li>\n<li>c</li>\n</ul>\n"},
	{"blank before a definition loosens", "- a\n- b\n\n  [r]: /u\n- d", "<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n<li>\n<p>d</p>\n</li>\n</ul>\n"},
	{"loose outer, tight inner", "* a\n  * b\n\n  c", "<ul>\n<li>\n<p>a</p>\n<ul>\n<li>b</li>\n</ul>\n<p>c</p>\n</li>\n</ul>\n"},
	{"tight outer, loose inner", "- a\n  - b\n\n    c\n- d", "<ul>\n<li>a\n<ul>\n<li>\n<p>b</p>\n<p>c</p>\n</li>\n</ul>\n</li>\n<li>d</li>\n</ul>\n"},

	// Code spans.
	{"code span", "`a`", "<p><code>a</code></p>\n"},
	{"backtick inside a code span", "`` a`b ``", "<p><code>a`b</code></p>\n"},
	{"one space each side goes", "` a `", "<p><code>a</code></p>\n"},
	{"only spaces stay", "`  `", "<p><code>  </code></p>\n"},
	{"line ending is a space", "`a\nb`", "<p><code>a b</code></p>\n"},
	{"unmatched run is text", "``a`", "<p>``a`</p>\n"},
	{"longer run inside", "`a``b`", "<p><code>a``b</code></p>\n"},
	{"escaped opener", "\\`a`", "<p>`a`</p>\n"},
	{"backslash inside is literal", "`\\`", "<p><code>\\</code></p>\n"},

	// Emphasis.
	{"em *", "*a*", "<p><em>a</em></p>\n"},
	{"em _", "_a_", "<p><em>a</em></p>\n"},
	{"strong *", "**a**", "<p><strong>a</strong></p>\n"},
	{"strong _", "__a__", "<p><strong>a</strong></p>\n"},
	{"both", "***a***", "<p><em><strong>a</strong></em></p>\n"},
	{"unclosed", "*a", "<p>*a</p>\n"},
	{"unbalanced", "**a*", "<p>*<em>a</em></p>\n"},
	{"single star inside strong", "**a*b**", "<p><strong>a*b</strong></p>\n"},
	{"double star inside em", "*a**b*", "<p><em>a**b</em></p>\n"},
	{"intraword _ is text", "_intra_word_", "<p><em>intra_word</em></p>\n"},
	{"trailing intraword _", "foo_bar_", "<p>foo_bar_</p>\n"},
	{"snake case", "snake_case_name", "<p>snake_case_name</p>\n"},
	{"intraword *", "*intra*word", "<p><em>intra</em>word</p>\n"},
	{"spaced stars", "a * b *", "<p>a * b *</p>\n"},
	{"punctuation inside", "*(*a*)*", "<p><em>(<em>a</em>)</em></p>\n"},
	{"strong in em", "*a **b** c*", "<p><em>a <strong>b</strong> c</em></p>\n"},
	{"strong in strong", "**a **b** c**", "<p><strong>a <strong>b</strong> c</strong></p>\n"},
	{"crossed", "_a *b_ c*", "<p><em>a *b</em> c*</p>\n"},
	{"not flanking around quotes", "a**\"b\"**c", "<p>a**&quot;b&quot;**c</p>\n"},

	// Links and images.
	{"link", "[a](b)", "<p><a href=\"b\">a</a></p>\n"},
	{"pointy destination", "[a](<b c>)", "<p><a href=\"b%20c\">a</a></p>\n"},
	{"title in quotes", "[a](b \"t\")", "<p><a href=\"b\">a</a></p>\n"},
	{"title in parentheses", "[a](b (t))", "<p><a href=\"b\">a</a></p>\n"},
	{"title on the next line", "[a](b\n\"t\")", "<p><a href=\"b\">a</a></p>\n"},
	{"spaces around the destination", "[a]( b )", "<p><a href=\"b\">a</a></p>\n"},
	{"balanced parentheses", "[a](b(c))", "<p><a href=\"b(c)\">a</a></p>\n"},
	{"unbalanced parentheses", "[a](b(c)", "<p>[a](b(c)</p>\n"},
	{"empty destination", "[a]()", "<p><a href=\"\">a</a></p>\n"},
	{"no space before (", "[a] (b)", "<p>[a] (b)</p>\n"},
	{"junk after the title", "[a](b \"t\" x)", "<p>[a](b &quot;t&quot; x)</p>\n"},
	{"escaped bracket in the text", "[a\\]b](c)", "<p><a href=\"c\">a]b</a></p>\n"},
	{"escape in the destination", "[a](b\\)c)", "<p><a href=\"b)c\">a</a></p>\n"},
	{"reference in the destination", "[a](b&amp;c)", "<p><a href=\"b&amp;c\">a</a></p>\n"},
	{"image in a link", "[![i](s)](d)", "<p><a href=\"d\"><img src=\"s\" alt=\"i\" /></a></p>\n"},
	{"no link in a link", "[a [b](c)](d)", "<p>[a <a href=\"c\">b</a>](d)</p>\n"},
	{"emphasis in a link", "[*a*](b)", "<p><a href=\"b\"><em>a</em></a></p>\n"},
	{"image", "![a](b)", "<p><img src=\"b\" alt=\"a\" /></p>\n"},
	{"image description is plain", "![a *b*](c)", "<p><img src=\"c\" alt=\"a b\" /></p>\n"},
	{"full reference", "[a][r]\n\n[r]: /u", "<p><a href=\"/u\">a</a></p>\n"},
	{"shortcut reference, case-insensitive", "[R]\n\n[r]: /u 't'", "<p><a href=\"/u\">R</a></p>\n"},
	{"collapsed reference", "[a][]\n\n[a]: /u", "<p><a href=\"/u\">a</a></p>\n"},
	{"undefined reference", "[x][nope]", "<p>[x][nope]</p>\n"},
	{"definition alone", "[r]: /u", ""},
	{"definition then text", "[r]: /u\nnext", "<p>next</p>\n"},
	{"definition over lines", "[r]:\n/u\n'title'\n\n[r]", "<p><a href=\"/u\">r</a></p>\n"},
	{"junk after a definition", "[r]: /u 'bad' junk\n\n[r]", "<p>[r]: /u 'bad' junk</p>\n<p>[r]</p>\n"},
	{"label whitespace folds", "[a\nb]\n\n[a b]: /u", "<p><a href=\"/u\">a\nb</a></p>\n"},

	// Autolinks and raw HTML.
	{"autolink", "<https://a.b/c?d=e>", "<p><a href=\"https://a.b/c?d=e\">https://a.b/c?d=e</a></p>\n"},
	{"email autolink", "<a@b.co>", "<p><a href=\"mailto:a@b.co\">a@b.co</a></p>\n"},
	{"no scheme", "<foo.bar>", "<p>&lt;foo.bar&gt;</p>\n"},
	{"one-letter scheme", "<m:abc>", "<p>&lt;m:abc&gt;</p>\n"},
	{"space in an autolink", "<ab:c d>", "<p>&lt;ab:c d&gt;</p>\n"},
	{"inline tags", "a <b>c</b>", "<p>a <b>c</b></p>\n"},
	{"inline comment", "a <!-- b --> c", "<p>a <!-- b --> c</p>\n"},
	{"empty comment", "a <!--> b", "<p>a <!--> b</p>\n"},
	{"processing instruction", "a <?php x ?> b", "<p>a <?php x ?> b</p>\n"},
	{"declaration", "a <!DOCTYPE x> b", "<p>a <!DOCTYPE x> b</p>\n"},
	{"CDATA", "a <![CDATA[x]]> b", "<p>a <![CDATA[x]]> b</p>\n"},
	{"tag over two lines", "a <b\nc=\"d\"> e", "<p>a <b\nc=\"d\"> e</p>\n"},
	{"attributes", "a <b c=d e='f' g=\"h\"/> i", "<p>a <b c=d e='f' g=\"h\"/> i</p>\n"},
	{"less-than as text", "a < b && c > d", "<p>a &lt; b &amp;&amp; c &gt; d</p>\n"},
	{"heart", "a <3", "<p>a &lt;3</p>\n"},
	{"unclosed tag", "<not a tag", "<p>&lt;not a tag</p>\n"},
	{"bad closing tag", "x</y", "<p>x&lt;/y</p>\n"},
	{"number tag", "1 <2> 3", "<p>1 &lt;2&gt; 3</p>\n"},

	// Escapes and references.
	{"escaped stars", "\\*a\\*", "<p>*a*</p>\n"},
	{"backslash before a letter", "\\a", "<p>\\a</p>\n"},
	{"escaped backslash", "\\\\", "<p>\\</p>\n"},
	{"escaped backslash before a line end", "a\\\\\nb", "<p>a\\\nb</p>\n"},
	{"named references", "&amp; &lt; &copy; &mdash; &rarr;", "<p>&amp; &lt; © — →</p>\n"},
	{"numeric references", "&#35; &#x41; &#X41; &#0; &#1114112; &#xD800;", "<p># A A � � �</p>\n"},
	{"unknown name stays", "&eacute; &AMP;", "<p>&amp;eacute; &amp;AMP;</p>\n"},
	{"not references", "& amp; &; &#; &#12345678;", "<p>&amp; amp; &amp;; &amp;#; &amp;#12345678;</p>\n"},
	{"escaped ampersand", "\\&amp;", "<p>&amp;amp;</p>\n"},
	{"line feed reference is kept", "a&#10;b", "<p>a\nb</p>\n"},

	// Tabs, expanded to stops of 4.
	{"tab after a number", "1.\tone\n\n\t```\n\tcode\n\t```", "<ol>\n<li>\n<p>one</p>\n<pre><code>code\n</code></pre>\n</li>\n</ol>\n"},
	{"tab after two spaces nests", "- a\n  \t- b", "<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n"},

	// Tables (GFM); the first eight are the GFM spec's examples.
	{"table", "| foo | bar |\n| --- | --- |\n| baz | bim |",
		"<table>\n<thead>\n<tr>\n<th>foo</th>\n<th>bar</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>baz</td>\n<td>bim</td>\n</tr>\n</tbody>\n</table>\n"},
	{"table alignment, pipes optional", "| abc | defghi |\n:-: | -----------:\nbar | baz",
		"<table>\n<thead>\n<tr>\n<th align=\"center\">abc</th>\n<th align=\"right\">defghi</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"center\">bar</td>\n<td align=\"right\">baz</td>\n</tr>\n</tbody>\n</table>\n"},
	{"escaped pipes in cells", "| f\\|oo  |\n| ------ |\n| b `\\|` az |\n| b **\\|** im |",
		"<table>\n<thead>\n<tr>\n<th>f|oo</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>b <code>|</code> az</td>\n</tr>\n<tr>\n<td>b <strong>|</strong> im</td>\n</tr>\n</tbody>\n</table>\n"},
	{"a block ends a table", "| abc | def |\n| --- | --- |\n| bar | baz |\n> bar",
		"<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>bar</td>\n<td>baz</td>\n</tr>\n</tbody>\n</table>\n<blockquote>\n<p>bar</p>\n</blockquote>\n"},
	{"any line is a row until a blank one", "| abc | def |\n| --- | --- |\n| bar | baz |\nbar\n\nbar",
		"<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>bar</td>\n<td>baz</td>\n</tr>\n<tr>\n<td>bar</td>\n<td></td>\n</tr>\n</tbody>\n</table>\n<p>bar</p>\n"},
	{"header and delimiter row must agree", "| abc | def |\n| --- |\n| bar |", "<p>| abc | def |\n| --- |\n| bar |</p>\n"},
	{"short rows padded, long rows cut", "| abc | def |\n| --- | --- |\n| bar |\n| bar | baz | boo |",
		"<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>bar</td>\n<td></td>\n</tr>\n<tr>\n<td>bar</td>\n<td>baz</td>\n</tr>\n</tbody>\n</table>\n"},
	{"table without a body", "| abc | def |\n| --- | --- |", "<table>\n<thead>\n<tr>\n<th>abc</th>\n<th>def</th>\n</tr>\n</thead>\n</table>\n"},
	{"header is the paragraph's last line", "[r]: /u\ntext\na | b\n-|-\n[c][r] | d",
		"<p>text</p>\n<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td><a href=\"/u\">c</a></td>\n<td>d</td>\n</tr>\n</tbody>\n</table>\n"},
	{"one column without pipes", "a\n:-", "<table>\n<thead>\n<tr>\n<th align=\"left\">a</th>\n</tr>\n</thead>\n</table>\n"},
	{"empty cells", "|a||b|\n|-|-|-|\n||x|", "<table>\n<thead>\n<tr>\n<th>a</th>\n<th></th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td></td>\n<td>x</td>\n<td></td>\n</tr>\n</tbody>\n</table>\n"},
	{"inlines in cells; a pipe splits a code span", "*a* | `b|c`\n--|--|--", "<table>\n<thead>\n<tr>\n<th><em>a</em></th>\n<th>`b</th>\n<th>c`</th>\n</tr>\n</thead>\n</table>\n"},
	{"setext heading before a table", "a|b\n---", "<h2>a|b</h2>\n"},
	{"list item before a table", "a|b\n- | -", "<p>a|b</p>\n<ul>\n<li>| -</li>\n</ul>\n"},
	{"delimiter cells are hyphens", "a|b\n:- -|-\n\na|b\n-|:\n\na|b\n|-||", "<p>a|b\n:- -|-</p>\n<p>a|b\n-|:</p>\n<p>a|b\n|-||</p>\n"},
	{"a blank line before the delimiter", "| a |\n\n| - |", "<p>| a |</p>\n<p>| - |</p>\n"},
	{"table in a list item", "- a | b\n  --|--\n  c | d\n- e",
		"<ul>\n<li>\n<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>c</td>\n<td>d</td>\n</tr>\n</tbody>\n</table>\n</li>\n<li>e</li>\n</ul>\n"},
	{"no lazy rows", "> a | b\n> --|--\nc | d",
		"<blockquote>\n<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n</table>\n</blockquote>\n<p>c | d</p>\n"},
	{"no table from a lazy line", "> a | b\n--|--", "<blockquote>\n<p>a | b\n--|--</p>\n</blockquote>\n"},
	{"indented code ends a table", "a|b\n-|-\n    code", "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n</table>\n<pre><code>code\n</code></pre>\n"},
	{"a lone pipe ends a table", "a|b\n-|-\n |", "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n</table>\n<p>|</p>\n"},
	{"too many columns is a paragraph", strings.Repeat("a|", mdMaxColumns+1) + "\n" + strings.Repeat("-|", mdMaxColumns+1),
		"<p>" + strings.Repeat("a|", mdMaxColumns+1) + "\n" + strings.Repeat("-|", mdMaxColumns+1) + "</p>\n"},
}

func TestMDParse(t *testing.T) {
	for _, tc := range mdParseCases {
		t.Run(tc.name, func(t *testing.T) {
			doc := mdParse(tc.src)
			checkTree(t, tc.src, doc)
			if got := mdHTML(doc); got != tc.want {
				t.Errorf("mdParse(%q):\ngot  %q\nwant %q", tc.src, got, tc.want)
			}
		})
	}
}

// mdRenderCases are rendered at width 30 with styles stripped, like
// mdCases but not sanitized first: sanitizing would turn the CR of a CRLF
// into a visible escape before the parser could take it as a line ending.
var mdRenderCases = []struct {
	name, src string
	want      []string
}{
	{"code span with a backtick", "run `` a`b `` now", []string{"  run a`b now"}},
	{"code span over lines is one line", "`a\nb`", []string{"  a b"}},
	{"unclosed emphasis is text", "**not closed", []string{"  **not closed"}},
	{"intraword underscores", "snake_case_name and _em_", []string{"  snake_case_name and em"}},
	{"3-space nesting", "1. a\n   1. b", []string{"  1. a", "     1. b"}},
	{"4-space nesting", "-   a\n    - b", []string{"  • a", "    • b"}},
	{"fence in a list", "- x\n  ```\n  code\n  ```\n- y", []string{"  • x", "    code", "  • y"}},
	{"fence in a quote", "> ```\n> code\n> ```", []string{"  │ code"}},
	{"CRLF", "a\r\nb\r\n\r\nc", []string{"  a b", "", "  c"}},
	{"tab indents code", "\tx := 1", []string{"x := 1"}},
	{"reference link", "[docs][d]\n\n[d]: https://go.dev", []string{"  docs (https://go.dev)"}},
	{"email autolink", "<me@x.org>", []string{"  me@x.org"}},
	{"escaped address", "[a](b\\_c)", []string{"  a (b_c)"}},
	{"entities", "&ldquo;x&rdquo; &amp; &#x263A;", []string{"  “x” & ☺"}},
	{"html-looking text", "if a<b && c>d { }", []string{"  if a<b && c>d { }"}},
	{"tight list with a loose tail is loose", "- a\n- b\n\n- c", []string{"  • a", "", "  • b", "", "  • c"}},
	{"nested quote", "> a\n> > b", []string{"  │ a", "  │", "  │ │ b"}},
	{"setext heading", "Title\n=====", []string{"  # Title"}},
}

func TestMDRender(t *testing.T) {
	for _, tc := range mdRenderCases {
		t.Run(tc.name, func(t *testing.T) {
			got := renderRaw(tc.src, "dark", 30)
			for i := range got {
				got[i] = stripped(got[i])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("render(%q) (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

// TestMDNestingLimit: block quotes and list items stop nesting at
// mdMaxNesting; what is deeper is text.
func TestMDNestingLimit(t *testing.T) {
	for _, src := range []string{strings.Repeat("> ", 100) + "a", strings.Repeat("- ", 100) + "a", strings.Repeat(">- ", 100) + "a"} {
		doc := mdParse(src)
		checkTree(t, src, doc)
		depth, n := 0, doc
		for n.first != nil && n.first.kind != mdParagraph {
			n = n.first
			if n.kind == mdBlockquote || n.kind == mdItem {
				depth++
			}
		}
		if depth != mdMaxNesting {
			t.Errorf("mdParse(%.20q…) nests %d deep, want %d", src, depth, mdMaxNesting)
		}
	}
}

// mdPathological are inputs that take quadratic time or worse in a naive
// parser, most from cmark's test/pathological_tests.py. Each has about n
// repetitions.
func mdPathological(n int) []struct{ name, src string } {
	var refs, lists, ticks, cols strings.Builder
	for i := range n {
		fmt.Fprintf(&refs, "[%d]: u\n", i)
	}
	refs.WriteString(strings.Repeat("[0] ", n))
	for i := range min(n, 500) { // the input grows as the square of the depth
		lists.WriteString(strings.Repeat("  ", i) + "* a\n")
	}
	for i := 1; i < min(n, 500); i++ {
		ticks.WriteString("e" + strings.Repeat("`", i))
	}
	for i := range min(n, 500) { // a delimiter row for each header row before it: each fails
		cols.WriteString(strings.Repeat("a|", i%(mdMaxColumns+8)) + "a\n" + strings.Repeat("-|", i%(mdMaxColumns+8)+1) + "-\n")
	}
	return []struct{ name, src string }{
		{"nested strong emphasis", strings.Repeat("*a **a ", n) + "b" + strings.Repeat(" a** a*", n)},
		{"emphasis closers without openers", strings.Repeat("a_ ", n)},
		{"emphasis openers without closers", strings.Repeat("_a ", n)},
		{"mismatched openers and closers", strings.Repeat("*a_ ", n)},
		{"closers in multiples of 3", "a**b" + strings.Repeat("c* ", n)},
		{"one long run of stars", strings.Repeat("*", 5*n)},
		{"stars around a word", strings.Repeat("*", n) + "a" + strings.Repeat("*", n)},
		{"link closers without openers", strings.Repeat("a]", n)},
		{"link openers without closers", strings.Repeat("[a", n)},
		{"link openers and emphasis closers", strings.Repeat("[ a_", n)},
		{"link openers and emphasis openers", strings.Repeat("*a [", n) + "](b)"},
		{"bracket paren", strings.Repeat("[ (](", n)},
		{"nested brackets", strings.Repeat("[", n) + "a" + strings.Repeat("]", n)},
		{"nested links", strings.Repeat("[", n) + "a" + strings.Repeat("](b)", n)},
		{"nested images", strings.Repeat("![", n) + "a" + strings.Repeat("](b)", n)},
		{"unclosed pointy destinations", strings.Repeat("[a](<b", n)},
		{"unclosed destinations", strings.Repeat("[a](b", n)},
		{"unclosed titles", strings.Repeat("[a](b (", n)},
		{"parentheses in a destination", "[a](" + strings.Repeat("(", n)},
		{"many references", refs.String()},
		{"unclosed comments", "</" + strings.Repeat("<!--", n)},
		{"unclosed declarations", strings.Repeat("<!A ", n)},
		{"unclosed attribute values", strings.Repeat("<a b='", n)},
		{"autolink openers", strings.Repeat("<a:", n)},
		{"references without semicolons", strings.Repeat("&#1", n)},
		{"backtick runs of every length", ticks.String()},
		{"unclosed backticks", strings.Repeat("`a ", n)},
		{"nested block quotes", strings.Repeat("> ", n) + "a"},
		{"nested list markers", strings.Repeat("- ", n) + "a"},
		{"deeply nested lists", lists.String()},
		{"fences", strings.Repeat("```\n", n)},
		{"setext lines after a definition", "[a]: b\n" + strings.Repeat("===\n", n)},
		{"html blocks", strings.Repeat("<div>\n", n)},
		{"tabs", strings.Repeat("\t", n) + "a"},
		{"long line", strings.Repeat("word ", n)},
		{"long word", strings.Repeat("x", 10*n)},
		{"long line of wide runes", strings.Repeat("漢", 5*n)},
		{"table rows of many cells", "|" + strings.Repeat("a|", mdMaxColumns) + "\n|" + strings.Repeat("-|", mdMaxColumns) + "\n" + strings.Repeat(strings.Repeat("|", 100)+"\n", n/10)},
		{"table rows of one cell", "|" + strings.Repeat("a|", mdMaxColumns) + "\n|" + strings.Repeat("-|", mdMaxColumns) + "\n" + strings.Repeat("b\n", n)},
		{"a long table row", "a|b\n-|-\n" + strings.Repeat("c\\|", 5*n)},
		{"delimiter rows that do not match", cols.String()},
		{"pipes", strings.Repeat("|", 5*n)},
	}
}

// TestMDPathological parses and renders inputs that would take minutes if
// any step were quadratic. It asserts no time; it finishes in well under
// a second, so a regression shows as a slow test.
func TestMDPathological(t *testing.T) {
	for _, tc := range mdPathological(10000) {
		t.Run(tc.name, func(t *testing.T) {
			doc := mdParse(tc.src)
			checkTree(t, "", doc)
			checkMarkdown(t, "", 80, render(tc.src, "dark", 80))
		})
	}
}

func FuzzMDParse(f *testing.F) {
	for _, tc := range mdParseCases {
		f.Add(tc.src, 30)
	}
	for _, tc := range mdRenderCases {
		f.Add(tc.src, 12)
	}
	for _, tc := range mdPathological(20) {
		f.Add(tc.src, 40)
	}
	f.Fuzz(func(t *testing.T, src string, width int) {
		checkTree(t, src, mdParse(src)) // raw: CR, tabs and NUL reach the parser
		width = 10 + (width%200+200)%200
		checkMarkdown(t, src, width, render(src, "dark", width))
	})
}

// checkTree fails the test unless the tree is well formed: links agree,
// blocks hold blocks and inlines hold inlines, nothing is left open.
func checkTree(t *testing.T, src string, doc *mdNode) {
	t.Helper()
	if doc.kind != mdDocument || doc.parent != nil {
		t.Fatalf("mdParse(%q): root is %v with parent %v", src, doc.kind, doc.parent)
	}
	stack := []*mdNode{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.open {
			t.Fatalf("mdParse(%q): a block of kind %v is left open", src, n.kind)
		}
		var prev *mdNode
		for c := n.first; c != nil; c = c.next {
			if c.parent != n || c.prev != prev {
				t.Fatalf("mdParse(%q): broken links under a node of kind %v", src, n.kind)
			}
			if !mdMayHold(n.kind, c.kind) {
				t.Fatalf("mdParse(%q): kind %v holds kind %v", src, n.kind, c.kind)
			}
			prev = c
			stack = append(stack, c)
		}
		if n.last != prev {
			t.Fatalf("mdParse(%q): last child of a node of kind %v is wrong", src, n.kind)
		}
	}
}

func mdMayHold(parent, child mdKind) bool {
	inline := child >= mdText
	switch parent {
	case mdDocument, mdBlockquote, mdItem:
		return !inline && child != mdItem && child != mdDocument && child != mdTableRow && child != mdTableCell
	case mdList:
		return child == mdItem
	case mdTable:
		return child == mdTableRow
	case mdTableRow:
		return child == mdTableCell
	case mdParagraph, mdHeading, mdEmph, mdTableCell:
		return inline
	case mdLink:
		return inline && child != mdLink
	case mdImage:
		return inline
	}
	return false
}

// BenchmarkMDRender renders a typical answer: headings, lists, code,
// emphasis and links.
func BenchmarkMDRender(b *testing.B) {
	src := strings.Repeat("## Plan\n\nThe **service** is _blocked_ on `quota`; see [the runbook](https://example.com/runbook).\n\n"+
		"1. Check the bucket:\n   ```sh\n   gsutil du -s gs://backups\n   ```\n2. Ask *ops* to raise the limit.\n\n"+
		"> Note: this takes a day.\n\n- one\n- two\n  - nested\n\n", 4)
	look := newMDLook(Options{Style: testStyle("dark")})
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		mdRender(src, look, 80)
	}
}
