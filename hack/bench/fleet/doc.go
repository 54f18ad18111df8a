// Package fleet defines the operators of the cache benchmark (sections 2-4 of the report):
// ten operators whose inputs overlap, each reading the same three objects of five kinds
// drawn from eight in the namespace Namespace, and writing one ConfigMap in OutputNamespace
// whose data holds the highest SeqAnnotation among its inputs. The contract operator
// (command benchop), the resident controller-runtime operator (command resident), the
// poller and the harness all take their definitions from here, so the two sides of the
// comparison read and write exactly the same objects.
package fleet
