// Package clidocs writes the Markdown reference of a cobra command tree, for docs/cli.md
// (topolayer) and docs/devenv.md (topolayer-devenv).
//
//	var b bytes.Buffer
//	_ = clidocs.Write(&b, "topolayer", "go generate ./cmd/topolayer", root)
package clidocs
