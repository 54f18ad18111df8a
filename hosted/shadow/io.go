package shadow

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ErrNotCRD is wrapped by ReadCRDs' error for a document that is not a
// CustomResourceDefinition of apiextensions.k8s.io/v1.
var ErrNotCRD = errors.New("not a CustomResourceDefinition of apiextensions.k8s.io/v1")

// manifestExtensions are the names of the files a directory contributes to ManifestFiles.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// ManifestFiles expands paths into the manifest files they name, in order and without
// repeats: a file stands for itself, whatever its name; a directory for its *.yaml, *.yml and
// *.json files sorted by name, not its subdirectories (the way envtest reads CRD
// directories). A path that does not exist is an error.
func ManifestFiles(paths ...string) ([]string, error) {
	var files []string
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	var errs []error
	for _, p := range paths {
		p = filepath.Clean(p)
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.IsDir() {
			add(p)
			continue
		}
		entries, err := os.ReadDir(p) // sorted by name
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(e.Name()))) {
				add(filepath.Join(p, e.Name()))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return files, nil
}

// ReadCRDs reads the CRDs in the manifest files that paths name (see ManifestFiles). A file
// may hold several YAML or JSON documents separated by "---" lines; empty documents are
// skipped. Any other document that is not a CustomResourceDefinition of
// apiextensions.k8s.io/v1 is an error naming the file and the document's 1-based index among
// the file's non-empty documents, and so is a field that the CRD type does not know (it would
// otherwise be lost from the shadow's schema) or a duplicate field; those errors give the
// field's path. Documents are decoded as they are, without defaulting. Every file is read and
// every problem reported; on error no CRD is returned. The CRDs come in file order, then
// document order.
func ReadCRDs(paths ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := ManifestFiles(paths...)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	var errs []error
	for _, f := range files {
		got, err := readCRDFile(f)
		crds = append(crds, got...)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return crds, nil
}

// readCRDFile reads the CRDs of one file, and reports every bad document in it.
func readCRDFile(file string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var crds []*apiextensionsv1.CustomResourceDefinition
	var errs []error
	for n := 0; ; {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: after document %d: %w", file, n, err))
			break
		}
		if empty, err := emptyDocument(doc); err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", file, n+1, err))
			n++
			continue
		} else if empty {
			continue
		}
		n++
		crd, err := decodeCRD(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", file, n, err))
			continue
		}
		crds = append(crds, crd)
	}
	return crds, errors.Join(errs...)
}

// emptyDocument reports whether doc holds nothing but blanks and comments.
func emptyDocument(doc []byte) (bool, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return false, err
	}
	return bytes.Equal(bytes.TrimSpace(js), []byte("null")), nil
}

// apiextensionsScheme knows the CRD types, for the strict decoder. It is built once, never
// modified afterwards, and is not the global scheme.
var apiextensionsScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
})

// strictDecoder decodes YAML or JSON as it is, without defaulting or conversion, and fails
// on unknown or duplicate fields, naming their paths.
var strictDecoder = sync.OnceValue(func() runtime.Decoder {
	return serializer.NewCodecFactory(apiextensionsScheme(), serializer.EnableStrict).UniversalDeserializer()
})

// decodeCRD decodes one document, which must be a CRD of apiextensions.k8s.io/v1 with no
// field unknown to the CRD type.
func decodeCRD(doc []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	if tm.APIVersion != crdTypeMeta.APIVersion || tm.Kind != crdTypeMeta.Kind {
		return nil, fmt.Errorf("apiVersion %q, kind %q: %w", tm.APIVersion, tm.Kind, ErrNotCRD)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if _, _, err := strictDecoder().Decode(doc, nil, crd); err != nil {
		return nil, fmt.Errorf("crd %s: %w", nameOf(doc), err)
	}
	return crd, nil
}

// nameOf returns the metadata.name of a document that did not decode strictly, for errors.
func nameOf(doc []byte) string {
	var head struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil || head.Metadata.Name == "" {
		return "(no name)"
	}
	return head.Metadata.Name
}

// manifest is a CRD as WriteCRD writes it: without status, which the API server owns.
type manifest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              apiextensionsv1.CustomResourceDefinitionSpec `json:"spec"`
}

// WriteCRD writes crd as a manifest to install, dir/<metadata.name>.yaml, creating dir if
// needed and replacing the file if it exists. The manifest has apiVersion and kind, and no
// status: the API server owns it.
func WriteCRD(dir string, crd *apiextensionsv1.CustomResourceDefinition) error {
	if crd == nil {
		return errors.New("write a nil CustomResourceDefinition")
	}
	name := crd.Name
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("crd %q: metadata.name is not a file name", name)
	}
	data, err := yaml.Marshal(manifest{TypeMeta: crdTypeMeta, ObjectMeta: crd.ObjectMeta, Spec: crd.Spec})
	if err != nil {
		return fmt.Errorf("crd %s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), data, 0o644); err != nil {
		return fmt.Errorf("crd %s: %w", name, err)
	}
	return nil
}
