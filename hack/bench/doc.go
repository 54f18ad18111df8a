// Command bench measures topolayer against the targets of issue 7 and writes
// bench/REPORT.md with its plots (PNG):
//
//	go -C hack run ./bench -out $PWD/bench -bin $PWD/bin -assets "$(hack/envtest-assets.sh)"
//
// Sections, in order, each with real components:
//  1. translation: a synthetic standalone output directory (package synth) read and decoded
//     (the parse floor) against a full translation to disk in the same process; the
//     in-memory engine as a Go benchmark; the peak RSS of `topolayer translate`; 1k, 10k
//     and 100k mutations;
//  2. shared caches: ten resident controller-runtime managers (command resident) against one
//     `topolayer run` with ten contract operators (command benchop), on one envtest
//     kube-apiserver each, under the same scripted workload; requests counted by the API
//     server (its audit log, by user agent, and its /metrics endpoint);
//  3. polling: the HyperShift prototype's GET-every-5s reader (command poller) against an
//     idle `topolayer run`;
//  4. latency from an input change to the applied output, with debounce 0 and 2s;
//  5. scale: 100 HCP namespaces on one management server, one `topolayer run` each.
//
// Every figure of the report comes from the run that wrote it; targets are stated with the
// measured value, met or not. Memory figures read /proc (VmRSS sampled, VmHWM), so the
// command runs on Linux only.
package main
