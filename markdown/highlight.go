package markdown

// Syntax highlighting of fenced code. The lexers are ours, written with
// chroma's rule engine: chroma's own lexers package parses all of its
// lexer definitions when the program starts (8.4 ms and 2.7 MB measured with
// GODEBUG=inittrace=1), a cost every command would pay, chat or not. Here a
// language's rules are built and compiled the first time a block in it is
// drawn, and kept for the life of the process.

import (
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// The looks of highlighted code, after the inline ones.
const (
	attrKeyword attr = attrQuiet << (iota + 1)
	attrString
	attrComment
	attrNumber
	attrType
)

// langFamily is a set of languages one rule set reads well enough to colour:
// the aim is keywords, strings, comments and numbers, not a parser.
type langFamily int

const (
	famNone langFamily = iota
	famGo
	famC // C, C++, Java, C#, Rust, Swift, Kotlin
	famJS
	famJSON
	famPython
	famShell
	famYAML
	famDiff
)

// familyOf maps a fence's language to its family; famNone is drawn plain.
func familyOf(lang string) langFamily {
	switch strings.ToLower(lang) {
	case "go", "golang":
		return famGo
	case "c", "h", "cpp", "c++", "cc", "hpp", "java", "cs", "c#", "csharp", "rust", "rs", "swift", "kotlin", "kt":
		return famC
	case "js", "javascript", "jsx", "ts", "typescript", "tsx", "mjs", "cjs":
		return famJS
	case "json", "jsonc", "json5":
		return famJSON
	case "py", "python", "python3":
		return famPython
	case "sh", "bash", "shell", "zsh", "console", "shell-session", "fish", "ksh":
		return famShell
	case "yaml", "yml", "toml", "ini":
		return famYAML
	case "diff", "patch":
		return famDiff
	}
	return famNone
}

var lexers struct {
	sync.Mutex
	m map[langFamily]chroma.Lexer
}

// lexerFor returns the lexer of lang, building it on first use, or nil if
// the language is not one this package colours.
func lexerFor(lang string) chroma.Lexer {
	f := familyOf(lang)
	if f == famNone {
		return nil
	}
	lexers.Lock()
	defer lexers.Unlock()
	if l, ok := lexers.m[f]; ok {
		return l
	}
	if lexers.m == nil {
		lexers.m = map[langFamily]chroma.Lexer{}
	}
	l := chroma.MustNewLexer(&chroma.Config{Name: lang, EnsureNL: true}, func() chroma.Rules { return familyRules(f) })
	lexers.m[f] = l
	return l
}

func familyRules(f langFamily) chroma.Rules {
	rule := func(pattern string, t chroma.TokenType) chroma.Rule { return chroma.Rule{Pattern: pattern, Type: t} }
	words := func(t chroma.TokenType, ws ...string) chroma.Rule {
		return rule(chroma.Words(`\b`, `\b`, ws...), t)
	}
	var (
		cComment = []chroma.Rule{rule(`//[^\n]*`, chroma.CommentSingle), rule(`/\*[\s\S]*?\*/`, chroma.CommentMultiline)}
		hashLine = rule(`#[^\n]*`, chroma.CommentSingle)
		dquote   = rule(`"(?:\\.|[^"\\\n])*"`, chroma.LiteralString)
		squote   = rule(`'(?:\\.|[^'\\\n])*'`, chroma.LiteralString)
		backtick = rule("`[^`]*`", chroma.LiteralString)
		number   = rule(`\b(?:0[xXbBoO][0-9a-fA-F_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)\b`, chroma.LiteralNumber)
		ident    = rule(`[A-Za-z_$][A-Za-z0-9_$]*`, chroma.Name)
		space    = rule(`\s+`, chroma.TextWhitespace)
		other    = rule(`.`, chroma.Text)
	)
	var rs []chroma.Rule
	switch f {
	case famGo:
		rs = append(cComment, dquote, squote, backtick, number,
			words(chroma.Keyword, "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough",
				"for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select",
				"struct", "switch", "type", "var", "nil", "true", "false", "iota"),
			words(chroma.KeywordType, "bool", "byte", "complex64", "complex128", "error", "float32", "float64", "int",
				"int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64",
				"uintptr", "any"))
	case famC:
		rs = append(cComment, dquote, squote, number,
			words(chroma.Keyword, "auto", "break", "case", "catch", "class", "const", "continue", "default", "delete",
				"do", "else", "enum", "extends", "false", "final", "fn", "for", "if", "impl", "implements", "import",
				"let", "match", "mod", "mut", "namespace", "new", "null", "nullptr", "override", "package", "private",
				"protected", "pub", "public", "return", "static", "struct", "switch", "template", "this", "throw",
				"trait", "true", "try", "typedef", "union", "use", "using", "virtual", "void", "volatile", "where",
				"while", "self", "Self", "val", "var", "fun", "func", "guard"),
			words(chroma.KeywordType, "bool", "char", "double", "float", "int", "long", "short", "signed", "unsigned",
				"size_t", "String", "str", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "isize",
				"f32", "f64", "boolean", "byte"))
	case famJS:
		rs = append(cComment, dquote, squote, backtick, number,
			words(chroma.Keyword, "async", "await", "break", "case", "catch", "class", "const", "continue", "default",
				"delete", "do", "else", "export", "extends", "false", "finally", "for", "from", "function", "if",
				"import", "in", "instanceof", "interface", "let", "new", "null", "of", "return", "switch", "this",
				"throw", "true", "try", "type", "typeof", "undefined", "var", "void", "while", "yield"),
			words(chroma.KeywordType, "string", "number", "boolean", "any", "unknown", "never", "object"))
	case famJSON:
		rs = []chroma.Rule{dquote, number, words(chroma.Keyword, "true", "false", "null")}
	case famPython:
		rs = []chroma.Rule{hashLine,
			rule(`(?:"""[\s\S]*?"""|'''[\s\S]*?''')`, chroma.LiteralString), dquote, squote, number,
			words(chroma.Keyword, "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
				"elif", "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
				"lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while", "with",
				"yield"),
			words(chroma.KeywordType, "int", "str", "float", "bool", "list", "dict", "set", "tuple", "bytes")}
	case famShell:
		rs = []chroma.Rule{rule(`(?:^|(?<=\s))#[^\n]*`, chroma.CommentSingle), dquote, squote,
			rule(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`, chroma.NameVariable),
			words(chroma.Keyword, "if", "then", "else", "elif", "fi", "for", "while", "do", "done", "case", "esac",
				"function", "in", "return", "export", "local", "until")}
	case famYAML:
		rs = []chroma.Rule{rule(`(?:^|(?<=\s))#[^\n]*`, chroma.CommentSingle), dquote, squote,
			rule(`(?m)^[ \t-]*[A-Za-z0-9_.\-]+(?=\s*[:=])`, chroma.KeywordType), number,
			words(chroma.Keyword, "true", "false", "null", "yes", "no")}
	case famDiff:
		rs = []chroma.Rule{rule(`(?m)^\+[^\n]*`, chroma.GenericInserted), rule(`(?m)^-[^\n]*`, chroma.GenericDeleted),
			rule(`(?m)^@@[^\n]*`, chroma.GenericSubheading), rule(`[^\n]+`, chroma.Text)}
	}
	rs = append(rs, ident, space, other)
	return chroma.Rules{"root": rs}
}

// tokenAttr is the look of a token of type t.
func tokenAttr(t chroma.TokenType) attr {
	switch {
	case t == chroma.KeywordType:
		return attrType
	case t.InCategory(chroma.Keyword):
		return attrKeyword
	case t.InCategory(chroma.Comment):
		return attrComment
	case t.InSubCategory(chroma.LiteralString):
		return attrString
	case t.InSubCategory(chroma.LiteralNumber):
		return attrNumber
	case t == chroma.GenericInserted:
		return attrString
	case t == chroma.GenericDeleted:
		return attrKeyword
	case t == chroma.GenericSubheading, t == chroma.NameVariable:
		return attrType
	}
	return 0
}

// highlight splits lines, already cleaned, into pieces with the looks of
// lang's tokens, one slice per line. With no lexer for lang, or if the lexer
// fails, each line is one plain piece.
func highlight(lines []string, lang string) [][]piece {
	out := make([][]piece, len(lines))
	plain := func() [][]piece {
		for i, l := range lines {
			out[i] = []piece{{s: l}}
		}
		return out
	}
	l := lexerFor(lang)
	if l == nil {
		return plain()
	}
	it, err := l.Tokenise(nil, strings.Join(lines, "\n"))
	if err != nil {
		return plain()
	}
	i := 0
	for t := it(); t != chroma.EOF && i < len(lines); t = it() {
		a := tokenAttr(t.Type)
		for s := t.Value; ; {
			head, rest, nl := strings.Cut(s, "\n")
			if head != "" {
				if n := len(out[i]); n > 0 && out[i][n-1].a == a {
					out[i][n-1].s += head
				} else {
					out[i] = append(out[i], piece{head, a})
				}
			}
			if !nl {
				break
			}
			if i++; i == len(lines) {
				break
			}
			s = rest
		}
	}
	return out
}
