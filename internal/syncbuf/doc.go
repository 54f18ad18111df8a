// Package syncbuf is test support: Buffer, a bytes.Buffer that one goroutine or process
// writes while a test reads it, such as a command's progress output or the output of a
// process running in the background.
//
//	var out syncbuf.Buffer
//	cmd.Stdout = &out
//	// ... later, while it runs:
//	t.Logf("so far: %s", out.Tail(8000))
package syncbuf
