package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A docBlock is a fenced code block of a document that shows topolayer commands.
type docBlock struct {
	file string
	line int // of the opening fence
	// commands are the block's commands, continuation lines joined; comments and blank
	// lines are dropped.
	commands []string
}

// fencedBlocks returns the code blocks of a Markdown document that invoke topolayer
// ("topolayer ..." or "bin/topolayer ...", with or without a "$ " prompt). With
// examplesOnly, only the blocks under an "### Examples" heading count (docs/cli.md, where
// the others are usage lines and flag lists).
func fencedBlocks(file, text string, examplesOnly bool) []docBlock {
	var out []docBlock
	var cur *docBlock
	heading := ""
	pending := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```") && cur == nil:
			cur = &docBlock{file: file, line: n}
			continue
		case strings.HasPrefix(line, "```"):
			if (!examplesOnly || heading == "### Examples") && slices.ContainsFunc(cur.commands, invokesTopolayer) {
				out = append(out, *cur)
			}
			cur = nil
			continue
		case cur == nil:
			if strings.HasPrefix(line, "#") {
				heading = line
			}
			continue
		}
		line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSpace(strings.TrimSuffix(line, "\\")) + " "
			continue
		}
		cur.commands = append(cur.commands, pending+line)
		pending = ""
	}
	return out
}

// invokesTopolayer reports whether a command runs topolayer.
func invokesTopolayer(cmd string) bool {
	return strings.HasPrefix(cmd, "topolayer ") || strings.HasPrefix(cmd, "bin/topolayer ")
}

// liveCommand says why a command needs live clusters (and so runs in e2e, against topolayer-devenv,
// rather than here), or "" when it runs offline.
func liveCommand(cmd string) string {
	f := strings.Fields(cmd)
	for _, a := range f {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--kubeconfig", "--context", "--management-kubeconfig", "--management-context", "--guest-kubeconfig", "--guest-context":
			return "it names a cluster (" + name + ")"
		}
	}
	switch f[0] {
	case "kubectl":
		return "kubectl"
	case "topolayer-devenv", "bin/topolayer-devenv":
		return "topolayer-devenv starts API servers"
	}
	if invokesTopolayer(cmd) && len(f) > 1 {
		switch f[1] {
		case "run", "apply", "gather":
			return "topolayer " + f[1] + " works on live clusters"
		}
	}
	return ""
}

// TestDocumentedCommandsRun runs every offline command that README.md and docs/ show in a
// code block, and every Example of `topolayer <command> --help` (docs/cli.md is generated
// from them, and TestCLIDocs keeps it so), block by block as a user would paste them: in a
// copy of the repository's examples, with bin/ holding freshly built topolayer and sample
// operators (as after `make build`), and /tmp/ moved into the test's directory. Each block
// must succeed. Commands on live clusters are listed; e2e's TestREADMELiveExample runs
// README's against a fresh topolayer-devenv.
func TestDocumentedCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds topolayer and the sample operators")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		blocks = append(blocks, fencedBlocks(rel, string(data), rel == filepath.Join("docs", "cli.md"))...)
	}
	work := repositoryCopy(t, root)
	tmp := filepath.Join(work, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	corpus := os.Getenv("TOPOLAYER_CORPUS")
	if corpus == "" && isDir(filepath.Join(root, "..", "shared", "corpus")) {
		corpus = filepath.Join(root, "..", "shared", "corpus") // as the documents name it
	}
	ran := 0
	for _, b := range blocks {
		script := []string{"set -euo pipefail"}
		var skipped []string
		if corpus == "" && slices.ContainsFunc(b.commands, func(c string) bool { return strings.Contains(c, "../shared/corpus") }) {
			// The block's later commands use what its corpus lines set (C=../shared/corpus/...).
			t.Logf("%s:%d: not run here: the block reads ../shared/corpus, and TOPOLAYER_CORPUS is not set (nor is there a ../shared/corpus beside the checkout)", b.file, b.line)
			continue
		}
		for _, c := range b.commands {
			if strings.HasPrefix(c, "make ") {
				continue
			}
			if why := liveCommand(c); why != "" {
				skipped = append(skipped, c+": "+why)
				continue
			}
			// /tmp/ first, and only where a path starts, so that neither the corpus's
			// path nor the checkout's (both may be under /tmp) is rewritten.
			c = tmpPath.ReplaceAllString(c, "${1}"+tmp+"/")
			c = strings.ReplaceAll(c, "../shared/corpus", corpus)
			script = append(script, c)
			if invokesTopolayer(c) {
				ran++
			}
		}
		for _, s := range skipped {
			t.Logf("%s:%d: not run here: %s", b.file, b.line, s)
		}
		if len(script) == 1 {
			continue
		}
		t.Run(b.file+":"+strconv.Itoa(b.line), func(t *testing.T) {
			cmd := exec.Command("bash", "-c", strings.Join(script, "\n"))
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "PATH="+filepath.Join(work, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s:%d: %v\n%s\n-- output --\n%s", b.file, b.line, err, strings.Join(script[1:], "\n"), out)
			}
		})
	}
	if ran < 10 {
		t.Errorf("only %d documented topolayer commands ran; is the extraction broken?", ran)
	}
	t.Logf("%d documented topolayer commands ran", ran)
}

// tmpPath matches /tmp/ where a path starts: at the start of a word, after = or a quote.
var tmpPath = regexp.MustCompile(`(^|[\s='"])/tmp/`)

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// repositoryCopy makes a directory that looks like the repository to a user's commands: a
// copy of examples/ (commands may write there: --update), the rest linked, and bin/ with
// topolayer and the sample operators built from the repository.
func repositoryCopy(t *testing.T, root string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "examples", "bin", ".git", ".cache":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(work, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(work, "bin")+string(filepath.Separator), "./cmd/topolayer", "./cmd/sample-operator", "./cmd/sample-audit-operator")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return work
}

func TestFencedBlocks(t *testing.T) {
	doc := "# x\n\n```sh\n$ topolayer plan --config a \\\n  --from b   # where\nkubectl get ns\n```\n\n```\nmake test\n```\n\n### Examples\n\n```\n  # a comment\n  topolayer version\n```\n"
	all := fencedBlocks("d.md", doc, false)
	if len(all) != 2 || len(all[0].commands) != 2 || all[0].commands[0] != "topolayer plan --config a --from b   # where" || all[0].line != 3 {
		t.Errorf("blocks = %+v", all)
	}
	examples := fencedBlocks("d.md", doc, true)
	if len(examples) != 1 || examples[0].commands[0] != "topolayer version" {
		t.Errorf("examples = %+v", examples)
	}
	for cmd, live := range map[string]bool{
		"topolayer plan --config a --from b":                       false,
		"topolayer plan --config a --from b --kubeconfig k":        true,
		"topolayer plan --config a --from b --guest-context=g":     true,
		"bin/topolayer-devenv up --dir /tmp/dev":                   true,
		"kubectl --kubeconfig k get ns":                            true,
		"bin/sample-operator output-resources > /tmp/decl.yaml":    false,
		"topolayer parity --config-standalone s --config-hosted h": false,
	} {
		if got := liveCommand(cmd) != ""; got != live {
			t.Errorf("liveCommand(%q) = %v, want %v", cmd, got, live)
		}
	}
}
