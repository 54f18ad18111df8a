package contract

import (
	"errors"
	"fmt"
	"path"
	"runtime"
	"sync"
	"sync/atomic"
)

// FolderWriter writes mutations under named top folders of a directory one at a time, as
// WriteFolders writes them all at once, for a writer that streams a plan: each mutation is
// queued when it is given, and a goroutine of the writer encodes its files, checks them
// against the files written before and writes them while the caller reads and plans the next
// ones, so nothing is held but the queue and the digests of the paths written. Unlike
// WriteFolders it cannot check everything before the first file: write into a staging
// directory and publish it only once Close returned nil.
type FolderWriter struct {
	fw   *fileWriter
	opts WriteOptions
	seen fileSet // the writing goroutine's
	// batch gathers work until folderWriterBatch of it goes to the queue at once: one
	// wake-up of the writing goroutine per batch, not per file.
	batch []folderWork
	queue chan []folderWork
	done  chan struct{}
	err   atomic.Pointer[error] // the first error writing a file
}

// folderWork is one mutation to write under folder, or one file.
type folderWork struct {
	folder string
	m      Mutation // a copy: the caller may drop the content of its own once Write returns
	file   *File
}

// A FolderWriter holds at most folderWriterQueue batches of folderWriterBatch mutations or
// files before Write waits for the disk.
const (
	folderWriterBatch = 64
	folderWriterQueue = 4
)

// NewFolderWriter opens dir, which must be empty or absent, for writing. Close it.
func NewFolderWriter(dir string, opts WriteOptions) (*FolderWriter, error) {
	fw, err := openFileWriter(dir)
	if err != nil {
		return nil, err
	}
	w := &FolderWriter{fw: fw, opts: opts, seen: fileSet{}, queue: make(chan []folderWork, folderWriterQueue), done: make(chan struct{})}
	go w.drain()
	return w, nil
}

// drain writes the queued work; after an error it only empties the queue.
func (w *FolderWriter) drain() {
	defer close(w.done)
	for batch := range w.queue {
		encodeBodies(batch)
		for i := range batch {
			if w.err.Load() != nil {
				break
			}
			if err := w.write(&batch[i]); err != nil {
				w.err.Store(&err)
			}
		}
	}
}

// encodeBodies encodes, on every core, the bodies of a batch's mutations that a translation
// rewrote (no Body, an Object), before the batch is written in order: encoding is most of
// the writing of a plan that rewrites its objects. A body that does not encode is left for
// the write, which reports the error in its turn.
func encodeBodies(batch []folderWork) {
	var todo []*Mutation
	for i := range batch {
		if m := &batch[i].m; batch[i].file == nil && m.Body == nil && m.Object != nil {
			todo = append(todo, m)
		}
	}
	if len(todo) < 2 {
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < int64(len(todo)); k = next.Add(1) - 1 {
				if body, err := todo[k].Bytes(); err == nil {
					todo[k].Body = body
				}
			}
		})
	}
	wg.Wait()
}

// write writes one mutation's files, or one file, that were not written before.
func (w *FolderWriter) write(fw *folderWork) error {
	if f := fw.file; f != nil {
		if dup, _ := w.seen.add(f.Path, f.Data); dup {
			return fmt.Errorf("%s: written already", path.Join(w.fw.dir, f.Path))
		}
		return w.fw.write(*f)
	}
	files, err := mutationFiles(fw.folder, &fw.m, w.opts, w.seen)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := w.fw.write(f); err != nil {
			return err
		}
	}
	return nil
}

// enqueue adds work to the batch and hands a full batch to the writing goroutine.
func (w *FolderWriter) enqueue(fw folderWork) {
	w.batch = append(w.batch, fw)
	if len(w.batch) >= folderWriterBatch {
		w.queue <- w.batch
		w.batch = make([]folderWork, 0, folderWriterBatch)
	}
}

// failed returns the first error writing a file, if any.
func (w *FolderWriter) failed() error {
	if err := w.err.Load(); err != nil {
		return *err
	}
	return nil
}

// Write queues one mutation's files under folder (`<folder>/<Action>/...`). It returns the
// first error of a file queued before (one written before with other content, or one the
// disk refused), as soon as the writer met it; Close returns the others.
func (w *FolderWriter) Write(folder string, m *Mutation) error {
	if err := w.failed(); err != nil {
		return err
	}
	if msgs := validFolder(folder); msgs != "" {
		return fmt.Errorf("%s: folder %q: %s", w.fw.dir, folder, msgs)
	}
	w.enqueue(folderWork{folder: folder, m: *m})
	return nil
}

// WriteFile queues one more file at rel, a slash-separated path inside the directory; a file
// written before is an error of a later Write, or of Close.
func (w *FolderWriter) WriteFile(rel string, data []byte) error {
	if err := w.failed(); err != nil {
		return err
	}
	w.enqueue(folderWork{file: &File{Path: rel, Data: data}})
	return nil
}

// Close waits for the queued files to be written and closes the directory; it returns the
// first error writing a file. Call it once.
func (w *FolderWriter) Close() error {
	if len(w.batch) > 0 {
		w.queue <- w.batch
	}
	close(w.queue)
	<-w.done
	return errors.Join(w.failed(), w.fw.close())
}
