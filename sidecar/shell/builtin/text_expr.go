package builtin

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"
)

func init() { register("expr", textExpr) }

var (
	errExprSyntax = errors.New("syntax error")
	errExprDivide = errors.New("division by zero")
	errExprNonInt = errors.New("non-integer argument")
)

// textExprParser evaluates expr's grammar by recursive descent, lowest
// precedence first: | & comparisons + - * / % : and the keywords.
type textExprParser struct {
	args []string
	pos  int
	err  error
}

// textExpr exits 0 when the result is neither empty nor 0, 1 when it is and
// 2 on an invalid expression, as GNU expr does.
func textExpr(ctx context.Context, env *Env, args []string) int {
	a := args[1:]
	if len(a) > 0 && a[0] == "--" {
		a = a[1:]
	}
	if len(a) == 0 {
		env.Errorf("expr", "missing operand")
		return 2
	}
	p := &textExprParser{args: a}
	v := p.or()
	if p.err == nil && p.pos < len(p.args) {
		p.err = fmt.Errorf("%w: unexpected argument %s", errExprSyntax, textQuote(p.args[p.pos]))
	}
	if p.err != nil {
		env.Errorf("expr", "%s", p.err)
		return 2
	}
	fmt.Fprintln(env.Stdout, v)
	if textExprNull(v) {
		return 1
	}
	return 0
}

func textExprNull(v string) bool {
	if v == "" {
		return true
	}
	n, ok := new(big.Int).SetString(v, 10)
	return ok && n.Sign() == 0
}

func (p *textExprParser) peek() (string, bool) {
	if p.pos < len(p.args) {
		return p.args[p.pos], true
	}
	return "", false
}

func (p *textExprParser) next() string {
	if p.pos >= len(p.args) {
		if p.err == nil {
			p.err = fmt.Errorf("%w: missing argument after %s", errExprSyntax, textQuote(p.args[len(p.args)-1]))
		}
		return ""
	}
	p.pos++
	return p.args[p.pos-1]
}

func (p *textExprParser) or() string {
	l := p.and()
	for t, ok := p.peek(); ok && t == "|" && p.err == nil; t, ok = p.peek() {
		p.pos++
		r := p.and()
		if textExprNull(l) {
			if textExprNull(r) {
				l = "0"
			} else {
				l = r
			}
		}
	}
	return l
}

func (p *textExprParser) and() string {
	l := p.compare()
	for t, ok := p.peek(); ok && t == "&" && p.err == nil; t, ok = p.peek() {
		p.pos++
		r := p.compare()
		if textExprNull(l) || textExprNull(r) {
			l = "0"
		}
	}
	return l
}

func (p *textExprParser) compare() string {
	l := p.sum()
	for t, ok := p.peek(); ok && p.err == nil; t, ok = p.peek() {
		switch t {
		case "=", "==", "!=", "<", "<=", ">", ">=":
		default:
			return l
		}
		p.pos++
		r := p.sum()
		var c int
		li, lok := new(big.Int).SetString(l, 10)
		ri, rok := new(big.Int).SetString(r, 10)
		if lok && rok {
			c = li.Cmp(ri)
		} else {
			c = strings.Compare(l, r)
		}
		res := map[string]bool{"=": c == 0, "==": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[t]
		l = "0"
		if res {
			l = "1"
		}
	}
	return l
}

func (p *textExprParser) arith(l, op, r string) string {
	li, lok := new(big.Int).SetString(l, 10)
	ri, rok := new(big.Int).SetString(r, 10)
	if !lok || !rok {
		if p.err == nil {
			p.err = errExprNonInt
		}
		return ""
	}
	switch op {
	case "+":
		return li.Add(li, ri).String()
	case "-":
		return li.Sub(li, ri).String()
	case "*":
		return li.Mul(li, ri).String()
	}
	if ri.Sign() == 0 {
		if p.err == nil {
			p.err = errExprDivide
		}
		return ""
	}
	if op == "/" {
		return li.Quo(li, ri).String()
	}
	return li.Rem(li, ri).String()
}

func (p *textExprParser) sum() string {
	l := p.product()
	for t, ok := p.peek(); ok && (t == "+" || t == "-") && p.err == nil; t, ok = p.peek() {
		p.pos++
		l = p.arith(l, t, p.product())
	}
	return l
}

func (p *textExprParser) product() string {
	l := p.match()
	for t, ok := p.peek(); ok && (t == "*" || t == "/" || t == "%") && p.err == nil; t, ok = p.peek() {
		p.pos++
		l = p.arith(l, t, p.match())
	}
	return l
}

func (p *textExprParser) match() string {
	l := p.primary()
	for t, ok := p.peek(); ok && t == ":" && p.err == nil; t, ok = p.peek() {
		p.pos++
		l = p.regexMatch(l, p.primary())
	}
	return l
}

// regexMatch anchors the BRE at the start; with a group it yields the
// first group's text, else the length of the match.
func (p *textExprParser) regexMatch(s, pattern string) string {
	tr, err := textTranslateRE(pattern, false)
	var re textRE
	if err == nil {
		re, err = textRegexp("(?s)^(?:" + tr + ")")
	}
	if err != nil {
		if p.err == nil {
			p.err = fmt.Errorf("%w: %v", errExprSyntax, err)
		}
		return ""
	}
	m := re.FindStringSubmatch(s)
	if re.NumSubexp() > 0 {
		if m == nil {
			return ""
		}
		return m[1]
	}
	if m == nil {
		return "0"
	}
	return fmt.Sprint(utf8.RuneCountInString(m[0]))
}

func (p *textExprParser) primary() string {
	t := p.next()
	if p.err != nil {
		return ""
	}
	switch t {
	case "(":
		v := p.or()
		if p.next() != ")" && p.err == nil {
			p.err = fmt.Errorf("%w: expecting ')'", errExprSyntax)
		}
		return v
	case "+":
		return p.next()
	case "length":
		return fmt.Sprint(utf8.RuneCountInString(p.primary()))
	case "match":
		s := p.primary()
		return p.regexMatch(s, p.primary())
	case "index":
		s, chars := p.primary(), p.primary()
		i := strings.IndexAny(s, chars)
		if i < 0 {
			return "0"
		}
		return fmt.Sprint(utf8.RuneCountInString(s[:i]) + 1)
	case "substr":
		s, posS, lenS := p.primary(), p.primary(), p.primary()
		pos, ok1 := new(big.Int).SetString(posS, 10)
		n, ok2 := new(big.Int).SetString(lenS, 10)
		r := []rune(s)
		if !ok1 || !ok2 || pos.Sign() <= 0 || n.Sign() <= 0 || pos.Int64() > int64(len(r)) {
			return ""
		}
		start := pos.Int64() - 1
		end := min(int64(len(r)), start+min(n.Int64(), int64(len(r))))
		return string(r[start:end])
	}
	return t
}
