package main

import (
	"go/scanner"
	"go/token"
	"path"
	"slices"
	"strings"
)

// codeOnly drops from commits those whose changes to paths (a pathspec
// set: gpuPaths or a suite set) are documentation only: every file they
// touch there is a Go file whose tokens, comments aside, are the same
// before and after. A change to any
// other file (CUDA sources, PTX, the manifest), an added or removed file,
// or a commit the history cannot answer for, counts.
func (g *repo) codeOnly(commits []string, paths []string) []string {
	return slices.DeleteFunc(slices.Clone(commits), func(c string) bool { return g.docOnly(c, paths) })
}

// docOnly reports whether commit c changes only comments (and layout) in
// paths, against its first parent (worked out once per commit and set).
func (g *repo) docOnly(c string, paths []string) bool {
	key := c + "\x00" + strings.Join(paths, "\x00")
	if d, ok := g.docOf[key]; ok {
		return d
	}
	d := g.docOnlyUncached(c, paths)
	if g.docOf == nil {
		g.docOf = map[string]bool{}
	}
	g.docOf[key] = d
	return d
}

func (g *repo) docOnlyUncached(c string, paths []string) bool {
	out, err := g.git(append([]string{"diff-tree", "--no-commit-id", "-r", "--name-only", c + "^1", c, "--"}, paths...)...)
	if err != nil || out == "" {
		return false
	}
	for _, f := range strings.Split(out, "\n") {
		if path.Ext(f) != ".go" {
			return false
		}
		before, err1 := g.raw("show", c+"^1:"+f)
		after, err2 := g.raw("show", c+":"+f)
		if err1 != nil || err2 != nil || !sameCode(before, after) {
			return false
		}
	}
	return true
}

// sameCode reports whether two Go sources hold the same tokens, comments
// and white space aside (automatic semicolons count, so a moved line break
// that changes the code is seen, except before a closing brace or
// parenthesis, where a semicolon changes nothing).
func sameCode(a, b []byte) bool {
	ta, ok1 := goTokens(a)
	tb, ok2 := goTokens(b)
	return ok1 && ok2 && slices.Equal(ta, tb)
}

func goTokens(src []byte) ([]string, bool) {
	var s scanner.Scanner
	fs := token.NewFileSet()
	bad := false
	s.Init(fs.AddFile("", fs.Base(), len(src)), src, func(token.Position, string) { bad = true }, 0)
	var out []string
	semi := false // a semicolon is pending
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out, !bad
		}
		if tok == token.SEMICOLON {
			semi = true // automatic or written: the same token
			continue
		}
		// A semicolon right before a closing brace or parenthesis may be
		// left out ("{ return x }"): only the others separate code.
		if semi && tok != token.RBRACE && tok != token.RPAREN {
			out = append(out, ";")
		}
		semi = false
		out = append(out, tok.String()+" "+lit)
	}
}
