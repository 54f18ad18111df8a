// Package configtest is test support for configurations: MergeFragment merges a
// configuration fragment, such as the snippet a plan proposes for what it refused
// (declare.Declarations), into a configuration the way a person pastes it, so that tests
// of the snippet (in translate and on the command line) can plan again with it merged.
//
//	fragment, err := config.Decode(snippet)
//	merged := configtest.MergeFragment(t, cfg, fragment)
//
// It is imported by tests only.
package configtest
