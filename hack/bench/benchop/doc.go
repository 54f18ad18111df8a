// Command benchop is the contract operator of the cache benchmark: fleet.Operator, the
// operator SDK's command line around the fleet's one reconciler, which reads its inputs
// (package fleet: five kinds, three objects each) and applies its output ConfigMap, whose
// data "seq" is the highest fleet.SeqAnnotation among the inputs. BENCH_OPERATOR names the
// operator (op00 ... op09). The in-process side of the benchmark (command inproc) runs the
// same operator linked in.
//
//	benchop input-resources
//	benchop output-resources
//	benchop apply-configuration --input-dir DIR --output-dir DIR [--now T] [--controllers C]
package main
