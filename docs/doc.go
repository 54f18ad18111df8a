// Package docs holds topolayer's documentation (Markdown, and the DOT sources and SVGs of
// its pictures). It has no code: its tests keep the documentation in step with the code,
// for example that docs/configuration.md describes every field of config.TopologyConfig.
//
//	go test ./docs
package docs
