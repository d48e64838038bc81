package plan

import (
	"strconv"
	"sync"

	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/ast"
	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/parser"
	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/text"
	"github.com/ckpt-dev/ckpt/protocols/plan/internal/markdown/util"
)

// markdownParser is the one parser configuration: CommonMark plus GFM's
// task-list items, the only extension a plan needs. It is built on first
// use, not at start-up: every ckpt process links this package, and most
// never read a plan.
//
// GFM's other extensions (tables, strikethrough, autolinks) change nothing
// a plan's markers or checkboxes mean, and the goldmark extension package
// that holds them costs every process about half a megabyte of package
// initialisation (its link-detection regular expressions among it), so the
// task-list parser is here instead: goldmark's own (extension/tasklist.go,
// MIT licence), without its regular expression.
var markdownParser = sync.OnceValue(func() parser.Parser {
	p := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
	// It must take precedence over the link parser, which also starts at '['.
	p.AddOptions(parser.WithInlineParsers(util.Prioritized(taskCheckBoxParser{}, 0)))
	return p
})

// taskCheckBoxParser turns "[ ]", "[x]" or "[X]" at the very start of a
// list item's first line into a TaskCheckBox, exactly where GFM does.
type taskCheckBoxParser struct{}

func (taskCheckBoxParser) Trigger() []byte { return []byte{'['} }

func (taskCheckBoxParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	// The tree must be List > ListItem (parent.Parent) > TextBlock (parent),
	// with nothing parsed in the text block yet.
	if parent.Parent() == nil || parent.Parent().FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	if _, ok := parent.Parent().(*ast.ListItem); !ok {
		return nil
	}
	line, _ := block.PeekLine()
	// GFM's pattern: ^\[([\sxX])\]\s* with \s one of space, \t, \n, \f, \r.
	if len(line) < 3 || line[0] != '[' || line[2] != ']' || !isSpace(line[1]) && line[1] != 'x' && line[1] != 'X' {
		return nil
	}
	n := 3
	for n < len(line) && isSpace(line[n]) {
		n++
	}
	checked := line[1] == 'x' || line[1] == 'X'
	block.Advance(n)
	return &taskCheckBox{IsChecked: checked}
}

func (taskCheckBoxParser) CloseBlock(parent ast.Node, pc parser.Context) {}

// isSpace is RE2's \s: space, \t, \n, \f, \r.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// taskCheckBox is GFM's checkbox at the start of a task-list item
// (goldmark's extension/ast TaskCheckBox, MIT licence).
type taskCheckBox struct {
	ast.BaseInline
	IsChecked bool
}

var kindTaskCheckBox = ast.NewNodeKind("TaskCheckBox")

func (n *taskCheckBox) Kind() ast.NodeKind { return kindTaskCheckBox }

func (n *taskCheckBox) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Checked": strconv.FormatBool(n.IsChecked)}, nil)
}
