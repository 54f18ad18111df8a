package hosted

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
)

// ImageCLI names the release payload's image the audit-logs sidecar runs (its tail).
const ImageCLI = "cli"

// auditLogsContainer is the name of the sidecar that copies a component's audit log to the
// pod's log.
const auditLogsContainer = "audit-logs"

// auditLogsScript follows the file named by its first argument from its first byte, by name
// (a rotated log is followed to its successor), and stops when the pod does: a shell is PID 1
// of its container and would otherwise ignore SIGTERM until the grace period ends. The path
// is an argument, never script text: it comes from the operator's output.
const auditLogsScript = `set -o errexit -o nounset -o pipefail
trap 'kill "$tailer" 2>/dev/null; wait "$tailer"; exit 0' TERM INT
/usr/bin/tail --bytes=+1 --follow=name --retry "$1" &
tailer=$!
wait "$tailer"
`

// injectAuditLogs adds the audit-logs sidecar to a pod spec whose container writes an audit
// log file (--audit-log-path, in its command or arguments, a start script's among them), as
// HyperShift's API servers and OAuth server have: on the shared management cluster no node
// agent collects a hosted cluster's audit log from the node, so the sidecar prints it to the
// pod's log. The sidecar mounts the container's volume that holds the file, where the
// container mounts it. A log written to stdout ("-") needs no sidecar; a file in no mounted
// volume is an error: the sidecar could not read it, and beside a read-only root filesystem
// the operand could not write it.
func injectAuditLogs(spec *yaml.RNode, image string) error {
	containers, err := elements(spec, "containers")
	if err != nil {
		return err
	}
	for _, c := range containers {
		if name(c) == auditLogsContainer {
			continue
		}
		file, ok, err := auditLogPath(c)
		if err != nil {
			return fmt.Errorf("containers %q: %w", name(c), err)
		}
		if !ok {
			continue
		}
		if file == "-" {
			return nil
		}
		volume, mountPath, err := mountHolding(c, file)
		if err != nil {
			return fmt.Errorf("containers %q: --audit-log-path %s: %w", name(c), file, err)
		}
		return upsertElement(spec, "containers", map[string]any{
			"name":            auditLogsContainer,
			"image":           image,
			"imagePullPolicy": "IfNotPresent",
			"command":         []any{"/bin/bash"},
			"args":            []any{"-c", auditLogsScript, auditLogsContainer, file},
			"resources":       map[string]any{"requests": map[string]any{"cpu": "5m", "memory": "10Mi"}},
			"securityContext": restrictedContainerSecurityContext(),
			"volumeMounts":    []any{map[string]any{"name": volume, "mountPath": mountPath}},
		}, false)
	}
	return nil
}

// auditLogPath returns the value of the first --audit-log-path flag among a container's
// command and arguments, as separate words ("--audit-log-path=F", "--audit-log-path F") or
// inside a start script's text.
func auditLogPath(c *yaml.RNode) (string, bool, error) {
	const flag = "--audit-log-path"
	v, ok, err := flagValue(c, flag)
	if err != nil || !ok {
		return "", false, err
	}
	if v != "-" && !path.IsAbs(v) {
		return "", false, fmt.Errorf("%s %q: not an absolute path", flag, v)
	}
	return path.Clean(v), true, nil
}

// flagValue returns the value of the first flag among a container's command and arguments,
// as separate words ("--flag=V", "--flag V") or inside a start script's text, without the
// quotes a script puts around it.
func flagValue(c *yaml.RNode, flag string) (string, bool, error) {
	var words []string
	for _, list := range []string{"command", "args"} {
		items, err := elements(c, list)
		if err != nil {
			return "", false, err
		}
		for _, it := range items {
			words = append(words, strings.Fields(yaml.GetValue(it))...)
		}
	}
	for i, w := range words {
		var v string
		switch {
		case strings.HasPrefix(w, flag+"="):
			v = strings.TrimPrefix(w, flag+"=")
		case w == flag && i+1 < len(words):
			v = words[i+1]
		default:
			continue
		}
		return strings.Trim(v, `"'`), true, nil
	}
	return "", false, nil
}

// mountHolding returns the volume and mount path of the container's mount that holds file:
// the deepest mount whose path is a directory above it.
func mountHolding(c *yaml.RNode, file string) (string, string, error) {
	mounts, err := elements(c, "volumeMounts")
	if err != nil {
		return "", "", err
	}
	var volume, at string
	for _, m := range mounts {
		mp := path.Clean(yamlnode.FieldString(m, "mountPath"))
		if m.Field("subPath") != nil || !strings.HasPrefix(file, strings.TrimSuffix(mp, "/")+"/") || len(mp) <= len(at) {
			continue
		}
		volume, at = name(m), mp
	}
	if volume == "" {
		return "", "", fmt.Errorf("in no volume the container mounts")
	}
	return volume, at, nil
}
