package parser_test

// ckpt: this file is not goldmark's. It holds the vendored copy to the
// upstream module it was copied from (see ../README.md).

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	upparser "github.com/yuin/goldmark/parser"
	uptext "github.com/yuin/goldmark/text"

	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/parser"
	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/text"
)

func parseVendored(src []byte) any {
	p := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
	return p.Parse(text.NewReader(src))
}

func parseUpstream(src []byte) any {
	p := upparser.NewParser(
		upparser.WithBlockParsers(upparser.DefaultBlockParsers()...),
		upparser.WithInlineParsers(upparser.DefaultInlineParsers()...),
		upparser.WithParagraphTransformers(upparser.DefaultParagraphTransformers()...),
	)
	return p.Parse(uptext.NewReader(src))
}

// dump writes a tree of either copy as text: each node's kind, its lines
// (blocks) and its exported fields, which both copies declare alike.
func dump(doc any) string {
	var b strings.Builder
	var walk func(n reflect.Value, depth int)
	call := func(n reflect.Value, m string) reflect.Value { return n.MethodByName(m).Call(nil)[0] }
	walk = func(n reflect.Value, depth int) {
		for ; n.IsValid() && !n.IsNil(); n = call(n, "NextSibling") {
			fmt.Fprintf(&b, "%s%v", strings.Repeat("  ", depth), call(n, "Kind"))
			if call(n, "Type").Int() != 2 { // not an inline: blocks have lines
				fmt.Fprintf(&b, " lines=%+v", call(n, "Lines").Elem().Interface())
			}
			node := n.Elem() // the node's struct, through its interface or pointer
			if n.Kind() == reflect.Interface {
				node = node.Elem()
			}
			fields(&b, node)
			b.WriteByte('\n')
			walk(call(n, "FirstChild"), depth+1)
		}
	}
	walk(reflect.ValueOf(doc), 0)
	return b.String()
}

// fields writes the exported fields of node's struct, and those of the
// structs it embeds other than the Base ones every node embeds (a Link's
// destination is in its embedded baseLink).
func fields(b *strings.Builder, node reflect.Value) {
	for i := range node.NumField() {
		f, v := node.Type().Field(i), node.Field(i)
		if f.Anonymous {
			if v.Kind() == reflect.Struct && !strings.HasPrefix(f.Name, "Base") {
				fields(b, v)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		fmt.Fprintf(b, " %s=%+v", f.Name, v.Interface())
	}
}

// FuzzVendoredParserMatchesGoldmark: the vendored parser, whose start-up
// work is deferred to first use, reads any bytes to the same tree as
// upstream goldmark.
func FuzzVendoredParserMatchesGoldmark(f *testing.F) {
	plans, _ := filepath.Glob("../../../testdata/*.plan.md")
	for _, p := range plans {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"# Plan\n\n- [ ] one <!-- TASK t1 -->\n- [x] two\n",
		"<script>\nx\n</script>\n\n<div class=\"a\">\n\n<!-- CHECKPOINT p1 -->\n\n<?php ?>\n\n<!DOCTYPE html>\n\n<![CDATA[ x ]]>\n",
		"[ẞ Label]: /u \"t\"\n\n[ss label] and [SS LABEL][] and <a@b.example> <https://x.y/z>\n",
		"&ouml; &copy; &#x41; `code <!-- no -->` *em* __strong__ <span a='1' b=\"2\" c=d>x</span> </span>\n",
		"   ```go\n   x\n   ```\n\n    indented\n\n> quote\n> - item\n\n1. a\n2) b\n\nSetext\n===\n",
	} {
		f.Add([]byte(s))
	}
	// Every HTML block tag upstream allows, and names it does not, after
	// a paragraph (a type 6 block interrupts it, a type 7 one does not)
	// and in upper case: the vendored copy's switch (allowedBlockTag) is
	// upstream's map.
	var tags strings.Builder
	for _, tag := range strings.Fields(`address article aside base basefont blockquote body caption center col
		colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset
		h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem meta nav noframes
		ol optgroup option p param search section summary table tbody td tfoot th thead title tr track ul
		span a img h7 divs xdiv details2 script style pre textarea`) {
		fmt.Fprintf(&tags, "text\n<%s>\n\ntext\n</%s>\n\ntext\n<%s/>\n\n", tag, tag, strings.ToUpper(tag))
	}
	f.Add([]byte(tags.String()))
	f.Fuzz(func(t *testing.T, src []byte) {
		got, want := dump(parseVendored(src)), dump(parseUpstream(src))
		if got != want {
			t.Fatalf("the vendored parser reads %q as\n%s\nupstream goldmark as\n%s", src, got, want)
		}
	})
}
