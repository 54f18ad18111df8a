package runner

import "testing"

// Shapes of stderr an operator ends with; the Go ones as the Go 1.26 runtime prints them.
const (
	goRuntimeFault = `I1129 04:20:01.000000       1 operator.go:12] starting
SIGSEGV: segmentation violation
PC=0x42e59d m=2 sigcode=1 addr=0x0

goroutine 0 gp=0x1f0a33d5ab40 m=2 mp=0x1f0a33d8c808 [idle]:
runtime.(*spanQueue).tryDrain(0x3c5100000400?, 0x436d25?, 0x588668?)
	/usr/local/go/src/runtime/mgcmark_greenteagc.go:520 +0x5d fp=0x3c51c29a3ea0 sp=0x3c51c29a3e80 pc=0x42e59d

rip    0x42e59d
rflags 0x10246
cs     0x33
fs     0x0
gs     0x0
`
	goRuntimeFaultElsewhere = `SIGBUS: bus error
PC=0x42e59d m=2 sigcode=2 addr=0x7f0000001000

goroutine 0 gp=0x1f0a33d5ab40 m=2 mp=0x1f0a33d8c808 [idle]:
gs     0x0
`
	goNilPanic = `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]

goroutine 1 [running]:
main.main()
	/src/main.go:9 +0x1c
exit status 2
`
	goOutOfMemory = `fatal error: runtime: out of memory

runtime stack:
runtime.throw({0x4b0a1e?, 0x0?})
	/usr/local/go/src/runtime/panic.go:1094 +0x48
`
	klogError = "E1129 04:20:01.000000       1 main.go:30] open /config: no such file\nerror: cannot read the configuration\n"
)

func TestLastWords(t *testing.T) {
	tests := []struct {
		name, stderr, want string
	}{
		{"empty", "", ""},
		{"a program's last line", klogError, "error: cannot read the configuration"},
		{"a Go runtime fault: its header, not the register dump", goRuntimeFault, "SIGSEGV: segmentation violation"},
		{"a Go panic", goNilPanic, "panic: runtime error: invalid memory address or nil pointer dereference"},
		{"a Go fatal error", goOutOfMemory, "fatal error: runtime: out of memory"},
		{"a line that only names a signal", "SIGTERM: stopping\nbye\n", "bye"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lastWords(tt.stderr); got != tt.want {
				t.Errorf("lastWords = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLooksLikeOOM(t *testing.T) {
	tests := []struct {
		name   string
		stderr string
		want   bool
	}{
		{"Go's out of memory", goOutOfMemory, true},
		{"ENOMEM", "mmap: cannot allocate memory\n", true},
		{"a Go runtime fault at address zero", goRuntimeFault, true},
		{"a Go runtime fault elsewhere", goRuntimeFaultElsewhere, false},
		{"a nil dereference in the operator's own code", goNilPanic, false},
		{"an ordinary error", klogError, false},
		{"nothing", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := looksLikeOOM(tt.stderr); got != tt.want {
				t.Errorf("looksLikeOOM = %v, want %v", got, tt.want)
			}
		})
	}
}
