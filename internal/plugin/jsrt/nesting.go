package jsrt

import "fmt"

// maxNestingCost bounds the recursion the parser and compiler may need. The
// sobek parser and compiler recurse once per nested bracket and per chained
// operator, and a Go stack overflow is fatal to the whole process (it cannot be
// recovered), so a source such as a million "(" or "a=a=a=..." must be refused
// before it reaches the parser. The limit is far above real plugin code and
// far below the depth at which the 1 GB goroutine stack runs out.
const maxNestingCost = 2048

// statementKeywords can only start a statement, so the expression before them
// has ended and its operator chain no longer adds to the recursion.
var statementKeywords = map[string]bool{
	"var": true, "let": true, "const": true, "if": true, "for": true, "while": true,
	"do": true, "return": true, "throw": true, "switch": true, "case": true,
	"try": true, "catch": true, "finally": true, "else": true, "break": true,
	"continue": true, "with": true, "debugger": true, "export": true, "import": true,
}

// operatorKeywords behave like operators: each one may add a parser frame.
var operatorKeywords = map[string]bool{
	"typeof": true, "void": true, "delete": true, "new": true, "await": true,
	"yield": true, "in": true, "instanceof": true,
}

// regexAfterKeyword lists keywords after which a slash starts a regular
// expression rather than a division.
var regexAfterKeyword = map[string]bool{
	"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true,
	"instanceof": true, "new": true, "delete": true, "void": true, "throw": true,
	"yield": true, "await": true, "of": true,
}

// nestingScanner estimates parser recursion with a deliberately rough lexer:
// it over-counts (every operator character is a level) and may mis-lex odd
// regular expressions, which can only make it stricter, never crash.
type nestingScanner struct {
	src          string
	pos          int
	kinds        []byte // open brackets: '(', '[', '{' or '$' for "${"
	ops          []int  // operators in the current segment of each level
	cost         int
	regexAllowed bool
	afterDot     bool
}

// checkNesting refuses sources whose bracket and operator nesting could
// exhaust the goroutine stack during parsing or compilation.
func checkNesting(src string) error {
	s := &nestingScanner{src: src, ops: []int{0}, regexAllowed: true}
	for s.pos < len(s.src) {
		s.step()
		if s.cost > maxNestingCost {
			line, col := lineColumn(src, s.pos)
			return &CompileError{Line: line, Column: col,
				Message: fmt.Sprintf("expression nesting is too deep (limit %d levels)", maxNestingCost)}
		}
	}
	return nil
}

func (s *nestingScanner) step() {
	c := s.src[s.pos]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		s.pos++
	case c == '/' && s.peek(1) == '/':
		s.skipLineComment()
	case c == '/' && s.peek(1) == '*':
		s.skipBlockComment()
	case c == '/' && s.regexAllowed:
		s.skipRegex()
	case c == '"' || c == '\'':
		s.skipString(c)
	case c == '`':
		s.pos++
		s.scanTemplate()
	case isIdentByte(c):
		s.scanWord()
	default:
		s.punct(c)
	}
}

func (s *nestingScanner) peek(off int) byte {
	if s.pos+off < len(s.src) {
		return s.src[s.pos+off]
	}
	return 0
}

func (s *nestingScanner) punct(c byte) {
	s.pos++
	s.afterDot = false
	switch c {
	case '(', '[', '{':
		s.open(c)
	case ')', ']':
		s.close()
		s.regexAllowed = false
	case '}':
		if s.close() == '$' {
			s.scanTemplate()
			return
		}
		s.regexAllowed = true
	case ',', ';':
		s.resetSegment()
		s.regexAllowed = true
	case '.':
		s.afterDot = true
		s.regexAllowed = false
	default:
		s.ops[len(s.ops)-1]++
		s.cost++
		s.regexAllowed = true
	}
}

func (s *nestingScanner) open(kind byte) {
	s.kinds = append(s.kinds, kind)
	s.ops = append(s.ops, 0)
	s.cost++
	s.regexAllowed = true
}

// close pops one level and reports its kind; a stray closer is ignored
// because the parser will reject it anyway.
func (s *nestingScanner) close() byte {
	if len(s.kinds) == 0 {
		return 0
	}
	top := len(s.kinds) - 1
	kind := s.kinds[top]
	s.cost -= 1 + s.ops[top+1]
	s.kinds = s.kinds[:top]
	s.ops = s.ops[:top+1]
	return kind
}

func (s *nestingScanner) resetSegment() {
	top := len(s.ops) - 1
	s.cost -= s.ops[top]
	s.ops[top] = 0
}

func (s *nestingScanner) scanWord() {
	start := s.pos
	for s.pos < len(s.src) && isIdentByte(s.src[s.pos]) {
		s.pos++
	}
	word := s.src[start:s.pos]
	wasAfterDot := s.afterDot
	s.afterDot = false
	s.regexAllowed = false
	if wasAfterDot {
		return
	}
	switch {
	case statementKeywords[word]:
		s.resetSegment()
	case operatorKeywords[word]:
		s.ops[len(s.ops)-1]++
		s.cost++
	}
	s.regexAllowed = regexAfterKeyword[word] || statementKeywords[word]
}

func (s *nestingScanner) skipLineComment() {
	for s.pos < len(s.src) && s.src[s.pos] != '\n' {
		s.pos++
	}
}

func (s *nestingScanner) skipBlockComment() {
	s.pos += 2
	for s.pos < len(s.src) && !(s.src[s.pos] == '*' && s.peek(1) == '/') {
		s.pos++
	}
	s.pos += 2
}

func (s *nestingScanner) skipString(quote byte) {
	s.pos++
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		s.pos++
		if c == '\\' {
			s.pos++
		} else if c == quote || c == '\n' {
			break
		}
	}
	s.regexAllowed = false
}

func (s *nestingScanner) skipRegex() {
	s.pos++
	inClass := false
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		s.pos++
		switch {
		case c == '\\':
			s.pos++
		case c == '\n':
			return
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			for s.pos < len(s.src) && isIdentByte(s.src[s.pos]) {
				s.pos++
			}
			s.regexAllowed = false
			return
		}
	}
}

// scanTemplate skips template text up to the closing backtick or to a "${"
// substitution, which it opens as a bracket level.
func (s *nestingScanner) scanTemplate() {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		s.pos++
		switch {
		case c == '\\':
			s.pos++
		case c == '`':
			s.regexAllowed = false
			return
		case c == '$' && s.pos < len(s.src) && s.src[s.pos] == '{':
			s.pos++
			s.open('$')
			return
		}
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c == '\\' || c >= 0x80 ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// lineColumn converts a byte offset into a 1-based line and column.
func lineColumn(src string, offset int) (int, int) {
	if offset > len(src) {
		offset = len(src)
	}
	line, col := 1, 1
	for i := 0; i < offset; i++ {
		if src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
