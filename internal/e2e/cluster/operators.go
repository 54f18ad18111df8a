package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// OperatorsEnv names the environment variable holding the folder of the real operator
// binaries (../shared/operators unpacked: the cluster-authentication-operator, the OAuth
// server and the OAuth API server, among others). .ci/run sets it.
const OperatorsEnv = "TOPOLAYER_OPERATORS"

// OperatorBinary returns the path of the real binary name in the folder OperatorsEnv names,
// or an error saying why there is none (unset, or not there), fit to skip a test with.
func OperatorBinary(name string) (string, error) {
	dir := os.Getenv(OperatorsEnv)
	if dir == "" {
		return "", fmt.Errorf("%s is not set: no real %s binary (.ci/run sets it from ../shared/operators)", OperatorsEnv, name)
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s=%s: no %s there: %w", OperatorsEnv, dir, name, err)
	}
	return bin, nil
}
