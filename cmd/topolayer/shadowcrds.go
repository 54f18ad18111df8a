package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/hosted/shadow"
)

// ShadowCRDsOptions are the options of `topolayer shadow-crds`.
type ShadowCRDsOptions struct {
	From      []string // --from: CRD manifest files or directories
	To        string   // --to: the directory to write
	Names     []string // --name: the CRDs to shadow; all cluster-scoped ones when empty
	Overwrite bool     // --overwrite

	names map[string]bool // set by Complete: Names as a set

	IOStreams
}

// shadowSource is one CRD read from --from, and the file it came from.
type shadowSource struct {
	file string
	crd  *apiextensionsv1.CustomResourceDefinition
}

// NewCmdShadowCRDs builds `topolayer shadow-crds`.
func NewCmdShadowCRDs(streams IOStreams) *cobra.Command {
	o := &ShadowCRDsOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "shadow-crds --from FILE|DIR... --to DIR [--name CRD...]",
		Short: "Write the namespaced shadow CRDs of cluster-scoped CRDs, for a management cluster",
		Long: `Shadow-crds reads CustomResourceDefinitions (the openshift/api manifests, or a guest's live
CRDs saved as YAML) and writes, for each cluster-scoped one, its shadow: the same kind, names
and schema, Namespaced, in the group suffixed with .shadow.topolayer.dev. Installed on the
management cluster, shadows hold the cluster-scoped objects of a management-side class
(an operator's own CR, a ClusterOperator, a config.openshift.io singleton) in the hosted
control plane's namespace.

--from takes files and directories (their *.yaml, *.yml and *.json files, not
subdirectories); a file may hold several documents, each of which must be a
CustomResourceDefinition of apiextensions.k8s.io/v1. Without --name, every cluster-scoped
CRD read is shadowed and namespaced ones are skipped; with --name, exactly the CRDs named,
which must be cluster-scoped. A CRD defined in two files (openshift/api has one manifest per
feature set) must be picked by file.

A shadow drops short names, categories and any conversion webhook; a webhook-converted CRD
keeps only its storage version. Before anything is written, every shadow is checked as the
API server would check what a shadow changes: its names, group, scope, versions, conversion
and structural schemas (CEL rules and defaults are the original's, checked again when the
shadow is installed). Files are named <shadow CRD name>.yaml; the directory
appears whole or not at all: it is written beside --to and renamed into place.`,
		Example: `  # The shadows of an operator CR, ClusterOperator and a config singleton from openshift/api
  # (run inside the topolayer repository, where go list finds the openshift/api module)
  api=$(go list -m -f '{{.Dir}}' github.com/openshift/api)
  topolayer shadow-crds --to /tmp/shadow-crds \
    --from "$api/payload-manifests/crds/0000_50_authentication_01_authentications-Default.crd.yaml" \
    --from "$api/config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml" \
    --from "$api/config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_ingresses-Default.crd.yaml"

  # Some CRDs of a directory, installed on the management cluster
  topolayer shadow-crds --from "$api/operator/v1/zz_generated.crd-manifests" --to /tmp/scheduler-shadows \
    --name kubeschedulers.operator.openshift.io --name kubecontrollermanagers.operator.openshift.io
  kubectl apply --server-side -f /tmp/scheduler-shadows`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE:         cli.RunCommand(o),
	}
	cmd.Flags().StringArrayVar(&o.From, "from", o.From, "a CRD manifest file or directory (repeatable)")
	addOutputDirFlags(cmd, &o.To, &o.Overwrite, "directory")
	cmd.Flags().StringSliceVar(&o.Names, "name", o.Names, "name of a CRD to shadow, e.g. authentications.operator.openshift.io (repeatable; default: every cluster-scoped CRD)")
	return cmd
}

// Complete fills the fields that the flags imply.
func (o *ShadowCRDsOptions) Complete() error {
	o.names = map[string]bool{}
	for _, n := range o.Names {
		o.names[n] = true
	}
	return nil
}

// Validate checks the flags without side effects.
func (o *ShadowCRDsOptions) Validate() error {
	var errs []error
	if len(o.From) == 0 {
		errs = append(errs, errors.New("--from is required"))
	}
	if o.To == "" {
		errs = append(errs, errors.New("--to is required"))
	}
	for _, from := range o.From {
		if from == "" {
			errs = append(errs, errors.New("--from: empty path"))
		} else if o.To != "" && shadowPathWithin(from, o.To) {
			errs = append(errs, fmt.Errorf("--to %s: holds --from %s, which writing --to would replace", o.To, from))
		}
	}
	for _, n := range o.Names {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--name %q: not a CRD name: %s", n, strings.Join(msgs, "; ")))
		}
	}
	return errors.Join(errs...)
}

// shadowPathWithin reports whether path is dir or below it.
func shadowPathWithin(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Run reads the CRDs, builds and validates every shadow, and writes them all or none.
func (o *ShadowCRDsOptions) Run(context.Context) error {
	if o.names == nil {
		return errors.New("shadow-crds: Complete was not called before Run")
	}
	sources, err := o.read()
	if err != nil {
		return err
	}
	selected, err := o.selectSources(sources)
	if err != nil {
		return err
	}

	var shadows []*apiextensionsv1.CustomResourceDefinition
	var errs []error
	for _, src := range selected {
		s, err := shadow.CRD(src.crd)
		if errors.Is(err, shadow.ErrNamespaced) && len(o.names) == 0 {
			fmt.Fprintf(o.ErrOut, "skipped %s (%s): namespaced\n", src.crd.Name, src.file)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", src.file, err))
			continue
		}
		if err := shadow.Validate(s); err != nil {
			errs = append(errs, fmt.Errorf("%s: shadow of %s: %w", src.file, src.crd.Name, err))
			continue
		}
		if len(s.Spec.Versions) < len(src.crd.Spec.Versions) {
			fmt.Fprintf(o.ErrOut, "warning: %s: the shadow serves no conversion webhook, so it keeps only the storage version %s\n", src.crd.Name, s.Spec.Versions[0].Name)
		}
		shadows = append(shadows, s)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(shadows) == 0 {
		return fmt.Errorf("--from %s: no cluster-scoped CRD to shadow", strings.Join(o.From, ","))
	}
	slices.SortFunc(shadows, func(a, b *apiextensionsv1.CustomResourceDefinition) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(shadows); i++ {
		if a, b := shadows[i-1], shadows[i]; a.Name == b.Name { // only if a CRD's name is not plural.group
			return fmt.Errorf("crd %s: the shadow of both %s and %s", a.Name, a.Annotations[shadow.AnnotationShadowOf], b.Annotations[shadow.AnnotationShadowOf])
		}
	}

	if err := writeShadowCRDs(o.To, shadows, o.Overwrite); err != nil {
		return err
	}
	for _, s := range shadows {
		fmt.Fprintf(o.Out, "wrote %s (shadow of %s)\n", filepath.Join(filepath.Clean(o.To), s.Name+".yaml"), s.Annotations[shadow.AnnotationShadowOf])
	}
	return nil
}

// read reads every CRD of --from, remembering its file, and reports every bad file.
func (o *ShadowCRDsOptions) read() ([]shadowSource, error) {
	files, err := shadow.ManifestFiles(o.From...)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	var sources []shadowSource
	var errs []error
	for _, f := range files {
		crds, err := shadow.ReadCRDs(f)
		errs = append(errs, err)
		for _, crd := range crds {
			sources = append(sources, shadowSource{file: f, crd: crd})
		}
	}
	return sources, errors.Join(errs...)
}

// selectSources keeps the CRDs named by --name (all of them, when none is), and refuses a
// name that is missing or defined in two files.
func (o *ShadowCRDsOptions) selectSources(sources []shadowSource) ([]shadowSource, error) {
	var selected []shadowSource
	byName := map[string]string{}
	var errs []error
	for _, src := range sources {
		name := src.crd.Name
		if len(o.names) > 0 && !o.names[name] {
			continue
		}
		if len(o.names) == 0 && src.crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
			selected = append(selected, src) // skipped with a notice, never written: no clash
			continue
		}
		if first, dup := byName[name]; dup {
			errs = append(errs, fmt.Errorf("crd %s: defined in both %s and %s (pick one file)", name, first, src.file))
			continue
		}
		byName[name] = src.file
		selected = append(selected, src)
	}
	for _, n := range o.Names {
		if _, ok := byName[n]; !ok {
			errs = append(errs, fmt.Errorf("--name %s: no such CRD in --from", n))
		}
	}
	return selected, errors.Join(errs...)
}

// writeShadowCRDs writes the shadows into to, whole or not at all.
func writeShadowCRDs(to string, shadows []*apiextensionsv1.CustomResourceDefinition, overwrite bool) error {
	return replaceDir(to, overwrite, func(staged string) error {
		if err := os.Mkdir(staged, 0o755); err != nil {
			return err
		}
		for _, s := range shadows {
			if err := shadow.WriteCRD(staged, s); err != nil {
				return err
			}
		}
		return nil
	})
}
