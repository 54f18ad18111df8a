// Command benchop is the contract operator of the cache benchmark: a MOM contract binary
// that reads its inputs (package fleet: five kinds, three objects each) and writes one
// server-side Apply of its output ConfigMap, whose data "seq" is the highest
// fleet.SeqAnnotation among the inputs. BENCH_OPERATOR names the operator (op00 ... op09).
//
//	benchop input-resources
//	benchop output-resources
//	benchop apply-configuration --input-dir DIR --output-dir DIR [--now T] [--controllers C]
package main
