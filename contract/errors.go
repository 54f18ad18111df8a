package contract

import (
	"errors"
	"strings"
)

// ErrMalformed marks every error about the content or layout of a contract file or directory.
// Callers test for it with errors.Is.
var ErrMalformed = errors.New("malformed")

// FileError says which file, which object and which field a problem is about. Its message
// reads `file: object: field: problem`, leaving out the parts that are unknown.
type FileError struct {
	// File is the path of the file (or directory) the problem is in.
	File string
	// Object names the object, as Identity.String does, when it is known.
	Object string
	// Field is the field path inside the file, e.g. "metadata.name".
	Field string
	// Err is the problem itself.
	Err error
}

// Error implements error.
func (e *FileError) Error() string {
	parts := make([]string, 0, 4)
	for _, p := range []string{e.File, e.Object, e.Field} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return strings.Join(parts, ": ")
}

// Unwrap returns the underlying problem.
func (e *FileError) Unwrap() error { return e.Err }

// Is makes every FileError match ErrMalformed, unless it wraps an I/O error of the reader's
// own making (those still match their cause).
func (e *FileError) Is(target error) bool { return target == ErrMalformed }

// fileErr builds a *FileError; msg is wrapped so callers can still match causes.
func fileErr(file, object, field string, err error) error {
	return &FileError{File: file, Object: object, Field: field, Err: err}
}
