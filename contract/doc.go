// Package contract reads and writes the on-disk formats of the multi-operator-manager (MOM)
// contract, compatible with the upstream tools byte for byte:
//
//   - output directories of `apply-configuration` (ReadOutputDir, WriteOutputDir): the class
//     folders Configuration, Management, UserWorkload and Unspecified, the eight action
//     folders, and for every recorded request a body, a metadata and an optional options
//     file named `<prefix>-<body|metadata|options>-<name>.yaml` (with ':' written as
//     "-COLON-"), plus controller-results.yaml. Metadata is read with the name key spelled
//     `name` or the legacy `mame`, and written in the spelling asked for. Bodies and options
//     travel as bytes and are never re-serialized; a metadata file nothing changed is written
//     as it was read. The body of an object-bearing action is parsed once, by the reader
//     (ParseObject: duplicate keys, non-string keys, excessive aliasing and NaN refused),
//     into Mutation.Object, which everything after it reads. WalkOutputDir hands mutations to
//     a caller one at a time, and FolderWriter writes them one at a time, for a pipeline
//     that streams a directory of any size.
//   - input directories (ReadInputDir, WriteInputDir), must-gather-like, in list form and
//     per-object form, answering Get and List exactly as the contract's fake API server does,
//     with aggregated discovery files or the embedded default (DefaultDiscovery).
//   - input-resources and output-resources declarations, and the matching of a mutation
//     against output-resources (OutputResourceList.Matches): events by namespace, named
//     objects by group, resource, namespace and name, generateName creates by exact prefix.
//   - test.yaml of the upstream apply-configuration test harness.
//
// Readers are strict: a file out of place, a body without metadata, a symbolic link, a special
// file, an oversized file or metadata that contradicts its folder or body is an error naming
// the file (a *FileError, matching ErrMalformed), and nothing is returned. Every problem of a
// directory is reported at once. Writers check everything before the first file is written
// and write through an os.Root, so no name can place a file outside the target directory.
//
// The package has no Kubernetes client. ../../../shared/spec/mom-format.md is the
// specification it implements.
package contract
