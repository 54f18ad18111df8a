// Command exported counts the exported identifiers of topolayer's packages (the main module,
// not hack's; no main packages, no test files): top-level functions, types, constants and
// variables, and the exported methods of exported types. It lists the exported package
// variables that are not sentinel errors (Err...), which are mutable from outside. Issue 25
// measures the public surface with it:
//
//	go -C hack run ./exported -root ..            # the total and the count per package
//
// Packages under internal/ are not counted: no other module can import them.
//
//	go -C hack run ./exported -root .. -v         # every identifier
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the main module's directory")
	verbose := flag.Bool("v", false, "list every exported identifier")
	flag.Parse()
	counts := map[string]int{}
	var names, mutable []string
	err := filepath.WalkDir(*root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(*root, path)
		if d.IsDir() {
			switch {
			case rel == ".":
			case rel == "hack", strings.HasPrefix(d.Name(), "."), d.Name() == "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if f.Name.Name == "main" || internal(rel) {
			return nil // not importable: not the public surface
		}
		pkg := filepath.Dir(rel)
		add := func(name string) {
			counts[pkg]++
			names = append(names, pkg+"."+name)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if !decl.Name.IsExported() {
					continue
				}
				if decl.Recv == nil {
					add(decl.Name.Name)
					continue
				}
				if recv := receiver(decl.Recv.List[0].Type); ast.IsExported(recv) {
					add(recv + "." + decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						if spec.Name.IsExported() {
							add(spec.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							if !n.IsExported() {
								continue
							}
							add(n.Name)
							if decl.Tok == token.VAR && !strings.HasPrefix(n.Name, "Err") {
								mutable = append(mutable, pkg+"."+n.Name)
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "exported:", err)
		os.Exit(1)
	}
	pkgs := make([]string, 0, len(counts))
	total := 0
	for p, n := range counts {
		pkgs = append(pkgs, p)
		total += n
	}
	sort.Slice(pkgs, func(i, j int) bool {
		return counts[pkgs[i]] > counts[pkgs[j]] || counts[pkgs[i]] == counts[pkgs[j]] && pkgs[i] < pkgs[j]
	})
	for _, p := range pkgs {
		fmt.Printf("%5d  %s\n", counts[p], p)
	}
	fmt.Printf("%5d  exported identifiers in %d packages\n", total, len(pkgs))
	sort.Strings(mutable)
	fmt.Printf("%5d  exported mutable package variables: %s\n", len(mutable), strings.Join(mutable, ", "))
	if *verbose {
		sort.Strings(names)
		for _, n := range names {
			fmt.Println(n)
		}
	}
}

// internal reports whether a file is in an internal package, which other modules cannot import.
func internal(rel string) bool {
	rel = filepath.ToSlash(rel)
	return strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/")
}

// receiver names the type of a method's receiver.
func receiver(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiver(t.X)
	case *ast.IndexExpr:
		return receiver(t.X)
	case *ast.IndexListExpr:
		return receiver(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
